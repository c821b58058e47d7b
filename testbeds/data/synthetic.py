r"""A seeded synthetic class-conditional image set: no files, any size, for tests and benchmarks.

Class :math:`c` has a smooth random template :math:`T_c \in [0, 255]^{C\times H\times W}` (a random
low-resolution pattern upsampled by nearest neighbour); an image of class :math:`c` is
:math:`\mathrm{clip}(T_c + \varepsilon)` with i.i.d. :math:`\varepsilon\sim\mathcal N(0, \text{noise}^2)`,
rounded to uint8.  Labels are drawn uniformly.  Everything comes from ``PCG64(seed)``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from theorylab.testbeds.data.images import ImageSet, make_set


def synthetic_images(n: int, rng: np.random.Generator, templates: np.ndarray, noise: float):
    labels = rng.integers(0, len(templates), size=n)
    images = templates[labels] + rng.normal(0.0, noise, size=(n, *templates.shape[1:]))
    return np.clip(np.round(images), 0, 255).astype(np.uint8), labels


def load_synthetic(root: Path | None = None, train_size: int = 2000, test_size: int = 500, channels: int = 3,
                   size: int = 32, classes: int = 10, noise: float = 60.0, seed: int = 0) -> tuple[ImageSet, ImageSet]:
    for name, value in (("train_size", train_size), ("test_size", test_size), ("channels", channels),
                        ("size", size), ("classes", classes)):
        if int(value) != value or value < 1:
            raise ValueError(f"synthetic {name} must be an integer >= 1; got {value}")
    rng = np.random.Generator(np.random.PCG64([seed, 32]))
    coarse = max(1, size // 4)
    low = rng.uniform(0, 255, size=(classes, channels, coarse, coarse))
    reps = -(-size // coarse)
    templates = np.repeat(np.repeat(low, reps, axis=2), reps, axis=3)[:, :, :size, :size]
    train = make_set("synthetic", *synthetic_images(train_size, rng, templates, noise), classes=classes)
    test = make_set("synthetic", *synthetic_images(test_size, rng, templates, noise), classes=classes,
                    mean=train.mean, std=train.std)
    return train, test
