"""pipeline=bench_robot on one seed: the robot's size, its plans and the checker's speed."""

import json

from stages.__main__ import run_config


def test_small_robot_bench_reports_every_key(compose, tmp_path):
    out = tmp_path / "run"
    record = run_config(compose(["pipeline=bench_robot", "pipeline.params.seeds=1",
                                 "pipeline.stages.bench_robot.checker_states=200"], run_dir=out), out)
    assert record.ok, json.loads((out / "status.json").read_text())
    m = json.loads((out / "metrics.json").read_text())
    for key in ("dof", "arms", "collision_geoms", "mesh_geoms", "checked_pairs", "matrix_samples",
                "seeds", "plans_ok", "plan_time_median_s", "plan_time_max_s", "samples", "min_clearance_m",
                "violations", "states_per_s", "bare_states_per_s", "throughput_ratio"):
        assert f"bench_robot.{key}" in m, key
    assert m["bench_robot.dof"] == 14 and m["bench_robot.plans_ok"] == 1 and m["bench_robot.violations"] == 0
    runs = json.loads((out / "bench_robot" / "runs.json").read_text())
    assert runs["runs"][0]["seed"] == 0 and "checked_pairs" in runs["collision_matrix"]


def test_a_robot_without_a_bench_goal_fails_naming_the_key(compose, tmp_path):
    out = tmp_path / "run"
    record = run_config(compose(["pipeline=bench_robot", "pipeline.stages.bench_robot.goal_poses=null"],
                                run_dir=out), out)
    status = json.loads((out / "status.json").read_text())
    assert not record.ok and "pipeline.stages.bench_robot.goal_poses=None" in status["error"]
