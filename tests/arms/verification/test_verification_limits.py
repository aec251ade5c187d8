"""check_limits: clean trajectories pass, injected violations are caught and located."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import VerificationError
from stages.arms.retiming import Trajectory, retime
from stages.arms.verification.limits import check_limits
from tests.arms.retiming.helpers import TWIN_ACC, TWIN_VEL, random_walk_path

POS = np.tile([[-10.0, 10.0]], (14, 1))


@pytest.fixture(scope="module")
def traj():
    return retime(random_walk_path(np.random.default_rng(11), 8, 14), TWIN_VEL, TWIN_ACC)


def _with(traj, **arrays):
    fields = {k: getattr(traj, k).copy() for k in ("times", "positions", "velocities",
                                                    "accelerations")}
    fields.update(arrays)
    return Trajectory(traj.joint_names, **fields)


def test_retimed_trajectory_has_no_violations(traj):
    report = check_limits(traj, POS, TWIN_VEL, TWIN_ACC, tolerance=0.0)
    assert report.ok and report.violations == 0
    assert report.samples == traj.num_samples
    assert 0.99 < report.worst_ratio <= 1.0  # time-optimal: some joint is at its limit
    assert report.worst_kind in ("velocity", "acceleration")


@pytest.mark.parametrize("kind", ["positions", "velocities", "accelerations"])
def test_injected_violation_is_caught_and_located(traj, kind):
    values = getattr(traj, kind).copy()
    k, j = traj.num_samples // 3, 9
    limit = {"positions": POS[j, 1], "velocities": TWIN_VEL[j], "accelerations": TWIN_ACC[j]}[kind]
    values[k, j] = -1.01 * limit if kind != "positions" else 1.01 * limit
    report = check_limits(_with(traj, **{kind: values}), POS, TWIN_VEL, TWIN_ACC)
    expected_kind = {"positions": "position", "velocities": "velocity",
                     "accelerations": "acceleration"}[kind]
    assert report.violations == 1 and not report.ok
    assert (report.worst_sample, report.worst_joint, report.worst_kind) == (
        k, traj.joint_names[j], expected_kind)
    assert report.worst_time_s == traj.times[k]
    assert report.kinds[expected_kind].violations == 1
    assert report.kinds[expected_kind].worst_excess == pytest.approx(0.01 * abs(limit))
    assert report.worst_ratio == pytest.approx(1.01)


def test_tolerance_is_absolute_and_nan_is_a_violation(traj):
    acc = traj.accelerations.copy()
    acc[5, 0] = TWIN_ACC[0] + 1e-10
    assert check_limits(_with(traj, accelerations=acc), POS, TWIN_VEL, TWIN_ACC).ok
    assert check_limits(_with(traj, accelerations=acc), POS, TWIN_VEL, TWIN_ACC, 0.0).violations == 1
    vel = traj.velocities.copy()
    vel[7, 3] = np.nan
    report = check_limits(_with(traj, velocities=vel), POS, TWIN_VEL, TWIN_ACC)
    assert report.violations == 1 and report.worst_sample == 7 and report.worst_ratio == np.inf


def test_bad_limits_are_verification_errors(traj):
    with pytest.raises(VerificationError, match="position_limits"):
        check_limits(traj, POS[:, ::-1], TWIN_VEL, TWIN_ACC)
    with pytest.raises(VerificationError, match="velocity_limits"):
        check_limits(traj, POS, TWIN_VEL[:7], TWIN_ACC)
    with pytest.raises(VerificationError, match="acceleration_limits"):
        check_limits(traj, POS, TWIN_VEL, -TWIN_ACC)
