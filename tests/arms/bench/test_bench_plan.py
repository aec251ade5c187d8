"""pipeline=bench_plan: the metric keys, the table, and the crossing's goals kept equal to crossing.yaml's."""

import json

import pytest
from omegaconf import OmegaConf

from stages.__main__ import run_config
from tests.conftest import CONF

try:
    import ompl  # noqa: F401

    HAVE_OMPL = True
except ImportError:
    HAVE_OMPL = False


def test_bench_crossing_goals_are_the_crossing_pipelines():
    bench = OmegaConf.load(CONF / "pipeline/bench_plan.yaml")
    crossing = OmegaConf.load(CONF / "pipeline/crossing.yaml")
    # the built-in robot's crossing goals (a robot may bring its own: robot.extra.crossing_goal_poses)
    built_in = OmegaConf.to_container(bench.params.goal_poses)
    assert built_in == OmegaConf.to_container(crossing.params.goal_poses)
    raw = [OmegaConf.to_container(c, resolve=False)["goal_poses"] for c in (bench, crossing)]
    assert raw[0] == raw[1]   # the same choice: the robot's own crossing goals first
    crossing_set = OmegaConf.to_container(bench.stages.bench_plan.goal_sets.crossing, resolve=False)
    assert crossing_set["poses"] == "${pipeline.goal_poses}"


def test_small_bench_run_reports_every_key(compose, tmp_path):
    out = tmp_path / "run"
    cfg = compose(["pipeline=bench_plan", "pipeline.params.seeds=1", "pipeline.params.crossing_seeds=2",
                   "pipeline.stages.bench_plan.checker_states=300"], run_dir=out)
    record = run_config(cfg, out)
    status = json.loads((out / "status.json").read_text())
    assert record.ok, status
    m = json.loads((out / "metrics.json").read_text())
    planners = ["choreograph", "mujoco"] + (["ompl_RRTConnect"] if HAVE_OMPL else [])
    for goal_set in ("crossing", "narrow_gap", "near_poses", "cartesian", "single_arm"):
        for p in planners:
            for key in ("success_rate", "median_time_s", "p90_time_s", "path_length_rad", "checks"):
                assert f"bench_plan.{goal_set}.{p}.{key}" in m
            # every plan retimed at 125 Hz and every sample re-checked at the clearance
            assert m[f"bench_plan.{goal_set}.{p}.samples"] > 0
            assert m[f"bench_plan.{goal_set}.{p}.violations"] == 0
            assert m[f"bench_plan.{goal_set}.{p}.min_clearance_m"] >= 0.005
        if HAVE_OMPL:
            assert f"bench_plan.{goal_set}.time_ratio_vs_ompl" in m
    for p in planners:
        assert m[f"bench_plan.crossing.{p}.success_rate"] == 1.0
    for key in ("states_per_s", "bare_states_per_s", "throughput_ratio", "threads2_speedup"):
        assert m[f"bench_plan.checker.{key}"] > 0
    assert m["bench_plan.checker.threads_agree"] is True
    assert 0.5 < m["bench_plan.checker.batch_proven_fraction"] <= 1.0
    assert m["bench_plan.checker.batch_threads2_speedup"] > 0
    if "bench_plan.retime.toppra_ratio_median" in m:
        assert m["bench_plan.retime.toppra_ratio_median"] <= 1.02
    table = (out / "bench_plan" / "table.md").read_text()
    assert "| crossing | choreograph |" in table


@pytest.mark.parametrize("bad, match", [
    ("pipeline.stages.bench_plan.goal_sets.crossing.wrong=1",
     "pipeline.stages.bench_plan.goal_sets.crossing.wrong: not a goal set setting; allowed: ['poses'"),
    ("pipeline.stages.bench_plan.planners.choreograph.backend=moveit",
     "pipeline.stages.bench_plan.planners.choreograph.backend='moveit': allowed: ['choreograph', 'ompl']"),
])
def test_bad_bench_config_fails_before_anything_runs(compose, tmp_path, bad, match):
    out = tmp_path / "run"
    record = run_config(compose(["pipeline=bench_plan", f"+{bad}" if "wrong" in bad else bad],
                                run_dir=out), out)
    status = json.loads((out / "status.json").read_text())
    assert not record.ok and match in status["error"]
    assert not (out / "bench_plan").exists()


def test_a_real_robot_benchmarks_its_own_crossing_with_a_profile(compose, tmp_path):
    out = tmp_path / "run"
    cfg = compose(["pipeline=bench_plan", "robot=twin_jaco", "pipeline.params.sets=[crossing]",
                   "pipeline.params.crossing_seeds=2", "pipeline.stages.bench_plan.checker_states=100",
                   "pipeline.stages.bench_plan.profile=true",
                   "pipeline.stages.bench_plan.planners={choreograph:{backend:choreograph}}"], run_dir=out)
    assert cfg.pipeline.stages.bench_plan.goal_sets.crossing.poses == cfg.robot.extra.crossing_goal_poses
    record = run_config(cfg, out)
    assert record.ok, record.error
    m = json.loads((out / "metrics.json").read_text())
    assert m["bench_plan.crossing.choreograph.success_rate"] == 1.0
    assert m["bench_plan.crossing.choreograph.violations"] == 0
    assert not any(k.startswith("bench_plan.narrow_gap") for k in m)      # only the sets asked for
    assert "edge_walk" in (out / "bench_plan" / "profile.txt").read_text()   # the compiled walk ran


def test_an_unknown_goal_set_fails_naming_the_key_and_the_sets(compose, tmp_path):
    out = tmp_path / "run"
    record = run_config(compose(["pipeline=bench_plan", "pipeline.params.sets=[crosing]"], run_dir=out), out)
    assert not record.ok
    assert "pipeline.stages.bench_plan.sets" in str(record.error) and "'crossing'" in str(record.error)
