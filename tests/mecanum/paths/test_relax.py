import numpy as np
import pytest
from hypothesis import given, settings

from stages.mecanum.paths.bezier import BezierChain, PathError
from stages.mecanum.paths.limits import PathLimits
from stages.mecanum.paths.relax import relax_chain, required_accel
from tests.mecanum.paths.strategies import chains, smooth_chains

LIMITS = PathLimits(max_speed_in_s=40, max_accel_in_s2=85, brake_accel_in_s2=85,
                    motor_accel_in_s2=290, motor_speed_in_s=47)
HAIRPIN = [[[-48, -8], [-24, -8], [0, -8], [24, -8]],
           [[24, -8], [34.6667, -8], [34.6667, 8], [24, 8]],
           [[24, 8], [0, 8], [-24, 8], [-48, 8]]]
CORNER = [[[-48, -40], [-32, -40], [-16, -40], [0, -40]],
          [[0, -40], [2.2091, -40], [4, -38.2091], [4, -36]],
          [[4, -36], [4, -12], [4, 12], [4, 40]]]


def check(chain, result, tol):
    old = np.array([s.p for s in chain.segments])
    new = np.array([s.p for s in result.chain.segments])
    assert np.all(np.hypot(*(new - old).reshape(-1, 2).T) <= tol * (1 + 1e-9))
    assert np.allclose(new[0, 0], old[0, 0]) and np.allclose(new[-1, 3], old[-1, 3])
    before = required_accel(old, 30.0, 20.0).max()
    after = required_accel(new, 30.0, 20.0).max()
    assert after <= before * (1 + 1e-12)
    assert result.shift_in <= tol + 1e-9
    for j0, j1 in zip(chain.joints(), result.chain.joints(), strict=True):
        assert j0.g1 == j1.g1  # G1 joints stay G1, breaks stay breaks


@settings(max_examples=12, deadline=None)
@given(smooth_chains())
def test_relaxation_never_increases_required_acceleration(segs):
    try:
        chain = BezierChain.from_control_points(segs)
    except PathError:
        return
    result = relax_chain(chain, LIMITS, speed_in_s=30.0, tolerance_in=2.0,
                         tangential_in_s2=20.0)
    check(chain, result, 2.0)


@settings(max_examples=8, deadline=None)
@given(chains())
def test_relaxation_keeps_g1_breaks_and_bounds_on_any_chain(segs):
    try:
        chain = BezierChain.from_control_points(segs)
    except PathError:
        return
    result = relax_chain(chain, LIMITS, speed_in_s=30.0, tolerance_in=1.0,
                         tangential_in_s2=20.0)
    check(chain, result, 1.0)


@pytest.mark.parametrize("segs", [HAIRPIN, CORNER], ids=["hairpin", "sharp_corner"])
def test_tight_turns_are_widened_within_the_tolerance(segs):
    chain = BezierChain.from_control_points(segs)
    result = relax_chain(chain, LIMITS, speed_in_s=30.0, tolerance_in=2.0,
                         tangential_in_s2=20.0)
    check(chain, result, 2.0)
    assert result.demand_after_in_s2.max() < 0.95 * result.demand_before_in_s2.max()
    assert 0 < result.shift_in <= result.control_point_shift_in <= 2.0 + 1e-9
    assert 1 in result.changed


def test_a_feasible_path_or_zero_tolerance_is_left_alone():
    gentle = BezierChain.from_control_points([[[-48, 0], [0, 0], [0, 40], [48, 40]]])
    r = relax_chain(gentle, LIMITS, speed_in_s=20.0, tolerance_in=2.0)
    assert r.feasible and r.changed == () and r.shift_in == 0.0
    tight = BezierChain.from_control_points(CORNER)
    r0 = relax_chain(tight, LIMITS, speed_in_s=30.0, tolerance_in=0.0)
    assert r0.changed == () and not r0.feasible


def test_bad_relax_settings_are_refused():
    chain = BezierChain.from_control_points(HAIRPIN)
    with pytest.raises(PathError, match="tangential"):
        relax_chain(chain, LIMITS, speed_in_s=30.0, tolerance_in=1.0, tangential_in_s2=500)
    with pytest.raises(PathError, match="speed_in_s"):
        relax_chain(chain, LIMITS, speed_in_s=0.0, tolerance_in=1.0)
    with pytest.raises(PathError, match="tolerance_in"):
        relax_chain(chain, LIMITS, speed_in_s=30.0, tolerance_in=-1.0)


def test_required_accel_sees_coincident_control_points():
    # P1 = P0 on a turning cubic: curvature grows like 1/t at the start
    p = np.array([[[0, 0], [0, 0], [10, 0], [10, 10]]], dtype=float)
    assert np.isinf(required_accel(p, 10.0)[0])
    line = np.array([[[0, 0], [0, 0], [5, 0], [10, 0]]], dtype=float)
    assert required_accel(line, 10.0, 3.0)[0] == pytest.approx(3.0)
