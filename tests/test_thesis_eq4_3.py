"""DMA-PL's prior bound (4.3) as the thesis quotes it, one reading of its undefined zeta_1, zeta_2, and its figure."""

import numpy as np
import pytest

from theorylab.api import figure
from theorylab.bounds.thesis_ch4 import bound_43, bound_43_contraction, smallest_zeta1

ALPHA, LOSS = [0.2, 0.3, 0.5], [0.1, 0.0, 0.3]


@pytest.mark.parametrize("zeta2", [0.0, 0.5, 1.0 / (4 * 0.17), 2.0])  # A < 1, A = 1 (sum alpha q = 0.17), A > 1
def test_bound_is_the_recursion_it_sums(zeta2):
    # independent: iterate e_{t+1} = A e_t + (2 zeta_1 / L) sum alpha_i q_i from e_0 = F(w1) - F*
    L, mu, zeta1, gap0 = 2.0, 0.5, 0.7, 3.0
    A = bound_43_contraction(L, mu, ALPHA, LOSS, zeta2)
    assert A == pytest.approx(1 - mu / L + 4 * mu * zeta2 / L * 0.17)
    e, expected = gap0, []
    for _ in range(12):
        expected.append(e)
        e = A * e + 2 * zeta1 / L * 0.17
    np.testing.assert_allclose(bound_43(gap0, L, mu, ALPHA, LOSS, zeta1, zeta2, np.arange(12)), expected, rtol=1e-12)


def test_smallest_zeta1_against_a_brute_force_supremum():
    alpha, a, c = np.array([0.5, 0.3, 0.2]), np.array([1.0, 2.0, 0.5]), np.array([-1.0, 2.0, 4.0])
    threshold = alpha @ a ** 2 / (alpha @ a) ** 2  # below it no zeta_1 bounds the difference
    w = np.linspace(-200.0, 200.0, 400_001)
    w_star = alpha @ (a * c) / (alpha @ a)
    for zeta2 in (threshold * 1.2, 3.0):
        h = (alpha[:, None] * a[:, None] ** 2 * (w[None] - c[:, None]) ** 2).sum(0) - zeta2 * (alpha @ a) ** 2 * (
            w - w_star) ** 2
        assert smallest_zeta1(alpha, a, c, zeta2) == pytest.approx(h.max(), rel=1e-6)
    assert smallest_zeta1(alpha, a, c, threshold * 0.99) == float("inf")


def test_equal_curvatures_give_the_weighted_spread_from_zeta2_one():
    alpha, centers = [0.1] * 10, [1.0] * 5 + [3.0] * 5
    assert smallest_zeta1(alpha, [1.0] * 10, centers, 1.0) == pytest.approx(1.0)  # sum alpha_i (c_i - 2)^2
    assert smallest_zeta1(alpha, [1.0] * 10, centers, 0.999) == float("inf")


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="zeta1 and zeta2 must be >= 0"):
        bound_43(1.0, 1.0, 1.0, ALPHA, LOSS, -1.0, 1.0, [0])
    with pytest.raises(ValueError, match="loss must hold one probability"):
        bound_43(1.0, 1.0, 1.0, ALPHA, [0.1, 1.0, 0.0], 1.0, 1.0, [0])


def test_the_figure_renders(tmp_path):
    drawn = figure("thesis-eq4-3", quick=True, out=tmp_path)
    assert drawn.path == tmp_path / "thesis-eq4-3.png" and drawn.path.stat().st_size > 10_000
