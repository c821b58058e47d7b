"""The CIS rate model (theorylab.cis.rates) and the one-call summary, against hand computations (seed 001 Ch. 5
(5.2)-(5.5); digest 001 ch4-6 §3.1)."""

import doctest

import numpy as np
import pytest

import theorylab.cis.rates as rates_module
import theorylab.cis.summary as summary_module
from theorylab.cis.rates import (SEVEN_NODE, SEVENTEEN_NODE, check_conservation, exit_rates, mu_for_split, rates,
                                 split_rates, topological_order)


def test_docstring_examples_run():
    for module in (rates_module, summary_module):
        assert doctest.testmod(module).failed == 0


def test_seven_node_rates_by_hand():
    parents, exits = SEVEN_NODE
    r = rates(parents, exits, [1, 1, 1, 1, 0, 0, 0], [0.5, 0.5, 0.5, 0.5, 0.4, 0.4, 9.0])
    # leaves forward 0.5 each; a middle node receives 1.0, forwards 0.4, serves 0.6; the root serves 0.8
    np.testing.assert_allclose(r.transfer, [0.5] * 4 + [0.4, 0.4, 0.0])
    np.testing.assert_allclose(r.served, [0.5] * 4 + [0.6, 0.6, 0.8])
    np.testing.assert_allclose(r.exit_rates, [2.0, 1.2, 0.8])


def test_transfer_is_capped_by_the_inflow():
    r = rates((1, None), (1, 2), [0.3, 0.2], [5.0, 0.0])
    np.testing.assert_allclose(r.transfer, [0.3, 0.0])
    np.testing.assert_allclose(r.exit_rates, [0.0, 0.5])


def test_dag_shares_split_the_forwarded_requests():
    parents = (2, 2, {3: 0.25, 4: 0.75}, None, None)
    r = rates(parents, (1, 1, 2, 3, 3), [1, 1, 0, 0.5, 0], [1, 1, 1.2, 0, 0])
    np.testing.assert_allclose(r.transfer, [1, 1, 1.2, 0, 0])
    np.testing.assert_allclose(r.served, [0, 0, 0.8, 0.5 + 0.3, 0.9])
    assert r.exit_rates.sum() == pytest.approx(2.5)


def test_splits_are_realised_on_both_thesis_topologies():
    for (parents, exits), leaves in ((SEVEN_NODE, 4), (SEVENTEEN_NODE, 12)):
        local = [1 / leaves] * leaves + [0.0] * (len(exits) - leaves)
        for split in ((80, 15, 5), (5, 15, 80), (33, 33, 33)):
            lam = exit_rates(parents, exits, local, mu_for_split(parents, exits, local, split))
            np.testing.assert_allclose(lam, np.asarray(split) / sum(split), atol=1e-12)


def test_conservation_accepts_the_model_and_names_the_failing_node():
    parents, exits = SEVEN_NODE
    local = [1, 1, 1, 1, 0, 0, 0]
    r = rates(parents, exits, local, [0.5] * 4 + [0.4, 0.4, 0])
    check_conservation(parents, local, r.transfer, r.served)
    served = r.served.copy()
    served[4] += 0.1
    with pytest.raises(ValueError, match="served: node 4 does not conserve"):
        check_conservation(parents, local, r.transfer, served)
    transfer = r.transfer.copy()
    transfer[6] = 0.2
    with pytest.raises(ValueError, match="root node 6"):
        check_conservation(parents, local, transfer, r.served)


def test_cycles_and_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="parents: the topology must be a tree or a DAG; nodes \\[0, 1"):
        topological_order((1, 0, None))
    with pytest.raises(ValueError, match="parents: the topology"):
        rates((1, 0), (1, 2), [1, 1], [0, 0])
    with pytest.raises(ValueError, match="exits: parent 1 must hold more exits than its child 0"):
        rates((1, None), (2, 2), [1, 0], [0, 0])
    with pytest.raises(ValueError, match="local must hold 2 finite values >= 0"):
        rates((1, None), (1, 2), [-1, 0], [0, 0])
    with pytest.raises(ValueError, match="mu_max"):
        rates((1, None), (1, 2), [1, 0], [0])
    with pytest.raises(ValueError, match="parents\\[0\\]: shares must sum to 1"):
        rates(({1: 0.5, 2: 0.2}, None, None), (1, 2, 2), [1, 0, 0], [1, 0, 0])
    with pytest.raises(ValueError, match="parents\\[0\\] must name other nodes"):
        rates((0, None), (1, 2), [1, 0], [0, 0])
    with pytest.raises(ValueError, match="split must be percentages summing to 100"):
        split_rates((50, 20, 10))


def test_leaf_arrivals_and_split_topology_rates():
    from theorylab.cis.rates import leaf_arrivals, split_topology_rates

    np.testing.assert_allclose(leaf_arrivals(SEVEN_NODE[0]), [0.25] * 4 + [0.0] * 3)
    np.testing.assert_allclose(split_topology_rates((60, 30, 10), SEVENTEEN_NODE).exit_rates, [0.6, 0.3, 0.1])
