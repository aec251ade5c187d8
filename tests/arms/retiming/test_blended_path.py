"""The geometric path: C¹, derivatives right, deviation bound exact and respected."""

from __future__ import annotations

import numpy as np
import pytest

from stages.arms.retiming.blended_path import blend_polyline
from tests.arms.retiming.helpers import distance_to_polyline


@pytest.fixture
def corner_path():
    rng = np.random.default_rng(3)
    return blend_polyline(np.cumsum(rng.uniform(-0.5, 0.5, (12, 6)), axis=0), 0.03)


def test_derivatives_match_finite_differences(corner_path):
    path = corner_path
    h = 1e-6
    for k in range(path.num_pieces):
        s = path.starts[k] + np.linspace(0.1, 0.9, 5) * path.lengths[k]
        q_plus, q_minus = path(s + h), path(s - h)
        np.testing.assert_allclose((q_plus - q_minus) / (2 * h), path(s, 1), atol=1e-6)
        np.testing.assert_allclose((q_plus - 2 * path(s) + q_minus) / h**2, path(s, 2), atol=1e-3)


def test_path_is_c1_and_ends_on_the_waypoints(corner_path):
    path = corner_path
    ends = path.starts[1:]
    np.testing.assert_allclose(path(ends - 1e-12), path(ends + 1e-12), atol=1e-9)
    np.testing.assert_allclose(path(ends - 1e-12, 1), path(ends + 1e-12, 1), atol=1e-9)
    np.testing.assert_allclose(path(0.0), path.waypoints[0], atol=1e-15)
    np.testing.assert_allclose(path(path.length), path.waypoints[-1], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(path(path.starts[~path.is_blend], 1), axis=1), 1.0)


def test_deviation_bound_is_exact_and_respected(corner_path):
    path = corner_path
    assert path.is_blend.any()
    s = np.linspace(0.0, path.length, 20001)
    dist = distance_to_polyline(path(s), path.waypoints)
    assert dist.max() <= path.max_deviation_rad + 1e-12
    assert path.max_deviation_rad <= 0.03 + 1e-15
    mids = path.starts[path.is_blend] + 0.5 * path.lengths[path.is_blend]
    np.testing.assert_allclose(distance_to_polyline(path(mids), path.waypoints),
                               path.deviations_rad, rtol=1e-9)


def test_zero_deviation_stops_at_every_corner():
    path = blend_polyline(np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [2.0, 1.0]]), 0.0)
    assert not path.is_blend.any()
    assert path.rest_points.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_duplicates_and_collinear_points_are_merged():
    wp = np.array([[0.0, 0.0], [0.0, 0.0], [0.5, 0.0], [1.0, 0.0], [1.0, 1.0]])
    path = blend_polyline(wp, 0.01)
    assert path.waypoints.tolist() == [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]]
    assert path.is_blend.sum() == 1
