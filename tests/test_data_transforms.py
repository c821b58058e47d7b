"""Minibatch transforms: padding, grey-to-colour tiling, normalisation, crops and flips (against numpy)."""

import numpy as np
import pytest
import torch

from theorylab.testbeds.data.transforms import hflip, random_crop, to_inputs


def test_to_inputs_pads_normalises_and_tiles():
    pixels = torch.randint(0, 256, (2, 4, 1, 28, 28), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    x = to_inputs(pixels, 255.0, (0.3, 0.3, 0.3), (0.5, 0.5, 0.5), (3, 32, 32), torch.float64)
    assert x.shape == (2, 4, 3, 32, 32)
    expected = (np.pad(pixels.numpy().astype(np.float64), [(0, 0)] * 3 + [(2, 2), (2, 2)]) / 255 - 0.3) / 0.5
    for c in range(3):
        assert np.allclose(x[:, :, c].numpy(), expected[:, :, 0])


def test_to_inputs_rejects_shapes_it_cannot_fit():
    with pytest.raises(ValueError, match="do not fit"):
        to_inputs(torch.zeros(1, 3, 40, 40, dtype=torch.uint8), 255.0, (0,) * 3, (1,) * 3, (3, 32, 32), torch.float32)
    with pytest.raises(ValueError, match="do not fit"):
        to_inputs(torch.zeros(1, 2, 8, 8, dtype=torch.uint8), 255.0, (0,) * 3, (1,) * 3, (3, 8, 8), torch.float32)


def test_random_crop_and_flip_match_slicing():
    x = torch.arange(2 * 3 * 6 * 6, dtype=torch.float64).reshape(2, 3, 6, 6)
    padded = np.pad(x.numpy(), [(0, 0), (0, 0), (4, 4), (4, 4)])
    for dy, dx in ((0, 0), (4, 4), (8, 1), (3, 7)):
        assert np.array_equal(random_crop(x, dy, dx, 4).numpy(), padded[..., dy:dy + 6, dx:dx + 6])
    assert np.array_equal(hflip(x).numpy(), x.numpy()[..., ::-1])
