r"""How the gossip topology shapes AFGA (seed 002 Thm 4.6 eq. (3), Remark 4.10, Lemmas F.3/F.4; digest 002 §5 V14,
V15).

* V14: the bound (3) grows with :math:`\rho` only through its :math:`\mathcal O(1/R)` term
  :math:`L^2(1+\rho^2)\sigma_g^2 + \rho^2\sigma^2/\mathcal I`, so the time-averaged :math:`\|\nabla f(x_r)\|^2` should
  be non-decreasing in :math:`\rho` (Remark 4.10), with a small effect;
* V15: the consensus error :math:`\frac1N\|X_{r,t}^\perp\|_F^2` of Lemma F.4 carries :math:`\rho^2` and
  :math:`\eta_l^2` in every term: it grows with :math:`\rho`, and after the first local step it is exactly
  :math:`\eta_l^2\frac1N\|(W-J)G_{r,0}\|_F^2`, so doubling :math:`\eta_l` multiplies it by 4 (common random numbers).
  Lemma F.4 only bounds the error, and a bound growing in :math:`\rho` does not make the error grow: the ordering in
  :math:`\rho` is the digest's shape test (a *digest* claim), not a statement of the paper.

The topologies (complete :math:`J`, torus 4x5, Erdős–Rényi with Metropolis–Hastings weights, ring) come from the
``topology`` registry with their exact :math:`\rho = \|W-J\|_2`.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures import afga_rho_effect
from theorylab.figures.afga_sweeps import (DEVIATION, DIM, M, N, PAPER_LIKE, SAMPLER, TOPOLOGIES, average_gradnorm, quadratic,
                                 setting)
from theorylab.checks import auxiliary, equal, paired_difference, slope_check
from theorylab.claims import Evidence, claim
from theorylab.config import RunConfig
from theorylab.registry import build
from theorylab.threads import one_thread
from theorylab.validations.afga.paths import states

STEPS = afga_rho_effect.STEPS
RHO = {name: build("topology", spec).rho for name, spec in TOPOLOGIES.items()}
PAIRS = (("ER", "torus"), ("ring", "ER"), ("ring", "J"))  # resolvable at the quick budget; torus vs J is noted


def _label(name: str) -> str:
    return f"{name} (rho = {RHO[name]:.3f})"


@claim("afga.v14_rho_effect", "seed 002 Thm 4.6 eq. (3), Remark 4.10, Fig. 1(a); digest 002 §5 V14",
       "The time-averaged ||grad f(x_r)||^2 of AFGA is non-decreasing in rho (the effect sits in the O(1/R) terms).",
       kind="statement", where="§4, Remark 4.10; §6.2 (ablation of gossip averaging topology), Fig. 1(a)",
       quote=r"A larger value of  $\rho$  corresponds to a sparser network, which results in a larger variance term in "
             r"the convergence rate … which aligns with the theoretical result that smaller  $\rho$  can help reduce "
             r"the impact of data heterogeneity", checks=("V14",), partial=("CNN-F1",))
@one_thread
def v14_rho_effect(ctx) -> Evidence:
    data = afga_rho_effect.compute(ctx)
    score, rounds = data["score"], data["rounds"]
    replicas = len(score["J"])
    checks = [paired_difference(f"{_label(hi)} worse than {_label(lo)}", score[hi], score[lo],
                                note="avg ||grad f||^2, higher is worse") for hi, lo in PAIRS]
    means = ", ".join(f"{_label(k)}: {v.mean():.4g}" for k, v in score.items())
    gap = score["torus"] - score["J"]
    return Evidence(checks, figure=str(afga_rho_effect.draw(data, ctx.figure_path("afga-rho-effect"))), notes=[
        setting(STEPS, rounds, replicas, "eta_l = 0.05, eta = 0.003, eps = 1e-8 (digest PROTOTYPE step sizes)."),
        f"means: {means}",
        f"torus - J (rho 0.539 vs 0): {gap.mean():+.3g} ± {gap.std(ddof=1) / np.sqrt(replicas):.2g} (s.e.): the rho^2 "
        "effect is below resolution at this budget, as eq. (3) predicts for small rho; not a deciding check",
        "digest PROTOTYPE (N = 50, d = 20, I = 24, R = 400): 6.14e-3 (rho 0), 6.22e-3 (0.489), 8.46e-3 (0.995)"],
        deviations=[DEVIATION, "the 'random' topology is Erdős–Rényi(p = 0.25) with Metropolis–Hastings weights; the "
                               "paper's generator is unstated (digest §6 item 4)"])


def _consensus(ctx, lr: float, topology: dict, rounds: int, replicas: int) -> np.ndarray:
    config = RunConfig(problem=quadratic(N, DIM, 1.0), participation=SAMPLER, rounds=rounds, replicas=replicas,
                       seed=ctx.seed, algorithm={"name": "afga", "local_steps": STEPS, "lr": lr,
                                                "server": PAPER_LIKE["server"], "topology": topology,
                                                "instrument": True})
    return states(config, ("afga.consensus",))["afga.consensus"]  # (replicas, rounds, I)


@claim("afga.v15_consensus", "seed 002 Lemmas F.2-F.4; digest 002 §2.5, §5 V15",
       "The consensus error grows with rho and with eta_l^2 (exactly x4 after one step when eta_l doubles), and at "
       "most linearly in the local step t.",
       kind="digest", where="digest 002 §2.5 (Lemma F.3 row), §5 V15",
       quote=r"Shape test: the measured consensus error grows linearly in $t$, scales as $\eta_l^2$, and grows with "
             r"$\rho$.", checks=("V15",))
@one_thread
def v15_consensus(ctx) -> Evidence:
    rounds, replicas, lr = ctx.pick(30, 200), ctx.pick(16, 64), PAPER_LIKE["lr"]
    ring = _consensus(ctx, lr, TOPOLOGIES["ring"], rounds, replicas)
    double = _consensus(ctx, 2 * lr, TOPOLOGIES["ring"], 1, replicas)
    by_rho = {name: _consensus(ctx, lr, TOPOLOGIES[name], rounds, replicas).mean((1, 2)) for name in ("torus", "ER")}
    by_rho["ring"] = ring.mean((1, 2))
    ratio = double[:, 0, 0] / ring[:, 0, 0]
    profile = ring.mean((0, 1))
    return Evidence([
        equal("max |consensus after step 1 at 2 eta_l / at eta_l - 4| over replicas", np.abs(ratio - 4).max(), 0.0,
              1e-9, basis="closed_form", note="X_(r,1) - 1 xbar^T = -eta_l (W - J) G_(r,0) with G_(r,0) at x_r"),
        paired_difference(f"{_label('ER')} consensus above {_label('torus')}", by_rho["ER"], by_rho["torus"],
                          note="mean over rounds and local steps"),
        paired_difference(f"{_label('ring')} consensus above {_label('ER')}", by_rho["ring"], by_rho["ER"],
                          note="mean over rounds and local steps"),
        slope_check("ring: log-log slope of the consensus error after local step t = 1..I (mean over rounds) in t",
                    np.arange(1, STEPS + 1), ring.mean(1), 1.0, "at_most",
                    note="Lemmas F.3/F.4 bound it by (t + 1) C_1 eta_l^2 (...): linear growth in t at most")],
        notes=[setting(STEPS, rounds, replicas, "eta_l = 0.05; W = J gives exactly 0 (claim afga.v6_complete_graph)."),
               "ring: mean consensus error after local step t = 1..I: " + ", ".join(f"{v:.3g}" for v in profile)
               + " (Lemma F.3/F.4 bound it by (t+1) C_1 eta_l^2 (...), C_1 unknown; the slope check tests the bound's "
               "exponent, the digest's 'grows linearly in t')"],
        deviations=[DEVIATION])


@claim("afga.v19_threshold", "seed 002 Thm 4.6 (rho <= M/(M+N)), eq. (32); digest 002 §2.6, §5 V19",
       "The condition rho <= M/(M+N) is a proof artefact: across it AFGA degrades smoothly and monotonically in rho "
       "(W_lambda = lambda I + (1 - lambda) J has rho = lambda exactly).", kind="scope", where="§4, Thm 4.6",
       quote=r"and the network spectral gap satisfies  $\rho \leq \frac{M}{M+N}$", checks=("V19",))
@one_thread
def v19_threshold(ctx) -> Evidence:
    threshold = M / (M + N)
    lams = ctx.pick([threshold, 0.25, 0.5, 0.95], [0.0, 0.05, 0.1, threshold, 0.25, 0.5, 0.75, 0.95])
    rounds, replicas, steps = ctx.pick(150, 400), ctx.pick(32, 64), 4
    score = [average_gradnorm(ctx, dict(PAPER_LIKE, topology={"name": "interpolated", "n": N, "lam": lam}),
                              steps=steps, rounds=rounds, replicas=replicas) for lam in lams]
    rho = [build("topology", {"name": "interpolated", "n": N, "lam": lam}).rho for lam in lams]
    checks = [auxiliary(equal("max |rho(W_lambda) - lambda|", max(abs(r - lam) for r, lam in zip(rho, lams)), 0.0,
                              1e-12, basis="closed_form",
                              note="W_lambda - J = lambda (I - J), an orthogonal projection times lambda"))]
    start = lams.index(threshold)
    checks += [paired_difference(f"lambda = {hi:.3g} above lambda = {lo:.3g}", score[k + 1], score[k],
                                 note="avg ||grad f||^2; common random numbers")
               for k, (lo, hi) in enumerate(zip(lams[start:-1], lams[start + 1:]), start)]
    means = ", ".join(f"{lam:.3g}: {s.mean():.5g}" for lam, s in zip(lams, score))
    return Evidence(checks, notes=[
        setting(steps, rounds, replicas,
                f"threshold M/(M+N) = {threshold:.4f}; eta_l = 0.05, eta = 0.003, eps = 1e-8."),
        f"means by lambda: {means}; below the threshold the rho^2 effect is below resolution (no deciding check there)",
        "AFGA on the ring (rho = 0.967, six times the threshold) still shows the R^{-1/2} rate "
        "(claim afga.v11_rate_in_R)",
        "that the paper's own experiments violate the condition is claimed in validations/afga/theory.py"],
        deviations=[DEVIATION])
