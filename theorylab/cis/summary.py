r"""From a CIS topology and its rates to everything Fed-CIS needs before training, in one call.

Source: seed 001 Ch. 5 (5.5), Algorithm 6, Theorem 5.3.1 (5.7), App. D (D.7), (D.9); digest 001_thesis_ch4-6 §3.

>>> from theorylab.cis.rates import SEVEN_NODE, mu_for_split
>>> from theorylab.cis.summary import cis_summary
>>> parents, exits = SEVEN_NODE
>>> local = [0.25] * 4 + [0.0] * 3
>>> out = cis_summary(parents, exits, local, mu_for_split(parents, exits, local, (80, 15, 5)),
...                   sizes=[100] * 7, p=0.2, strategy="serving_rate", loss_max=2.0, pdim=[3, 5, 7])
>>> out["exit_rates"].round(3).tolist(), out["data_sizes"].tolist()
([0.8, 0.15, 0.05], [700.0, 300.0, 100.0])
>>> round(float(out["alpha"][0, 0]), 4), round(out["bias_bound"], 4)  # 0.8 * 100/700; Serving Rate has no bias
(0.1143, 0.0)
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from theorylab.bounds.thesis_ch5 import bias_bound, gen_bound
from theorylab.cis.aggregation import aggregation_weights
from theorylab.cis.rates import rates
from theorylab.cis.sampling import check_sampling, exit_data_sizes, participants, preset
from theorylab.cis.strategies import equal_weight, flops_prop, serving_rate


def cis_summary(parents: Sequence, exits: Sequence[int], local, mu_max, sizes, p=0.0, strategy="serving_rate",
                flops=None, server_lr: float = 1.0, loss_max: float | None = None, pdim=None) -> dict:
    r"""Rates (:math:`\lambda^t`, :math:`\lambda^s`, :math:`\Lambda`), the exit weights :math:`\tilde\Lambda`
    (``strategy``: "equal_weight", "flops_prop" with ``flops``, "serving_rate", or an explicit vector), the sampling
    matrix (a number is the §5.4.3 preset), :math:`\mathcal C_e`, :math:`|D_{e,p}|`, :math:`\alpha_{i,e}`, and with
    ``loss_max`` (M) and ``pdim`` the bounds on :math:`\epsilon_{\rm gen}` and :math:`\epsilon_{\rm bias}`."""
    r = rates(parents, exits, local, mu_max)
    n_exits = len(r.exit_rates)
    matrix = preset(exits, float(p), n_exits) if np.ndim(p) == 0 else check_sampling(p, exits)
    if isinstance(strategy, str):
        makers = {"equal_weight": lambda: equal_weight(n_exits), "serving_rate": lambda: serving_rate(r.exit_rates),
                  "flops_prop": lambda: flops_prop(flops if flops is not None else [])}
        if strategy not in makers:
            raise ValueError(f"strategy must be one of {tuple(makers)} or a weight vector; got {strategy!r}")
        target = makers[strategy]()
    else:
        target = np.asarray(strategy, dtype=np.float64)
    out = {"transfer": r.transfer, "served": r.served, "exit_rates": r.exit_rates, "target": target, "p": matrix,
           "participants": participants(matrix), "data_sizes": exit_data_sizes(matrix, sizes),
           "alpha": aggregation_weights(matrix, sizes, target, server_lr)}
    if loss_max is not None:
        out["bias_bound"] = bias_bound(target, r.exit_rates, loss_max)
        if pdim is not None:
            out["gen_bound"] = gen_bound(target, pdim, out["data_sizes"], loss_max)
    return out
