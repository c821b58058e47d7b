"""The network problem: flat parameters, minibatch sampling, gradient strategies, metrics, training through the runner."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from theorylab.testbeds.models import build_model
from theorylab.testbeds.network import Network, image_testbed
from theorylab.config import RunConfig
from theorylab.rng import Streams
from theorylab.runner import run

TINY = {"data": {"train_size": 120, "test_size": 40, "channels": 1, "size": 8, "noise": 40.0}, "clients": 6,
        "partition": "iid", "batch_size": 5, "eval_train": None}


def tiny(model="mlp", dtype=torch.float64, **kw):
    shape = (1, 8, 8)
    return image_testbed("synthetic", model=model, dtype=dtype, input_shape=shape, **{**TINY, **kw})


def module_grad(problem: Network, flat: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Independent reference: an ordinary nn.Module loaded with ``flat``, autograd on the same minibatch."""
    module = build_model(problem.model_name, problem.input_shape, problem.classes, dtype=problem.dtype)
    torch.nn.utils.vector_to_parameters(flat.detach().clone(), module.parameters())
    x = problem.inputs("train", index)
    F.cross_entropy(module(x), problem._labels["train"][index]).backward()
    return torch.cat([p.grad.reshape(-1) for p in module.parameters()])


@pytest.mark.parametrize("model", ["mlp", "cnn_cifar"])
def test_loop_and_vmap_give_the_same_gradients_in_float64(model):
    problem = tiny(model)
    streams = Streams(0, 2)
    x = problem.initial_point(2, streams).unsqueeze(1).repeat(1, problem.n_clients, 1)
    x += 0.01 * torch.randn(x.shape, dtype=x.dtype, generator=torch.Generator().manual_seed(0))
    draw = problem.sample(streams, 1)[0]
    problem.strategy = "loop"
    loop = problem.stochastic_grads(x, draw)
    problem.strategy, problem.chunk_size = "vmap", 4  # chunks of 4 over 12 (replica, client) rows
    vmap = problem.stochastic_grads(x, draw)
    assert torch.allclose(loop, vmap, rtol=1e-10, atol=1e-12)
    reference = module_grad(problem, x[1, 3], draw.index[1, 3])
    assert torch.allclose(loop[1, 3], reference, rtol=1e-10, atol=1e-12)


def test_vmap_is_refused_for_float32_conv_models_on_cpu():
    with pytest.raises(ValueError, match="strategy='vmap' is refused"):
        tiny("cnn_svhn", dtype=torch.float32, strategy="vmap")
    assert tiny("cnn_svhn", dtype=torch.float32).strategy == "loop"
    assert tiny("mlp", dtype=torch.float32).strategy == "dense"


def test_only_active_clients_are_computed():
    problem = tiny("mlp")
    streams = Streams(1, 1)
    x = problem.initial_point(1, streams).unsqueeze(1).expand(-1, problem.n_clients, -1)
    draw = problem.sample(streams, 1)[0]
    active = torch.tensor([[True, False, True, False, False, True]])
    some, every = problem.stochastic_grads(x, draw, active), problem.stochastic_grads(x, draw)
    assert torch.equal(some[~active], torch.zeros_like(some[~active]))
    assert torch.equal(some[active], every[active])


def test_flat_vector_round_trip():
    problem = tiny("cnn_cifar")
    module = build_model("cnn_cifar", problem.input_shape, 10, torch.Generator().manual_seed(2), dtype=torch.float64)
    flat = problem.flatten(module)
    assert flat.shape == (problem.dim,)
    for (name, p), view in zip(module.named_parameters(), problem.unflatten(flat).values()):
        assert torch.equal(p, view), name


def test_minibatches_come_from_the_client_uniformly_and_reproducibly():
    problem = tiny("logistic", batch_size=4000)
    a = problem.sample(Streams(3, 2), 2)
    b = problem.sample(Streams(3, 2), 2)
    assert all(torch.equal(u.index, v.index) for u, v in zip(a, b))
    single = problem.sample(Streams(3, 1), 2)  # replica 0 does not depend on how many replicas run
    assert torch.equal(single[1].index[0], a[1].index[0])
    for i, part in enumerate(problem.parts):
        drawn = a[0].index[0, i].numpy()
        assert set(drawn) <= set(part.tolist())
        counts = np.bincount(np.searchsorted(part, drawn), minlength=len(part))
        expected = 4000 / len(part)  # with replacement, uniform over the client's 20 samples
        assert np.all(np.abs(counts - expected) < 6 * np.sqrt(expected))


def test_metrics_match_an_independent_evaluation():
    problem = tiny("mlp", eval_test=17)
    x = problem.initial_point(2, Streams(0, 2))
    values = problem.metrics(x)
    module = build_model("mlp", problem.input_shape, 10, dtype=torch.float64)
    torch.nn.utils.vector_to_parameters(x[1].clone(), module.parameters())
    for split in ("train", "test"):
        index = problem._eval[split]
        with torch.no_grad():
            logits = module(problem.inputs(split, index))
        y = problem._labels[split][index]
        assert values[f"{split}_loss"][1].item() == pytest.approx(F.cross_entropy(logits, y).item(), rel=1e-12)
        assert values[f"{split}_acc"][1].item() == pytest.approx((logits.argmax(1) == y).double().mean().item())
    assert len(problem._eval["test"]) == 17 and len(problem._eval["train"]) == 120


def test_dropout_draws_come_from_the_data_stream():
    problem = tiny("cnn_cinic", data={**TINY["data"], "size": 8})
    streams = Streams(0, 1)
    x = problem.initial_point(1, streams).unsqueeze(1).expand(-1, problem.n_clients, -1)
    draws = problem.sample(streams, 2)
    state = torch.get_rng_state()
    first, again = problem.stochastic_grads(x, draws[0]), problem.stochastic_grads(x, draws[0])
    assert torch.equal(torch.get_rng_state(), state)  # global state untouched
    assert torch.equal(first, again)
    reseeded = draws[0]._replace(seed=draws[1].seed)
    assert not torch.equal(first, problem.stochastic_grads(x, reseeded))


def test_dropout_masks_do_not_depend_on_the_other_active_clients():
    # common random numbers: a client's gradient is the same whoever else is active (so vmap, whose chunks
    # share one generator, is refused for dropout models and `auto` picks the loop)
    with pytest.raises(ValueError, match="refused for models with dropout"):
        tiny("cnn_cinic", strategy="vmap")
    problem = tiny("cnn_cinic")
    assert problem.strategy == "loop"
    streams = Streams(2, 2)
    x = problem.initial_point(2, streams).unsqueeze(1).expand(-1, problem.n_clients, -1)
    draw = problem.sample(streams, 1)[0]
    every = problem.stochastic_grads(x, draw)
    for i in range(problem.n_clients):
        alone = torch.zeros((2, problem.n_clients), dtype=torch.bool)
        alone[1, i] = True
        assert torch.equal(problem.stochastic_grads(x, draw, alone)[1, i], every[1, i])
    problem.model.eval()  # dropout off: the gradients change, so the masks above did act
    assert not torch.allclose(problem.stochastic_grads(x, draw), every)


def test_augmentation_draws_and_shapes():
    problem = tiny("cnn_cifar", augment="crop_flip")
    draw = problem.sample(Streams(0, 1), 1)[0]
    assert draw.crop.shape == (1, problem.n_clients, 2) and int(draw.crop.max()) <= 8
    assert draw.flip.dtype == torch.bool
    x = problem.inputs("train", draw.index[0], draw.crop[0], draw.flip[0])
    assert x.shape == (problem.n_clients, 5, 1, 8, 8)


def test_fedavg_trains_a_network_through_the_runner():
    spec = {"name": "synthetic", "model": "mlp", "input_shape": [1, 8, 8], **TINY, "clients": 4, "batch_size": 16}
    config = RunConfig(problem=spec, participation={"name": "bernoulli", "p": [1.0] * 4},
                       algorithm={"name": "fedavg", "local_steps": 5, "lr": 0.1}, rounds=15, replicas=2, seed=0,
                       every=5, dtype="float32")
    trace = run(config)
    loss, acc = trace.metrics["server.train_loss"], trace.metrics["server.test_acc"]
    assert loss.shape == (2, 4) and np.all(loss[:, -1] < 0.5 * loss[:, 0])
    assert np.all(acc[:, -1] > 0.6)  # 10 classes: chance is 0.1
    assert np.array_equal(run(config).metrics["server.test_acc"], acc)  # same seed, same trace


@pytest.mark.gpu
@pytest.mark.parametrize("strategy", ["loop", "vmap"])
def test_cuda_gradients_are_as_accurate_as_cpu_float32(strategy):
    # vmap's batched conv backward returned wrong gradients on this project's CPU (testbeds/network.py); on a GPU
    # it is the fast strategy.  Reference: float64 on the CPU.  Yardstick: the CPU's own float32 loop over the same
    # clients, whose per-client relative error is ~2.5e-7 (median) and 9.2e-4 (max: a client whose gradient nearly
    # cancels, so its relative error depends on the summation order).  Hence medians and maxima are compared, not
    # client by client: an H100 (2026-11-26) gave 4.0e-4 on a client where the CPU happened to give 2.3e-7, the same
    # value for loop and vmap.  With TF32 convolutions (cuDNN's default) it gave maxima 1.8e-2 (loop) and 4.3e-2
    # (vmap), 20-47x the CPU's: exact_cudnn turns TF32 off.
    spec = {"model": "cnn_cifar", "clients": 64, "batch_size": 32, "partition": "iid", "eval_train": 10,
            "eval_test": 10, "data": {"train_size": 64 * 32, "test_size": 10}}
    gpu = image_testbed("synthetic", device="cuda", strategy=strategy, chunk_size=16, **spec)
    single = image_testbed("synthetic", strategy="loop", **spec)
    cpu = image_testbed("synthetic", dtype=torch.float64, strategy="loop", **spec)
    streams = Streams(0, 1)
    x = cpu.initial_point(1, streams).unsqueeze(1).repeat(1, 64, 1)
    x += 0.01 * torch.randn(x.shape, dtype=x.dtype, generator=torch.Generator().manual_seed(0))
    draw = cpu.sample(streams, 1)[0]
    reference = cpu.stochastic_grads(x, draw)

    def error(got):
        return ((got.double().cpu() - reference).norm(dim=-1) / reference.norm(dim=-1))[0]

    on_gpu = error(gpu.stochastic_grads(x.float().cuda(), draw._replace(index=draw.index.cuda())))
    on_cpu = error(single.stochastic_grads(x.float(), draw))
    for stat in (torch.median, torch.max):
        assert stat(on_gpu) <= 10 * stat(on_cpu), (stat.__name__, stat(on_gpu).item(), stat(on_cpu).item())


@pytest.mark.gpu
def test_cuda_image_runs_repeat_bit_for_bit():
    """The same seed gives the same trace on the same device (theorylab.rng): cuDNN's deterministic algorithms
    (exact_cudnn) on the vmap strategy at partial participation, evaluations included."""
    spec = {"name": "synthetic", "model": "cnn_cifar", **TINY, "clients": 8, "batch_size": 16}
    config = RunConfig(problem=spec, participation={"name": "bernoulli", "p": [0.5] * 8},
                       algorithm={"name": "fedavg", "local_steps": 3, "lr": 0.05}, rounds=4, replicas=2, seed=0,
                       every=1, dtype="float32", device="cuda")
    first, second = run(config), run(config)
    assert first.metrics.keys() == second.metrics.keys()
    assert all(np.array_equal(first.metrics[k], second.metrics[k]) for k in first.metrics)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("model", ["cnn_svhn", "cnn_cinic"])  # cnn_cinic: dropout masks seeded per (client, step)
def test_client_major_local_sgd_equals_the_step_major_path_bit_for_bit(model, device, monkeypatch):
    from theorylab.kernels.local_sgd import local_sgd

    problem = tiny(model, dtype=torch.float32, device=device, strategy="loop")
    streams = lambda: Streams(3, 2, device)  # noqa: E731 -- the same draws for both paths
    start = problem.initial_point(2, streams()).unsqueeze(1).expand(-1, problem.n_clients, -1)
    active = torch.tensor([[True, False, True, True, False, True], [False, True, True, False, True, False]],
                          device=device)
    major = local_sgd(problem, start, 3, 0.05, streams(), active)
    monkeypatch.setattr(type(problem), "client_major_sgd", lambda *args: None)  # the step-major path
    step = local_sgd(problem, start, 3, 0.05, streams(), active)
    assert torch.equal(major[active], step[active])
    assert torch.equal(major[~active], start[~active])
    assert not torch.equal(major[active], start[active])


@pytest.mark.parametrize("shape", [(1, 8, 8), (3, 12, 12)])  # (3, 12, 12): padded, grey repeated to colour
def test_inputs_gathered_from_the_normalised_split_equal_normalising_the_gather(shape):
    problem = image_testbed("synthetic", model="mlp", dtype=torch.float32, input_shape=shape, **TINY)
    index = torch.tensor([[3, 0, 7], [7, 7, 1]])
    kept = problem.inputs("train", index)
    assert problem._inputs["train"] is not None  # the split is kept (far below CACHE_BYTES)
    assert torch.equal(kept, problem._normalise("train", problem._pixels["train"][index]))
    assert kept.shape == (2, 3, *shape)


def test_channels_last_float32_gradients_are_float32_accurate():
    # conv models on a CPU run channels-last; reference: the float64 module on the same minibatch (module_grad)
    problem = tiny("cnn_svhn", dtype=torch.float32)
    assert problem._channels_last and not tiny("mlp", dtype=torch.float32)._channels_last
    streams = Streams(2, 1)
    x = problem.initial_point(1, streams).unsqueeze(1).repeat(1, problem.n_clients, 1)
    draw = problem.sample(streams, 1)[0]
    grads = problem.stochastic_grads(x, draw)
    reference = tiny("cnn_svhn", dtype=torch.float64)
    exact = module_grad(reference, x[0, 2].double(), draw.index[0, 2])
    assert float((grads[0, 2].double() - exact).abs().max() / exact.abs().max()) < 1e-5
