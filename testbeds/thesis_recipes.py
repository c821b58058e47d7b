r"""The thesis' availability and heterogeneity recipes for its image experiments (seed 001 §2.5.1 and §3.5.1).

CA-Fed's four Markov availability classes (:func:`thesis_markov_participation`) and FedStale's two Bernoulli
groups (:func:`two_group_participation`) with the rare group's labels swapped (:func:`swap_labels`, the
``label_swap`` option of :mod:`theorylab.testbeds.network`).  Every draw comes from ``PCG64([seed, purpose])``.
"""

from __future__ import annotations

import numpy as np


def _recipe_rng(seed: int, purpose: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64([seed, purpose]))


def rare_group(clients: int, seed: int) -> np.ndarray:
    r"""FedStale's two groups (seed 001 §3.5.1; digest 001 §3.4: equal random halves): a bool mask of the
    ``clients // 2`` clients, drawn from ``seed``, that participate with :math:`p_{\min}`; the others have p = 1."""
    if int(clients) != clients or clients < 2:
        raise ValueError(f"clients must be an integer >= 2 for two groups; got {clients}")
    mask = np.zeros(int(clients), dtype=bool)
    mask[_recipe_rng(seed, 11).permutation(int(clients))[:int(clients) // 2]] = True
    return mask


def swap_labels(labels, parts, seed: int, fraction: float, labels_pair=(0, 1)) -> np.ndarray:
    r"""FedStale's data heterogeneity :math:`\hat\sigma_g^2` (seed 001 §3.5.1, after Sattler et al.): in every
    client of ``parts`` a fraction ``fraction`` of its samples labelled :math:`a` or :math:`b`
    (``labels_pair``), drawn from ``seed``, has :math:`a` and :math:`b` exchanged.  The thesis names neither the
    pair nor the group nor what "fraction" counts (digest §5.3 [?]): here the pair is a parameter, the group is the
    rarely participating one and the fraction counts the samples of the two labels.  Returns new labels."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"label_swap fraction must lie in [0, 1]; got {fraction}")
    a, b = (int(v) for v in labels_pair)
    out = np.array(labels, dtype=np.int64, copy=True)
    if a == b or min(a, b) < 0 or max(a, b) > out.max():
        raise ValueError(f"label_swap labels_pair must be two different labels in [0, {out.max()}]; got {labels_pair}")
    rng = _recipe_rng(seed, 13)
    for part in parts:
        candidates = part[(out[part] == a) | (out[part] == b)]
        chosen = rng.permutation(candidates)[:int(round(fraction * len(candidates)))]
        out[chosen] = a + b - out[chosen]
    return out


def two_group_participation(clients: int, seed: int, p_min: float) -> dict:
    r"""FedStale's Bernoulli participation (seed 001 §3.5.1; digest §3.4): p = ``p_min`` on :func:`rare_group`,
    1 on the others, so :math:`p_{\rm avg}/p_{\min} = (1 + p_{\min})/(2p_{\min})` for an even ``clients``."""
    if not 0.0 < p_min <= 1.0:
        raise ValueError(f"p_min must lie in (0, 1]; got {p_min}")
    p = np.where(rare_group(clients, seed), float(p_min), 1.0)
    return {"name": "bernoulli", "p": [float(v) for v in p]}


THESIS_CLASSES = ("more available, correlated", "more available, weakly correlated", "less available, correlated",
                  "less available, weakly correlated")


def availability_classes(clients: int, seed: int) -> np.ndarray:
    """Each client's index into :data:`THESIS_CLASSES`: four equal classes over a permutation drawn from ``seed``."""
    if int(clients) != clients or clients < 4:
        raise ValueError(f"clients must be an integer >= 4 (four availability classes); got {clients}")
    classes = np.empty(int(clients), dtype=np.int64)
    for c, members in enumerate(np.array_split(_recipe_rng(seed, 17).permutation(int(clients)), 4)):
        classes[members] = c
    return classes


def thesis_markov_participation(clients: int, seed: int, g: float = 0.4, nu: float = 0.9, eps: float = 1e-2) -> dict:
    r"""CA-Fed's availability (seed 001 §2.5.1 L856; digest 001 §3.3, split ``"thesis_text"``): ``markov`` chains
    in the four equal classes of :func:`availability_classes` (:data:`THESIS_CLASSES`):
    :math:`\pi = 1/2 \pm g`, and :math:`\lambda_2 = \nu` (correlated) or :math:`\lambda_2\sim\mathcal N(0,
    \epsilon^2)` (weakly correlated, drawn from ``seed``).  The thesis uses :math:`g = 0.4`, :math:`\nu = 0.9`,
    :math:`\epsilon = 10^{-2}`."""
    if not 0.0 < g < 0.5:
        raise ValueError(f"g must lie in (0, 1/2); got {g}")
    if not 0.0 <= nu < 1.0 or not eps >= 0:
        raise ValueError(f"nu must lie in [0, 1) and eps be >= 0; got nu={nu}, eps={eps}")
    classes = availability_classes(clients, seed)
    pi = np.where(classes < 2, 0.5 + g, 0.5 - g)
    lam = np.where(classes % 2 == 0, nu, _recipe_rng(seed, 19).normal(0.0, eps, size=int(clients)))
    return {"name": "markov", "pi": pi.tolist(), "lam": lam.tolist()}
