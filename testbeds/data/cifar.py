"""CIFAR-10 from its standard python batches (``cifar-10-batches-py/``), which a user must supply.

Each batch file is a pickle of ``{b"data": uint8 (N, 3072) in CHW order, b"labels": [N ints]}``;
``data_batch_1`` .. ``data_batch_5`` form the 50,000-image train split and ``test_batch`` the
10,000-image test split.  Normalisation constants are FedAWE's code (digest 000 §6.1).
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np

from theorylab.testbeds.data.images import ImageSet, make_set, require

FOLDER = "cifar-10-batches-py"
TRAIN_BATCHES = tuple(f"data_batch_{k}" for k in range(1, 6))
MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)
HOW = (f"CIFAR-10 cannot be downloaded here: copy the python version (cifar-10-python.tar.gz from "
       f"https://www.cs.toronto.edu/~kriz/cifar.html, unpacked) so that <data root>/{FOLDER}/ holds "
       "data_batch_1..5 and test_batch.")


def read_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    with open(require(path, HOW), "rb") as f:
        batch = pickle.load(f, encoding="bytes")
    data = np.asarray(batch[b"data"], dtype=np.uint8)
    return data.reshape(-1, 3, 32, 32), np.asarray(batch[b"labels"], dtype=np.int64)


def load_cifar10(root: Path) -> tuple[ImageSet, ImageSet]:
    folder = Path(root) / FOLDER
    parts = [read_batch(folder / name) for name in TRAIN_BATCHES]
    train = make_set("cifar10", np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                     classes=10, mean=MEAN, std=STD)
    return train, make_set("cifar10", *read_batch(folder / "test_batch"), classes=10, mean=MEAN, std=STD)
