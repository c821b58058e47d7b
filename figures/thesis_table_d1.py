r"""Thesis Table D.1 analogue (seed 001 App. D, Table D.1; digest 001_thesis_ch4-6 §3.4, §3.6 "Table D.1"): the
stochastic-gradient variance of every exit of an early-exit network, the input of §5.3.4's optimisation-dominant
rule (:math:`\tilde\Lambda_e\propto1/\sigma^2_{i,e}`, A19 and the term :math:`\sum\alpha^2\sigma^2` of (D.50)) and of
our Balanced Adj proposal (:func:`theorylab.cis.strategies.balanced_adj`).  The thesis prints, for ResNet-18 on
CIFAR10 / CIFAR100, the "average point-wise gradient variance" 0.00374 / 0.00224 / 0.00101 and 0.00216 / 0.00126 /
0.00101 for exits 1 / 2 / 3 (shown beside ours, as the paper's numbers on its own setting).

**Exact, on the nested linear testbed** (:mod:`theorylab.testbeds.early_exit`, :data:`THESIS_LIKE`).  The per-sample
gradient of exit :math:`e` is :math:`g_e(w,z)=P_ex\,r+\mu_0w` with residual :math:`r=w^\top P_ex-y`.  The features
are scaled Rademacher, :math:`x_j^2=s_j^2` for every sample, so with moments :math:`(S_{xx},S_{xy},S_{yy})`
(population, or a node's data set) and :math:`\ell_e(w)=\tfrac12\mathbb E r^2` (the exit loss without its ridge),
:math:`\nabla\ell_e(w)=\mathbb E[P_ex\,r]=P_e(S_{xx}P_ew-S_{xy})`, and the covariance of :math:`g_e` has diagonal

.. math:: \mathrm{Var}\,g_{e,j}=[P_e]_{jj}\,s_j^2\,2\ell_e(w)-(\nabla\ell_e(w))_j^2,\qquad
          \sigma^2_e(w,B)=\mathbb E\|g_{e,\mathcal B}-\nabla F_e(w)\|^2
          =\frac{2\,c_e\,\ell_e(w)-\|\nabla\ell_e(w)\|^2}{B},\quad c_e=\sum_{j\le e}s_j^2,

for a minibatch :math:`\mathcal B` of :math:`B` i.i.d. samples (the ridge term is deterministic and cancels).  With a
node's empirical moments the same formula is exact for :math:`B` draws with replacement from its data set.  The table
gives it at :math:`w=0` (the freshly instantiated network, as the thesis' procedure) and at the population minimiser
:math:`w^*` of the Equal Weight objective, for :math:`B=128` (the thesis' batch, §5.4.3): the total
:math:`\sigma_e^2` and the mean over parameters (the "point-wise" average; over the :math:`d_e` parameters exit
:math:`e` reaches, or over all :math:`d`, since the thesis does not say — digest [UNCLEAR]).

**Monte Carlo, on the early-exit MLP stand-in** (:mod:`theorylab.testbeds.early_exit_net`: 3 ReLU blocks of width 32,
one linear head each, on scikit-learn's digits standardised as the Fed-CIS image claims do (:func:`theorylab.testbeds.early_exit_net.flat_standardised`)),
the thesis' procedure (digest §3.6): instantiate the network (He-normal, one per replica), iterate over one
shuffled epoch of minibatches, take every parameter's variance across the minibatch gradients of each exit's
cross-entropy, average over parameters (the exit's own, or all), mean ± standard error over replicas.  The thesis
does not say at which model it measured; the table gives the freshly initialised network and the network after
5 (quick) / 20 epochs of plain SGD (step 0.1) on the Equal Weight mean of the exit losses.

Deviations: linear testbed and a 3-block MLP on digits instead of ResNet-18 on CIFAR; batch 32 on digits (1437
training images make 44 minibatches per epoch; 128 would give 11); the magnitudes are not comparable to the thesis'
(other models, losses and scales), their ordering and the ratio exit 1 / exit 3 are.
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.cis.strategies import equal_weight
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.rng import Streams
from theorylab.testbeds.data import load
from theorylab.testbeds.early_exit import THESIS_LIKE, NestedLinear, combine, exit_quadratics, minimiser, population, \
    value
from theorylab.testbeds.early_exit_net import exit_logits, flat_standardised, init_params, layout
from theorylab.threads import one_thread

PRINTED = {"CIFAR10": (0.00374, 0.00224, 0.00101), "CIFAR100": (0.00216, 0.00126, 0.00101)}  # Table D.1
LINEAR_BATCH, NET_BATCH, HIDDEN, TRAIN_LR = 128, 32, 32, 0.1


def gradient_variance(tb: NestedLinear, w, batch: int, moments=None) -> np.ndarray:
    r"""``(E, d)``: the variance of every coordinate of the minibatch gradient of every exit at ``w`` for ``batch``
    i.i.d. samples (module docstring); ``moments = (sxx, sxy, syy)`` of a data set, or the population's when None.
    Summed over the last axis it is :math:`\mathbb E\|g_{e,\mathcal B}-\nabla F_e(w)\|^2`."""
    if int(batch) != batch or batch < 1:
        raise ValueError(f"batch must be an integer >= 1; got {batch}")
    w = np.asarray(w, dtype=np.float64)
    q = population(tb) if moments is None else exit_quadratics(tb, *moments)
    half_r2 = value(q, w) - 0.5 * tb.ridge * w @ w  # (E,): l_e(w) = E[r^2] / 2
    grad = (q.hess - tb.ridge * np.eye(tb.dim)) @ w - q.lin  # (E, d): grad l_e(w), zero outside exit e's blocks
    s2 = np.asarray(tb.scales) ** 2
    return (tb.masks() * s2 * 2 * half_r2[:, None] - grad ** 2) / batch


def linear_rows(tb: NestedLinear = THESIS_LIKE, batch: int = LINEAR_BATCH) -> dict[str, np.ndarray]:
    """Table rows of the closed form at w = 0 and at the Equal Weight population minimiser: total and per parameter."""
    w_star = minimiser(combine(population(tb), equal_weight(tb.n_exits)))
    own = tb.masks().sum(1)
    rows = {}
    for label, w in (("w = 0", np.zeros(tb.dim)), ("w* (Equal Weight)", w_star)):
        total = gradient_variance(tb, w, batch).sum(1)
        rows[f"linear, {label}: sigma_e^2 = E||g_B - grad F_e||^2"] = total
        rows[f"linear, {label}: per parameter (exit's own d_e)"] = total / own
        rows[f"linear, {label}: per parameter (all d = {tb.dim})"] = total / tb.dim
    return rows


def exit_masks(shapes, n_exits: int) -> np.ndarray:
    """``(E, P)`` bool: the parameters exit e reaches (trunk blocks 0..e and head e) in :func:`layout`'s order."""
    sizes = [int(np.prod(shape)) for _, shape in shapes]
    kind = np.repeat([name[0] for name, _ in shapes], sizes)
    block = np.repeat([int(name[1:]) for name, _ in shapes], sizes)
    trunk = np.isin(kind, ("W", "b"))
    return np.stack([(trunk & (block <= e)) | (~trunk & (block == e)) for e in range(n_exits)])


def _exit_losses(theta, x, y, index, shapes) -> list[torch.Tensor]:
    """Every exit's mean cross-entropy on the minibatch ``index`` ``(R, B)``, summed over replicas (so that the
    gradient's row r is replica r's)."""
    return [torch.nn.functional.cross_entropy(z.transpose(1, 2), y[index], reduction="none").mean(1).sum()
            for z in exit_logits(theta, x[index], shapes)]


def network_variance(seed: int, replicas: int, batch: int = NET_BATCH, n_exits: int = 3,
                     train_epochs: int = 0, lr: float = TRAIN_LR) -> dict[str, np.ndarray]:
    r"""Per replica ``(R, E)``: the mean over parameters (``own``: those exit e reaches; ``all``) of the variance,
    across one epoch's minibatches, of exit e's cross-entropy gradient at a freshly initialised early-exit MLP, or
    after ``train_epochs`` epochs of plain SGD (step ``lr``) on the Equal Weight mean of the exit losses."""
    train, _ = load("digits")  # single channel, standardised as the Fed-CIS image claims do
    x, y = flat_standardised(train)
    shapes = layout(x.shape[1], HIDDEN, train.classes, n_exits)
    streams = Streams(seed, replicas)
    theta = init_params(shapes, streams).requires_grad_(True)
    count = len(y) // batch
    for _ in range(train_epochs):
        order = torch.argsort(streams.uniform("data", (len(y),)), dim=1)
        for k in range(count):
            grad, = torch.autograd.grad(sum(_exit_losses(theta, x, y, order[:, k * batch:(k + 1) * batch], shapes)),
                                        theta)
            theta = (theta - lr / n_exits * grad).detach().requires_grad_(True)
    order = torch.argsort(streams.uniform("data", (len(y),)), dim=1)  # one shuffled epoch per replica
    total = torch.zeros(n_exits, replicas, theta.shape[1], dtype=torch.float64)
    squares = torch.zeros_like(total)
    for k in range(count):
        losses = _exit_losses(theta, x, y, order[:, k * batch:(k + 1) * batch], shapes)
        for e, loss in enumerate(losses):
            grad, = torch.autograd.grad(loss, theta, retain_graph=e < n_exits - 1)
            total[e] += grad.double()
            squares[e] += grad.double() ** 2
    var = ((squares - total ** 2 / count) / (count - 1)).numpy()  # (E, R, P), unbiased across minibatches
    masks = exit_masks(shapes, n_exits)
    own = np.stack([var[e][:, masks[e]].mean(1) for e in range(n_exits)], axis=1)
    return {"own": own, "all": var.mean(2).T, "minibatches": count}


def compute(ctx, replicas: int | None = None, train_epochs: int | None = None) -> dict:
    replicas, train_epochs = replicas or ctx.pick(8, 64), train_epochs or ctx.pick(5, 20)
    rows = {k: (v, None) for k, v in linear_rows().items()}
    for epochs, state in ((0, "at init"), (train_epochs, f"after {train_epochs} SGD epochs")):
        net = network_variance(ctx.seed, replicas, train_epochs=epochs)
        for key, label in (("own", "exit's own parameters"), ("all", "all parameters")):
            values = net[key]
            rows[f"MLP on digits {state} (MC): per parameter, {label}"] = (
                values.mean(0), values.std(0, ddof=1) / np.sqrt(replicas) if replicas > 1 else None)
    rows |= {f"thesis Table D.1, {name} (ResNet-18, batch 128)": (np.array(v), None) for name, v in PRINTED.items()}
    return {"rows": rows, "replicas": replicas, "minibatches": net["minibatches"], "train_epochs": train_epochs}


def _cell(mean: float, se) -> str:
    return f"{mean:.3g}" if se is None else f"{mean:.3g} ± {se:.1g}"


def draw(data: dict, path, title: str):
    plt = pyplot()
    rows = data["rows"]
    fig, ax = plt.subplots(figsize=(12, 1.0 + 0.3 * len(rows)))
    cells = [[_cell(m, None if se is None else se[e]) for e, m in enumerate(mean)] + [f"{mean[0] / mean[-1]:.3g}"]
             for mean, se in rows.values()]
    ax.axis("off")
    table = ax.table(cellText=cells, rowLabels=list(rows), colLabels=["exit 1", "exit 2", "exit 3", "exit 1 / exit 3"],
                     cellLoc="center", bbox=(0.38, 0.0, 0.62, 1.0))
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    fig.subplots_adjust(left=0.02, right=0.98, bottom=0.03, top=1 - 0.75 / fig.get_figheight())
    fig.suptitle(title, fontsize=9)
    return save(fig, path)


@register("figure", "thesis-table-d1")
@one_thread
def render(ctx):
    """Thesis Table D.1 analogue: per-exit gradient variance, exact on the nested linear testbed and by Monte Carlo
    on the early-exit MLP (digits), beside the thesis' CIFAR values."""
    data = compute(ctx)
    title = (f"Thesis Table D.1 analogue: per-exit minibatch-gradient variance. Linear: closed form, B = {LINEAR_BATCH}."
             f" MLP: {data['minibatches']} minibatches of {NET_BATCH}, {data['replicas']} initialisations, mean ± se"
             f"{' (quick)' if ctx.quick else ''}.\nLast two rows: the thesis' numbers on its own setting (CIFAR, "
             "ResNet-18); magnitudes are not comparable, orderings and ratios are.")
    return draw(data, ctx.figure_path("thesis-table-d1"), title)
