"""core.se3: each helper against its inverse or an independent construction, on random rotations."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core import se3

vec3 = st.lists(st.floats(-3.0, 3.0), min_size=3, max_size=3).map(np.array)


def _random_transform(w, t):
    return se3.transform(se3.rotvec_to_matrix(w), t)


@settings(max_examples=60, deadline=None)
@given(vec3, vec3)
def test_invert_undoes_a_transform(w, t):
    T = _random_transform(w, t)
    np.testing.assert_allclose(se3.invert(T) @ T, np.eye(4), atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(vec3)
def test_rotvec_round_trips_and_matches_the_cross_product(w):
    R = se3.rotvec_to_matrix(w)
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(se3.rotvec_to_matrix(se3.matrix_to_rotvec(R)), R, atol=1e-9)
    v = np.array([0.3, -1.0, 2.0])
    np.testing.assert_allclose(se3.skew(w) @ v, np.cross(w, v), atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(vec3, vec3)
def test_quaternions_round_trip_and_measure_the_same_angle(w, w2):
    R, R2 = se3.rotvec_to_matrix(w), se3.rotvec_to_matrix(w2)
    q, q2 = se3.matrix_to_quat(R), se3.matrix_to_quat(R2)
    np.testing.assert_allclose(se3.quat_to_matrix(q), R, atol=1e-9)
    np.testing.assert_allclose(se3.quat_to_matrix(-q), R, atol=1e-9)
    assert abs(np.degrees(se3.quat_angle(q, q2)) - se3.rotation_angle_deg(R, R2)) < 1e-4


def test_axis_rotation_and_pose7():
    R = se3.axis_rotation("z", 90.0)
    np.testing.assert_allclose(R @ [1.0, 0, 0], [0, 1.0, 0], atol=1e-12)
    pose = se3.pose7(se3.transform(R, [1.0, 2.0, 3.0]))
    np.testing.assert_allclose(pose, [1, 2, 3, np.sqrt(0.5), 0, 0, np.sqrt(0.5)], atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(vec3, vec3, st.integers(0, 2**31 - 1))
def test_rigid_align_recovers_the_transform(w, t, seed):
    T = _random_transform(w, t)
    src = np.random.default_rng(seed).normal(size=(6, 3))
    dst = src @ T[:3, :3].T + T[:3, 3]
    np.testing.assert_allclose(se3.rigid_align(src, dst), T, atol=1e-8)
