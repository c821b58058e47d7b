import torch

from theorylab.rng import PURPOSES, Streams, stream_seeds


def test_same_seed_same_numbers():
    a, b = Streams(7, 3), Streams(7, 3)
    for _ in range(2):
        assert torch.equal(a.normal("gradient", (4, 5)), b.normal("gradient", (4, 5)))
        assert torch.equal(a.uniform("participation", (6,)), b.uniform("participation", (6,)))


def test_replica_streams_do_not_depend_on_replica_count():
    small, large = Streams(3, 2), Streams(3, 9)
    for _ in range(3):
        assert torch.equal(small.uniform("participation", (5,)), large.uniform("participation", (5,))[:2])
        assert torch.equal(small.normal("gradient", (2, 3)), large.normal("gradient", (2, 3))[:2])


def test_purposes_are_separate_streams():
    s = Streams(0, 1)
    first = s.uniform("participation", (100,))
    t = Streams(0, 1)
    t.normal("gradient", (1000,))  # consuming another purpose must not shift this one
    assert torch.equal(first, t.uniform("participation", (100,)))


def test_seeds_distinct_across_purposes_and_replicas():
    seeds = stream_seeds(11, 500)
    flat = [s for p in PURPOSES for s in seeds[p]]
    assert len(set(flat)) == len(flat)


def test_different_seeds_differ():
    assert not torch.equal(Streams(0, 2).normal("gradient", (10,)), Streams(1, 2).normal("gradient", (10,)))


def test_normal_moments_within_sampling_error():
    z = Streams(5, 4).normal("gradient", (50_000,))
    n = z.numel()
    assert abs(z.mean().item()) < 5 / n ** 0.5
    assert abs(z.var().item() - 1.0) < 5 * (2 / n) ** 0.5
