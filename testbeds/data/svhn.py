"""SVHN (cropped digits) from its standard MATLAB files, which a user must supply.

``train_32x32.mat`` / ``test_32x32.mat`` hold ``X`` of shape (32, 32, 3, N) uint8 and ``y`` of shape
(N, 1) with labels 1..10, where 10 stands for the digit 0.  Normalisation constants are FedAWE's
code (digest 000 §6.1).  scipy is imported lazily.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from theorylab.testbeds.data.images import ImageSet, make_set, require

FOLDER = "svhn"
MEAN, STD = (0.4376821, 0.4437697, 0.47280442), (0.19803012, 0.20101562, 0.19703614)
HOW = (f"SVHN cannot be downloaded here: copy train_32x32.mat and test_32x32.mat "
       f"(http://ufldl.stanford.edu/housenumbers/) into <data root>/{FOLDER}/.")


def read_mat(path: Path) -> tuple[np.ndarray, np.ndarray]:
    from scipy.io import loadmat

    mat = loadmat(require(path, HOW))
    images = np.transpose(np.asarray(mat["X"], dtype=np.uint8), (3, 2, 0, 1))  # (H, W, C, N) -> (N, C, H, W)
    labels = np.asarray(mat["y"], dtype=np.int64).reshape(-1) % 10  # 10 means digit 0
    return images, labels


def load_svhn(root: Path) -> tuple[ImageSet, ImageSet]:
    folder = Path(root) / FOLDER
    train = make_set("svhn", *read_mat(folder / "train_32x32.mat"), classes=10, mean=MEAN, std=STD)
    return train, make_set("svhn", *read_mat(folder / "test_32x32.mat"), classes=10, mean=MEAN, std=STD)
