"""Artifacts round-trip; bad input is a RetimingError; the violation repair loop works."""

from __future__ import annotations

import importlib
import json

import numpy as np
import pytest

from core.errors import RetimingError
from stages.arms.planning.path import JointPath
from stages.arms.retiming import Trajectory, retime, retime_with_report
from tests.arms.retiming.helpers import TWIN_ACC, TWIN_VEL, names, random_walk_path

# the package re-exports the function retime, which shadows the module's attribute name
retime_module = importlib.import_module("stages.arms.retiming.retime")


def test_joint_path_round_trip(tmp_path):
    path = random_walk_path(np.random.default_rng(0), 7, 14)
    path.save(tmp_path / f"path{path.suffix}")
    loaded = JointPath.load(tmp_path / "path.npz")
    assert loaded.joint_names == path.joint_names
    assert np.array_equal(loaded.waypoints, path.waypoints)
    with np.load(tmp_path / "path.npz") as data:
        assert sorted(data.files) == ["joint_names", "waypoints"]


def test_joint_path_structure_is_checked():
    with pytest.raises(ValueError, match="N×D"):
        JointPath(names(3), np.zeros((4, 2)))
    with pytest.raises(ValueError, match="unique"):
        JointPath(("a", "a"), np.zeros((2, 2)))
    assert not JointPath(names(2), np.zeros((2, 2))).waypoints.flags.writeable


def test_trajectory_json_is_ros_shaped_and_round_trips(tmp_path):
    traj = retime(random_walk_path(np.random.default_rng(1), 5, 14), TWIN_VEL, TWIN_ACC)
    file = tmp_path / f"trajectory{traj.suffix}"
    traj.save(file)
    data = json.loads(file.read_text())
    assert data["joint_names"] == list(traj.joint_names)
    assert len(data["points"]) == traj.num_samples
    assert set(data["points"][3]) == {"time_from_start", "positions", "velocities",
                                      "accelerations"}
    assert data["points"][3]["time_from_start"] == 3 / 125.0
    loaded = Trajectory.load(file)
    for key in ("times", "positions", "velocities", "accelerations"):
        assert np.array_equal(getattr(loaded, key), getattr(traj, key)), key
    arrays = traj.to_npz_arrays()
    assert set(arrays) == {"joint_names", "times", "positions", "velocities", "accelerations"}
    traj.save(tmp_path / "trajectory.npz")
    assert np.array_equal(Trajectory.load(tmp_path / "trajectory.npz").positions, traj.positions)


@pytest.mark.parametrize(
    ("waypoints", "vlim", "alim", "kwargs", "message"),
    [
        ([[0.0, np.nan], [1.0, 1.0]], 1.0, 1.0, {}, "not finite"),
        ([[0.0, 0.0], [1.0, 1.0]], [1.0, 0.0], 1.0, {}, "velocity_limits"),
        ([[0.0, 0.0], [1.0, 1.0]], 1.0, [-1.0, 1.0], {}, "acceleration_limits"),
        ([[0.0, 0.0], [1.0, 1.0]], [1.0, 1.0, 1.0], 1.0, {}, "one value per joint"),
        ([[0.0, 0.0], [1.0, 1.0]], np.inf, 1.0, {}, "finite"),
        (np.zeros((0, 2)), 1.0, 1.0, {}, "no waypoints"),
        ([[0.0, 0.0], [1.0, 1.0]], 1.0, 1.0, {"rate_hz": 0.0}, "rate_hz"),
        ([[0.0, 0.0], [1.0, 1.0]], 1.0, 1.0, {"max_deviation_rad": -1.0}, "max_deviation"),
    ],
)
def test_bad_input_is_a_retiming_error(waypoints, vlim, alim, kwargs, message):
    with pytest.raises(RetimingError, match=message):
        retime(JointPath(names(2), waypoints), vlim, alim, **kwargs)


def test_not_a_joint_path_is_a_retiming_error():
    with pytest.raises(RetimingError, match="JointPath"):
        retime(np.zeros((2, 2)), 1.0, 1.0)


def test_violations_found_at_samples_are_repaired(monkeypatch):
    """A solver that overshoots by 5 % on its first solve: the loop must tighten and fix it."""
    real_solve = retime_module.solve_topp
    calls = []

    def overshooting_solve(path, vel, acc, **kw):
        calls.append(1)
        boost = 1.05 if len(calls) == 1 else 1.0
        return real_solve(path, vel * boost, acc * boost, **kw)

    monkeypatch.setattr(retime_module, "solve_topp", overshooting_solve)
    path = random_walk_path(np.random.default_rng(2), 8, 14)
    result = retime_with_report(path, TWIN_VEL, TWIN_ACC)
    assert result.iterations >= 2
    traj = result.trajectory
    assert np.all(np.abs(traj.velocities) <= TWIN_VEL)
    assert np.all(np.abs(traj.accelerations) <= TWIN_ACC)


def test_unrepairable_violations_fail_clearly(monkeypatch):
    real_solve = retime_module.solve_topp
    monkeypatch.setattr(retime_module, "solve_topp",
                        lambda path, vel, acc, **kw: real_solve(path, vel * 2, acc * 2, **kw))
    # the fake keeps doubling whatever the loop tightens to, so it can never pass
    with pytest.raises(RetimingError, match="still exceed"):
        retime(random_walk_path(np.random.default_rng(2), 4, 3), 1.0, 1.0, max_iterations=1)
