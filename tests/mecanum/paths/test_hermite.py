import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stages.mecanum.paths.bezier import PathError
from stages.mecanum.paths.hermite import CubicHermite, hermite_path, wrap_angle

vec = st.tuples(st.floats(-50, 50), st.floats(-50, 50)).map(np.array)


@settings(max_examples=30, deadline=None)
@given(vec, vec, vec, vec)
def test_hermite_is_its_bezier(p0, m0, p1, m1):
    h = CubicHermite(p0, m0, p1, m1)
    t = np.linspace(0, 1, 9)
    assert np.allclose(h.point(t), h.to_bezier().point(t), atol=1e-9)
    assert np.allclose(h.derivative(t), h.to_bezier().derivative(t), atol=1e-9)
    assert np.allclose(h.point(0.0), p0) and np.allclose(h.point(1.0), p1)
    assert np.allclose(h.derivative(0.0), m0) and np.allclose(h.derivative(1.0), m1)


def test_teleop_path_leaves_along_the_robots_velocity():
    path = hermite_path([0, 0, 0], [30, 0], [24, 24, np.pi / 2], [0, 0])
    b = path.curve.to_bezier()
    assert np.allclose(b.p[0], [0, 0]) and np.allclose(b.p[3], [24, 24])
    assert np.allclose(b.start_direction(), [1, 0])  # keeps going the way it moves
    # T = chord / |v|: the tangent is v·T, so the handle is a third of it
    chord = np.hypot(24, 24)
    assert path.duration_s == pytest.approx(chord / 30)
    assert np.allclose(b.p[1] - b.p[0], [30 * path.duration_s / 3, 0])
    assert np.allclose(b.p[2], b.p[3])  # stop at the target: m1 = 0
    assert path.heading_at(1.0) == pytest.approx(np.pi / 2)


def test_teleop_from_rest_and_degenerate_targets():
    path = hermite_path([5, 5, 3.0], [0, 0], [-5, 5, -3.0])
    assert np.allclose(path.curve.m0, 0)  # P1 = P0: a valid curve along the chord
    assert path.chain.segments[0].start_direction() @ np.array([-1, 0]) == pytest.approx(1)
    assert abs(path.heading_change_rad) < np.pi  # the short way round
    with pytest.raises(PathError, match="already is"):
        hermite_path([1, 2, 0], [10, 0], [1, 2, 1])
    with pytest.raises(PathError, match="finite"):
        hermite_path([np.nan, 0, 0], [0, 0], [1, 2, 0])
    assert wrap_angle(3 * np.pi) == pytest.approx(np.pi)
    assert wrap_angle(-np.pi / 2) == pytest.approx(-np.pi / 2)
