r"""Weighted Gaussian-mean performative testbed (seed 003 §4.1; digest 003 §4.1.3–§4.1.4, §5.3).

Client :math:`i` (weight :math:`p_i`) sees data :math:`Z\sim\mathcal D_i(\theta)=\mathcal N(m_i+\epsilon_i\theta,\sigma_d^2)`
that shift linearly with the model it deploys.  Two losses share the gradient
:math:`\nabla_\theta\ell=\theta-z` and hence the P-FedAvg dynamics, but not the performative optimum:

* ``loss="squared"``: :math:`\ell=\tfrac12(\theta-z)^2` (the paper's experiment, seed L300);
* ``loss="linear"``: :math:`\ell=\tfrac12\theta^2-z\theta`, linear in :math:`z` and so
  :math:`L_z(\theta)=|\theta|`-Lipschitz in :math:`z` (digest §5.3, the testbed for Prop. 2.9).

Closed forms (digest §4.1.3; :math:`\bar m=\sum_ip_im_i`, :math:`\bar\epsilon=\sum_ip_i\epsilon_i` signed):

.. math::
    f(\theta;\tilde\theta)=\sum_ip_i\,\mathbb E_{\mathcal D_i(\tilde\theta)}\ell(\theta;Z),\qquad
    \Phi(\tilde\theta)=\arg\min_\theta f(\theta;\tilde\theta)=\bar m+\bar\epsilon\tilde\theta,\qquad
    \theta^{PS}=\frac{\bar m}{1-\bar\epsilon},

so repeated risk minimisation contracts with factor :math:`|\bar\epsilon|`.  The performative risk
:math:`\mathrm{PR}(\theta)=f(\theta;\theta)` gives

.. math::
    \theta^{PO}_{\rm squared}=\frac{\sum_ip_i(1-\epsilon_i)m_i}{\sum_ip_i(1-\epsilon_i)^2},\qquad
    \theta^{PO}_{\rm linear}=\frac{\bar m}{1-2\bar\epsilon}\ \ (\bar\epsilon<\tfrac12).

Exact assumption constants (digest §4.1.4): :math:`\mu=L=1`; :math:`W_1`-sensitivity :math:`|\epsilon_i|`;
A2.5 :math:`\sigma^2=\sigma_d^2`; A2.6
:math:`\varsigma^2_{\min}=\max_i[(\epsilon_i-\bar\epsilon)^2+((\epsilon_i-\bar\epsilon)\theta^{PS}+m_i-\bar m)^2]`;
the bounded-gradient constant :math:`G^2` of (3)/D.1 is infinite.

The kernel contract draws the *base* noise :math:`\xi\sim\mathcal N(0,1)` (stream ``data``) and
``stochastic_grads`` pushes it forward at each client's *current local* model,
:math:`Z=m_i+\epsilon_i\theta_i+\sigma_d\xi`, so every local step samples afresh from
:math:`\mathcal D_i(\theta_i^t)` (seed L169).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import torch

from theorylab.testbeds.quadratic import normalise_weights
from theorylab.memory import require
from theorylab.registry import register
from theorylab.rng import Streams
from theorylab.validation import floats, integer, real

LOSSES = ("squared", "linear")


def _vector(name: str, value, n: int | None = None) -> np.ndarray:
    arr = floats(name, value)
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be a non-empty 1-d sequence of finite numbers; got {value!r}")
    if n is not None and arr.size != n:
        raise ValueError(f"{name} must have one entry per client ({n}, as means); got {arr.size}")
    return arr


class GaussianMean:
    """The weighted Gaussian-mean problem; implements :class:`theorylab.problem.Problem` with ``dim = 1``.

    Args:
        means: :math:`m_i`, one per client.
        sensitivities: :math:`\\epsilon_i` (signed), one per client.
        weights: :math:`p_i` (default uniform), normalised to sum to one.
        sigma: data standard deviation :math:`\\sigma_d \\ge 0`.
        theta0: starting model (default :math:`\\bar m`, the authors' choice [R]).
        loss: ``"squared"`` or ``"linear"``.
    """

    autograd = False  # closed-form gradients: runs go under inference mode (theorylab.runner.autograd_off)

    dim = 1

    def __init__(self, means, sensitivities, weights=None, sigma: float = 1e-3, theta0: float | None = None,
                 loss: str = "squared", device="cpu", dtype=torch.float64):
        self.m = _vector("means", means)
        self.n_clients = self.m.size
        self.eps = _vector("sensitivities", sensitivities, self.n_clients)
        self.p = normalise_weights(weights, self.n_clients, "weights")
        real("sigma", sigma, 0.0, 1e150)  # the data standard deviation; sigma^2 must be a finite float
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}; got {loss!r}")
        self.sigma, self.loss = float(sigma), loss
        self.theta0 = self.m_bar if theta0 is None else float(theta0)
        self.device, self.dtype = torch.device(device), dtype
        t = dict(device=self.device, dtype=dtype)
        self.weights = torch.as_tensor(self.p, **t)
        self._m = torch.as_tensor(self.m, **t).view(-1, 1)
        self._slope = torch.as_tensor(1.0 - self.eps, **t).view(-1, 1)  # grad = (1 - eps_i) theta - m_i - sigma xi

    # ----- closed forms (numpy, float64) -----------------------------------------------------
    @property
    def m_bar(self) -> float:
        return float(self.p @ self.m)

    @property
    def eps_bar(self) -> float:
        """Signed :math:`\\bar\\epsilon=\\sum_ip_i\\epsilon_i`: the slope of :math:`\\Phi`."""
        return float(self.p @ self.eps)

    @property
    def eps_bar_w1(self) -> float:
        """:math:`\\sum_ip_i|\\epsilon_i|`: the :math:`\\bar\\epsilon` of A2.3 (W1 sensitivities are :math:`|\\epsilon_i|`)."""
        return float(self.p @ np.abs(self.eps))

    def phi(self, theta):
        """RRM map :math:`\\Phi(\\tilde\\theta)=\\bar m+\\bar\\epsilon\\tilde\\theta` (both losses)."""
        return self.m_bar + self.eps_bar * np.asarray(theta, dtype=np.float64)

    @property
    def contraction_factor(self) -> float:
        """Lipschitz constant of :math:`\\Phi`: :math:`|\\bar\\epsilon|` exactly."""
        return abs(self.eps_bar)

    @property
    def has_ps(self) -> bool:
        return self.eps_bar != 1.0

    @property
    def theta_ps(self) -> float:
        """:math:`\\bar m/(1-\\bar\\epsilon)`; exists for every :math:`\\bar\\epsilon\\ne1` (attracting iff :math:`|\\bar\\epsilon|<1`)."""
        if not self.has_ps:
            raise ValueError("no performatively stable point: eps_bar = 1 makes Phi a pure translation")
        return self.m_bar / (1.0 - self.eps_bar)

    @property
    def pr_curvature(self) -> float:
        """:math:`\\mathrm{PR}''`: :math:`\\sum_ip_i(1-\\epsilon_i)^2` (squared) or :math:`1-2\\bar\\epsilon` (linear)."""
        if self.loss == "squared":
            return float(self.p @ (1.0 - self.eps) ** 2)
        return 1.0 - 2.0 * self.eps_bar

    @property
    def theta_po(self) -> float:
        """Minimiser of the performative risk (closed form; needs :math:`\\mathrm{PR}''>0`)."""
        if self.pr_curvature <= 0:
            raise ValueError(f"the performative risk is not strictly convex (PR'' = {self.pr_curvature:g}); no PO")
        if self.loss == "squared":
            return float(self.p @ ((1.0 - self.eps) * self.m)) / self.pr_curvature
        return self.m_bar / self.pr_curvature

    def decoupled_risk(self, theta, deployed) -> np.ndarray:
        """:math:`f(\\theta;\\tilde\\theta)=\\sum_ip_i\\mathbb E_{Z\\sim\\mathcal D_i(\\tilde\\theta)}\\ell(\\theta;Z)`."""
        theta, deployed = np.asarray(theta, dtype=np.float64), np.asarray(deployed, dtype=np.float64)
        mean_z = self.m + self.eps * deployed[..., None]  # (..., N)
        if self.loss == "squared":
            per_client = 0.5 * (theta[..., None] - mean_z) ** 2 + 0.5 * self.sigma ** 2
        else:
            per_client = 0.5 * theta[..., None] ** 2 - mean_z * theta[..., None]
        return per_client @ self.p

    def performative_risk(self, theta) -> np.ndarray:
        """:math:`\\mathrm{PR}(\\theta)=f(\\theta;\\theta)`."""
        return self.decoupled_risk(theta, theta)

    def client_gradients(self, theta) -> np.ndarray:
        """:math:`\\nabla f_i(\\theta;\\theta)=(1-\\epsilon_i)\\theta-m_i` for every client (shape ``(..., N)``)."""
        return (1.0 - self.eps) * np.asarray(theta, dtype=np.float64)[..., None] - self.m

    # ----- exact assumption constants (digest §4.1.4) ----------------------------------------
    mu = 1.0  # f(.; theta~) is exactly 1-strongly convex (both losses)
    L = 1.0  # |grad l(t,z) - grad l(t',z')| <= |t-t'| + |z-z'|

    @property
    def sensitivities_w1(self) -> np.ndarray:
        """:math:`W_1(\\mathcal N(a,s^2),\\mathcal N(b,s^2))=|a-b|`, so client :math:`i` is :math:`|\\epsilon_i|`-sensitive."""
        return np.abs(self.eps)

    @property
    def sigma2(self) -> float:
        """Minimal A2.5 constant: :math:`\\mathrm{Var}(Z)=\\sigma_d^2`."""
        return self.sigma ** 2

    @property
    def varsigma2(self) -> float:
        """Minimal A2.6 constant, :math:`\\max_i[(\\epsilon_i-\\bar\\epsilon)^2+b_i^2]` with
        :math:`b_i=(\\epsilon_i-\\bar\\epsilon)\\theta^{PS}+m_i-\\bar m` (Cauchy–Schwarz, digest §4.1.4)."""
        a = self.eps - self.eps_bar
        b = a * self.theta_ps + self.m - self.m_bar
        return float(np.max(a * a + b * b))

    G2 = math.inf  # E|grad l|^2 = ((1-eps_i) theta - m_i)^2 + sigma^2 is unbounded: App. D does not apply

    def lipschitz_z(self, theta: float) -> float:
        """:math:`L_z`: :math:`|\\partial_z\\ell|=|\\theta|` for the linear loss; unbounded for the squared loss."""
        return abs(float(theta)) if self.loss == "linear" else math.inf

    # ----- kernel contract (torch) ------------------------------------------------------------
    def initial_point(self, replicas: int, streams: Streams) -> torch.Tensor:
        return torch.full((replicas, 1), self.theta0, device=self.device, dtype=self.dtype)

    def sample(self, streams: Streams, steps: int) -> Sequence[torch.Tensor | None]:
        """Scaled base noise :math:`\\sigma_d\\xi` of ``steps`` local steps, item ``k`` of shape ``(R, N, 1)``
        (``None`` if :math:`\\sigma_d=0`); sampled in float32 by the streams, cast once per round."""
        if self.sigma == 0.0:
            return [None] * steps
        xi = streams.normal("data", (steps, self.n_clients, 1), self.dtype, scale=self.sigma)
        return xi.unbind(1)

    def stochastic_grads(self, x: torch.Tensor, sample_k, active=None) -> torch.Tensor:
        """:math:`\\theta_i-Z_i` with :math:`Z_i=m_i+\\epsilon_i\\theta_i+\\sigma_d\\xi_i` drawn at each client's own model."""
        g = self._slope * x - self._m
        return g if sample_k is None else g.sub_(sample_k)

    def metrics(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """``theta``; ``dist2`` :math:`(\\theta-\\theta^{PS})^2` when PS exists; ``risk`` :math:`\\mathrm{PR}(\\theta)`."""
        theta = x[:, 0]
        out = {"theta": theta.clone()}
        if self.has_ps:
            out["dist2"] = (theta - self.theta_ps) ** 2
        coef = self.pr_curvature
        lin = float(self.p @ ((1.0 - self.eps) * self.m)) if self.loss == "squared" else self.m_bar
        const = 0.5 * float(self.p @ self.m ** 2) + 0.5 * self.sigma ** 2 if self.loss == "squared" else 0.0
        out["risk"] = 0.5 * coef * theta * theta - lin * theta + const
        return out


def paper_parameters(n_clients: int = 25, eps_var: float = 0.1, mu_var: float = 0.6, weights: str = "random",
                     seed: int = 0, variance: str = "unweighted", eps_avg: float = 0.9,
                     mu_avg: float = 10.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The authors' parameter generator [R] (``Gaussian_Performative_FedAvg_with.py``; digest §4.1.2).

    In this order from one seeded stream: :math:`p` = ``rand(N)`` normalised (``weights="random"``; no draw
    for ``"uniform"``), then :math:`\epsilon` = ``rand(N)`` scaled so its variance is ``eps_var`` and shifted
    so :math:`p^\top\epsilon` = ``eps_avg``, then :math:`m` the same way with ``mu_var`` and ``mu_avg``.
    ``variance="unweighted"`` is the code's ``np.var``; ``"weighted"`` uses the paper's
    :math:`\sum_ip_i(x_i-\bar x)^2` (they differ for random :math:`p`).

    The stream is ``np.random.RandomState(seed)``: a local legacy generator object (no global state)
    whose draws equal the authors' ``np.random.seed(seed); np.random.rand(...)``; a PCG64 ``Generator``
    would not reproduce their parameters and the digest's reference numbers.
    """
    if weights not in ("random", "uniform"):
        raise ValueError(f"weights must be 'random' or 'uniform'; got {weights!r}")
    if variance not in ("unweighted", "weighted"):
        raise ValueError(f"variance must be 'unweighted' or 'weighted'; got {variance!r}")
    n = integer("n_clients", n_clients, 2)
    require(8 * 6 * n, f"gaussian_mean_paper with n_clients={n_clients} (a few vectors of n_clients entries)")
    for name, value in (("eps_var", eps_var), ("mu_var", mu_var)):
        real(name, value, 0.0)
    for name, value in (("eps_avg", eps_avg), ("mu_avg", mu_avg)):
        real(name, value)
    rng = np.random.RandomState(integer("seed", seed, 0, 2**32 - 1))
    p = rng.rand(n) if weights == "random" else np.ones(n)
    p = p / p.sum()

    def spread(target_var: float, target_mean: float) -> np.ndarray:
        raw = rng.rand(n)
        var = np.var(raw) if variance == "unweighted" else float(p @ (raw - p @ raw) ** 2)
        scaled = math.sqrt(target_var / var) * raw
        return scaled + target_mean - scaled @ p

    eps = spread(eps_var, eps_avg)
    m = spread(mu_var, mu_avg)
    return m, eps, p


@register("testbed", "gaussian_mean")
def gaussian_mean(means, sensitivities, weights=None, sigma: float = 1e-3, theta0: float | None = None,
                  loss: str = "squared", device="cpu", dtype=torch.float64) -> GaussianMean:
    """Performative Gaussian mean: D_i(θ) = N(m_i + ε_i θ, σ²), weights p_i, given explicitly."""
    return GaussianMean(means, sensitivities, weights, sigma, theta0, loss, device, dtype)


@register("testbed", "gaussian_mean_paper")
def gaussian_mean_paper(n_clients: int = 25, eps_var: float = 0.1, mu_var: float = 0.6, weights: str = "random",
                        seed: int = 0, variance: str = "unweighted", eps_avg: float = 0.9, mu_avg: float = 10.0,
                        sigma: float = 1e-3, theta0: float | None = None, loss: str = "squared",
                        device="cpu", dtype=torch.float64) -> GaussianMean:
    """Seed 003 §4.1 instance from the authors' generator: N = 25, eps_bar = 0.9, m_bar = 10 (theta_PS = 100)."""
    m, eps, p = paper_parameters(n_clients, eps_var, mu_var, weights, seed, variance, eps_avg, mu_avg)
    return GaussianMean(m, eps, p, sigma, theta0, loss, device, dtype)
