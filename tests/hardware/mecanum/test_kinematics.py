import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hardware.mecanum.kinematics import (
    WHEEL_ORDER,
    field_to_robot,
    footprint_corners,
    forward_kinematics,
    inverse_kinematics,
    robot_to_field,
    wheel_matrix,
)

K = 13.75
vel = st.tuples(st.floats(-80, 80), st.floats(-80, 80), st.floats(-6, 6)).map(np.array)


def test_field_notes_formulas_and_order():
    assert WHEEL_ORDER == ("leftFront", "leftBack", "rightBack", "rightFront")
    vx, vy, w = 10.0, 3.0, 0.5
    lf, lb, rb, rf = inverse_kinematics([vx, vy, w], K)
    assert (lf, lb, rb, rf) == pytest.approx((vx - vy - w * K, vx + vy - w * K,
                                              vx - vy + w * K, vx + vy + w * K))
    J = wheel_matrix(K)
    assert np.allclose(J.T @ J, np.diag([4, 4, 4 * K * K]))


@settings(max_examples=30, deadline=None)
@given(vel, st.floats(-7, 7))
def test_forward_inverts_inverse_and_frames_round_trip(v, heading):
    assert np.allclose(forward_kinematics(inverse_kinematics(v, K), K), v)
    assert np.allclose(robot_to_field(field_to_robot(v, heading), heading), v)
    assert np.hypot(*field_to_robot(v, heading)[:2]) == pytest.approx(np.hypot(*v[:2]))


def test_strafe_and_turn_patterns():
    left = inverse_kinematics([0, 10, 0], K)
    assert np.allclose(np.sign(left), [-1, 1, -1, 1])  # lf back, lb forward, rb back, rf fwd
    ccw = inverse_kinematics([0, 0, 1], K)
    assert np.allclose(np.sign(ccw), [-1, -1, 1, 1])  # left side back, right side forward


def test_footprint_corners():
    c = footprint_corners([10, 5, np.pi / 2], 18, 12)
    assert np.allclose(sorted(c[:, 0]), [4, 4, 16, 16])  # 12-in width now along x
    assert np.allclose(sorted(c[:, 1]), [-4, -4, 14, 14])
