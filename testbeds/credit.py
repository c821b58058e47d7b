r"""Credit-scoring strategic classification (seed 003 §4.2; digest 003 §4.2.2–§4.2.5).

Data :math:`(x,y)`, :math:`x\in\mathbb R^{11}` (10 standardised features and a bias), from
:mod:`theorylab.testbeds.credit_data`, split into :math:`N` equal contiguous clients of :math:`M=\lfloor n/N\rfloor` rows
(the remainder is dropped [R]), :math:`p_i=1/N`.  Client :math:`i`'s applicants best-respond to a deployed
:math:`\tilde\theta` on the strategic features :math:`S=\{0,5,7\}` (revolving utilisation, open credit lines,
real-estate loans) with linear utility and quadratic cost (Perdomo et al. 2020):

.. math::
    x'_S=x_S-\epsilon_i\tilde\theta_S,\qquad x'_{\bar S}=x_{\bar S},\qquad y'=y,

so :math:`\mathcal D_i(\tilde\theta)` is a translation and :math:`W_1(\mathcal D_i(\theta),\mathcal D_i(\theta'))
=\epsilon_i\|\theta_S-\theta'_S\|\le\epsilon_i\|\theta-\theta'\|` exactly.  Loss: regularised logistic,
intercept not regularised, averaged over rows,

.. math::
    f(\theta;\tilde\theta)=\frac1N\sum_i\frac1M\sum_{j}\big[\log(1+e^{u_{ij}})-y_ju_{ij}\big]
    +\frac\lambda2\|\theta_{0:10}\|^2,\qquad u_{ij}=x_j^\top\theta-\epsilon_i\tilde\theta_S^\top\theta_S,

and the performative risk :math:`\mathrm{PR}(\theta)=f(\theta;\theta)` (the quantity the authors log as "loss").
Defaults follow the paper: :math:`N=10`, :math:`\epsilon_i\sim U[0.9,1.1]` (drawn from a seeded PCG64
generator), :math:`\lambda=1/n` with :math:`n` every preprocessed row, the remainder that the equal split
drops included (:math:`n=18{,}357` on the real data: the authors' logged :math:`\lambda=5.4475\cdot10^{-5}`),
mini-batches of 4 (drawn with replacement within a batch; the authors draw without — a repeat has probability
:math:`\approx B^2/2M<0.5\%` and both are unbiased), start at :math:`\theta_{\rm ERM}=\Phi(0)` [R].

Ground truth: :math:`\theta^{PS}` by repeated risk minimisation, each step a cvxpy solve (SCS,
warm-started; the exponential-cone interior-point solver stalls on these heavy-tailed features) certified in
numpy by Newton steps until the strong-convexity bound :math:`\|\nabla\|/\lambda_{\min}(\nabla^2)\le` ``1e-10``;
cross-checked by a Newton root solve of :math:`\nabla_1f(\theta;\theta)=0`.  :math:`\theta^{PO}` by multi-start
L-BFGS on the non-convex PR.

``released_code_local_eps_zero=True`` reproduces **the released code's bug** (digest §4.2.4 item 1): local steps
best-respond with :math:`\epsilon=0`, so P-FedAvg trains on unshifted data and targets :math:`\theta_{\rm ERM}`,
not :math:`\theta^{PS}`.  Its other discrepancies are parameters here: ``eps_low=9, eps_high=11`` (code's range)
and ``lam=10/n`` (``run.py``'s default).
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np
import torch

from theorylab.testbeds.credit_data import load_credit, synthetic_credit
from theorylab.performative.solvers import FixedPoint, MultiStart, multistart_minimise, repeated_risk_minimisation
from theorylab.memory import require
from theorylab.registry import register
from theorylab.rng import Streams
from theorylab.validation import integer, real

STRATEGIC = (0, 5, 7)
SOURCES = ("real", "synthetic")
EPS_MAX = 3.0  # the largest sensitivity eps_i the ground-truth solvers were checked to handle
CERTIFY_TOL = 1e-10  # certified distance of each RRM step to its exact minimiser
RRM_TOL = 1e-8


def _sigmoid(u):
    return 0.5 * (1.0 + np.tanh(0.5 * u))  # overflow-free


def _softplus(u):
    return np.logaddexp(0.0, u)


class CreditScoring:
    """The credit problem; implements :class:`theorylab.problem.Problem` and holds the exact objective."""

    autograd = False  # closed-form gradients: runs go under inference mode (theorylab.runner.autograd_off)

    def __init__(self, x: np.ndarray, y: np.ndarray, n_clients: int = 10, eps=None, lam: float | None = None,
                 batch: int = 4, strategic: Sequence[int] = STRATEGIC, theta0=None,
                 released_code_local_eps_zero: bool = False, label: str = "", device="cpu", dtype=torch.float64):
        x, y = np.array(x, dtype=np.float64), np.array(y, dtype=np.float64)  # private, writable copies
        if x.ndim != 2 or y.shape != (x.shape[0],):
            raise ValueError(f"x must be (n, d) and y (n,); got {x.shape}, {y.shape}")
        if int(n_clients) != n_clients or not 1 <= n_clients <= x.shape[0]:
            raise ValueError(f"n_clients must be an integer in [1, n = {x.shape[0]}]; got {n_clients}")
        if int(batch) != batch or batch < 1:
            raise ValueError(f"batch must be an integer >= 1; got {batch}")
        self.n_clients, self.M = int(n_clients), x.shape[0] // int(n_clients)
        n = self.n_clients * self.M
        self.x, self.y = x[:n], y[:n]
        self.dim = x.shape[1]
        self.strategic = np.asarray(strategic, dtype=np.int64)
        if self.strategic.size == 0 or self.strategic.min() < 0 or self.strategic.max() >= self.dim - 1:
            raise ValueError(f"strategic must index non-bias features in [0, {self.dim - 2}]; got {strategic}")
        self.eps = np.asarray(eps, dtype=np.float64)
        if self.eps.shape != (self.n_clients,) or np.any(self.eps < 0):
            raise ValueError(f"eps must hold {self.n_clients} non-negative sensitivities; got {eps!r}")
        self.lam = 1.0 / x.shape[0] if lam is None else float(lam)  # all rows, as the authors (digest §4.2.3)
        if not self.lam >= 0:
            raise ValueError(f"lam must be >= 0; got {lam}")
        self.batch, self.bug = int(batch), bool(released_code_local_eps_zero)
        self.label = label
        self.p = np.full(self.n_clients, 1.0 / self.n_clients)
        self.row_eps = np.repeat(self.eps, self.M)
        self.smask = np.zeros(self.dim)
        self.smask[self.strategic] = 1.0
        self.regmask = np.ones(self.dim)
        self.regmask[-1] = 0.0  # the intercept is not regularised
        self._theta0 = theta0
        self.device, self.dtype = torch.device(device), dtype
        t = dict(device=self.device, dtype=dtype)
        self.weights = torch.as_tensor(self.p, **t)
        self._X = torch.tensor(self.x.reshape(self.n_clients, self.M, self.dim), **t)
        self._Y = torch.tensor(self.y.reshape(self.n_clients, self.M), **t)
        self._clients = torch.arange(self.n_clients, device=self.device).view(1, -1, 1)
        self._shift = torch.as_tensor(0.0 if self.bug else 1.0, **t) * torch.as_tensor(
            self.eps[:, None] * self.smask[None, :], **t)  # (N, d): eps_i on S
        self._reg = torch.as_tensor(self.lam * self.regmask, **t)
        self._truth_cache: dict = {}

    # ----- exact objective (numpy) -------------------------------------------------------------------
    def _margins(self, theta, deployed) -> tuple[np.ndarray, np.ndarray]:
        """``theta`` as an array and the margins :math:`u_{ij}=x_j^\\top\\theta-\\epsilon_i\\tilde\\theta_S^\\top\\theta_S` of all rows."""
        theta, deployed = np.asarray(theta, dtype=np.float64), np.asarray(deployed, dtype=np.float64)
        u = self.x @ theta - self.row_eps * float((deployed * self.smask) @ theta)
        return theta, u

    def decoupled(self, theta, deployed) -> float:
        """:math:`f(\\theta;\\tilde\\theta)`."""
        theta, u = self._margins(theta, deployed)
        return float(np.mean(_softplus(u) - self.y * u) + 0.5 * self.lam * (self.regmask * theta) @ theta)

    def decoupled_grad(self, theta, deployed) -> np.ndarray:
        """:math:`\\nabla_1f(\\theta;\\tilde\\theta)=\\mathrm{mean}[(\\sigma(u)-y)x']+\\lambda\\theta_{0:10}`."""
        theta, u = self._margins(theta, deployed)
        r = _sigmoid(u) - self.y
        shift = np.asarray(deployed, dtype=np.float64) * self.smask
        return (r @ self.x - (r @ self.row_eps) * shift) / len(u) + self.lam * self.regmask * theta

    def decoupled_hessian(self, theta, deployed) -> np.ndarray:
        """:math:`\\nabla^2_{11}f=\\mathrm{mean}[\\sigma'(u)x'x'^\\top]+\\lambda\\,\\mathrm{diag}(1,..,1,0)`."""
        theta, u = self._margins(theta, deployed)
        s = _sigmoid(u)
        xs = self.x - self.row_eps[:, None] * (np.asarray(deployed, dtype=np.float64) * self.smask)[None, :]
        return (xs * (s * (1 - s))[:, None]).T @ xs / len(u) + np.diag(self.lam * self.regmask)

    def performative_risk(self, theta) -> float:
        """:math:`\\mathrm{PR}(\\theta)=f(\\theta;\\theta)`, with :math:`u=x^\\top\\theta-\\epsilon_i\\|\\theta_S\\|^2`."""
        return self.decoupled(theta, theta)

    def performative_grad(self, theta) -> np.ndarray:
        """:math:`\\nabla\\mathrm{PR}=\\mathrm{mean}[(\\sigma(u)-y)(x-2\\epsilon_iS\\theta)]+\\lambda\\theta_{0:10}`."""
        theta, u = self._margins(theta, theta)
        r = _sigmoid(u) - self.y
        return (r @ self.x - 2.0 * (r @ self.row_eps) * theta * self.smask) / len(u) + self.lam * self.regmask * theta

    def performative_hessian(self, theta) -> np.ndarray:
        theta, u = self._margins(theta, theta)
        s = _sigmoid(u)
        v = self.x - 2.0 * self.row_eps[:, None] * (theta * self.smask)[None, :]
        curv = (v * (s * (1 - s))[:, None]).T @ v / len(u)
        return curv - 2.0 * float((s - self.y) @ self.row_eps) / len(u) * np.diag(self.smask) + np.diag(self.lam * self.regmask)

    def ps_equation_jacobian(self, theta) -> np.ndarray:
        """Jacobian of :math:`G(\\theta)=\\nabla_1f(\\theta;\\theta)`: :math:`\\nabla^2_{11}f+\\nabla^2_{12}f` (digest §4.2.5)."""
        theta, u = self._margins(theta, theta)
        s = _sigmoid(u)
        xs = self.x - self.row_eps[:, None] * (theta * self.smask)[None, :]
        cross = -np.outer(xs.T @ (s * (1 - s) * self.row_eps), theta * self.smask) / len(u)
        return self.decoupled_hessian(theta, theta) + cross - float((s - self.y) @ self.row_eps) / len(u) * np.diag(self.smask)

    # ----- solvers ----------------------------------------------------------------------------------------
    def newton_certify(self, theta, deployed, tol: float = CERTIFY_TOL, max_iter: int = 50) -> tuple[np.ndarray, dict]:
        """Newton steps on the strongly convex :math:`f(\\cdot;\\tilde\\theta)` until the certified distance
        :math:`\\|\\nabla\\|/\\lambda_{\\min}(\\nabla^2)` to its minimiser is at most ``tol``."""
        theta = np.asarray(theta, dtype=np.float64).copy()
        for k in range(max_iter + 1):
            g, H = self.decoupled_grad(theta, deployed), self.decoupled_hessian(theta, deployed)
            lam_min = float(np.linalg.eigvalsh(H)[0])
            bound = float(np.linalg.norm(g)) / lam_min if lam_min > 0 else math.inf
            if bound <= tol:
                return theta, {"newton_steps": k, "grad_norm": float(np.linalg.norm(g)), "hessian_min_eig": lam_min,
                               "certified_distance": bound}
            theta = theta - np.linalg.solve(H, g)
        raise RuntimeError(f"Newton certification did not reach {tol:g} (last bound {bound:.3g})")

    def rrm_step(self, deployed, warm=None) -> tuple[np.ndarray, dict]:
        """:math:`\\Phi(\\tilde\\theta)`: cvxpy (SCS, warm-started) then Newton certification; returns the
        minimiser and a certificate (cvxpy status, SCS accuracy, certified distance)."""
        import cvxpy as cp

        prob, var, param = self._cvx_problem()
        param.value = np.asarray(deployed, dtype=np.float64)[self.strategic]
        if warm is not None:
            var.value = np.asarray(warm, dtype=np.float64)
        prob.solve(solver="SCS", warm_start=True, eps_abs=1e-9, eps_rel=1e-9, max_iters=200_000)
        if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or var.value is None:
            raise RuntimeError(f"cvxpy RRM step failed with status {prob.status}")
        start = var.value.copy()
        dist_cvx = float(np.linalg.norm(self.decoupled_grad(start, deployed)))
        theta, cert = self.newton_certify(start, deployed)
        cert.update({"cvxpy_status": prob.status, "solver": "SCS", "cvxpy_grad_norm": dist_cvx,
                     "cvxpy_to_certified": float(np.linalg.norm(theta - start))})
        return theta, cert

    def _cvx_problem(self):
        if "cvx" not in self._truth_cache:
            import cvxpy as cp

            theta = cp.Variable(self.dim)
            deployed_s = cp.Parameter(len(self.strategic))
            u = self.x @ theta - cp.multiply(self.row_eps, deployed_s @ theta[self.strategic])
            n = len(self.y)  # objective scaled by n for the solver's conditioning
            reg = self.regmask.astype(bool)
            obj = cp.sum(cp.logistic(u)) - self.y @ u + 0.5 * self.lam * n * cp.sum_squares(theta[np.flatnonzero(reg)])
            self._truth_cache["cvx"] = (cp.Problem(cp.Minimize(obj)), theta, deployed_s)
        return self._truth_cache["cvx"]

    @property
    def theta_erm(self) -> np.ndarray:
        """:math:`\\Phi(0)`: regularised ERM on unshifted data (the authors' starting model)."""
        if "erm" not in self._truth_cache:
            self._truth_cache["erm"] = self.newton_certify(np.zeros(self.dim), np.zeros(self.dim))[0]
        return self._truth_cache["erm"]

    def rrm(self, tol: float = RRM_TOL, max_iter: int = 500) -> FixedPoint:
        """Repeated risk minimisation from :math:`\\theta_{\\rm ERM}`, each step warm-started at the previous one."""
        if "rrm" not in self._truth_cache:
            self._truth_cache["rrm"] = repeated_risk_minimisation(lambda th: self.rrm_step(th, warm=th),
                                                                  self.theta_erm, tol, max_iter)
        return self._truth_cache["rrm"]

    @property
    def theta_ps(self) -> np.ndarray:
        fp = self.rrm()
        if not fp.converged:
            raise RuntimeError(f"RRM did not converge in {fp.iterations} steps (last step {fp.steps[-1]:.3g})")
        return fp.theta

    def ps_root(self, start=None, tol: float = 1e-12, max_iter: int = 100) -> np.ndarray:
        """Independent PS solve: Newton on :math:`G(\\theta)=\\nabla_1f(\\theta;\\theta)=0`."""
        theta = self.theta_erm.copy() if start is None else np.asarray(start, dtype=np.float64).copy()
        for _ in range(max_iter):
            g = self.decoupled_grad(theta, theta)
            if np.linalg.norm(g) <= tol:
                return theta
            theta = theta - np.linalg.solve(self.ps_equation_jacobian(theta), g)
        raise RuntimeError("Newton on the PS equation did not converge")

    def theta_po(self, starts: int = 8, seed: int = 0) -> MultiStart:
        """Multi-start L-BFGS on PR from :math:`\\theta^{PS}`, :math:`\\theta_{\\rm ERM}`, 0 and random points
        around :math:`\\theta^{PS}` (seeded); the best of the local minimisers."""
        key = ("po", starts, seed)
        if key not in self._truth_cache:
            rng = np.random.Generator(np.random.PCG64(seed))
            ps = self.theta_ps
            scale = max(1.0, float(np.linalg.norm(ps)))
            points = [ps, self.theta_erm, np.zeros(self.dim)]
            points += [ps + scale * rng.standard_normal(self.dim) for _ in range(max(0, starts - 3))]
            self._truth_cache[key] = multistart_minimise(self.performative_risk, self.performative_grad, points,
                                                         hess=self.performative_hessian)
        return self._truth_cache[key]

    def lipschitz_z(self, theta) -> float:
        """:math:`L_z(\\theta)`: :math:`|\\partial_x\\ell|=|\\sigma(u)-y|\\,\\|\\theta\\|\\le\\|\\theta\\|` (the label does not move)."""
        return float(np.linalg.norm(theta))

    # ----- kernel contract (torch) ----------------------------------------------------------------------
    def initial_point(self, replicas: int, streams: Streams) -> torch.Tensor:
        start = self.theta_erm if self._theta0 is None else np.asarray(self._theta0, dtype=np.float64)
        return torch.as_tensor(start, device=self.device, dtype=self.dtype).expand(replicas, self.dim).clone()

    def sample(self, streams: Streams, steps: int) -> Sequence[torch.Tensor]:
        """Mini-batch row indices of ``steps`` local steps, item ``k`` of shape ``(R, N, batch)`` (stream ``data``)."""
        return streams.integers("data", self.M, (steps, self.n_clients, self.batch)).unbind(1)

    def stochastic_grads(self, x: torch.Tensor, sample_k: torch.Tensor, active=None) -> torch.Tensor:
        """Mini-batch gradient at each client's model on data best-responded to that model (every client computed)."""
        rows = self._X[self._clients, sample_k]  # (R, N, B, d)
        labels = self._Y[self._clients, sample_k]
        shifted = rows - (self._shift * x).unsqueeze(2)
        r = torch.sigmoid((shifted * x.unsqueeze(2)).sum(-1)) - labels
        return (r.unsqueeze(-1) * shifted).mean(2) + self._reg * x

    def metrics(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """``dist2`` / ``dist`` to :math:`\\theta^{PS}`, ``erm_dist`` to :math:`\\theta_{\\rm ERM}`, ``loss`` = PR."""
        t = dict(device=x.device, dtype=x.dtype)
        ps, erm = torch.as_tensor(self.theta_ps, **t), torch.as_tensor(self.theta_erm, **t)
        X, Y = self._X.reshape(-1, self.dim), self._Y.reshape(-1)
        eps = torch.as_tensor(self.row_eps, **t)
        u = X @ x.T - eps[:, None] * (x[:, self.strategic] ** 2).sum(-1)[None, :]  # (n, R)
        loss = (torch.nn.functional.softplus(u) - Y[:, None] * u).mean(0) + 0.5 * (self._reg * x * x).sum(-1)
        d2 = ((x - ps) ** 2).sum(-1)
        return {"dist2": d2, "dist": d2.sqrt(), "erm_dist": ((x - erm) ** 2).sum(-1).sqrt(), "loss": loss}


@functools.lru_cache(maxsize=8)
def _dataset(source: str, n: int | None, seed: int) -> tuple[np.ndarray, np.ndarray]:
    if source == "real":
        x, y = load_credit()
        return (x, y) if n is None else (x[:n], y[:n])
    return synthetic_credit(2000 if n is None else n, seed)


@functools.lru_cache(maxsize=16)
def _cached_problem(source, n, data_seed, n_clients, eps_low, eps_high, eps_seed, lam, strategic):
    """One objective per parameter set (the batch size and the bug flag change the sampler, not the objective)."""
    x, y = _dataset(source, n, data_seed)
    eps = np.random.Generator(np.random.PCG64(eps_seed)).uniform(eps_low, eps_high, n_clients)
    label = f"{source} n={len(y) // n_clients * n_clients}"
    return CreditScoring(x, y, n_clients, eps, lam, strategic=strategic, label=label)


@register("testbed", "credit")
def credit(source: str = "real", n: int | None = None, data_seed: int = 0, n_clients: int = 10, eps_low: float = 0.9,
           eps_high: float = 1.1, eps_seed: int = 0, lam: float | None = None, batch: int = 4,
           strategic: Sequence[int] = STRATEGIC, released_code_local_eps_zero: bool = False,
           device="cpu", dtype=torch.float64) -> CreditScoring:
    """GiveMeSomeCredit strategic classification: 10 equal clients, eps_i ~ U[0.9, 1.1], logistic loss.

    ``source="real"`` needs the whynot package (see :mod:`theorylab.testbeds.credit_data`); ``"synthetic"`` is the stand-in.
    ``n`` keeps the first ``n`` preprocessed rows; ``lam`` defaults to 1/n (before the equal split drops the
    remainder).  Ground truth (PS, PO) is cached per process for each objective and shared by the variants that
    differ only in batch size, device, dtype or the bug flag.
    """
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}; got {source!r}")
    if not 0 <= real("eps_low", eps_low) <= real("eps_high", eps_high) <= EPS_MAX:
        raise ValueError(f"need 0 <= eps_low <= eps_high <= {EPS_MAX} (at eps = 10 repeated risk minimisation, the PS "
                         f"solver, no longer converges on the synthetic data); got {eps_low}, {eps_high}")
    n_clients, batch = integer("n_clients", n_clients, 1), integer("batch", batch, 1)
    if n is not None and integer("n", n, 1) < n_clients:
        raise ValueError(f"n_clients ({n_clients}) must not exceed the n rows ({n}) it splits")
    require(8 * 12 * (n or 0), f"credit with n={n} rows (a feature matrix of n x 11)")
    require(8 * n_clients * batch, f"credit with n_clients={n_clients} and batch={batch} (one step's row indices)")
    if lam is not None:
        real("lam", lam, 0.0, 1e6)  # beyond, the PO's Newton certification overflows
    strategic = tuple(integer("strategic", s, 0, 2**31) for s in np.atleast_1d(np.asarray(strategic, dtype=object)))
    base = _cached_problem(source, n, integer("data_seed", data_seed, 0), n_clients, float(eps_low), float(eps_high),
                           integer("eps_seed", eps_seed, 0), lam, strategic)
    bug = bool(released_code_local_eps_zero)
    if torch.device(device) == base.device and dtype == base.dtype and not bug and batch == base.batch:
        return base
    variant = CreditScoring(base.x, base.y, base.n_clients, base.eps, base.lam, batch, base.strategic, None, bug,
                            base.label, device, dtype)
    variant._truth_cache = base._truth_cache  # same objective, same PS/PO: solved once
    return variant
