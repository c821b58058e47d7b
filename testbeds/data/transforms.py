r"""Minibatch transforms in a few lines of torch (no torchvision): fit, normalise, crop, flip.

* :func:`to_inputs`: uint8 pixels :math:`\to` model inputs: zero-pad the image to the model's
  height and width (Fashion-MNIST 28x28 :math:`\to` 32x32), divide by ``scale``, subtract the
  per-channel mean and divide by the std, and repeat a single grey channel to the model's channel
  count (deps_and_data.md §1.3: the "CIFAR CNN" then runs unchanged on grey images).
* :func:`random_crop`: ``RandomCrop(size, padding)`` of one whole minibatch at offset ``(dy, dx)``
  in :math:`[0, 2\,\text{padding}]^2`; zero padding of the normalised tensor, as FedAWE's code
  applies its transforms to normalised GPU batches, one crop per minibatch (digest 000 §6.1).
* :func:`hflip`: horizontal flip of a whole minibatch.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def to_inputs(pixels: torch.Tensor, scale: float, mean, std, shape: tuple[int, int, int],
              dtype: torch.dtype) -> torch.Tensor:
    """``pixels`` ``(..., C, H, W)`` uint8 to normalised ``(..., C', H', W')`` floats, ``shape = (C', H', W')``."""
    channels, height, width = shape
    c, h, w = pixels.shape[-3:]
    if h > height or w > width or c not in (1, channels):
        raise ValueError(f"images of shape {(c, h, w)} do not fit model inputs {shape} (pad and grey-to-colour only)")
    top, left = (height - h) // 2, (width - w) // 2
    x = F.pad(pixels, (left, width - w - left, top, height - h - top)) if (h, w) != (height, width) else pixels
    mean = torch.as_tensor(mean, dtype=dtype, device=x.device).view(-1, 1, 1)
    std = torch.as_tensor(std, dtype=dtype, device=x.device).view(-1, 1, 1)
    x = (x.to(dtype) / scale - mean) / std
    return x.expand(*x.shape[:-3], channels, height, width) if c != channels else x


def random_crop(x: torch.Tensor, dy: int, dx: int, padding: int) -> torch.Tensor:
    """Crop the zero-padded batch ``x`` ``(B, C, H, W)`` back to ``H x W`` at offset ``(dy, dx)``."""
    h, w = x.shape[-2:]
    padded = F.pad(x, (padding, padding, padding, padding))
    return padded[..., dy:dy + h, dx:dx + w]


def hflip(x: torch.Tensor) -> torch.Tensor:
    return x.flip(-1)
