"""The IDX file format (LeCun's MNIST format, also used by Fashion-MNIST) and the Fashion-MNIST loader.

An IDX file is two zero bytes, a type byte (0x08 = unsigned byte), a dimension count ``n``, ``n``
big-endian uint32 sizes, then the data in C order.  Files may be gzip-compressed (``.gz``).
Fashion-MNIST (Xiao et al. 2017): 60,000 train / 10,000 test grey 28x28 images, 10 classes.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

from theorylab.testbeds.data.images import ImageSet, make_set, require

FMNIST_FILES = {"train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
                "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}
FMNIST_SYSTEM_DIR = Path("/usr/share/datasets/fashion-mnist")  # where `apt-get install dataset-fashion-mnist` puts it
FMNIST_HOW = ("Run `make data` (no root: `apt-get download dataset-fashion-mnist && dpkg -x dataset-fashion-mnist_*.deb "
              "DIR`, then copy DIR/usr/share/datasets/fashion-mnist/*.gz to <data root>/fashion-mnist/), or install "
              "the Debian package `dataset-fashion-mnist` as root.")


def read_idx(path) -> np.ndarray:
    """The array stored in an IDX file (unsigned-byte type only), gzip or raw."""
    path = Path(path)
    raw = (gzip.open if path.suffix == ".gz" else open)(path, "rb").read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise ValueError(f"{path} is not an unsigned-byte IDX file (magic bytes {raw[:4]!r})")
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * k: 8 + 4 * k], "big") for k in range(ndim))
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(shape)):
        raise ValueError(f"{path}: header shape {shape} needs {int(np.prod(shape))} bytes, file holds {data.size}")
    return data.reshape(shape)


def fashion_mnist_dir(root: Path) -> Path:
    """``root/fashion-mnist`` if it holds the files, else the system package's folder, else an error."""
    local = Path(root) / "fashion-mnist"
    if not (local / FMNIST_FILES["train"][0]).exists() and (FMNIST_SYSTEM_DIR / FMNIST_FILES["train"][0]).exists():
        return FMNIST_SYSTEM_DIR
    return local


def load_fashion_mnist(root: Path) -> tuple[ImageSet, ImageSet]:
    folder = fashion_mnist_dir(root)
    splits = {}
    for split, (images, labels) in FMNIST_FILES.items():
        x = read_idx(require(folder / images, FMNIST_HOW))
        y = read_idx(require(folder / labels, FMNIST_HOW))
        splits[split] = (x[:, None], y)
    train = make_set("fmnist", *splits["train"], classes=10)
    return train, make_set("fmnist", *splits["test"], classes=10, mean=train.mean, std=train.std)
