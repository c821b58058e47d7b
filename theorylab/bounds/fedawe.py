r"""FedAWE's bounds with their explicit constants, as plain functions of the user's constants (seed 000 §6, App. E–I).

Notation (digest 000 §3): :math:`\eta = \eta_l\eta_g`, :math:`s` local steps, :math:`m` clients, :math:`L`
smoothness (A2), :math:`\sigma^2` noise (A3), :math:`(\beta^2,\zeta^2)` dissimilarity (A4), :math:`\delta\le p_i^t`
and :math:`\delta_{\max} = \max p_i^t` (A1), :math:`\rho = \max_t\lambda_2(M^{(t)})`; write :math:`g = 1-\sqrt\rho`.
:class:`Constants` bundles them; every right-hand side takes the *measured* time averages that appear on it
as arguments, so a claim can evaluate the bound along a run.

=====================  ==========================================================================================
Lemma 3 (descent)      :math:`\mathbb E[F(\bar z^{t+1})-F(\bar z^t)\mid\mathcal F^t]\le -\frac{\eta s}{4}\|\nabla F(\bar z^t)\|^2
                       + \frac{2\eta sL\sigma^2(\eta\delta_{\max}+4.5m\eta_l^2sL)}{m^2}\sum_i k_i^2
                       + \frac{35\eta_g\eta_l^3s^3L^2}{m}\sum_ik_i^2\|\nabla F_i(x_i^t)\|^2
                       + \frac{2.2\eta sL^2}{m}\sum_i\|x_i^t-z_i^t\|^2 + \frac{\eta sL^2}{2m}\sum_i\|z_i^t-\bar z^t\|^2`,
                       :math:`k_i = t-\tau_i(t)`; needs :math:`\eta\le 9/(100sL)`
Lemma 5 (drift)        :math:`\mathbb E\|\sum_{r<s}(\nabla F_i(x_i^{(t,r)})-\nabla F_i(x_i^t))\|^2\le 4\eta_l^2s^3L^2\sigma^2
                       + 16\eta_l^2s^4L^2\|\nabla F_i(x_i^t)\|^2`; needs :math:`\eta_l\le 1/(4sL)` (the printed
                       statement misplaces a bracket; this is the intended summand, digest §9)
Prop. 2 (approx.)      :math:`\overline{\|x-z\|^2}\le\frac{6\eta^2s^2}{\delta^2}\big((\beta^2+1)\overline{\|\nabla F(\bar z)\|^2}
                       + \zeta^2 + L^2\,\overline{\|z-\bar z\|^2}\big)`
Lemma 6 (consensus)    :math:`\overline{\|z-\bar z\|^2}\le\frac{3\rho s\eta^2\sigma^2}{g^2\delta^2}
                       + \frac{40\rho s^2\eta^2}{g^2}\big(\zeta^2 + (\beta^2+1)\overline{\|\nabla F(\bar z)\|^2}\big)`;
                       needs :math:`\eta_l\le\delta/(20sL)`, :math:`\eta\le\delta g/(10sL(\sqrt\rho+1))`
Theorem 1              :math:`\overline{\|\nabla F(\bar z)\|^2}\le\frac{6\Delta_0}{\eta sT}+\frac{24\eta L\delta_{\max}\sigma^2}{m\delta^2}
                       + \frac{15\eta^2s^2L^2\sigma^2}{g^2\delta^2}+\frac{2800\eta^2s^2L^2\zeta^2}{g^2\delta^2}` under (11)
Corollary 2            same form for :math:`\bar x` with constants (12, 48, 31, 5600)
Corollary 3            :math:`\overline{\|x-\bar x\|^2}` with constants (3, 12, 28, 1600); conventions :math:`\eta_g\ge1`, :math:`L\ge1`
Condition (11)         :math:`\eta\le\frac{g\,\delta}{80s(L+1)(\sqrt\rho+1)\sqrt{(\beta^2+1)(1+L^2)}}`,
                       :math:`\eta_l\le\frac{\delta}{200sL\sqrt{(\beta^2+1)(1+L^2)}}`
Corollary 1            :math:`\eta_l = 1/(sL\sqrt T)`, :math:`\eta_g = \sqrt{s\delta m}` (digest §9: not :math:`1/\sqrt{TsL}`);
                       the rate is Corollary 2 at these steps; (11) holds once :math:`T\ge T_{\min}`
=====================  ==========================================================================================

Overlines are time averages :math:`\frac1T\sum_{t<T}` of expectations, and :math:`\|z-\bar z\|^2` stands for
:math:`\frac1m\sum_i\|z_i^t-\bar z^t\|^2` (Lemma 6's printed left side has a duplicated sum, digest §9).
:math:`\Delta_0 = F(\bar z^0)-F^\star` (:math:`=F(\bar x^0)-F^\star` since all clients start at :math:`x^0`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Constants:
    """The problem, availability and algorithm constants of FedAWE's analysis."""

    L: float
    sigma2: float
    beta2: float
    zeta2: float
    delta: float
    delta_max: float
    rho: float
    m: int
    s: int

    def __post_init__(self):
        for name in ("L", "sigma2", "beta2", "zeta2"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0; got {getattr(self, name)}")
        if not 0 < self.delta <= self.delta_max <= 1:
            raise ValueError(f"need 0 < delta <= delta_max <= 1 (A1); got delta={self.delta}, delta_max={self.delta_max}")
        if not 0 <= self.rho < 1:
            raise ValueError(f"rho must lie in [0, 1) for the bounds to be finite; got {self.rho}")
        if int(self.m) != self.m or self.m < 1 or int(self.s) != self.s or self.s < 1:
            raise ValueError(f"m and s must be integers >= 1; got m={self.m}, s={self.s}")

    @property
    def gap(self) -> float:
        """:math:`1-\\sqrt\\rho`."""
        return 1.0 - math.sqrt(self.rho)

    @property
    def hetero(self) -> float:
        """:math:`\\sqrt{(\\beta^2+1)(1+L^2)}`, the factor of condition (11)."""
        return math.sqrt((self.beta2 + 1) * (1 + self.L ** 2))


RATE_CONSTANTS = {"theorem1": (6, 24, 15, 2800), "corollary2": (12, 48, 31, 5600), "corollary3": (3, 12, 28, 1600)}


def rate_terms(result: str, c: Constants, eta_l: float, eta_g: float, T: int, delta0: float) -> dict[str, float]:
    r"""The four terms of Theorem 1 / Corollary 2 / Corollary 3 (``result`` a key of :data:`RATE_CONSTANTS`,
    constants :math:`k_0..k_3`), named by their formula: :math:`\frac{k_0\Delta_0}{\eta sT}` (transient),
    :math:`\frac{k_1\eta L\delta_{\max}\sigma^2}{m\delta^2}` (noise), :math:`\frac{k_2\eta^2s^2L^2\sigma^2}{g^2\delta^2}`
    (noise drift) and :math:`\frac{k_3\eta^2s^2L^2\zeta^2}{g^2\delta^2}` (heterogeneity drift).  Corollary 3 is
    stated for :math:`\eta_g\ge1` and :math:`L\ge1`."""
    if result == "corollary3" and (eta_g < 1 or c.L < 1):
        raise ValueError(f"Corollary 3 is stated for eta_g >= 1 and L >= 1 (any L' >= L is a valid constant); "
                         f"got eta_g={eta_g}, L={c.L}")
    k = RATE_CONSTANTS[result]
    eta = eta_l * eta_g
    drift = (eta * c.s * c.L) ** 2 / (c.gap * c.delta) ** 2
    return {f"{k[0]} Delta0/(eta s T)": k[0] * delta0 / (eta * c.s * T),
            f"{k[1]} eta L delta_max sigma^2/(m delta^2)": k[1] * eta * c.L * c.delta_max * c.sigma2 / c.m / c.delta ** 2,
            f"{k[2]} (eta s L)^2 sigma^2/((1-sqrt rho) delta)^2": k[2] * drift * c.sigma2,
            f"{k[3]} (eta s L)^2 zeta^2/((1-sqrt rho) delta)^2": k[3] * drift * c.zeta2}


def theorem1_rhs(c: Constants, eta_l: float, eta_g: float, T: int, delta0: float) -> float:
    r"""Theorem 1: bound on :math:`\frac1T\sum_t\mathbb E\|\nabla F(\bar z^t)\|^2`; ``delta0`` :math:`=F(\bar z^0)-F^\star`."""
    return sum(rate_terms("theorem1", c, eta_l, eta_g, T, delta0).values())


def corollary2_rhs(c: Constants, eta_l: float, eta_g: float, T: int, delta0: float) -> float:
    r"""Corollary 2: bound on :math:`\frac1T\sum_t\mathbb E\|\nabla F(\bar x^t)\|^2`."""
    return sum(rate_terms("corollary2", c, eta_l, eta_g, T, delta0).values())


def corollary3_rhs(c: Constants, eta_l: float, eta_g: float, T: int, delta0: float) -> float:
    r"""Corollary 3: bound on :math:`\frac1T\sum_t\frac1m\sum_i\mathbb E\|x_i^t-\bar x^t\|^2` (needs :math:`\eta_g\ge1`, :math:`L\ge1`)."""
    return sum(rate_terms("corollary3", c, eta_l, eta_g, T, delta0).values())


def corollary1_steps(c: Constants, T: int) -> tuple[float, float]:
    """Corollary 1's steps :math:`(\\eta_l, \\eta_g) = (1/(sL\\sqrt T),\\ \\sqrt{s\\delta m})`."""
    return 1.0 / (c.s * c.L * math.sqrt(T)), math.sqrt(c.s * c.delta * c.m)


def corollary1_rhs(c: Constants, T: int, delta0: float) -> float:
    """Corollary 1 with explicit constants: Corollary 2 evaluated at Corollary 1's steps."""
    return corollary2_rhs(c, *corollary1_steps(c, T), T, delta0)


def corollary1_t_min(c: Constants) -> float:
    """Smallest :math:`T` for which Corollary 1's steps satisfy (11) (digest 000 §3.2):
    :math:`\\sqrt T\\ge\\max\\big(\\frac{80\\sqrt s(L+1)(\\sqrt\\rho+1)h\\sqrt m}{Lg\\sqrt\\delta},\\ \\frac{200h}{\\delta}\\big)`,
    :math:`h = \\sqrt{(\\beta^2+1)(1+L^2)}`."""
    first = 80 * math.sqrt(c.s) * (c.L + 1) * (math.sqrt(c.rho) + 1) * c.hetero * math.sqrt(c.m) / (
        c.L * c.gap * math.sqrt(c.delta))
    second = 200 * c.hetero / c.delta
    return max(first, second) ** 2


def condition11(c: Constants, eta_l: float, eta_g: float) -> dict[str, tuple[float, float, bool]]:
    """Step-size conditions (11): ``{name: (value, threshold, holds)}``."""
    product = c.gap * c.delta / (80 * c.s * (c.L + 1) * (math.sqrt(c.rho) + 1) * c.hetero)
    local = c.delta / (200 * c.s * c.L * c.hetero)
    return _conditions({"eta_l*eta_g (11)": (eta_l * eta_g, product), "eta_l (11)": (eta_l, local)})


def lemma3_condition(c: Constants, eta_l: float, eta_g: float) -> dict[str, tuple[float, float, bool]]:
    """Lemma 3: :math:`\\eta_l\\eta_g\\le 9/(100sL)`."""
    return _conditions({"eta_l*eta_g (Lemma 3)": (eta_l * eta_g, 9 / (100 * c.s * c.L))})


def lemma5_condition(c: Constants, eta_l: float) -> dict[str, tuple[float, float, bool]]:
    """Lemma 5: :math:`\\eta_l\\le 1/(4sL)`."""
    return _conditions({"eta_l (Lemma 5)": (eta_l, 1 / (4 * c.s * c.L))})


def lemma6_condition(c: Constants, eta_l: float, eta_g: float) -> dict[str, tuple[float, float, bool]]:
    """Lemma 6: :math:`\\eta_l\\le\\delta/(20sL)` and :math:`\\eta_l\\eta_g\\le\\delta(1-\\sqrt\\rho)/(10sL(\\sqrt\\rho+1))`."""
    return _conditions({
        "eta_l (Lemma 6)": (eta_l, c.delta / (20 * c.s * c.L)),
        "eta_l*eta_g (Lemma 6)": (eta_l * eta_g, c.delta * c.gap / (10 * c.s * c.L * (math.sqrt(c.rho) + 1))),
    })


def _conditions(items: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float, bool]]:
    return {name: (value, threshold, value <= threshold) for name, (value, threshold) in items.items()}


def lemma3_rhs(c: Constants, eta_l: float, eta_g: float, grad_zbar2, sum_k2, sum_k2_grad2, approx, consensus_z):
    """Lemma 3's right-hand side for one round; ``sum_k2`` :math:`=\\sum_ik_i^2`, ``sum_k2_grad2``
    :math:`=\\sum_ik_i^2\\|\\nabla F_i(x_i^t)\\|^2`, ``approx`` / ``consensus_z`` are :math:`\\frac1m\\sum_i` of
    :math:`\\|x_i^t-z_i^t\\|^2` / :math:`\\|z_i^t-\\bar z^t\\|^2` (arrays broadcast)."""
    eta, s, L, m = eta_l * eta_g, c.s, c.L, c.m
    return (-eta * s / 4 * grad_zbar2
            + 2 * eta * s * L * c.sigma2 * (eta * c.delta_max + 4.5 * m * eta_l ** 2 * s * L) / m ** 2 * sum_k2
            + 35 * eta_g * eta_l ** 3 * s ** 3 * L ** 2 / m * sum_k2_grad2
            + 2.2 * eta * s * L ** 2 * approx + eta * s * L ** 2 / 2 * consensus_z)


def lemma5_rhs(c: Constants, eta_l: float, grad_i2):
    """Lemma 5: :math:`4\\eta_l^2s^3L^2\\sigma^2 + 16\\eta_l^2s^4L^2\\|\\nabla F_i(x_i^t)\\|^2`."""
    return 4 * eta_l ** 2 * c.s ** 3 * c.L ** 2 * c.sigma2 + 16 * eta_l ** 2 * c.s ** 4 * c.L ** 2 * grad_i2


def proposition2_rhs(c: Constants, eta_l: float, eta_g: float, grad_zbar2: float, consensus_z: float) -> float:
    """Proposition 2 (9): bound on :math:`\\frac1{mT}\\sum_{t,i}\\mathbb E\\|x_i^t-z_i^t\\|^2` from the time averages
    of :math:`\\|\\nabla F(\\bar z^t)\\|^2` and :math:`\\frac1m\\sum_i\\|z_i^t-\\bar z^t\\|^2`."""
    k = 6 * (eta_l * eta_g * c.s / c.delta) ** 2
    return k * ((c.beta2 + 1) * grad_zbar2 + c.zeta2 + c.L ** 2 * consensus_z)


def lemma6_rhs(c: Constants, eta_l: float, eta_g: float, grad_zbar2: float) -> float:
    """Lemma 6: bound on :math:`\\frac1{mT}\\sum_t\\mathbb E\\|Z^{(t)}(I-\\mathbf J)\\|_F^2`."""
    eta = eta_l * eta_g
    return (3 * c.rho * c.s * eta ** 2 * c.sigma2 / (c.gap * c.delta) ** 2
            + 40 * c.rho * (c.s * eta / c.gap) ** 2 * (c.zeta2 + (c.beta2 + 1) * grad_zbar2))
