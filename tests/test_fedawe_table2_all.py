"""FedAWE Table 2 with all eight algorithms (figures/fedawe_table2_all.py), on a tiny version of its quick setup."""

import dataclasses

from theorylab.claims import Context
from theorylab.figures import fedawe_cnn_curves, fedawe_table2_all as fig


def test_every_algorithm_and_dynamics_is_run_and_drawn(monkeypatch, tmp_path):
    tiny = dataclasses.replace(fedawe_cnn_curves.QUICK, rounds=4, every=2, window=1, replicas=2)
    monkeypatch.setattr(fig, "setup", lambda quick: tiny)
    ctx = Context(quick=True, figure_dir=tmp_path)
    data = fig.table(ctx)
    assert set(data["cells"]) == {(d, a["label"]) for d in fig.DYNAMICS for a in fig.EIGHT}
    assert all(len(v) == tiny.replicas and ((v >= 0) & (v <= 100)).all() for v in data["cells"].values())
    assert len(fig.EIGHT) == 8 and all(len(column) == 8 for column in fig.SVHN_TEST.values())
    path = fig.draw(data, tmp_path / "t.png")
    assert path.exists() and path.stat().st_size > 10_000
