r"""Models for the network testbeds: FedAWE's CNNs (Table 6) and small heads for fast tests.

FedAWE Table 6 (seed 000 App. J; identical to ``IBM/fedau/model/cnn_*.py``, digest 000 §6.1); every
conv has kernel 3, stride 1, padding 1; every pool is a 2x2 max-pool; inputs 3x32x32:

=========  ==========================================================================================  ==========
``cnn_svhn``   Conv(3,32)-ReLU-Pool-Conv(32,32)-ReLU-Pool-FC(2048,128)-ReLU-FC(128,10)                     273,706
``cnn_cifar``  ... -FC(2048,256)-ReLU-FC(256,64)-ReLU-FC(64,10)                                            551,786
``cnn_cinic``  ... -Drop(.2)-FC(2048,512)-ReLU-Drop(.2)-FC(512,256)-ReLU-Drop(.2)-FC(256,10)             1,193,130
=========  ==========================================================================================  ==========

Initialisation as the official code: ``kaiming_normal_(nonlinearity="relu")`` weights and zero
biases for the conv block and the hidden fully connected block (``fc1``); the output layer
(``fc2``) keeps PyTorch's default Linear init, :math:`W \sim U(\pm 1/\sqrt{\text{fan\_in}})`
(``kaiming_uniform_`` with :math:`a=\sqrt5`), :math:`b \sim U(\pm 1/\sqrt{\text{fan\_in}})`.
The fast heads ``mlp`` (one ReLU hidden layer) and ``logistic`` use the default init throughout.

Every model is built on the ``meta`` device and initialised from an explicit ``torch.Generator``,
so no global random state is read or advanced.  Models hold parameters only (no buffers), which
is what lets a model be one flat vector per client (:mod:`theorylab.testbeds.network`).

``build_model(..., fast=True)`` builds the same function in a cheaper exact form: the CNNs apply each ReLU
*after* its max-pool, in place.  Max-pooling commutes with ReLU exactly (:math:`\max_j \max(a_j, 0) =
\max(\max_j a_j, 0)`, and both orders send a window's gradient to the same first maximal input, or
nowhere when it is :math:`\le 0`), so the outputs and the gradients are the same floats, bit for bit, while
the ReLU and its backward touch a quarter of the activations and two activation tensors of the largest size
are never allocated.  The parameters, their names and their order are unchanged.  The network testbed
evaluates its models this way (:mod:`theorylab.testbeds.network`); without ``fast`` a model is the paper's
layer order, as the benchmarks' research loop uses it.
"""

from __future__ import annotations

import math
from typing import Callable

import torch
from torch import nn

# parameter counts of Table 6's CNNs on (3, 32, 32) inputs, computed in digest 000 §6.1 [D]
PAPER_COUNTS = {"cnn_svhn": 273_706, "cnn_cifar": 551_786, "cnn_cinic": 1_193_130}


class FedAweCNN(nn.Module):
    """Two conv/ReLU/pool stages (``conv``), a hidden fully connected block (``fc1``), an output layer (``fc2``)."""

    def __init__(self, input_shape: tuple[int, int, int], hidden: tuple[int, ...], classes: int, dropout: float = 0.0,
                 fast: bool = False):
        super().__init__()
        channels, height, width = input_shape
        if height % 4 or width % 4:
            raise ValueError(f"the FedAWE CNNs need input height and width divisible by 4; got {input_shape}")
        # fast: ReLU after the pool, in place (the same function and gradients bit for bit; module docstring)
        def stage():
            return [nn.MaxPool2d(2, 2), nn.ReLU(inplace=True)] if fast else [nn.ReLU(), nn.MaxPool2d(2, 2)]
        self.conv = nn.Sequential(nn.Conv2d(channels, 32, 3, 1, 1), *stage(), nn.Conv2d(32, 32, 3, 1, 1), *stage())
        layers: list[nn.Module] = []
        width_in = 32 * (height // 4) * (width // 4)
        for units in hidden:
            layers += ([nn.Dropout(dropout)] if dropout else []) + [nn.Linear(width_in, units), nn.ReLU()]
            width_in = units
        self.fc1 = nn.Sequential(*layers, *([nn.Dropout(dropout)] if dropout else []))
        self.fc2 = nn.Linear(width_in, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.fc1(self.conv(x).flatten(1)))

    def kaiming_modules(self):
        return [*self.conv, *self.fc1]


class MLP(nn.Module):
    """Flatten, then ``hidden`` ReLU layers (none: multinomial logistic regression), then a linear output."""

    def __init__(self, input_shape: tuple[int, int, int], hidden: tuple[int, ...], classes: int):
        super().__init__()
        layers: list[nn.Module] = [nn.Flatten()]
        width_in = math.prod(input_shape)
        for units in hidden:
            layers += [nn.Linear(width_in, units), nn.ReLU()]
            width_in = units
        self.net = nn.Sequential(*layers, nn.Linear(width_in, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def kaiming_modules(self):
        return []


BUILDERS: dict[str, Callable[..., nn.Module]] = {
    "cnn_svhn": lambda shape, classes, fast: FedAweCNN(shape, (128,), classes, fast=fast),
    "cnn_cifar": lambda shape, classes, fast: FedAweCNN(shape, (256, 64), classes, fast=fast),
    "cnn_cinic": lambda shape, classes, fast: FedAweCNN(shape, (512, 256), classes, dropout=0.2, fast=fast),
    "mlp": lambda shape, classes, fast: MLP(shape, (64,), classes),  # fast: no cheaper form
    "logistic": lambda shape, classes, fast: MLP(shape, (), classes),
}
MODELS = tuple(BUILDERS)
# the input shape each model is built for when the data does not dictate one (FedAWE's 32x32 colour images)
PAPER_INPUT = (3, 32, 32)


def default_linear_init(layer: nn.Module, generator: torch.Generator) -> None:
    """PyTorch's default ``nn.Linear`` / ``nn.Conv2d`` init, drawn from ``generator``."""
    nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
    bound = 1 / math.sqrt(nn.init._calculate_fan_in_and_fan_out(layer.weight)[0])
    nn.init.uniform_(layer.bias, -bound, bound, generator=generator)


@torch.no_grad()
def initialise(model: nn.Module, generator: torch.Generator) -> nn.Module:
    """FedAWE's init: Kaiming-normal (ReLU gain) + zero bias on ``kaiming_modules``, default init elsewhere."""
    kaiming = {id(m) for m in model.kaiming_modules()}
    for layer in model.modules():
        if not isinstance(layer, (nn.Linear, nn.Conv2d)):
            continue
        if id(layer) in kaiming:
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu", generator=generator)
            nn.init.zeros_(layer.bias)
        else:
            default_linear_init(layer, generator)
    return model


def build_model(name: str, input_shape: tuple[int, int, int] = PAPER_INPUT, classes: int = 10,
                generator: torch.Generator | None = None, device="cpu", dtype=torch.float32,
                fast: bool = False) -> nn.Module:
    """Model ``name`` for inputs ``(C, H, W)``; initialised from ``generator``, or left uninitialised
    (``torch.empty`` storage) when it is ``None`` (a template whose parameters will be supplied).  ``fast``: the
    same function in its cheaper exact form (module docstring); the initialisation does not depend on it.

    A generator is a CPU generator: the weights are drawn on the CPU and then moved to ``device``, so one seed
    gives the same initial model on every device (a CUDA generator's stream differs from the CPU's)."""
    if name not in BUILDERS:
        raise ValueError(f"model must be one of {MODELS}; got {name!r}")
    with torch.device("meta"):
        model = BUILDERS[name](tuple(input_shape), int(classes), bool(fast))
    if any(True for _ in model.buffers()):
        raise ValueError(f"model {name!r} has buffers; a flat-parameter model must hold parameters only")
    if generator is None:
        return model.to_empty(device=device).to(dtype)
    return initialise(model.to_empty(device="cpu").to(dtype), generator).to(device)
