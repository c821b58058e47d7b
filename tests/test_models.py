"""FedAWE's Table 6 CNNs: exact parameter counts, layer sizes and initialisation; the small heads."""

import math

import pytest
import torch
from torch import nn

from theorylab.testbeds.models import MODELS, PAPER_COUNTS, build_model


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def test_parameter_counts_match_the_digest():
    # counts computed in digest 000 §6.1 from Table 6's layer sizes on 3x32x32 inputs
    for name, count in PAPER_COUNTS.items():
        assert parameter_count(build_model(name, generator=torch.Generator().manual_seed(0))) == count


def test_layer_sizes_of_the_cifar_cnn():
    model = build_model("cnn_cifar", generator=torch.Generator().manual_seed(0))
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    assert [(c.in_channels, c.out_channels, c.kernel_size, c.stride, c.padding) for c in convs] == \
        [(3, 32, (3, 3), (1, 1), (1, 1)), (32, 32, (3, 3), (1, 1), (1, 1))]
    assert [(l.in_features, l.out_features) for l in linears] == [(2048, 256), (256, 64), (64, 10)]
    assert sum(isinstance(m, nn.MaxPool2d) for m in model.modules()) == 2


def test_cinic_cnn_has_three_dropout_layers_and_no_buffers():
    model = build_model("cnn_cinic", generator=torch.Generator().manual_seed(0))
    assert [m.p for m in model.modules() if isinstance(m, nn.Dropout)] == [0.2, 0.2, 0.2]
    assert list(model.buffers()) == []


def test_initialisation_follows_the_official_code():
    model = build_model("cnn_cifar", generator=torch.Generator().manual_seed(1))
    fc = model.fc1[0]  # 2048 -> 256, Kaiming normal with ReLU gain: std sqrt(2 / fan_in)
    assert fc.weight.std().item() == pytest.approx(math.sqrt(2 / 2048), rel=0.01)
    assert abs(fc.weight.mean().item()) < 3 * math.sqrt(2 / 2048) / math.sqrt(fc.weight.numel())
    for layer in (model.conv[0], model.conv[3], model.fc1[0], model.fc1[2]):
        assert torch.count_nonzero(layer.bias) == 0
    bound = 1 / math.sqrt(64)  # default Linear init of the output layer: U(+-1/sqrt(fan_in))
    assert model.fc2.weight.abs().max().item() <= bound and model.fc2.weight.abs().max().item() > 0.9 * bound
    assert 0 < model.fc2.bias.abs().max().item() <= bound


def test_generator_makes_init_reproducible_without_global_state():
    state = torch.get_rng_state()
    a = build_model("cnn_svhn", generator=torch.Generator().manual_seed(3))
    b = build_model("cnn_svhn", generator=torch.Generator().manual_seed(3))
    c = build_model("cnn_svhn", generator=torch.Generator().manual_seed(4))
    assert torch.equal(torch.get_rng_state(), state)
    flat = lambda m: torch.cat([p.reshape(-1) for p in m.parameters()])  # noqa: E731
    assert torch.equal(flat(a), flat(b)) and not torch.equal(flat(a), flat(c))


@pytest.mark.parametrize("name", MODELS)
def test_models_map_inputs_to_class_logits(name):
    shape = (1, 8, 8)
    model = build_model(name, shape, classes=7, generator=torch.Generator().manual_seed(0))
    assert model(torch.zeros(5, *shape)).shape == (5, 7)


def test_small_heads_and_bad_names():
    assert parameter_count(build_model("logistic", (1, 8, 8), 10, torch.Generator())) == 64 * 10 + 10
    assert parameter_count(build_model("mlp", (1, 8, 8), 10, torch.Generator())) == 64 * 64 + 64 + 64 * 10 + 10
    with pytest.raises(ValueError, match="model must be one of"):
        build_model("resnet")
    with pytest.raises(ValueError, match="divisible by 4"):
        build_model("cnn_cifar", (3, 30, 30))


@pytest.mark.parametrize("name", ["cnn_svhn", "cnn_cifar"])
def test_fast_form_gives_the_same_outputs_and_gradients_bit_for_bit(name):
    # ReLU after the max-pool instead of before it: max_j max(a_j, 0) = max(max_j a_j, 0), and both orders route a
    # window's gradient to its first maximal input or nowhere.  Independent check: the paper's layer order, same weights.
    paper = build_model(name, generator=torch.Generator().manual_seed(3))
    fast = build_model(name, generator=torch.Generator().manual_seed(3), fast=True)
    assert [n for n, _ in paper.named_parameters()] == [n for n, _ in fast.named_parameters()]
    inputs = torch.randn(16, 3, 32, 32, generator=torch.Generator().manual_seed(4))
    inputs[:4] = -inputs[:4].abs()  # many all-negative pooling windows, where ReLU's gradient decides
    inputs[4:6] = 0.0  # ties in every window
    labels = torch.arange(16) % 10
    results = []
    for model in (paper, fast):
        out = model(inputs)
        loss = nn.functional.cross_entropy(out, labels)
        results.append((out, torch.autograd.grad(loss, tuple(model.parameters()))))
    assert torch.equal(results[0][0], results[1][0])
    assert all(torch.equal(a, b) for a, b in zip(results[0][1], results[1][1]))
