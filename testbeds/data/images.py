"""An image classification split as uint8 pixels plus labels, and where dataset files are looked for.

Pixels stay in their stored integer form, ``(N, C, H, W)`` uint8, so a 60k-image set costs 47 MB on a
device; a minibatch is converted to floats only when it is drawn (:mod:`theorylab.testbeds.data.transforms`).
``scale`` maps stored values to [0, 1] (255 for 8-bit images, 16 for scikit-learn's digits) and
``mean``/``std`` are the per-channel normalisation constants applied after scaling.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import numpy as np


class DatasetMissing(FileNotFoundError):
    """A dataset's files are not on disk; the message says how to get them."""


class ImageSet(NamedTuple):
    name: str
    images: np.ndarray  # (N, C, H, W) uint8
    labels: np.ndarray  # (N,) int64 in [0, classes)
    classes: int
    scale: float
    mean: tuple[float, ...]  # per channel, after dividing by scale
    std: tuple[float, ...]

    def subset(self, index) -> "ImageSet":
        return self._replace(images=self.images[index], labels=self.labels[index])


def data_root(root=None) -> Path:
    """``root``, else ``$THEORYLAB_DATA``, else the repository's ``data/`` folder (filled by ``make data``)."""
    if root is not None:
        return Path(root)
    env = os.environ.get("THEORYLAB_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "data"


def channel_stats(images: np.ndarray, scale: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Per-channel mean and standard deviation of ``images / scale`` (used where a paper gives none)."""
    means, stds = [], []
    levels = np.arange(256) / scale
    for c in range(images.shape[1]):
        counts = np.bincount(images[:, c].ravel(), minlength=256)  # exact moments from the pixel histogram
        mean = counts @ levels / counts.sum()
        means.append(float(mean))
        stds.append(float(np.sqrt(counts @ (levels - mean) ** 2 / counts.sum())))
    return tuple(means), tuple(stds)


def make_set(name: str, images: np.ndarray, labels, classes: int, scale: float = 255.0,
             mean=None, std=None) -> ImageSet:
    """Check shapes and fill in the normalisation constants from the data when none are given
    (loaders pass a training split's constants to its test split)."""
    images = np.require(images, np.uint8, ["C", "W"])  # contiguous and writable (torch needs both)
    labels = np.asarray(labels, dtype=np.int64)
    if images.ndim != 4 or labels.shape != (images.shape[0],):
        raise ValueError(f"{name}: images must be (N, C, H, W) and labels (N,); got {images.shape} and {labels.shape}")
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        raise ValueError(f"{name}: labels must lie in [0, {classes}); got range [{labels.min()}, {labels.max()}]")
    if mean is None or std is None:
        mean, std = channel_stats(images, scale)
    return ImageSet(name, images, labels, classes, float(scale), tuple(mean), tuple(std))


def require(path: Path, how: str) -> Path:
    """``path`` if it exists, else :class:`DatasetMissing` with the instructions ``how``."""
    if not path.exists():
        raise DatasetMissing(f"dataset file {path} not found. {how}")
    return path
