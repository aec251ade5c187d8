"""The reset chain: least-travel grasp choice, the success detector, and a reset end to end."""

import json

import numpy as np
import pytest
from omegaconf import OmegaConf

from stages.__main__ import run_config
from stages.arms.rl.success import check_insertion
from tests.conftest import CONF
from tests.recordings import assert_recording

HALF = np.array([0.02, 0.02, 0.07])
SLOT = np.eye(4)
SLOT[:3, 3] = [0.37, -0.08, 0.75]


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
    (lying(0.37, -0.08), True),                       # in the slot, on its floor
    (lying(0.37, -0.08, z=0.77 + 0.03), False),       # resting on the rim: not in
    (lying(0.37, -0.08, z=0.79, tilt_deg=15), False), # half inserted: one end in, propped up
    (lying(0.40, 0.09), False),                       # at the start pose, beside the slot
])
def test_success_detector(pose, inserted):
    check = check_insertion(pose, SLOT, [0.048, 0.16], 0.03, HALF, min_depth_m=0.025)
    assert check.inserted is inserted


@pytest.fixture(scope="module")
def world():
    from stages.arms.world import build_world

    robot = OmegaConf.to_container(OmegaConf.load(CONF / "robot/twin_panda.yaml"))
    return build_world(robot, OmegaConf.to_container(OmegaConf.load(CONF / "scene/table.yaml")))


@pytest.mark.parametrize("y, arm", [(0.25, "left"), (-0.25, "right")])
def test_the_grasp_chosen_is_the_least_travel_reachable_one(world, y, arm):
    from stages.arms.grasping.candidates import top_grasps
    from stages.arms.grasping.resting import resting_pose
    from stages.arms.grasping.select import choose_grasp
    from stages.arms.planning.goals import make_group

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
    cfg = compose(["pipeline=reset", "seed=3", "pipeline.stages.reset.video=false"],
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
    # the recording: every attempt a span, what the camera saw, the grasps, the physics states
    c = assert_recording(run, {"reset/attempt": "time", "reset/log": "time", "world/executed/peg": "time",
                               "world/executed/left_hand": "time", "world/camera": None,
                               "world/camera/image": "time", "world/camera/image/tag_corners": "time",
                               "world/camera/image/peg_fit": "time", "world/peg_estimate": "time",
                               "world/grasps/reachable": None})
    assert c.rows["/world/camera/image"] >= m["reset.attempts"] + 1        # every look, the landing too
    assert c.rows["/reset/attempt"] == 2 * m["reset.attempts"]             # each span's start and end
    if cands["rejected"]:
        assert "/world/grasps/rejected" in c.static


@pytest.mark.parametrize("tilt_deg, upright, cause",
                         [(0, False, None), (20, False, None), (0, True, "standing")])
def test_why_a_top_grasp_cannot_take_the_peg(tilt_deg, upright, cause):
    from stages.arms.reset.reset import _cannot_pick

    T = np.eye(4) if upright else lying(0.5, 0.0, tilt_deg=tilt_deg)
    assert _cannot_pick(T, long_axis=2) == cause


def test_a_peg_standing_on_its_end_is_pushed_over_then_reset(compose):
    import mujoco

    from stages.arms.execution.rig import hardware_settings
    from stages.arms.perception.sim import drop_body
    from stages.arms.planning.goals import planner_settings
    from stages.arms.reset.plan import ResetPlanner
    from stages.arms.reset.reset import run_reset
    from stages.arms.reset.setup import build_rig, reset_settings
    from stages.arms.reset.task import TaskSpec
    from stages.arms.world import build_world

    cfg = compose(["pipeline=reset"])
    parts = {k: OmegaConf.to_container(cfg[k], resolve=True)
             for k in ("robot", "scene", "planner", "task", "hardware")}
    world = build_world(parts["robot"], parts["scene"])
    rig, half = build_rig(world, parts["scene"], hardware_settings(parts["hardware"]), {}, None, 0)
    planner = ResetPlanner(world, planner_settings(parts["planner"]), reset_settings({}))
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, np.eye(3).reshape(-1))          # long axis (z) vertical
    try:
        with rig.sim.lock:
            drop_body(rig.model, rig.sim.data, "peg", np.r_[0.6, 0.05, 0.75 + 0.003 + half[2] + 0.002, quat])
        with rig.sim:
            outcome = run_reset(rig, planner, TaskSpec.from_config(parts["task"]), half, 0.75,
                                np.random.default_rng(0), max_attempts=3)
    finally:
        rig.close()
    assert outcome.failures[0]["cause"] == "standing"
    assert outcome.success, outcome.failures


def test_the_reset_summary_config_gathers_a_sweep(compose, tmp_path):
    from stages.graph import build_graph, run_graph

    def run(n, ok, pos, attempts, causes):
        d = tmp_path / "sweep" / str(n)
        (d / ".hydra").mkdir(parents=True)
        (d / ".hydra" / "overrides.yaml").write_text(f"- pipeline=reset\n- seed={n}\n")
        (d / "metrics.json").write_text(json.dumps({
            "reset.success": ok, "reset.attempts": attempts, "reset.time_s": 5.0 + n,
            "landing.true_position_error_m": pos, "landing.true_rotation_error_deg": 0.1,
            "perception.position_error_m": 0.001, "perception.rotation_error_deg": 0.1,
            "grasp.travel_rad": 2.0, "grasp.first_reachable_travel_rad": 3.0,
            "landing.detector_agrees": True, "reset.failure_causes": causes}))
        (d / "status.json").write_text(json.dumps({"status": "ok" if ok else "failed",
                                                   "error": None if ok else "ExecutionError: reset failed"}))

    run(0, True, 0.001, 1, "")
    run(1, True, 0.003, 2, "standing")
    run(2, False, 0.02, 3, "planning,planning,planning")
    cfg = compose(["pipeline=reset_summary", f"sweep_dir={tmp_path / 'sweep'}"])
    stages = OmegaConf.to_container(cfg.pipeline.stages, resolve=True)
    record = run_graph(build_graph(stages), tmp_path / "out", seed=0)
    assert record.ok, record.error
    m = record.metrics
    assert (m["gather.reset.success.sum"], m["gather.reset.success.count"]) == (2, 3)
    assert m["gather.reset.attempts.mean"] == 2 and m["gather.landing.true_position_error_m.max"] == 0.02
    assert m["gather.landing.detector_agrees.sum"] == 3
    md = (tmp_path / "out" / "gather" / "summary.md").read_text()
    assert "| reset.failure_causes.tally | planning: 3, standing: 1 |" in md
    assert "- job 2 (pipeline=reset seed=2): failed — ExecutionError: reset failed" in md


def test_noslip_runs_only_while_a_hand_holds_the_peg_lifted(compose):
    from stages.arms.execution.rig import hardware_settings
    from stages.arms.reset.setup import build_rig
    from stages.arms.world import build_world

    cfg = compose(["pipeline=reset"])
    parts = {k: OmegaConf.to_container(cfg[k], resolve=True) for k in ("robot", "scene", "hardware")}
    world = build_world(parts["robot"], parts["scene"])
    rig, _ = build_rig(world, parts["scene"], hardware_settings(parts["hardware"]), {}, None, 0,
                       hold_noslip_iterations=30)
    opt = world.model.opt
    try:
        with rig.sim:
            assert opt.noslip_iterations == 0                  # closing on the table: soft friction
            rig.set_holding("left", True)
            rig.set_holding("right", True)
            assert opt.noslip_iterations == 30
            rig.gripper("left", "open", settle_s=0.01)
            assert opt.noslip_iterations == 30                 # the right hand still holds it
            rig.gripper("right", "open", settle_s=0.01)
            assert opt.noslip_iterations == 0
            rig.set_holding("left", True)
    finally:
        rig.close()
    assert opt.noslip_iterations == 0                          # the model is left as it was
