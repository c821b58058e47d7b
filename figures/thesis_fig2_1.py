r"""Thesis Fig. 2.1a (seed 001 §2.5.2, L870–877; digest 001 §5.1–5.2, §8 V27): test accuracy vs round of CA-Fed
(:math:`\bar\kappa^2 = 1`), AdaFed, Unbiased, More available and F3AST on Synthetic LEAF(0.5, 0.5).

This module also holds the **setting shared by Figs. 2.1–2.3** (:func:`leaf_config`):

* testbed ``synthetic_leaf`` (:mod:`theorylab.testbeds.synthetic_leaf`); quick: :math:`N = 20` clients, full: :math:`N = 100`;
* availability: the thesis' four classes in equal blocks (digest §3.3, ``split="thesis_text"``): more available
  (:math:`\pi = 0.9`) / less available (:math:`\pi = 0.1`), each half correlated (:math:`\lambda_2 = 0.9`) and half
  weakly correlated (:math:`\lambda_2\sim\mathcal N(0, 0.01^2)`, drawn once from ``PCG64(2024)``); stationary start;
* methods (digest §2.5; :mod:`theorylab.kernels.aggregation`): Unbiased = ``fedavg`` ``all`` with
  :math:`q = \alpha/\pi`; More available = the same with :math:`q_i = 0` on the less available clients; AdaFed =
  ``fedavg`` ``active`` with :math:`q = \alpha/\pi`; CA-Fed = ``cafed`` with oracle :math:`(\pi, \lambda)`,
  :math:`\beta = 1` (the thesis' "beta = 0" read as the code's smoothness, digest §6 item 5), :math:`\tau = 0`, bias
  factor 4, and one of the two :math:`\hat F_i^\star` modes the digest lists (§2.6 [?], :data:`CAFED_MODES`): the
  oracle minimum :math:`F_i^\star` on exact losses (the author's code, digest §6 item 9; the default), or the running
  minimum of Alg. 3 line 4 on losses carrying one-minibatch noise (:func:`minibatch_noise`; with exact losses the
  running minimum makes the proxy vanish, digest §6 item 25).  Line 1's :math:`\hat F^{(0)}` needs no mode here: at
  :math:`\theta^0 = 0` every client's loss is :math:`\ln 10`, so the kernel's "losses at :math:`x^0`" and the code's
  "mean loss of the active clients at :math:`t = 1`" coincide; F3AST = the ``f3ast`` kernel of
  :mod:`theorylab.kernels.f3ast` with budget :math:`0.45N` (the thesis' 45 of 100) and smoothness :math:`1/T` —
  that kernel weights by :math:`\pi_k = 1/m`, not by :math:`\alpha` (the thesis gives no rule, digest §2.5 item 4);
* one common step setting for every method, :math:`K = 5` local steps, :math:`\eta_c = 0.05`, :math:`\eta_s = 1`
  (the thesis tuned :math:`\eta_c/\bar\eta` per method, Table A.2: 2.0/2.0 for Unbiased etc.; :math:`K` is not
  given).  With unnormalised inputs (:math:`\|\tilde x\|^2\approx 90`) :math:`\eta_c = 2` makes local SGD oscillate
  (the training gap of Unbiased after 100 rounds is 40x larger at :math:`\eta_c = 1, K = 2` than here);
* quick: :math:`T = 100`, 8 replicas; full: :math:`T = 200` (Figs. 2.1, 2.3) or 500 (Fig. 2.2), 10 replicas (the
  thesis' 10 runs); replicas share the dataset (seed 0) and differ in availability and minibatches.
"""

from __future__ import annotations

import numpy as np

from theorylab.config import RunConfig
from theorylab.plotting import pyplot, save
from theorylab.registry import build, register
from theorylab.threads import one_thread

WEAK = np.random.Generator(np.random.PCG64(2024)).normal(0.0, 0.01, size=50).round(6)  # lambda ~ N(0, eps^2)
STEPS = {"local_steps": 5, "lr": 0.05, "server": {"name": "sgd", "lr": 1.0}}
COLORS = {"CA-Fed": "C3", "AdaFed": "C2", "Unbiased": "C0", "More available": "C1", "F3AST": "C4"}


def clients(ctx) -> int:
    return ctx.pick(20, 100)


def horizon(ctx) -> int:
    """T of Figs. 2.1 and 2.3 (the thesis' 200 in full mode)."""
    return ctx.pick(100, 200)


def replicas(ctx) -> int:
    return ctx.pick(8, 10)


def budget(ctx, rounds: int) -> str:
    """The run size, as figure titles print it."""
    return f"{'quick: ' if ctx.quick else ''}N = {clients(ctx)}, T = {rounds}, {replicas(ctx)} replicas"


def availability(n_clients: int) -> tuple[list[float], list[float]]:
    """:math:`(\\pi_i, \\lambda_i)` of the four equal blocks: more available correlated, more available weakly
    correlated, less available correlated, less available weakly correlated."""
    if n_clients % 4 or n_clients > 100:
        raise ValueError(f"n_clients must be a multiple of 4 up to 100; got {n_clients}")
    k = n_clients // 4
    pi = [0.9] * (2 * k) + [0.1] * (2 * k)
    lam = [0.9] * k + WEAK[:k].tolist() + [0.9] * k + WEAK[k:2 * k].tolist()
    return pi, lam


def row_losses(problem, theta) -> np.ndarray:
    """Cross-entropy of every train row of a ``synthetic_leaf`` testbed at the flat model ``theta`` (no ridge term):
    :math:`\\log\\sum_c e^{\\theta_c^\\top\\tilde x} - \\theta_y^\\top\\tilde x`."""
    logits = problem.X @ np.asarray(theta, dtype=np.float64).reshape(-1, problem.X.shape[1]).T
    top = logits.max(1)
    return top + np.log(np.exp(logits - top[:, None]).sum(1)) - logits[np.arange(len(logits)), problem.Y]


def minibatch_noise(spec: dict) -> float:
    """The standard error of a one-minibatch estimate of a client's loss at :math:`\\theta^\\star`, averaged over the
    clients of the testbed ``spec``: the noise of the losses CA-Fed's running minimum reads (thesis §2.4.1, line 3)."""
    problem = build("testbed", spec)
    loss = row_losses(problem, problem.x_star)
    sd = np.array([loss[problem.owner == i].std(ddof=1) for i in range(problem.n_clients)])
    return float(sd.mean() / np.sqrt(problem.batch))


ORACLE, RUNNING_MIN = "oracle F_i* (the author's code)", "running-min F_i* on one-minibatch losses (Alg. 3)"
CAFED_MODES = (ORACLE, RUNNING_MIN)


def cafed_mode(mode: str, problem: dict) -> dict:
    """The ``cafed`` parameters of a mode of :data:`CAFED_MODES` on the testbed ``problem``."""
    if mode not in CAFED_MODES:
        raise ValueError(f"mode must be one of {CAFED_MODES}; got {mode!r}")
    return {"f_star": "oracle"} if mode == ORACLE else {"f_star": "running_min",
                                                        "loss_noise": minibatch_noise(problem)}


def methods(problem: dict, rounds: int, kappas=(1.0,), others=("AdaFed", "Unbiased", "More available"),
            mode: str = ORACLE, lr: float = STEPS["lr"]) -> dict:
    """Algorithm specs by label: CA-Fed for each ``kappas`` (label ``CA-Fed`` when there is one) in ``mode``
    (:data:`CAFED_MODES`), then ``others``; all with the local step ``lr`` (default the common 0.05)."""
    return method_specs(build("testbed", problem).alpha, rounds, cafed_mode(mode, problem), kappas, others, lr)


def method_specs(alpha, rounds: int, f_star: dict, kappas=(1.0,), others=("AdaFed", "Unbiased", "More available"),
                 lr: float = STEPS["lr"]) -> dict:
    """The specs of :func:`methods` for objective weights ``alpha`` (one per client, :math:`N` = ``len(alpha)`` in the
    four blocks of :func:`availability`) and CA-Fed's :math:`\\hat F_i^\\star` parameters ``f_star`` (those of
    :func:`cafed_mode`, or ``{"f_star": "running_min"}`` on a problem whose losses are minibatch estimates)."""
    pi, lam = availability(len(alpha))
    q = np.asarray(alpha) / np.asarray(pi)
    more = np.where(np.asarray(pi) > 0.5, q, 0.0)
    table = {
        "Unbiased": {"name": "fedavg", "aggregation": "all", "q": q.tolist()},
        "More available": {"name": "fedavg", "aggregation": "all", "q": more.tolist()},
        "AdaFed": {"name": "fedavg", "aggregation": "active", "q": q.tolist()},
        "F3AST": {"name": "f3ast", "budget": int(round(0.45 * len(pi))), "beta": 1.0 / rounds},
    }
    cafed = {"name": "cafed", "pi": pi, "lam": lam, **f_star}
    out = {("CA-Fed" if len(kappas) == 1 else f"CA-Fed ({k:g})"): {**cafed, "kappa2": k} for k in kappas}
    out.update({label: table[label] for label in others})
    return {label: {**spec, **STEPS, "lr": lr} for label, spec in out.items()}


def leaf_config(ctx, algorithm: dict, rounds: int, gamma: float = 0.5, every: int = 10) -> RunConfig:
    """One run of the shared setting with ``algorithm`` (a spec of :func:`methods`)."""
    n = clients(ctx)
    pi, lam = availability(n)
    return RunConfig(problem=leaf_problem(n, gamma), participation={"name": "markov", "pi": pi, "lam": lam},
                     algorithm=algorithm, rounds=rounds, replicas=replicas(ctx), seed=ctx.seed, every=every)


def leaf_problem(n_clients: int, gamma: float = 0.5) -> dict:
    """Synthetic LEAF(gamma, gamma) with dataset seed 0."""
    return {"name": "synthetic_leaf", "n_clients": n_clients, "gamma": gamma, "delta": gamma, "seed": 0}


def accuracy_curves(ctx, rounds: int, labels: dict, run=None) -> dict:
    """``{"rounds": eval rounds, label: (replicas, evals) test accuracy in %}`` for every spec in ``labels``;
    ``run`` (default ``ctx.run``) maps a config to a trace."""
    run = run or ctx.run
    out = {}
    for label, spec in labels.items():
        trace = run(leaf_config(ctx, spec, rounds))
        out["rounds"], out[label] = trace.rounds, 100.0 * trace.metrics["server.test_acc"]
    return out


def compute(ctx, run=None, mode: str = ORACLE, lr: float = STEPS["lr"],
            others=("AdaFed", "Unbiased", "More available", "F3AST")) -> dict:
    rounds = horizon(ctx)
    problem = leaf_problem(clients(ctx))
    return accuracy_curves(ctx, rounds, methods(problem, rounds, others=others, mode=mode, lr=lr), run)


def draw_curves(ax, data: dict, colors: dict | None = None) -> None:
    """Mean accuracy per round with a band of one sample standard deviation over replicas."""
    for i, (label, acc) in enumerate((k, v) for k, v in data.items() if k != "rounds"):
        mean, std = acc.mean(0), acc.std(0, ddof=1)
        color = (colors or {}).get(label, f"C{i}")
        ax.plot(data["rounds"], mean, color=color, label=f"{label} ({mean[-1]:.1f}%)", lw=1.2)
        ax.fill_between(data["rounds"], mean - std, mean + std, color=color, alpha=0.15, lw=0)
    ax.set(xlabel="round t", ylabel="test accuracy (%), alpha-weighted over clients")
    ax.legend(fontsize=7, title="mean ± sample std over replicas", title_fontsize=7)


def draw(data: dict, path, title: str, ylabel: str | None = None):
    """The curves of :func:`draw_curves` in Fig. 2.1's colours; ``ylabel`` replaces the default axis label."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 4), constrained_layout=True)
    draw_curves(ax, data, COLORS)
    if ylabel:
        ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=8)
    return save(fig, path)


@register("figure", "thesis-fig2-1")
@one_thread
def render(ctx):
    """Thesis Fig. 2.1a: accuracy vs round of CA-Fed, AdaFed, Unbiased, More available, F3AST on Synthetic LEAF."""
    title = f"Thesis Fig. 2.1a on Synthetic LEAF(0.5, 0.5) ({budget(ctx, horizon(ctx))})"
    return draw(compute(ctx), ctx.figure_path("thesis-fig2-1"), title)
