"""A statement about a whole grid decided from its points: "overall lower", "at most ratios", "somewhere".

A paper often reads a figure as a whole (seed 001 §3.5.3: "overall lower beta_opt values" over Fig. 3.5's ratios).
Deciding each point separately and calling the statement violated when one point fails is then not the paper's
relation.  :func:`tally` decides it from the points: with :math:`h` points that hold, :math:`u` undecided and
:math:`n` in all, a statement that needs :math:`k` of them holds when :math:`h\\ge k`, is violated when
:math:`h + u < k` (even every undecided point holding would not be enough), and is inconclusive otherwise.  Monte
Carlo points are re-decided together at the tally's share of its claim's level, split equally among them
(Bonferroni), so the tally counts as one check of the claim's family.
"""

from __future__ import annotations

from theorylab.checks import Check, _monte_carlo, fmt


def tally(name: str, points: dict[str, Check], needed: int, *, relation: str, note: str = "") -> Check:
    """The check "at least ``needed`` of ``points`` hold" (label -> the point's check), decided as the module says;
    ``relation`` states the rule in the paper's words (e.g. "lower at a majority of the 5 ratios")."""
    if not points:
        raise ValueError(f"tally({name!r}): no points given")
    if not 1 <= int(needed) <= len(points):
        raise ValueError(f"tally({name!r}): needed must lie in [1, {len(points)}]; got {needed!r}")
    needed = int(needed)

    def combine(decided: dict[str, Check]) -> Check:
        verdicts, first = [c.verdict for c in decided.values()], next(iter(decided.values()))
        held, open_ = verdicts.count("holds"), verdicts.count("inconclusive")
        verdict = "holds" if held >= needed else ("violated" if held + open_ < needed else "inconclusive")
        each = "; ".join(f"{label}: {c.verdict} ({fmt(c.measured)} {c.relation} {fmt(c.theory)})"
                         for label, c in decided.items())
        basis = "monte_carlo" if any(c.basis == "monte_carlo" for c in decided.values()) else first.basis
        level = min((c.level for c in decided.values() if c.level is not None), default=None)
        return Check(name, held, needed, f">= ({relation}; points that hold)", verdict, basis, level=level,
                     note=f"{held} of {len(decided)} hold, {open_} undecided: {each}. {note}".strip())

    if not any(c.decide is not None for c in points.values()):
        return combine(points)
    share = len(points)
    return _monte_carlo(lambda level: combine({
        label: c.decide(1 - (1 - level) / share) if c.decide is not None else c for label, c in points.items()}))
