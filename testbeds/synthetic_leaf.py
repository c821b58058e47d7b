r"""LEAF Synthetic(gamma, delta) with a ridge-regularised multinomial logistic classifier (60 -> 10).

Seed 001 Ch. 2 §2.5.1 and App. G.A.1 (L3112–3116); digest 001 §5.1 (the recipe, with its [?] items), §6 item 11.

**Data** (Li et al.'s generator; thesis :math:`(\gamma,\delta)` = Li et al.'s :math:`(\alpha,\beta)`), all from
``PCG64(seed)``, client by client in the order below:

1. :math:`n_i = \lfloor \mathrm{LogNormal}(4, 2)\rfloor + 50` for every client first ([R]: the thesis says only
   "power law"; digest §5.1); each client's rows are split 90/10 into train/test ([R]; the first
   :math:`\lfloor 0.9 n_i\rfloor` rows train, the rest test, so the test split has :math:`\ge 5` rows);
2. :math:`\mu_i\sim\mathcal N(0,\gamma)`, :math:`B_i\sim\mathcal N(0,\delta)` with the second argument a *standard
   deviation* (numpy's convention in the original code; digest §5.1 [?]);
3. :math:`W_i\in\mathbb R^{10\times60}`, :math:`b_i\in\mathbb R^{10}` with entries :math:`\mathcal N(\mu_i, 1)`;
   :math:`v_i\in\mathbb R^{60}` with entries :math:`\mathcal N(B_i, 1)` (one draw per coordinate, [R]);
4. :math:`x\sim\mathcal N(v_i, \Sigma)` with :math:`\Sigma = \mathrm{diag}(j^{-1.2})_{j=1..60}` (the original
   covariance; the thesis' "standard deviation 1/(j+1.2)" is a typo, digest §6 item 11);
5. :math:`y = \arg\max_c (W_ix+b_i)_c` (softmax is monotone).

**Model.** :math:`\theta = [W\ b]\in\mathbb R^{10\times61}` flattened row-major (:math:`d = 610`), on inputs
:math:`\tilde x = (x, 1)`.  Client :math:`i` minimises

.. math:: F_i(\theta) = \frac1{n_i}\sum_{s\in D_i}\big[\log\textstyle\sum_c e^{\theta_c^\top\tilde x_s}
          - \theta_{y_s}^\top\tilde x_s\big] + \frac\lambda2\|\theta\|^2,\qquad \lambda = 10^{-2},

over its train rows; the ridge covers the bias too ([?] the thesis says only "ridge penalization of parameter
1e-2"), so every :math:`F_i` is :math:`\lambda`-strongly convex.  Objective weights :math:`\alpha_i = n_i/\sum_jn_j`
over train rows ([R] ``--objective_type weighted``; digest §5.1 [?]).  The model starts at :math:`\theta = 0`.

**Gradients.** A local step of client :math:`i` uses a minibatch of ``batch`` = 32 train rows drawn uniformly *with
replacement* (the original shuffles without replacement per epoch: both are unbiased) from the replica's
``gradient`` stream: :math:`\nabla = \frac1B\sum_b (\mathrm{softmax}(\theta\tilde x_b) - e_{y_b})\tilde x_b^\top +
\lambda\theta`.  All (replica, client) pairs are computed at once on the pooled rows (clients address their rows
by offset and count, no padding).

**Ground truth** (:meth:`SyntheticLeaf.optimum`): damped Newton on any mixture :math:`F_p = \sum_ip_iF_i` until
:math:`\|\nabla F_p\|\le 10^{-10}`, with the exact Hessian
:math:`\sum_s w_s[\mathrm{diag}(p_s) - p_sp_s^\top]\otimes\tilde x_s\tilde x_s^\top + \lambda I`.  Hence
:math:`\theta^\star`, :math:`F^\star`, the per-client minima :math:`F_i^\star` (``c``, which CA-Fed's oracle
:math:`\hat F_i^\star` reads) and :math:`F_B^\star` for weights :math:`p` (:meth:`optimum_value`).

**Metrics** (per replica): ``loss`` :math:`F(\theta)`, ``gap`` :math:`F(\theta)-F^\star`, ``dist2``
:math:`\|\theta-\theta^\star\|^2`, ``test_acc`` the :math:`\alpha`-weighted average of the clients' test accuracies
("average test accuracy among the clients", thesis Fig. 2.1; weighting [R]), as a fraction.
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np
import torch

from theorylab.kernels.client_work import grads_from_pairs
from theorylab.memory import require
from theorylab.registry import register
from theorylab.rng import Streams
from theorylab.validation import integer, real

FEATURES, CLASSES = 60, 10
WIDTH = FEATURES + 1  # inputs with the bias coordinate
TRAIN_FRACTION = 0.9
GRAD_TOL = 1e-10
LEAF_BYTES_PER_CLIENT = 400_000  # one client's data, numpy and torch copies (360 kB on average over 100 clients)


def generate(n_clients: int, gamma: float, delta: float, seed: int):
    """Li et al.'s Synthetic(gamma, delta) for ``n_clients``: per client ``(x, y)`` arrays, in the module's order."""
    rng = np.random.Generator(np.random.PCG64(seed))
    sizes = rng.lognormal(4.0, 2.0, n_clients).astype(np.int64) + 50
    scale = np.arange(1, FEATURES + 1, dtype=np.float64) ** -0.6  # standard deviations sqrt(j^-1.2)
    data = []
    for n in sizes:
        mu, b_mean = rng.normal(0.0, gamma), rng.normal(0.0, delta)
        W, b = rng.normal(mu, 1.0, (CLASSES, FEATURES)), rng.normal(mu, 1.0, CLASSES)
        v = rng.normal(b_mean, 1.0, FEATURES)
        x = v + scale * rng.standard_normal((n, FEATURES))
        data.append((x, np.argmax(x @ W.T + b, axis=1)))
    return data


def _augment(x: np.ndarray) -> np.ndarray:
    return np.hstack([x, np.ones((len(x), 1))])


def mixture_newton(X, Y, w, ridge: float, tol: float = GRAD_TOL, max_iter: int = 100):
    """:func:`newton` with one intra-op torch thread (on the shared 2-core machine a second thread made these
    610 x 610 solves 20x slower), restoring the caller's setting."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return newton(X, Y, w, ridge, tol, max_iter)
    finally:
        torch.set_num_threads(previous)


def newton(X, Y, w, ridge: float, tol: float = GRAD_TOL, max_iter: int = 100):
    """Minimise :math:`\\sum_s w_s\\,\\mathrm{CE}(\\theta; \\tilde x_s, y_s) + \\frac\\lambda2\\|\\theta\\|^2` from
    :math:`\\theta = 0` by damped Newton (Armijo backtracking; Cholesky solves of the exact Hessian, in float64 torch
    so that the caller's thread setting applies); returns ``(theta, value, gradient norm)``.  Rows with ``w_s = 0``
    are dropped first."""
    keep = np.asarray(w) > 0
    X, Y, w = (torch.as_tensor(np.asarray(v)[keep]) for v in (X, Y, w))
    X, w = X.to(torch.float64), w.to(torch.float64)
    onehot = torch.nn.functional.one_hot(Y, CLASSES).to(torch.float64)

    def parts(theta):
        z = X @ theta.reshape(CLASSES, WIDTH).T
        lse = torch.logsumexp(z, 1)
        value = float(w @ (lse - (z * onehot).sum(1)) + 0.5 * ridge * theta @ theta)
        p = torch.exp(z - lse[:, None])
        return value, (((p - onehot) * w[:, None]).T @ X).reshape(-1) + ridge * theta, p

    theta = torch.zeros(CLASSES * WIDTH, dtype=torch.float64)
    value, grad, p = parts(theta)
    for _ in range(max_iter):
        if float(torch.linalg.vector_norm(grad)) <= tol:
            break
        J = (p[:, :, None] * X[:, None, :]).reshape(len(X), -1)  # p_s (x) x_s
        H = -(J.T * w) @ J
        for a in range(CLASSES):
            block = slice(a * WIDTH, (a + 1) * WIDTH)
            H[block, block] += (X.T * (w * p[:, a])) @ X
        H.diagonal().add_(ridge)
        direction = -torch.cholesky_solve(grad[:, None], torch.linalg.cholesky(H)).squeeze(1)
        step, decrement = 1.0, float(grad @ direction)
        while True:  # Armijo; a Newton decrement below the rounding of the value takes the full step
            trial = theta + step * direction
            v_new, g_new, p_new = parts(trial)
            if v_new <= value + 1e-4 * step * decrement or -decrement < 1e-13 * max(1.0, abs(value)) or step < 1e-12:
                break
            step *= 0.5
        theta, value, grad, p = trial, v_new, g_new, p_new
    return theta.numpy(), value, float(torch.linalg.vector_norm(grad))


class SyntheticLeaf:
    """The Synthetic LEAF problem; implements :class:`theorylab.problem.Problem` and holds its ground truth."""

    autograd = False  # closed-form gradients: runs go under inference mode (theorylab.runner.autograd_off)

    def __init__(self, n_clients: int = 100, gamma: float = 0.5, delta: float = 0.5, seed: int = 0,
                 ridge: float = 1e-2, batch: int = 32, device="cpu", dtype=torch.float64):
        integer("n_clients", n_clients, 1), integer("batch", batch, 1), integer("seed", seed, 0)
        for name, value in (("gamma", gamma), ("delta", delta)):  # standard deviations; beyond 100 the
            real(name, value, 0.0, 100.0)  # ground truth's Newton solve loses positive definiteness
        real("ridge", ridge, 0.0, open_low=True)  # strong convexity
        require(n_clients * (8 * batch + LEAF_BYTES_PER_CLIENT),
                f"synthetic_leaf with n_clients={n_clients} and batch={batch} (client data, a step's indices)")
        self.n_clients, self.dim = int(n_clients), CLASSES * WIDTH
        self.gamma, self.delta, self.seed = float(gamma), float(delta), int(seed)
        self.ridge, self.batch = float(ridge), int(batch)
        train, test = [], []
        for x, y in generate(self.n_clients, gamma, delta, self.seed):
            cut = int(TRAIN_FRACTION * len(y))
            train.append((_augment(x[:cut]), y[:cut]))
            test.append((_augment(x[cut:]), y[cut:]))
        self.n_train = np.array([len(y) for _, y in train])
        self.n_test = np.array([len(y) for _, y in test])
        self.X, self.Y = np.vstack([x for x, _ in train]), np.concatenate([y for _, y in train])
        self.X_test, self.Y_test = np.vstack([x for x, _ in test]), np.concatenate([y for _, y in test])
        self.owner = np.repeat(np.arange(self.n_clients), self.n_train)
        self.owner_test = np.repeat(np.arange(self.n_clients), self.n_test)
        self.alpha = self.n_train / self.n_train.sum()
        self.device, self.dtype = torch.device(device), dtype
        t = dict(device=self.device, dtype=dtype)
        self.weights = torch.as_tensor(self.alpha, **t)
        self._X, self._X_test = torch.as_tensor(self.X, **t), torch.as_tensor(self.X_test, **t)
        self._Y = torch.as_tensor(self.Y, device=self.device)
        self._Y_test = torch.as_tensor(self.Y_test, device=self.device)
        self._owner = torch.as_tensor(self.owner, device=self.device)
        self._owner_test = torch.as_tensor(self.owner_test, device=self.device)
        self._count = torch.as_tensor(self.n_train, **t)
        self._truth: dict = {}

    # ----- ground truth (numpy, float64) -----------------------------------------------------------------------
    def _sample_weights(self, p) -> np.ndarray:
        """Per-row weights :math:`p_i/n_i` of the mixture :math:`\\sum_ip_iF_i` (``p`` normalised)."""
        p = np.asarray(p, dtype=np.float64)
        if p.shape != (self.n_clients,) or np.any(p < 0) or not p.sum() > 0:
            raise ValueError(f"p must be {self.n_clients} non-negative weights with a positive sum; got {p!r}")
        return (p / p.sum() / self.n_train)[self.owner]

    def optimum(self, p=None) -> tuple[np.ndarray, float]:
        """Minimiser and minimum of :math:`\\sum_ip_iF_i` (default :math:`p=\\alpha`), by :func:`mixture_newton`."""
        key = tuple(np.round(self.alpha if p is None else np.asarray(p, dtype=np.float64) / np.sum(p), 15))
        if key not in self._truth:
            theta, value, gnorm = mixture_newton(self.X, self.Y, self._sample_weights(key), self.ridge)
            if gnorm > GRAD_TOL:
                raise RuntimeError(f"Newton stopped at gradient norm {gnorm:.3g} > {GRAD_TOL:g}")
            self._truth[key] = (theta, value)
        return self._truth[key]

    def optimum_value(self, p) -> float:
        """:math:`F_B^\\star = \\min_\\theta\\sum_ip_iF_i(\\theta)` for weights ``p``."""
        return self.optimum(p)[1]

    @property
    def x_star(self) -> np.ndarray:
        return self.optimum()[0]

    @property
    def f_star(self) -> float:
        return self.optimum()[1]

    @functools.cached_property
    def c(self) -> np.ndarray:
        """Per-client minima :math:`F_i^\\star` (one Newton solve per client, on its own rows)."""
        return np.array([self.optimum(np.eye(self.n_clients)[i])[1] for i in range(self.n_clients)])

    def full_gradient(self, theta) -> np.ndarray:
        """:math:`\\nabla F(\\theta)` for one flat ``theta`` (numpy)."""
        x = torch.as_tensor(np.asarray(theta, dtype=np.float64), dtype=torch.float64).reshape(1, -1)
        rows = self._X.to(torch.float64).unsqueeze(0)
        labels, w = self._Y.unsqueeze(0), torch.as_tensor(self._sample_weights(self.alpha)).unsqueeze(0)
        return _weighted_grad(x, rows, labels, w, self.ridge).reshape(-1).numpy()

    def client_values(self, x) -> np.ndarray:
        """:math:`F_i(x)` for every client; ``x`` of shape ``(..., d)`` gives ``(..., m)``."""
        arr = np.asarray(x, dtype=np.float64)
        flat = torch.as_tensor(arr.reshape(-1, self.dim), dtype=self.dtype, device=self.device)
        return self._client_values(flat).cpu().numpy().astype(np.float64).reshape(*arr.shape[:-1], self.n_clients)

    def _client_values(self, x: torch.Tensor) -> torch.Tensor:
        ce = _cross_entropy(x, self._X, self._Y)  # (R, n)
        sums = torch.zeros(x.shape[0], self.n_clients, dtype=x.dtype, device=x.device).index_add_(1, self._owner, ce)
        return sums / self._count + 0.5 * self.ridge * (x * x).sum(-1, keepdim=True)

    # ----- kernel contract (torch, batched over replicas and clients) ------------------------------------------
    def initial_point(self, replicas: int, streams: Streams) -> torch.Tensor:
        return torch.zeros(replicas, self.dim, device=self.device, dtype=self.dtype)

    def sample(self, streams: Streams, steps: int) -> Sequence[torch.Tensor]:
        """Pooled row indices of ``steps`` minibatches, item ``k`` of shape ``(R, m, batch)`` (stream ``gradient``)."""
        u = streams.uniform("gradient", (steps, self.n_clients, self.batch), torch.float64).to(self.device)
        count, offset = (torch.as_tensor(v, dtype=torch.float64, device=self.device).unsqueeze(-1)
                         for v in (self.n_train, self.n_train.cumsum() - self.n_train))
        rows = torch.floor(u * count) + offset
        return rows.long().unbind(1)

    def stochastic_grads(self, x: torch.Tensor, sample_k: torch.Tensor, active=None) -> torch.Tensor:
        """Minibatch gradients at each client's model ``x`` ``(R, m, d)``; only the (replica, client) pairs with
        ``active`` set are computed, the other rows are zero."""
        return grads_from_pairs(self, x, sample_k, active)

    def pair_grads(self, x: torch.Tensor, pairs: torch.Tensor, sample_k: torch.Tensor) -> torch.Tensor:
        """Minibatch gradients ``(P, d)`` of the ``(replica, client)`` ``pairs`` at their models ``x`` ``(P, d)``
        (:class:`theorylab.kernels.client_work.PairWork`)."""
        rows = sample_k[pairs[:, 0], pairs[:, 1]]
        weights = torch.full(rows.shape, 1.0 / self.batch, dtype=x.dtype, device=x.device)
        return _weighted_grad(x, self._X[rows], self._Y[rows], weights, self.ridge)

    def metrics(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        t = dict(dtype=x.dtype, device=x.device)
        loss = self._client_values(x) @ self.weights.to(**t)
        e = x - torch.as_tensor(self.x_star, **t)
        logits = torch.matmul(x.reshape(-1, CLASSES, WIDTH), self._X_test.T)  # (R, classes, n_test)
        hit = (logits.argmax(1) == self._Y_test).to(x.dtype)
        per_client = torch.zeros(x.shape[0], self.n_clients, **t).index_add_(1, self._owner_test, hit)
        acc = per_client / torch.as_tensor(self.n_test, **t) @ self.weights.to(**t)
        return {"loss": loss, "gap": loss - self.f_star, "dist2": (e * e).sum(-1), "test_acc": acc}


def _cross_entropy(x: torch.Tensor, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """Per-row cross-entropy ``(R, n)`` of models ``x`` ``(R, d)`` on rows ``X`` ``(n, 61)`` with labels ``Y``."""
    z = torch.matmul(x.reshape(-1, CLASSES, WIDTH), X.T)  # (R, classes, n): reductions over classes are fast here
    return torch.logsumexp(z, 1) - z.gather(1, Y.expand(z.shape[0], 1, -1)).squeeze(1)


def _weighted_grad(x, rows, labels, weights, ridge: float) -> torch.Tensor:
    """:math:`\\sum_b w_b(\\mathrm{softmax}(\\theta\\tilde x_b) - e_{y_b})\\tilde x_b^\\top + \\lambda\\theta` for ``P``
    models ``x`` ``(P, d)`` on their rows ``(P, B, 61)`` with labels and weights ``(P, B)``; returns a fresh
    ``(P, d)``."""
    logits = torch.bmm(x.reshape(-1, CLASSES, WIDTH), rows.transpose(1, 2))  # (P, classes, B)
    residual = torch.softmax(logits, 1)  # over classes: the fast layout for torch's CPU softmax
    residual.scatter_add_(1, labels.unsqueeze(1), torch.full_like(residual[:, :1], -1.0))
    residual.mul_(weights.unsqueeze(1))
    return torch.bmm(residual, rows).reshape(x.shape).add_(x, alpha=ridge)


@functools.lru_cache(maxsize=8)
def _cached(n_clients, gamma, delta, seed, ridge, batch) -> SyntheticLeaf:
    return SyntheticLeaf(n_clients, gamma, delta, seed, ridge, batch)


@register("testbed", "synthetic_leaf")
def synthetic_leaf(n_clients: int = 100, gamma: float = 0.5, delta: float = 0.5, seed: int = 0, ridge: float = 1e-2,
                   batch: int = 32, device="cpu", dtype=torch.float64) -> SyntheticLeaf:
    """LEAF Synthetic(gamma, delta), n_i ~ LogNormal(4, 2) + 50, ridge multinomial logistic 60 -> 10 (thesis Ch. 2).

    One problem (data and ground truth) per parameter set is kept per process for float64 on the CPU."""
    if torch.device(device) != torch.device("cpu") or dtype != torch.float64:
        return SyntheticLeaf(n_clients, gamma, delta, seed, ridge, batch, device, dtype)
    return _cached(n_clients, gamma, delta, seed, ridge, batch)
