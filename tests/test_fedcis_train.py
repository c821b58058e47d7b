"""Fed-CIS as a registered kernel (seed 001 Ch. 5 Alg. 6; digest 001_thesis_ch4-6 §3.2, §3.5): the runner's path
against the numpy reference :func:`theorylab.cis.training.run_fedcis` on exit quadratics built by hand, the one-exit
equivalence with FedAvg (known p), ``theorylab train --algorithm fedcis`` end to end and reproducible, and bad
inputs refused with the parameter named."""

import re

import numpy as np
import pytest
import torch

from theorylab.app.cli import main
from theorylab.cis.training import run_fedcis
from theorylab.config import RunConfig
from theorylab.rng import Streams
from theorylab.runner import run

N, D, T, K, LR, R = 7, 6, 12, 3, 0.1, 3
EXITS = [1, 1, 1, 1, 2, 2, 3]  # the 7-node 4/2/1 system of §5.4.1
Q = np.array([1, 1, 1, 1, 2, 2, 2]) / 10.0  # |D_i| / |D|
TRAIN = ["train", "--testbed", "digits", "--model", "logistic", "--clients", "4", "--rounds", "4", "--every", "2",
         "--window", "1", "--local-steps", "2", "--batch-size", "8", "--no-cache", "--testbed-options",
         '{"train_size": 200, "eval_train": 50, "eval_test": 50}']
SPEC = '{"name": "fedcis", "cuts": [0.5, 1.0], "p": 0.3}'


def _quadratics(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(N, D, D))
    hess = a @ a.transpose(0, 2, 1) / D + 0.5 * np.eye(D)
    return hess, rng.normal(size=(N, D))


def _run(algorithm, hess, centers, x0, participation=None, rounds=T, replicas=R, seed=5, sigma=0.0):
    problem = {"name": "quadratic", "hessians": hess.tolist(), "centers": centers.tolist(), "weights": Q.tolist(),
               "x0": x0, "sigma": sigma}
    participation = participation or {"name": "cyclic", "n_clients": N, "groups": 1}  # every node, no draws
    return run(RunConfig(problem, participation, algorithm, rounds, replicas, seed, 1, "cpu", "float64"))


class ExitStreams(Streams):
    """The run's streams, with the reference's participation draws taken from the ``exit`` stream, where the kernel
    draws its exits (the run's participation process keeps the participation stream)."""

    def uniform(self, purpose, shape, dtype=torch.float64):
        return super().uniform("exit" if purpose == "participation" else purpose, shape, dtype)


@pytest.mark.parametrize("p", [0.0, 0.2])
def test_runner_path_matches_the_cis_reference_on_exit_quadratics(p):
    """Exit e of node i is F_i(P_e w) = 1/2 w'(P_e A_i P_e)w - (P_e A_i u_i)'w + c: exit-indexed quadratics for
    run_fedcis, whose exit draws (from its participation stream) are pointed at the kernel's exit stream
    (ExitStreams); alpha and x* are computed here by hand."""
    hess, centers = _quadratics()
    x0 = [1.0, -1.0, 0.5, 0.0, 2.0, -0.5]
    masks = (np.arange(D)[None] < np.array([2, 4, 6])[:, None]).astype(float)  # cuts 1/3, 2/3, 1 of d = 6
    ex_hess = np.einsum("ei,nij,ej->neij", masks, hess, masks)
    ex_lin = np.einsum("ei,nij,nj->nei", masks, hess, centers)
    law = {0.0: [[1, 0, 0]] * 4 + [[0, 1, 0]] * 2 + [[0, 0, 1]],
           0.2: [[1, 0, 0]] * 4 + [[0.2, 0.8, 0]] * 2 + [[0.2, 0.2, 0.6]]}[p]
    law, rates = np.array(law, dtype=float), np.array([0.8, 0.15, 0.05])
    trains = law > 0
    alpha = np.where(trains, rates * Q[:, None] / (trains * Q[:, None]).sum(0), 0.0)  # Lambda_e |D_i| / |D_e,p|
    ref = run_fedcis(ex_hess, ex_lin, np.zeros((N, 3)), law, alpha, np.tile(x0, (R, 1)), T, K, lambda t, k: LR,
                     ExitStreams(5, R), record=range(1, T))
    spec = {"name": "fedcis", "cuts": [1 / 3, 2 / 3, 1.0], "exits": EXITS, "p": p, "target": rates.tolist(),
            "local_steps": K, "lr": LR}
    trace = _run(spec, hess, centers, x0)
    x_star = np.linalg.solve(np.einsum("n,nij->ij", Q, hess), np.einsum("n,nij,nj->i", Q, hess, centers))
    for t in range(1, T + 1):
        w = ref[t]
        col = list(trace.rounds).index(t)
        np.testing.assert_allclose(trace.metrics["server.dist2"][:, col], ((w - x_star) ** 2).sum(-1), rtol=1e-10)
        for e in range(3):
            np.testing.assert_allclose(trace.metrics[f"exit{e + 1}.dist2"][:, col],
                                       ((w * masks[e] - x_star) ** 2).sum(-1), rtol=1e-10)
    if p:  # the draws matter: replicas took different exits, so their models differ
        assert np.ptp(trace.metrics["server.dist2"][:, -1]) > 1e-6


def test_one_exit_is_fedavg_with_known_p():
    """One exit, p = 0: alpha_i = q_i, xi_i = a_i, p~_i = pi_i, so Alg. 6 is FedAvg with weights a_i q_i / pi_i;
    noisy gradients and Bernoulli availability, common random numbers."""
    hess, centers = _quadratics(1)
    bern = {"name": "bernoulli", "p": [0.3, 0.5, 0.7, 0.9, 1.0, 0.6, 0.4]}
    common = {"local_steps": K, "lr": LR}
    mine = _run({"name": "fedcis", **common}, hess, centers, [0.0] * D, bern, sigma=0.3)
    ref = _run({"name": "fedavg", "aggregation": "known_p", **common}, hess, centers, [0.0] * D, bern, sigma=0.3)
    for name in ("server.dist2", "server.gap"):
        np.testing.assert_allclose(mine.metrics[name], ref.metrics[name], rtol=1e-11)
    assert set(mine.metrics) == set(ref.metrics)  # one exit: the server point only


def _train(capsys, *extra):
    code = main([*TRAIN, *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_train_runs_fedcis_end_to_end(tmp_path, capsys):
    code, out, _ = _train(capsys, "--algorithm", SPEC, "--out", str(tmp_path))
    assert code == 0
    assert out.startswith("fedcis[2-exit] (eta_0 = 0.05): final test accuracy of the server model")
    assert re.search(r"per exit \(.*\): exit1 \d+\.\d\d %, exit2 \d+\.\d\d %", out)
    assert (tmp_path / "figures" / "train-digits-fedcis-2-exit-custom.png").is_file()


def test_train_is_reproducible_from_the_seed(tmp_path, capsys):
    def numbers(seed):
        code, out, _ = _train(capsys, "--algorithm", SPEC, "--out", str(tmp_path), "--seeds", str(seed))
        assert code == 0
        return re.sub(r"[\d.]+ s simulated", "", out)  # wall time is the only part allowed to change

    first = numbers(0)
    assert numbers(0) == first
    assert numbers(1) != first


@pytest.mark.parametrize("change, field", [
    ({"cuts": [0.5, 0.2]}, "cuts"), ({"cuts": [0.0, 1.0]}, "cuts"), ({"cuts": "text"}, "cuts"),
    ({"exits": [1, 1]}, "exits"), ({"cuts": [0.5, 1.0], "exits": [1, 1, 1, 1, 2, 2, 3]}, "exits[6]"),
    ({"p": 1.5}, "p"), ({"p": [[1.0]]}, "p"), ({"cuts": [0.5, 1.0], "p": [[0.6, 0.6]] * N}, "p[0]"),
    ({"target": "bogus"}, "target"), ({"cuts": [0.5, 1.0], "target": [1.0]}, "target"),
    ({"cuts": [0.5, 1.0], "target": [1.0, float("nan")]}, "target"), ({"server_lr": 0.0}, "server_lr"),
    ({"local_steps": 0}, "local_steps"),
])
def test_bad_inputs_name_the_parameter(change, field):
    hess, centers = _quadratics()
    with pytest.raises(ValueError, match=re.escape(field)):
        _run({"name": "fedcis", **change}, hess, centers, [0.0] * D, rounds=1, replicas=1)


def test_train_refuses_a_bad_spec_before_training(tmp_path, capsys):
    code, out, err = _train(capsys, "--algorithm", '{"name": "fedcis", "p": 2}', "--out", str(tmp_path))
    assert code == 2 and out == "" and "p must" in err
    assert not (tmp_path / "figures").exists()
