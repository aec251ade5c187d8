"""The online RL loop: a reset out of the slot, the policy hook, and one episode end to end."""

import json

import numpy as np
import pytest
from omegaconf import OmegaConf

from core.errors import ConfigError
from stages.__main__ import run_config
from tests.recordings import assert_recording, check_motion_bag


def _parts(cfg):
    return {k: OmegaConf.to_container(cfg[k], resolve=True)
            for k in ("robot", "scene", "planner", "task", "hardware", "pipeline")}


def test_the_reset_takes_an_inserted_peg_out_of_the_slot(compose):
    """The hard case of the loop: the peg lies in the slot (4 mm each side), only the notch is free."""
    import mujoco

    from stages.arms.execution.rig import hardware_settings
    from stages.arms.perception.sim import drop_body
    from stages.arms.planning.goals import planner_settings
    from stages.arms.reset.plan import ResetPlanner
    from stages.arms.reset.reset import run_reset
    from stages.arms.reset.setup import build_rig, reset_settings
    from stages.arms.reset.task import TaskSpec
    from stages.arms.world import build_world

    cfg = _parts(compose(["pipeline=rl_loop"]))
    world = build_world(cfg["robot"], cfg["scene"])
    rig, half = build_rig(world, cfg["scene"], hardware_settings(cfg["hardware"]), {}, None, 0)
    planner = ResetPlanner(world, planner_settings(cfg["planner"]), reset_settings({}))
    task = TaskSpec.from_config(cfg["task"])
    slot = cfg["scene"]["objects"]["fixture"]["pos"]
    R = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])   # lying, long axis along the slot
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, R.reshape(-1))
    rng = np.random.default_rng(0)
    try:
        with rig.sim.lock:
            drop_body(rig.model, rig.sim.data, "peg", np.r_[slot[0] + 0.004, slot[1] - 0.002, 0.775, quat])
        with rig.sim:
            outcome = run_reset(rig, planner, task, half, 0.75, rng, max_attempts=2)
    finally:
        rig.close()
    assert outcome.success, outcome.failures
    assert outcome.metrics["landing.true_position_error_m"] < task.tolerance_m


def test_a_policy_must_name_a_class_with_act():
    from stages.arms.rl.policy import make_policy

    with pytest.raises(ConfigError, match="act"):
        make_policy({"_target_": "stages.arms.rl.success.InsertionCheck"}, 0)
    policy = make_policy({"_target_": "stages.arms.rl.policy.ScriptedInsertion", "noise_m": 0.0}, 0)
    slot = np.eye(4)
    slot[:3, 3] = [0.4, -0.08, 0.75]
    action = policy.act({"peg_pose": np.eye(4), "slot_pose": slot, "slot_size_m": [0.048, 0.16]})
    assert action["place_xy"] == pytest.approx([0.4, -0.08])


@pytest.mark.parametrize("params, needle", [
    ({"episodes": 0}, "pipeline.stages.rl_loop.episodes=0: allowed: >= 1"),
    ({"policy": {"_target_": "stages.arms.rl.policy.ScriptedInsertion", "noise": 0.1}},
     "pipeline.stages.rl_loop.policy.noise: not a"),
    ({"policy": {"_target_": "stages.arms.rl.policy.ScriptedInsertion", "noise_m": -1}},
     "pipeline.stages.rl_loop.policy.noise_m=-1.0: allowed: >= 0"),
    ({"policy": {"_target_": "os.system"}}, "rl_loop.policy._target_='os.system' is not allowed"),
    ({"drop": {"x_range": [0.7, 0.5]}}, "pipeline.stages.rl_loop.drop.x_range"),
    ({"reset": {"lift": 0.1}}, "pipeline.stages.rl_loop.reset.lift: not a reset setting"),
])
def test_a_bad_loop_setting_names_its_full_key(compose, params, needle):
    from stages.adapters.arms.rl_loop import RLLoop

    cfg = _parts(compose(["pipeline=rl_loop"]))
    with pytest.raises(ConfigError) as err:
        RLLoop(cfg["scene"], cfg["task"], cfg["planner"], cfg["hardware"], **params)
    assert needle in str(err.value)


def test_one_episode_of_the_loop_runs_by_itself(compose, tmp_path):
    run = tmp_path / "rl"
    cfg = compose(["pipeline=rl_loop", "seed=2", "pipeline.stages.rl_loop.episodes=1"],
                  run_dir=run)
    record = run_config(cfg, run)
    assert record.ok, record.error
    episodes = [json.loads(line) for line in (run / "rl_loop" / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 1
    ep = episodes[0]
    assert ep["detected"] == ep["truth"]                 # the success detector agrees with the simulator
    assert ep["reset_success"] is True
    m = json.loads((run / "metrics.json").read_text())
    assert m["rl_loop.episodes"] == 1 and m["rl_loop.detector_false_positives"] == 0
    c = assert_recording(run, {   # the episode as a span, its verdict, the resets, the physics states
        "rl/episode": "time", "rl/inserted": "time", "rl/insertion_depth_m": "time", "rl/log": "time",
        "reset/attempt": "time", "reset/log": "time", "world/executed/*": "time", "world/scene/*": None})
    assert c.rows["/rl/inserted"] == 1 and c.rows["/rl/log"] == 2
    assert ep["sim_start_s"] < ep["sim_verdict_s"] < ep["sim_end_s"]
    check_motion_bag(run / "rl_loop" / "motion_bag", cfg)   # the policy's and the resets' moves


def test_a_driver_fault_mid_reset_fails_the_episode_and_the_loop_goes_on(compose, tmp_path):
    run = tmp_path / "rl_fault"
    cfg = compose(["pipeline=rl_loop", "seed=2", "pipeline.stages.rl_loop.episodes=2",
                   "pipeline.stages.rl_loop.max_attempts=1",
                   "hardware.faults.left.fail_at_s=0.3", "hardware.faults.right.fail_at_s=0.3"], run_dir=run)
    record = run_config(cfg, run)
    assert record.ok, record.error                      # the loop itself finishes
    episodes = [json.loads(line) for line in (run / "rl_loop" / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 2
    for ep in episodes:
        assert ep["reset_success"] is False and "execution" in ep["reset_failures"]
        assert "injected" in ep["attempt"] or "ExecutionError" in ep["attempt"]
    m = json.loads((run / "metrics.json").read_text())
    assert m["rl_loop.reset_failures"] == 2
