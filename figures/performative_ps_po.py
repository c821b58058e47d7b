r"""Teaching figure: performatively stable vs performatively optimal points as the sensitivity grows.

Gaussian-mean testbed (digest 003 §4.1.3, §5.3), :math:`\bar m=10`, all in closed form.

(a) :math:`\theta^{PS}=\bar m/(1-\bar\epsilon)` against :math:`\bar\epsilon`, with :math:`\theta^{PO}` for homogeneous
sensitivities (:math:`\theta^{PO}=\theta^{PS}`), for heterogeneous sensitivities of variance 0.1 (squared loss:
:math:`\theta^{PO}=\bar m\bar a/(\bar a^2+V)`, :math:`\bar a=1-\bar\epsilon`) and for the loss linear in :math:`z`
(:math:`\theta^{PO}=\bar m/(1-2\bar\epsilon)`).  RRM contracts with factor :math:`|\bar\epsilon|`: PS attracts for
:math:`|\bar\epsilon|<1`, does not exist at :math:`\bar\epsilon=1`, and exists but repels for :math:`\bar\epsilon>1`.
(b) For :math:`\bar\epsilon=0.9`, :math:`V=0.1`: the performative risk :math:`\mathrm{PR}(\theta)=f(\theta;\theta)`
(minimised at PO) and the decoupled risk :math:`f(\theta;\theta^{PS})` (minimised at PS, the fixed point).
"""

from __future__ import annotations

import numpy as np

from theorylab.testbeds.gaussian_mean import gaussian_mean
from theorylab.plotting import pyplot, save
from theorylab.registry import register

M_BAR, VAR = 10.0, 0.1
SPREAD = np.sqrt(VAR) * np.array([1.0, -1.0])  # two equal-weight clients: eps_bar +/- sqrt(V)


def instance(eps_bar: float, heterogeneous: bool, loss: str = "squared"):
    eps = eps_bar + (SPREAD if heterogeneous else np.zeros(2))
    return gaussian_mean([M_BAR, M_BAR], eps, [0.5, 0.5], sigma=0.0, loss=loss)


def compute(ctx=None) -> dict:
    eps = np.linspace(-0.95, 1.6, 1021)
    eps = eps[np.abs(eps - 1.0) > 0.02]
    out = {"eps": eps, "ps": M_BAR / (1 - eps),
           "po_hetero": np.array([instance(e, True).theta_po for e in eps])}
    lin = eps[eps < 0.49]
    out["eps_linear"], out["po_linear"] = lin, np.array([instance(e, False, "linear").theta_po for e in lin])
    problem = instance(0.9, True)
    theta = np.linspace(-20, 140, 801)
    out.update(theta=theta, risk=problem.performative_risk(theta), decoupled=problem.decoupled_risk(theta, problem.theta_ps),
               ps_point=problem.theta_ps, po_point=problem.theta_po)
    return out


def draw(data: dict, path):
    plt = pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    eps = data["eps"]
    for side in (eps < 1, eps > 1):
        ax.plot(eps[side], data["ps"][side], "k", lw=1.6)
    ax.plot([], [], "k", lw=1.6, label=r"$\theta^{PS}=\bar m/(1-\bar\epsilon)$ $=\theta^{PO}$ if all $\epsilon_i$ equal")
    ax.plot(eps, data["po_hetero"], "C1", lw=1.3, label=r"$\theta^{PO}$, heterogeneous $\epsilon$ (Var 0.1), squared loss")
    ax.plot(data["eps_linear"], data["po_linear"], "C2", lw=1.3, label=r"$\theta^{PO}$, loss $\theta^2/2-z\theta$ (linear in $z$)")
    ax.axvspan(-1, 1, color="C0", alpha=0.06, lw=0)
    ax.axvspan(1, 1.6, color="C3", alpha=0.08, lw=0)
    ax.axvline(1, color="C3", lw=0.8, ls=":")
    ax.text(0.0, 165, "RRM contracts (factor $|\\bar\\epsilon|$):\nPS attracts", fontsize=7, ha="center")
    ax.text(1.3, 165, "PS exists\nbut repels", fontsize=7, ha="center", color="C3")
    ax.set(xlim=(-0.95, 1.6), ylim=(-60, 200), xlabel=r"mean sensitivity $\bar\epsilon$", ylabel=r"$\theta$",
           title=r"(a) PS vs PO, $\bar m=10$")
    ax.legend(fontsize=7, loc="lower left")
    bx.plot(data["theta"], data["risk"], "C1", label=r"performative risk $\mathrm{PR}(\theta)=f(\theta;\theta)$")
    bx.plot(data["theta"], data["decoupled"], "k", label=r"decoupled risk $f(\theta;\theta^{PS})$")
    bx.axvline(data["po_point"], color="C1", ls="--", lw=0.8)
    bx.axvline(data["ps_point"], color="k", ls="--", lw=0.8)
    bx.text(data["po_point"], 1100, f" PO = {data['po_point']:.2f}", color="C1", fontsize=7)
    bx.text(data["ps_point"], 1100, f"PS = {data['ps_point']:.0f} ", fontsize=7, ha="right")
    bx.set(ylim=(0, 1500), xlabel=r"$\theta$", ylabel="risk", title=r"(b) $\bar\epsilon=0.9$, Var$(\epsilon)=0.1$: PO minimises PR, "
                                                   "PS is a fixed point")
    bx.legend(fontsize=7, loc="upper right")
    fig.suptitle("Performative stability vs optimality on the Gaussian-mean testbed (closed forms, digest 003 §4.1.3)")
    return save(fig, path)


@register("figure", "performative-ps-vs-po")
def render(ctx):
    """Teaching figure: PS vs PO as the mean sensitivity eps_bar varies (closed forms)."""
    return draw(compute(ctx), ctx.figure_path("performative-ps-vs-po"))
