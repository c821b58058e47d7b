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


DRAWS = [  # (purpose, kind, per-replica shape): small uniforms drawn ahead, interleaved with every other kind
    ("participation", "uniform", (100,)), ("participation", "uniform", (3, 7)), ("delay", "uniform", (5,)),
    ("participation", "uniform", (100,)), ("data", "uniform", (9,)), ("data", "integers", (4,)),
    ("data", "uniform", (9,)), ("participation", "uniform", (5000,)), ("participation", "uniform", (1,)),
    ("gradient", "normal", (2, 8)), ("delay", "uniform32", (6,)), ("delay", "uniform", (5,)),
    ("channel", "uniform", (2, 50)), ("channel", "normal_rows", (3,)), ("channel", "uniform", (2, 50)),
]


def test_uniforms_drawn_ahead_are_the_numbers_drawn_one_at_a_time():
    """Independent computation: each replica's own torch generator, seeded as documented, drawing each request in
    turn.  Drawing ahead (and giving blocks back when another kind of draw follows) must not change a number."""
    seeds, replicas = stream_seeds(3, 4), 4
    gens = {p: [torch.Generator().manual_seed(s) for s in seeds[p]] for p in PURPOSES}
    streams = Streams(3, replicas)
    for _ in range(40):  # enough draws to run through several blocks
        for purpose, kind, shape in DRAWS:
            rows = []
            for gen in gens[purpose]:
                if kind == "uniform":
                    rows.append(torch.empty(shape, dtype=torch.float64).uniform_(generator=gen))
                elif kind == "uniform32":
                    rows.append(torch.empty(shape, dtype=torch.float32).uniform_(generator=gen))
                elif kind == "integers":
                    rows.append(torch.empty(shape, dtype=torch.int64).random_(0, 5, generator=gen))
                else:
                    rows.append(torch.empty((*shape, 1) if kind == "normal_rows" else shape,
                                            dtype=torch.float32).normal_(generator=gen))
            if kind == "uniform":
                got = streams.uniform(purpose, shape)
            elif kind == "uniform32":
                got = streams.uniform(purpose, shape, torch.float32)
            elif kind == "integers":
                got = streams.integers(purpose, 5, shape)
            elif kind == "normal":
                got = streams.normal(purpose, shape, torch.float32)
            else:
                got = streams.normal_rows(purpose, torch.ones(replicas, dtype=torch.int64), shape, ())
                rows = [torch.cat(rows, dim=len(shape))]
            assert torch.equal(got, torch.stack(rows) if kind != "normal_rows" else rows[0]), (purpose, kind, shape)
