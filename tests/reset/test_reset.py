"""The reset chain: least-travel grasp choice, the success detector, and a reset end to end."""

import json

import numpy as np
import pytest
from omegaconf import OmegaConf

from stages.__main__ import run_config
from stages.rl.success import check_insertion
from tests.conftest import CONF

HALF = np.array([0.02, 0.02, 0.07])
SLOT = np.eye(4)
SLOT[:3, 3] = [0.35, -0.075, 0.75]


def lying(x, y, z=0.77, tilt_deg=0.0):
    """The peg lying on its -x face, long axis along world x, optionally tilted about world y."""
    R = np.zeros((3, 3))
    R[:, 2] = [1, 0, 0]
    R[:, 0] = [0, 0, -1]
    R[:, 1] = np.cross(R[:, 2], R[:, 0])
    t = np.radians(tilt_deg)
    Ry = np.array([[np.cos(t), 0, np.sin(t)], [0, 1, 0], [-np.sin(t), 0, np.cos(t)]])
    T = np.eye(4)
    T[:3, :3] = Ry @ R
    T[:3, 3] = [x, y, z]
    return T


@pytest.mark.parametrize("pose, inserted", [
    (lying(0.35, -0.075), True),                       # in the slot, on its floor
    (lying(0.35, -0.075, z=0.77 + 0.03), False),       # resting on the rim: not in
    (lying(0.35, -0.075, z=0.79, tilt_deg=15), False), # half inserted: one end in, propped up
    (lying(0.35, 0.085), False),                       # at the start pose, beside the slot
])
def test_success_detector(pose, inserted):
    check = check_insertion(pose, SLOT, [0.048, 0.16], 0.03, HALF, min_depth_m=0.025)
    assert check.inserted is inserted


@pytest.fixture(scope="module")
def world():
    from stages.scene import build_world

    robot = OmegaConf.to_container(OmegaConf.load(CONF / "robot/twin_panda.yaml"))
    return build_world(robot, OmegaConf.to_container(OmegaConf.load(CONF / "scene/table.yaml")))


@pytest.mark.parametrize("y, arm", [(0.25, "left"), (-0.25, "right")])
def test_the_grasp_chosen_is_the_least_travel_reachable_one(world, y, arm):
    from stages.grasping.candidates import top_grasps
    from stages.grasping.resting import resting_pose
    from stages.grasping.select import choose_grasp
    from stages.planning.stage import make_group

    T = lying(0.5, y)
    group = make_group(world)
    start = world.robot.home()
    cands = top_grasps(T, HALF, resting_pose(T[:3, :3]), 0.072)
    report = choose_grasp(group, cands, start, np.random.default_rng(0))
    assert report.choice.arm == arm                      # the arm on the peg's side travels less
    travels = [c.travel_rad for c in report.ranked]
    assert report.choice.travel_rad == min(travels)
    assert len(report.ranked) + len(report.rejected) == 2 * len(cands)
    for c in report.ranked:
        assert c.travel_rad == pytest.approx(np.abs(c.q_pregrasp - start).sum())


def test_reset_from_a_fixed_seed_succeeds_in_physics(compose, tmp_path):
    run = tmp_path / "reset"
    cfg = compose(["pipeline=reset", "seed=3", "hardware.speed=4", "pipeline.stages.reset.video=false"],
                  run_dir=run)
    record = run_config(cfg, run)
    m = json.loads((run / "metrics.json").read_text())
    assert record.ok, record.error
    assert m["reset.success"] is True
    assert m["landing.true_position_error_m"] < 0.005 and m["landing.true_rotation_error_deg"] < 5
    assert m["perception.position_error_m"] < 0.002
    assert m["grasp.travel_rad"] <= m["grasp.first_reachable_travel_rad"] + 1e-9
    cands = json.loads((run / "reset" / "candidates.json").read_text())
    assert cands["ranked"] and all("reason" in r for r in cands["rejected"])
