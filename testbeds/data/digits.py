"""scikit-learn's bundled digits (1,797 grey 8x8 images, 17 levels 0..16, 10 classes); no download.

A fixed seeded split gives 1,437 train / 360 test images (80/20).  scikit-learn is imported lazily.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from theorylab.testbeds.data.images import DatasetMissing, ImageSet, make_set

TEST_SIZE, SPLIT_SEED = 360, 1797


def load_digits(root: Path | None = None) -> tuple[ImageSet, ImageSet]:
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        raise DatasetMissing("the digits dataset ships with scikit-learn: `pip install scikit-learn` "
                             "(it is in theorylab's dev extra)") from None
    images, labels = sklearn_digits(return_X_y=True)
    images = images.reshape(-1, 1, 8, 8).astype(np.uint8)
    order = np.random.Generator(np.random.PCG64(SPLIT_SEED)).permutation(len(labels))
    test, train = order[:TEST_SIZE], order[TEST_SIZE:]
    train_set = make_set("digits", images[train], labels[train], classes=10, scale=16.0)
    return train_set, make_set("digits", images[test], labels[test], classes=10, scale=16.0,
                               mean=train_set.mean, std=train_set.std)
