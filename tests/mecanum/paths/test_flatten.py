import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stages.mecanum.paths.bezier import BezierChain, CubicBezier, PathError
from stages.mecanum.paths.flatten import FlatPath, flatness, flatten_chain, flatten_cubic
from tests.mecanum.paths.strategies import chains, quad

tolerances = st.sampled_from([0.5, 0.1, 0.02, 0.005])


def dense_chord_error(curve: CubicBezier, ts: np.ndarray, pts: np.ndarray) -> float:
    """Independent check: 200 samples per piece, distance to that piece's chord."""
    worst = 0.0
    for k in range(len(ts) - 1):
        b = curve.point(np.linspace(ts[k], ts[k + 1], 200))
        a, d = pts[k], pts[k + 1] - pts[k]
        dd = d @ d
        s = np.clip((b - a) @ d / dd, 0, 1) if dd > 0 else np.zeros(len(b))
        worst = max(worst, float(np.hypot(*(b - a - s[:, None] * d).T).max()))
    return worst


@settings(max_examples=40, deadline=None)
@given(quad, st.floats(0.0, 1.0))
def test_the_flatness_bound_itself(p, t):
    """|B(t) − L(t)| ≤ sqrt(flatness)/4, the inequality the docstring proves."""
    c = CubicBezier(p)
    chord_point = (1 - t) * p[0] + t * p[3]
    assert np.hypot(*(c.point(t) - chord_point)) <= np.sqrt(flatness(p)) / 4 + 1e-9


@settings(max_examples=60, deadline=None)
@given(quad, tolerances)
def test_chord_error_never_exceeds_the_tolerance(p, tol):
    c = CubicBezier(p)
    ts, pts, _ = flatten_cubic(c, tol)
    assert np.allclose(pts, c.point(ts))  # the vertices lie on the curve
    assert dense_chord_error(c, ts, pts) <= tol * (1 + 1e-9)


@settings(max_examples=30, deadline=None)
@given(chains())
def test_flattened_length_converges_to_the_arc_length(segs):
    try:
        chain = BezierChain.from_control_points(segs)
    except PathError:
        return  # all-point paths: covered by their own test
    exact = chain.arc_length()
    errors = []
    for tol in (0.5, 0.05, 0.005):
        try:
            flat = flatten_chain(chain, tol)
        except PathError:  # a closed path within tol of one point
            assert exact < 8 * tol
            return
        assert flat.length_in <= exact * (1 + 1e-9) + 1e-9  # chords are never longer
        assert flat.max_chord_error_in <= tol
        errors.append(exact - flat.length_in)
    assert errors[-1] <= errors[0] + 1e-9
    assert errors[-1] <= 1e-3 * max(exact, 1.0) + 0.01


def test_cusp_and_coincident_points_are_handled():
    cusp = CubicBezier(np.array([[0, 0], [10, 10], [0, 10], [10, 0]]))
    ts, pts, _ = flatten_cubic(cusp, 0.01)
    assert dense_chord_error(cusp, ts, pts) <= 0.01
    flat = flatten_chain(BezierChain((cusp,)), 0.01)
    assert flat.turn_angles_rad.max() > 2.5  # the flattened cusp is a near-reversal
    coincident = CubicBezier(np.array([[0, 0], [0, 0], [10, 5], [10, 5]]))
    ts, pts, _ = flatten_cubic(coincident, 0.01)
    assert len(pts) == 2  # a straight line: one chord, exact


def test_bad_tolerance_and_recursion_limit_are_clear_errors():
    chain = BezierChain.from_control_points([[[0, 0], [40, 0], [40, 40], [0, 40]]])
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(PathError, match="flatness_in"):
            flatten_chain(chain, bad)
    with pytest.raises(PathError, match="halvings"):
        flatten_chain(chain, 1e-4, max_depth=3)


def test_flat_path_reports_and_source_parameters():
    chain = BezierChain.from_control_points([[[0, 0], [40, 0], [40, 40], [0, 40]],
                                             [[0, 40], [-40, 40], [-40, 80], [0, 80]]])
    flat = flatten_chain(chain, 0.05)
    assert flat.segments == len(flat.points) - 1 > 10
    assert np.allclose(chain.point(flat.source_u), flat.points)
    assert 0 < flat.max_chord_error_in <= 0.05
    assert flat.cum_length_in[-1] == pytest.approx(flat.length_in)
    assert not flat.points.flags.writeable
    with pytest.raises(PathError, match="shorter than"):
        FlatPath(np.array([[0, 0], [0, 0], [1, 1]]), 0.1)
    assert FlatPath.from_points(np.array([[0, 0], [0, 0], [1, 1]])).segments == 1
