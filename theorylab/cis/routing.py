r"""Confidence-based routing in a cooperative inference system, and the accuracy of the whole system.

Source: seed 001 Ch. 5 §5.1-5.2 (Fig. 5.1: a sample leaves at exit :math:`e` when its uncertainty is low enough,
otherwise it is forwarded) and §5.4 (accuracy under an x-y-z split); the evaluation is the digest's reading
(001_thesis_ch4-6 §3.6 [DERIVED], to be validated against the authors' code): since all nodes share one model,
node identity does not matter, and

1. exit 1 scores every test sample; the ``x`` % most confident are served there;
2. exit 2 scores the rest; the most confident ones, ``y`` % of the whole test set, are served there;
3. and so on; the deepest exit serves what remains.

The confidence measure is pluggable (the thesis does not say which, digest §3.6: :func:`max_softmax` or
:func:`neg_entropy`).  Under the analysis' assumption :math:`\hat{\mathcal D}_e=\mathcal D` the samples an exit
serves would
be a random share of the test set instead (:func:`random_routing_accuracy`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from theorylab.cis.rates import split_rates


def max_softmax(logits: np.ndarray) -> np.ndarray:
    """Maximum softmax probability over the last axis."""
    shifted = logits - logits.max(-1, keepdims=True)
    probs = np.exp(shifted)
    return probs.max(-1) / probs.sum(-1)


def neg_entropy(logits: np.ndarray) -> np.ndarray:
    r"""Minus the entropy :math:`\sum_kp_k\log p_k` of the softmax over the last axis (higher = more confident)."""
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return np.sum(np.exp(log_probs) * log_probs, -1)


CONFIDENCE = {"max-softmax": max_softmax, "negative entropy": neg_entropy}  # the readings of the thesis' measure


def route(confidence: np.ndarray, split: Sequence[float]) -> np.ndarray:
    """The exit (0-based) serving each sample: ``confidence`` is ``(E, n)``, exit :math:`e` serves the most confident
    remaining samples up to its share of the split (rounded to whole samples, the deepest exit takes the rest)."""
    confidence = np.asarray(confidence, dtype=np.float64)
    n_exits, n = confidence.shape
    shares = split_rates(split)
    if len(shares) != n_exits:
        raise ValueError(f"split must give one share per exit ({n_exits}); got {len(shares)}")
    counts = np.round(np.cumsum(shares) * n).astype(int)
    served, remaining = np.full(n, n_exits - 1), np.arange(n)
    for e in range(n_exits - 1):
        take = counts[e] - (counts[e - 1] if e else 0)
        order = remaining[np.argsort(-confidence[e, remaining], kind="stable")]
        served[order[:take]] = e
        remaining = order[take:]
    return served


def cis_accuracy(correct: np.ndarray, confidence: np.ndarray, split: Sequence[float]) -> float:
    """Accuracy of the system: ``correct`` ``(E, n)`` says whether exit e classifies sample j right."""
    served = route(confidence, split)
    return float(np.asarray(correct)[served, np.arange(len(served))].mean())


def random_routing_accuracy(correct: np.ndarray, split: Sequence[float]) -> float:
    r"""The expected accuracy if each exit served a uniformly random share of the samples
    (:math:`\hat{\mathcal D}_e=\mathcal D`): :math:`\sum_e\Lambda_e\,{\rm acc}_e`."""
    return float(split_rates(split) @ np.asarray(correct, dtype=np.float64).mean(1))
