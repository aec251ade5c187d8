"""pipeline=plan from the command line's point of view: goals, robots given by config, bad input."""

import json

import numpy as np
import pytest

from stages.__main__ import run_config
from tests.recordings import assert_recording

FAST = ["pipeline.stages.execute.video=false"]


def run(compose, tmp_path, *overrides):
    out = tmp_path / "run"
    record = run_config(compose(["pipeline=plan", *FAST, *overrides], run_dir=out), out)
    status = json.loads((out / "status.json").read_text())
    metrics = json.loads((out / "metrics.json").read_text())
    return record, status, metrics, out


def test_one_arm_robot_given_only_by_config_plans_to_a_pose(compose, tmp_path):
    record, status, m, out = run(compose, tmp_path, "robot=panda_left",
                                 "goal.poses={left:[0.45,0.2,0.95,0,1,0,0]}")
    assert record.ok, status
    assert m["verify.violations"] == 0 and m["execute.ok"]
    path = np.load(out / "plan" / "path.npz")
    assert list(path["joint_names"]) == [f"left_joint{i}" for i in range(1, 8)]
    c = assert_recording(out, {"world/planned/left_link7": "time", "world/executed/left_link7": "time",
                               "world/plan/gripper_path/left": None, "clearance/min_m": "time",
                               "joints/left_joint7/position": "time"})
    assert not c.under("joints/right_joint1")   # a one-arm robot


def test_lockstep_cartesian_paths_stay_on_their_lines(compose, tmp_path):
    from stages.arms.planning.goals import make_group
    from stages.arms.world import build_world

    goals = {"left": [0.52, 0.225, 0.85, 0, 1, 0, 0], "right": [0.45, -0.2, 0.9, 0, 1, 0, 0]}
    override = f"goal.cartesian={{left:{goals['left']},right:{goals['right']}}}"
    record, status, m, out = run(compose, tmp_path, override)
    assert record.ok, status
    cfg = compose(["pipeline=plan"])
    world = build_world(cfg.robot, cfg.scene)
    group = make_group(world)
    wp = np.load(out / "plan" / "path.npz")["waypoints"]
    for arm, goal in goals.items():
        pts = np.array([group.ee_pose(arm, q)[:3] for q in wp])
        a, b = pts[0], np.array(goal[:3])
        assert np.linalg.norm(pts[-1] - b) < 1e-3
        u = (b - a) / np.linalg.norm(b - a)
        off_line = np.linalg.norm((pts - a) - np.outer((pts - a) @ u, u), axis=1)
        assert off_line.max() < 1e-3
        s = (pts - a) @ u / np.linalg.norm(b - a)
        assert np.all(np.diff(s) > -1e-6)   # forward along the line, never back
    # both arms on one shared parameter: equal fractions of their lines at every step
    fr = [np.linalg.norm(np.array([group.ee_pose(arm, q)[:3] for q in wp]) - group.ee_pose(arm, wp[0])[:3],
                         axis=1) / np.linalg.norm(np.array(goals[arm][:3]) - group.ee_pose(arm, wp[0])[:3])
          for arm in goals]
    assert np.allclose(fr[0], fr[1], atol=2e-3)


@pytest.mark.parametrize("override, reason", [
    ("goal.poses={left:[1.5,0.2,0.9,0,1,0,0]}", "unreachable"),
    ("goal.joints={left:[0,0.1,0,-2.3,0,2.4,0.7854],right:[0,0.1,0,-2.3,0,2.4,0.7854]}", None),
    ("goal.joints={left:[0,0.1,0,-3.5,0,2.4,0.78]}", "invalid_goal"),
    ("goal.joints={middle:[0,0,0,0,0,0,0]}", "invalid_goal"),
    ("goal.joints={left:[nan,0.1,0,-2.3,0,2.4,0.78]}", "invalid_goal"),
    ("goal.joints={left:[abc,0.1,0,-2.3,0,2.4,0.78]}",
     "ConfigError: goal.joints.left[0]='abc': expected a number"),
    ("goal.poses={left:[0.52,-0.225,1.0,0,1,0,0]}", "goal_in_collision"),
])
def test_bad_goals_fail_with_the_reason_in_status(compose, tmp_path, override, reason):
    record, status, m, _ = run(compose, tmp_path, override)
    if reason is None:   # a goal equal to the start is fine: nothing to do
        assert record.ok, status
        return
    assert status["status"] == "failed" and status["failed_stage"] == "plan"
    assert status["error"].startswith(reason if ": " in reason else f"PlanningError: {reason}")


def test_zero_time_budget_fails_at_construction(compose, tmp_path):
    record, status, m, out = run(compose, tmp_path, "planner.time_budget_s=0",
                                 "goal.joints={left:[0.3,0.1,0,-2.3,0,2.4,0.7854]}")
    assert status["failed_stage"] == "plan" and "time_budget_s" in status["error"]
    assert not (out / "plan").exists()


def test_goal_needs_exactly_one_kind(compose, tmp_path):
    record, status, m, _ = run(compose, tmp_path)
    assert "exactly one of goal.joints" in status["error"]
