"""Property tests: over random paths and limits, every sample keeps every promise."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stages.arms.planning.path import JointPath
from stages.arms.retiming import retime_with_report
from tests.arms.retiming.helpers import distance_to_polyline, names

RATE_HZ = 125.0


@st.composite
def problems(draw):
    dof = draw(st.integers(1, 14))
    n = draw(st.integers(2, 30))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    step = draw(st.sampled_from([1e-3, 0.05, 0.3, 1.0]))
    wp = np.cumsum(rng.uniform(-step, step, (n, dof)), axis=0)
    if n > 3 and draw(st.booleans()):        # repeated waypoints and an exact reversal
        wp[2] = wp[1]
        wp[-1] = wp[-3]
    vlim = rng.uniform(0.2, 3.0, dof)
    alim = rng.uniform(0.5, 20.0, dof)
    deviation = draw(st.sampled_from([0.0, 0.005, 0.02, 0.1]))
    return JointPath(names(dof), wp), vlim, alim, deviation


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_samples_keep_limits_rate_rest_and_tube(problem):
    path, vlim, alim, deviation = problem
    result = retime_with_report(path, vlim, alim, RATE_HZ, max_deviation_rad=deviation)
    traj = result.trajectory
    wp = path.waypoints

    # exactly t_k = k / rate_hz, last sample at the end
    assert np.array_equal(traj.times, np.arange(traj.num_samples) / RATE_HZ)
    assert result.duration_s == traj.times[-1]

    # zero violations at the samples, no tolerance
    assert np.all(np.abs(traj.velocities) <= vlim)
    assert np.all(np.abs(traj.accelerations) <= alim)
    assert result.max_velocity_ratio <= 1.0 and result.max_acceleration_ratio <= 1.0

    # starts and ends at rest, at the path's end waypoints
    assert np.array_equal(traj.positions[0], wp[0])
    assert np.array_equal(traj.positions[-1], wp[-1])
    assert not traj.velocities[0].any() and not traj.velocities[-1].any()

    # inside the reported tube around the planner's polyline, which is within the request
    assert result.max_deviation_rad <= deviation + 1e-12
    assert distance_to_polyline(traj.positions, wp).max() <= result.max_deviation_rad + 1e-9

    # samples are one consistent motion: |q̈| ≤ a between samples too
    h = 1.0 / RATE_HZ
    dq = np.diff(traj.positions, axis=0)
    trapezoid = 0.5 * h * (traj.velocities[1:] + traj.velocities[:-1])
    assert np.all(np.abs(dq - trapezoid) <= alim * h * h / 4 + 1e-9)
    assert np.all(np.abs(np.diff(traj.velocities, axis=0)) <= alim * h + 1e-9)

    # no faster than the slowest joint's straight-line travel at full speed
    assert result.duration_s >= np.max(np.abs(wp[-1] - wp[0]) / vlim) - 1e-9


def test_no_motion_path_is_one_sample_at_rest():
    for wp in ([[0.1, -0.2, 0.3]], [[0.1, -0.2, 0.3]] * 4):
        result = retime_with_report(JointPath(names(3), wp), 1.0, 2.0)
        traj = result.trajectory
        assert traj.num_samples == 1 and traj.times.tolist() == [0.0]
        assert traj.positions.tolist() == [[0.1, -0.2, 0.3]]
        assert not traj.velocities.any() and not traj.accelerations.any()
        assert result.duration_s == 0.0


def test_reversal_corner_is_passed_at_rest():
    path = JointPath(names(2), [[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]])
    result = retime_with_report(path, [1.0, 1.0], [2.0, 2.0])
    assert result.rest_stops == 1 and result.blends == 0
    speed = np.linalg.norm(result.trajectory.velocities, axis=1)
    turn = np.argmax(result.trajectory.positions[:, 0])
    assert speed[turn] < 2.0 / RATE_HZ  # within one sample of the stop at the corner
    assert result.trajectory.positions[:, 0].max() <= 1.0


def test_one_joint_triangle_profile_is_bang_bang_optimal():
    # 1 rad at v = 10 (never reached), a = 4: t = 2·sqrt(1/4) = 1 s exactly
    result = retime_with_report(JointPath(("j",), [[0.0], [1.0]]), 10.0, 4.0, safety_margin=0.0)
    assert abs(result.optimal_duration_s - 1.0) < 1e-12
    assert result.duration_s == 1.0
