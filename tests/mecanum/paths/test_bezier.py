import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ChoreographError, ConfigError
from stages.mecanum.paths.bezier import BezierChain, CubicBezier, PathError
from tests.mecanum.paths.strategies import chains, quad

QUARTER = [[10.0, 0.0], [10.0, 5.5228475], [5.5228475, 10.0], [0.0, 10.0]]  # r = 10


@settings(max_examples=40, deadline=None)
@given(quad, st.floats(0.01, 0.99))
def test_derivatives_match_finite_differences(p, t):
    c = CubicBezier(p)
    h = 1e-6
    for order, f in ((1, c.point), (2, lambda x: c.derivative(x, 1)),
                     (3, lambda x: c.derivative(x, 2))):
        fd = (f(t + h) - f(t - h)) / (2 * h)
        assert np.allclose(c.derivative(t, order), fd, atol=1e-4 * (1 + np.abs(fd).max()))


@settings(max_examples=30, deadline=None)
@given(quad, st.floats(0.05, 0.95))
def test_split_halves_trace_the_same_curve(p, t):
    c = CubicBezier(p)
    left, right = c.split(t)
    u = np.linspace(0, 1, 11)
    assert np.allclose(left.point(u), c.point(u * t), atol=1e-9)
    assert np.allclose(right.point(u), c.point(t + u * (1 - t)), atol=1e-9)


def test_curvature_and_length_of_a_quarter_circle():
    c = CubicBezier(np.array(QUARTER))
    k = c.curvature(np.linspace(0, 1, 21))
    assert np.allclose(k, 0.1, rtol=0.025)  # the cubic circle: radius within 0.03 %, κ within 2.2 %
    assert c.arc_length() == pytest.approx(np.pi * 5, rel=1e-3)
    line = CubicBezier(np.array([[0, 0], [1, 0], [2, 0], [3, 0]]))
    assert line.arc_length() == pytest.approx(3.0, abs=1e-12)
    assert np.all(line.curvature(np.linspace(0, 1, 5)) == 0)


def test_curvature_at_a_cusp_and_at_coincident_points():
    cusp = CubicBezier(np.array([[0, 0], [10, 10], [0, 10], [10, 0]]))
    assert np.allclose(cusp.derivative(0.5), 0)
    assert np.isinf(cusp.curvature(0.5))
    straight = CubicBezier(np.array([[0, 0], [0, 0], [5, 0], [5, 0]]))  # P1 = P0, P2 = P3
    assert straight.curvature(0.0) == 0.0
    assert np.allclose(straight.start_direction(), [1, 0])
    assert np.allclose(straight.end_direction(), [1, 0])


def test_config_errors_name_the_entry():
    with pytest.raises(PathError, match=r"path.segments\[1\]\[2\]"):
        BezierChain.from_control_points([QUARTER, [[0, 10], [1, 1], [np.nan, 0], [3, 3]]])
    with pytest.raises(PathError, match=r"path.segments\[0\] must be four"):
        BezierChain.from_control_points([[[0, 0], [1, 1], [2, 2]]])
    with pytest.raises(PathError, match="non-empty list"):
        BezierChain.from_control_points([])
    with pytest.raises(PathError, match="share their end point"):
        BezierChain.from_control_points([QUARTER, [[1, 10], [2, 10], [3, 10], [4, 10]]])
    assert issubclass(PathError, ConfigError) and issubclass(PathError, ChoreographError)


def test_zero_length_segments_are_dropped_exactly_and_a_point_path_is_refused():
    point = [[0.0, 10.0]] * 4
    chain = BezierChain.from_control_points([QUARTER, point, [[0, 10], [-5, 10], [-9, 10],
                                                              [-10, 10]]])
    assert len(chain) == 2 and chain.dropped == (1,)
    with pytest.raises(PathError, match="zero length"):
        BezierChain.from_control_points([[[3, 3]] * 4])


def test_g1_breaks_are_reported_not_smoothed():
    corner = [[[0, 0], [5, 0], [10, 0], [20, 0]], [[20, 0], [20, 5], [20, 10], [20, 20]]]
    chain = BezierChain.from_control_points(corner)
    (joint,) = chain.joints()
    assert not joint.g1 and joint.angle_rad == pytest.approx(np.pi / 2)
    assert chain.g1_breaks() == (joint,)
    assert chain.to_list() == corner  # nothing was moved
    smooth = BezierChain.from_control_points(
        [[[0, 0], [5, 0], [10, 0], [20, 0]], [[20, 0], [25, 0], [30, 5], [30, 10]]])
    assert smooth.joints()[0].g1 and smooth.g1_breaks() == ()


@settings(max_examples=25, deadline=None)
@given(chains())
def test_chain_evaluation_is_continuous(segs):
    if all(CubicBezier(np.array(q, float)).is_point for q in segs):   # the chain's own notion
        with pytest.raises(PathError, match="zero length"):
            BezierChain.from_control_points(segs)
        return
    chain = BezierChain.from_control_points(segs)
    for i in range(1, len(chain)):
        eps = 1e-9
        assert np.allclose(chain.point(i - eps), chain.point(i + eps), atol=1e-6)
    assert chain.sample(8).shape == (8 * len(chain) + 1, 2)
