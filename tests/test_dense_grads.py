"""The ``dense`` gradient strategy: the closed-form backward pass of the MLP and logistic heads.

Reference: autograd through an ordinary ``nn.Module`` (the ``loop`` strategy and ``module_grad``), in float64."""

import pytest
import torch
from torch import nn

from theorylab.testbeds.dense_grads import dense_backward, dense_layers
from theorylab.testbeds.models import build_model
from theorylab.rng import Streams

from test_network import module_grad, tiny


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("model", ["mlp", "logistic"])
def test_dense_gradients_equal_autograd_in_float64(model, device):
    problem = tiny(model, augment=None, device=device)
    assert problem.strategy == "dense"  # the automatic choice for dense models
    streams = Streams(0, 2, device)
    x = problem.initial_point(2, streams).unsqueeze(1).repeat(1, problem.n_clients, 1)
    x += 0.01 * torch.randn(x.shape, dtype=x.dtype, generator=torch.Generator().manual_seed(0)).to(device)
    draw = problem.sample(streams, 1)[0]
    active = (torch.rand((2, problem.n_clients), generator=torch.Generator().manual_seed(1)) < 0.6).to(device)
    problem.chunk_size = 3  # several chunks over the active (replica, client) rows
    dense = problem.stochastic_grads(x, draw, active)
    problem.strategy = "loop"
    loop = problem.stochastic_grads(x, draw, active)
    assert torch.allclose(dense, loop, rtol=1e-10, atol=1e-13)
    r, i = active.nonzero()[0].tolist()
    exact = module_grad(tiny(model, augment=None), x[r, i].cpu(), draw.index[r, i].cpu())  # autograd on the CPU
    assert torch.allclose(dense[r, i].cpu(), exact, rtol=1e-10, atol=1e-13)
    assert torch.equal(dense[~active], torch.zeros_like(dense[~active]))


def test_relu_subgradient_at_zero_is_torchs():
    # hidden pre-activations exactly 0 (zero inputs, zero first-layer bias): torch's ReLU passes no gradient there
    model = build_model("mlp", (1, 2, 2), 3, torch.Generator().manual_seed(0), dtype=torch.float64)
    model.net[1].bias.data.zero_()
    inputs, labels = torch.zeros(4, 1, 2, 2, dtype=torch.float64), torch.tensor([0, 1, 2, 0])
    nn.functional.cross_entropy(model(inputs), labels).backward()
    params = {name: p.detach().unsqueeze(0) for name, p in model.named_parameters()}
    grads = dense_backward(params, dense_layers(model), inputs.unsqueeze(0), labels.unsqueeze(0))
    for name, p in model.named_parameters():
        assert torch.allclose(grads[name][0], p.grad, rtol=1e-12, atol=1e-15), name


def test_dense_strategy_is_refused_for_conv_models():
    with pytest.raises(ValueError, match="the dense gradient strategy needs"):
        dense_layers(build_model("cnn_svhn"))
    with pytest.raises(ValueError, match="strategy='dense' needs a dense model"):
        tiny("cnn_svhn", strategy="dense")
