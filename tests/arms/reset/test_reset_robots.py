"""The lab's loop on real robot files: a short reset per shipped parallel-gripper robot, in its own
cell (conf/cell/<robot>.yaml), and the bad inputs that stop a reset before anything moves."""

from __future__ import annotations

import json

import pytest

from stages.__main__ import run_config
from tests.recordings import check_motion_bag


@pytest.mark.parametrize("robot, seed", [("twin_franka", 0), ("fetch", 0)])
def test_a_real_robot_resets_the_peg_in_its_cell(compose, tmp_path, robot, seed):
    run = tmp_path / robot
    cfg = compose(["pipeline=reset", f"robot={robot}", f"seed={seed}", "pipeline.stages.reset.video=false",
                   "record=false"], run_dir=run)
    record = run_config(cfg, run)
    m = json.loads((run / "metrics.json").read_text())
    assert record.ok, record.error
    assert m["reset.success"] is True and m["landing.true_position_error_m"] < 0.005
    assert m["plan.min_clearance_m"] >= cfg.robot.clearance_m      # every 125 Hz sample at clearance
    grippers = json.loads((run / "scene" / "robot.json").read_text())["grippers"]
    assert all(g["parallel_jaw"] and g["opening_open_m"] > 0.06 for g in grippers.values())
    check_motion_bag(run / "reset" / "motion_bag", cfg)


@pytest.mark.parametrize("overrides, words", [
    (["robot=twin_jaco"], ["robot.arms.left.gripper", "parallel-jaw", "3 finger bodies"]),
    (["robot=twin_franka", "robot.arms.left.gripper=null", "robot.arms.right.gripper=null"],
     ["has no gripper on any arm"]),
    (["robot=twin_franka", "robot.arms.left.gripper.finger_joints=[nope]"],
     ["robot.arms.left.gripper.finger_joints", "'nope'"]),
    (["scene.objects.peg.size=[0.12,0.12,0.14]"], ["scene.objects.peg.size", "120.0 mm wide", "opens to"]),
    (["robot=fetch", "scene.cell.start_xy=[1.2,0.0]"],
     ["task.start_xy (scene.cell.start_xy)", "out of reach"]),
])
def test_a_reset_that_cannot_work_fails_typed_before_anything_moves(compose, tmp_path, overrides, words):
    run = tmp_path / "bad"
    record = run_config(compose(["pipeline=reset", *overrides], run_dir=run), run)
    status = json.loads((run / "status.json").read_text())
    assert not record.ok and status["status"] == "failed" and status["error"].startswith("ConfigError")
    assert all(w in status["error"] for w in words), status["error"]
    assert (run / "scene" / "robot.json").exists()                # what was made so far is kept


def test_a_cell_sets_where_the_arms_wait_and_names_a_wrong_arm(compose, tmp_path):
    from omegaconf import OmegaConf

    from core.errors import ConfigError
    from stages.arms.world import build_world

    cfg = compose(["pipeline=reset", "robot=twin_franka"], run_dir=tmp_path / "run")
    world = build_world(cfg.robot, cfg.scene, asset_dir=tmp_path / "assets")
    cell_home = OmegaConf.to_container(cfg.scene.cell.home)
    assert cell_home and cell_home["left"] != list(cfg.robot.home.left)
    for arm, q in cell_home.items():
        assert world.robot.arm(arm).home == pytest.approx(q)
    bad = compose(["pipeline=reset", "robot=twin_franka", "+scene.cell.home.middle=[0,0,0,0,0,0,0]"],
                  run_dir=tmp_path / "bad")
    with pytest.raises(ConfigError, match=r"scene\.cell\.home\.middle: robot 'twin_franka' has no arm"):
        build_world(bad.robot, bad.scene, asset_dir=tmp_path / "assets2")
