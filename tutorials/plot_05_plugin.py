r"""
Checking your own theorem with a plugin
=======================================

**Learning goal.** theorylab checks the shipped papers, but its machinery is meant for your lemmas too.  After
this tutorial you can scaffold a plugin, state a lemma of your own in its text, write the claim that checks it
against its closed form, and read the verdict, including the *violated* verdict that a wrong conjecture gets.

**Source.** ``theorylab new NAME`` (:mod:`theorylab.scaffold`), the plugin loader :mod:`theorylab.plugins`,
the claim decorator :func:`theorylab.claims.claim` and the relations of :mod:`theorylab.checks`; README,
"Your own theorem: plugins", and CONTRIBUTING, "A violated verdict accuses an author".

The lemma that comes with the scaffold
--------------------------------------

Gradient descent :math:`x_{t+1}=x_t-\eta f'(x_t)` on :math:`f(x)=\tfrac L2(x-x^\star)^2` satisfies
:math:`x_{t+1}-x^\star=(1-\eta L)(x_t-x^\star)`: the distance contracts by :math:`|1-\eta L|` per step (Lemma 1 of
the generated ``lemma.md``).  The scaffold's claim runs the plugin's kernel on two clients
:math:`F_i(x)=\tfrac{a_i}2(x-u_i)^2` with equal weights, :math:`a=(1,2)`, :math:`u=(1,3)`, so
:math:`L=\tfrac12(a_1+a_2)=1.5` and :math:`x^\star=\frac{a_1u_1+a_2u_2}{a_1+a_2}=\tfrac73`.

A lemma we add: local steps cause drift
---------------------------------------

Let every client run :math:`s` gradient steps of size :math:`\eta` from the server model before the server
averages them (weights :math:`\alpha_i`).  Client :math:`i` ends at :math:`u_i+c_i(x-u_i)` with
:math:`c_i=(1-\eta a_i)^s`, so one round is the affine map

.. math::
    x^{t+1}=\rho_s\,x^t+\sum_i\alpha_i(1-c_i)u_i,\qquad \rho_s=\sum_i\alpha_i(1-\eta a_i)^s .

**Lemma 2.** If :math:`|\rho_s|<1`, then :math:`x^t-x_s=\rho_s^t(x^0-x_s)` with

.. math:: x_s=\frac{\sum_i\alpha_i(1-c_i)u_i}{\sum_i\alpha_i(1-c_i)},

which equals :math:`x^\star` when :math:`s=1` (then :math:`1-c_i=\eta a_i`) but not in general for :math:`s>1`
when the curvatures differ: *client drift*.  A tempting guess is that :math:`s` local steps simply contract like
:math:`s` steps of gradient descent on :math:`F`, by :math:`|1-\eta L|^s` per round.  We write it down as
**Conjecture 3** and let theorylab decide it: it is false unless all :math:`a_i` are equal, because
:math:`\sum_i\alpha_i(1-\eta a_i)^s\ne(1-\eta\sum_i\alpha_ia_i)^s` for a strictly convex power.

**Checks that must hold:** the scaffold's claim holds; the quotes of the new claims are found
verbatim in the plugin's text; Lemma 2's limit and contraction factor match the kernel to rounding for
:math:`s\in\{1,2,5\}`; Conjecture 3 comes out *violated*, as its claim declares it expects.
"""

# %%
# Scaffold a plugin
# -----------------
# :func:`theorylab.scaffold.create` is what ``theorylab new gdlemma --dir DIR`` runs.  The folder is a plain
# Python package; every name it registers starts with ``gdlemma.``.  From a shell the same steps are
# ``theorylab new gdlemma --dir DIR``, then ``theorylab validate gdlemma --plugin DIR/gdlemma --quick`` and
# ``python -m pytest DIR/gdlemma/tests`` (the generated tests pass as written).
import tempfile

import matplotlib.pyplot as plt
import numpy as np
import torch

import theorylab
from theorylab.scaffold import create

torch.set_num_threads(1)  # tiny tensors: one intra-op thread is the fastest on a shared CPU (theorylab.threads)
folder = create("gdlemma", tempfile.mkdtemp(prefix="theorylab-tutorial-"))
print(sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()))
print((folder / "lemma.md").read_text())

# %%
# State the new lemma and the conjecture in the plugin's text
# -----------------------------------------------------------
# A claim of kind *statement* quotes the words it tests, and the quote must be found verbatim in the source text
# (here ``lemma.md``, registered as the plugin's paper by its ``__init__.py``).
(folder / "lemma.md").write_text((folder / "lemma.md").read_text() + """
**Lemma 2 (client drift).** Let every client take s >= 1 gradient steps of size eta from the server model and the
server average the results with weights alpha_i. With c_i = (1 - eta a_i)^s and rho_s = sum_i alpha_i c_i, if
|rho_s| < 1 then x_t - x_s = rho_s^t (x_0 - x_s), where x_s = sum_i alpha_i (1 - c_i) u_i / sum_i alpha_i (1 - c_i).

**Conjecture 3.** With s local steps per round the distance to the limit contracts by |1 - eta L|^s per round.
""")

# %%
# Write the claims
# ----------------
# A new module in the plugin folder; the loader imports every module of the package.  Each claim returns
# :class:`~theorylab.claims.Evidence` made of checks from :mod:`theorylab.checks`; the theory side of every check is
# a closed form (``basis="closed_form"``), never our own output.  Conjecture 3 is expected to fail, so its claim
# says so with ``expect="violated"`` and gives the reason (``because``), the strongest defence of the conjecture
# (``defence``) and a ``severity``, as the project asks of every accusation.
(folder / "drift.py").write_text('''\
"""Lemma 2 (client drift) and Conjecture 3 of lemma.md, on the plugin's kernel with s local steps."""

import numpy as np

from theorylab.checks import equal
from theorylab.claims import Evidence, claim

from .figure import CENTERS, CURVATURES, L, config

ALPHA = np.full(len(CENTERS), 1 / len(CENTERS))  # scalar_quadratic weighs its clients equally
ETA, LOCAL_STEPS, X0 = 0.2, (1, 2, 5), 0.0  # the scaffold's runs start from x_0 = 0


def closed_form(s: int, eta: float = ETA) -> tuple[float, float]:
    """Lemma 2: the limit x_s and the contraction factor rho_s."""
    c = (1 - eta * np.asarray(CURVATURES)) ** s
    return float(ALPHA @ ((1 - c) * np.asarray(CENTERS)) / (ALPHA @ (1 - c))), float(ALPHA @ c)


def x_after(ctx, s: int, rounds: int) -> float:
    """x_T of the plugin's kernel with s local steps (every client active, exact gradients), T = rounds."""
    cfg = config(ETA, rounds=rounds, seed=ctx.seed)
    return float(ctx.run(cfg.replace(algorithm={**cfg.algorithm, "local_steps": s})).final["server"][0, 0])


@claim("gdlemma.drift", "lemma.md, Lemma 2",
       "With s local steps, x_t - x_s = rho_s^t (x_0 - x_s) with the closed-form x_s and rho_s of Lemma 2.",
       kind="statement", where="lemma.md, Lemma 2",
       quote="if |rho_s| < 1 then x_t - x_s = rho_s^t (x_0 - x_s), where x_s = sum_i alpha_i (1 - c_i) u_i / "
             "sum_i alpha_i (1 - c_i).")
def drift(ctx) -> Evidence:
    checks = []
    for s in LOCAL_STEPS:
        limit, rho = closed_form(s)
        for t in (1, 3, 8, 60):
            checks.append(equal(f"s = {s}: x_{t} vs x_s + rho_s^{t} (x_0 - x_s)", x_after(ctx, s, t),
                                limit + rho ** t * (X0 - limit), 1e-12, basis="closed_form"))
    return Evidence(checks, notes=[f"eta = {ETA}, curvatures {CURVATURES}, centres {CENTERS}, x_0 = {X0}"])


@claim("gdlemma.conjecture3", "lemma.md, Conjecture 3",
       "With s local steps per round the distance to the limit contracts by |1 - eta L|^s per round.",
       kind="statement", where="lemma.md, Conjecture 3",
       quote="With s local steps per round the distance to the limit contracts by |1 - eta L|^s per round.",
       expect="violated", severity="statement",
       because="the factor is rho_s = sum_i alpha_i (1 - eta a_i)^s (Lemma 2), which differs from "
               "(1 - eta sum_i alpha_i a_i)^s whenever the curvatures a_i differ and s > 1",
       defence="For s = 1, or for equal curvatures, the conjecture is exact, and for small eta both factors are "
               "1 - s eta L + O(eta^2); the verdict stands because at eta = 0.2, s = 5 the two differ in the "
               "second digit, far beyond rounding.")
def conjecture3(ctx) -> Evidence:
    s = 5
    limit, _ = closed_form(s)
    ratio = abs(x_after(ctx, s, 1) - limit) / abs(X0 - limit)
    return Evidence([equal(f"s = {s}: |x_1 - x_s| / |x_0 - x_s| vs |1 - eta L|^s", ratio, abs(1 - ETA * L) ** s,
                           1e-9, basis="closed_form")])
''')

# %%
# Load the plugin, check the quotes, validate
# -------------------------------------------
# ``plugins=[folder]`` is ``--plugin PATH`` of the command line: the folder is imported under its namespace, with
# every module in it, and its claims join the registry (a plugin is imported once per process: edit it before
# loading it, or restart the interpreter).  :func:`theorylab.sources.quote_found` is the test the project applies
# to every quote.  The scaffold's lemma and Lemma 2 hold; Conjecture 3 is violated, as its claim expects, and its
# deciding check says by how much.
from theorylab.registry import lookup
from theorylab.sources import papers, quote_found

results = theorylab.validate("gdlemma", plugins=[folder])
print(results)
for name in ("gdlemma.contraction", "gdlemma.drift", "gdlemma.conjecture3"):
    assert quote_found(lookup("claim", name).obj.quote, papers()["gdlemma"]), name
verdicts = {r.claim.id: r.verdict for r in results}
assert verdicts == {"gdlemma.contraction": "holds", "gdlemma.drift": "holds", "gdlemma.conjecture3": "violated"}
for result in results:
    assert result.verdict == result.claim.expect
witness = results[[r.claim.id for r in results].index("gdlemma.conjecture3")].evidence.headline
print(f"Conjecture 3's witness: {witness.name}: measured {witness.measured:.5f}, conjectured {witness.theory:.5f}")

# %%
# Lemma 2 against the kernel, by hand
# -----------------------------------
# The claim's helpers give the closed forms.  The distance to :math:`x^\star` over rounds (the runs record
# :math:`|x_t-x^\star|^2` as ``server.dist2``): one local step is plain gradient descent and goes to
# :math:`x^\star`; more steps stop at the drift :math:`|x_s-x^\star|`.
import gdlemma.drift as lemma2

x_star = float(np.dot(lemma2.CURVATURES, lemma2.CENTERS) / sum(lemma2.CURVATURES))
fig, ax = plt.subplots(figsize=(6, 3.4), constrained_layout=True)
for s in lemma2.LOCAL_STEPS:
    limit, rho = lemma2.closed_form(s)
    cfg = lemma2.config(lemma2.ETA, rounds=120)
    trace = theorylab.run(cfg.replace(algorithm={**cfg.algorithm, "local_steps": s}))
    distance = np.sqrt(trace.metrics["server.dist2"][0])
    print(f"s = {s}: x_s = {limit:.6f}, |x_s - x*| = {abs(limit - x_star):.6f}, rho_s = {rho:.5f}, "
          f"|1 - eta L|^s = {abs(1 - lemma2.ETA * lemma2.L) ** s:.5f}; |x_120 - x*| = {distance[-1]:.2e}")
    assert abs(distance[-1] - abs(limit - x_star)) < 1e-9
    ax.semilogy(trace.rounds, np.maximum(distance, 1e-17), "o-", ms=3, label=f"s = {s}")
assert abs(lemma2.closed_form(1)[0] - x_star) < 1e-12  # one local step: no drift
ax.set(xlabel="round t", ylabel=r"$|x_t-x^\star|$", title=r"the plugin's kernel with s local steps, $\eta$ = 0.2")
ax.legend(fontsize=8)
plt.show()
