"""Seed 003 §4.2 and App. E.2 (Figs 5, 8-10): P-FedAvg on credit scoring converges to theta_PS under every scheme,
and faster with a larger mini-batch (digest 003 §4.2, §8 V15, V18).  The released code's eps = 0 bug is in
:mod:`theorylab.validations.performative.released_code`.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures import performative_batch, performative_fig5
from theorylab.testbeds.credit_data import credit_deviations, credit_source
from theorylab.checks import equal, ours, paired_difference, slope_check
from theorylab.claims import Evidence, claim
from theorylab.performative.experiments import CREDIT_SCHEMES
from theorylab.threads import one_thread
from theorylab.validations.performative.common import SEED, credit_problem


@claim("performative.credit_convergence", f"{SEED} §4.2, Fig. 5 (L320-330); digest 003 §4.2, §8 V15",
       "On credit scoring (10 clients, eps_i ~ U[0.9, 1.1], E = 5, batch 4, K = 5) P-FedAvg converges to theta_PS "
       "under full participation, Scheme I and Scheme II.", kind="statement",
       where="§4.2 (L319-L324), Fig. 5; §5 (L330)",
       quote="To show the performance of P-FedAvg on a real world dataset … Figure 5 shows the loss function and the "
             "distance to the PS solution as the number of deployment rounds increases. … Our numerical results "
             "validate our theory and discussion", checks=("V15",))
@one_thread
def credit_convergence(ctx) -> Evidence:
    problem, source = credit_problem(ctx)
    fp = problem.rrm()
    root = problem.ps_root()
    checks = [equal("theta_PS: certified RRM vs Newton root of grad_1 f(theta; theta)",
                    float(np.max(np.abs(fp.theta - root))), 0.0, 1e-8, basis="independent",
                    note=f"RRM: {fp.iterations} steps to |step| <= 1e-8, cvxpy statuses "
                    f"{sorted({c['cvxpy_status'] for c in fp.certificates})}, each step certified to "
                    f"{max(c['certified_distance'] for c in fp.certificates):.1e}")]
    data = performative_fig5.compute(ctx, source)
    gap = float(np.linalg.norm(problem.theta_erm - problem.theta_ps))
    lr0, t0 = data["lr"]["lr0"], data["lr"]["t0"]
    spec = {"name": "credit", "source": source, "batch": 4}  # Fig. 5's batch, spelled as batch_size's runs spell it
    seeds = performative_batch.SEEDS
    for scheme, k in CREDIT_SCHEMES:
        runs = performative_fig5.credit_run(ctx, spec, scheme, k, seeds)
        steps, dist2, erm = runs["steps"], runs["dist2"], runs["erm_dist"]
        window = steps >= steps[-1] // 10
        note = f"{dist2.shape[0]} seeds; eta_t = {lr0 * t0:g}/(t + {t0:g})"
        checks.append(slope_check(f"{scheme}: slope of |theta - theta_PS|^2 vs t + gamma, last decade (decreasing)",
                                  steps[window] + t0, dist2[:, window], 0.0, "at_most", note, seed=ctx.seed))
        checks.append(ours(slope_check(f"{scheme}: the same slope against the theorems' O(1/t)",
                                       steps[window] + t0, dist2[:, window], -1.0, "at_most", note, seed=ctx.seed),
                           "the theorems' rate read on credit scoring, which is outside their assumptions (a loss "
                           "strongly convex only locally, our step size): a threshold of -1 is our reading"))
        checks.append(paired_difference(f"{scheme}: final |theta - theta_ERM| - |theta - theta_PS| (ends nearer PS)",
                                        erm[:, -1], np.sqrt(dist2[:, -1]), f"|theta_ERM - theta_PS| = {gap:.3g}"))
    path = performative_fig5.draw(data, ctx.figure_path("performative-fig5"))
    return Evidence(checks, figure=str(path), deviations=credit_deviations(source) + [
        f"Step size eta_t = {lr0 * t0:g}/(t + {t0:g}) over {data['horizon']} local steps, not the released code's "
        "50/(t+1e4) over 5e6 steps: beta must exceed 1/mu for an O(1/t) rate.",
        "Mini-batches are drawn with replacement within a batch (the authors: without).",
        f"The checks use {seeds} seeds per scheme (the batch-4 runs of performative.batch_size); the figure shows "
        f"{performative_fig5.SEEDS}, as the paper does. With {performative_fig5.SEEDS} seeds the Student-t interval "
        "of the per-seed slopes at the claim's Bonferroni share is several units wide (about [-4.4, 0.1] for full "
        "participation), so no slope check could decide."], notes=[
        f"|theta_ERM - theta_PS| = {gap:.4g} on the {source} data. {_real_erm_ps_gap(source)} The authors' runs end "
        "at distances 0.04-0.09 from PS (their logs, digest §4.2.3); a gap below that means their Fig. 5 cannot tell "
        "PS from theta_ERM, the target of the released code's eps = 0 bug."])


def _real_erm_ps_gap(source: str) -> str:
    """|theta_ERM - theta_PS| on GiveMeSomeCredit, computed when the data are installed (PS by Newton on the PS
    equation, which is cheap; the certified RRM runs only in the full budget)."""
    from theorylab.testbeds.credit import credit
    from theorylab.testbeds.credit_data import available

    if source == "real":
        return ""
    if not available():
        return "The real data are not installed, so the real-data gap is not computed."
    real = credit(source="real")
    value = float(np.linalg.norm(real.theta_erm - real.ps_root()))
    return f"On the real data it is {value:.3g} (Newton root of grad_1 f(theta; theta) = 0)."


@claim("performative.batch_size", f"{SEED} App. E.2 (L1242), Figs 8-10; digest 003 §4.2.1, §8 V18",
       "On credit scoring a larger mini-batch (1, 4, 16) makes P-FedAvg converge faster under full participation, "
       "Scheme I and Scheme II, especially for the two partial schemes, which with batch 16 converge as fast as full "
       "participation.", kind="statement", where="App. E.2 (L1242), Figs 8-10",
       quote="Using a larger batch size improves the convergence speed for all three schemes, especially for the two "
             "schemes of partial participation, both converging as fast as the full participation with batch size 16.",
       checks=("V18",))
@one_thread
def batch_size(ctx) -> Evidence:
    source = credit_source(ctx.quick)
    data = performative_batch.compute(ctx, source)
    final = {b: {scheme: r["dist2"][:, -1] for scheme, r in runs.items()} for b, runs in data["runs"].items()}
    checks = []
    for scheme, _ in CREDIT_SCHEMES:
        for small, large in zip(performative_batch.BATCHES, performative_batch.BATCHES[1:]):
            checks.append(paired_difference(f"{scheme}: final |theta - theta_PS|^2 at batch {small} minus batch "
                                            f"{large}", final[small][scheme], final[large][scheme],
                                            "common seeds across batch sizes (same client samples under Schemes I/II)"))
    gain = {scheme: final[1][scheme].mean() / final[16][scheme].mean() for scheme, _ in CREDIT_SCHEMES}
    versus_full = {scheme: final[16][scheme].mean() / final[16]["full"].mean() for scheme in ("I", "II")}
    lr = data["lr"]
    path = performative_batch.draw(data, ctx.figure_path("performative-batch"))
    return Evidence(checks, figure=str(path), deviations=credit_deviations(source) + [
        f"{performative_batch.SEEDS} seeds per setting (the paper shows 5) so that the paired differences have power; "
        f"eta_t = {lr['lr0'] * lr['t0']:g}/(t + {lr['t0']:g}) over {data['runs'][1]['full']['steps'][-1]} local steps "
        "as in performative.credit_convergence."], notes=[
        "Mean final squared distance, batch 1 over batch 16: " + ", ".join(f"{s} x{g:.3g}" for s, g in gain.items()) +
        " ('especially for the partial schemes' compares these).",
        "At batch 16, Scheme I / full = {I:.3g} and Scheme II / full = {II:.3g} in mean final squared distance. "
        "'As fast as full participation' is not checked: the paper gives no margin for it.".format(**versus_full)])
