"""The benchmarks' settings: wrong keys, types and values name the full key and what is allowed."""

import pytest

from core.errors import ConfigError
from core.settings import from_config
from stages.arms.bench.planning import planner_lineup
from stages.arms.bench.settings import BenchExecuteSettings, BenchPlanSettings, BenchRobotSettings

PLAN = "pipeline.stages.bench_plan"
CROSSING = {"left": [0.45, -0.15, 0.90, 0, 1, 0, 0], "right": [0.65, 0.15, 1.10, 0, 1, 0, 0]}


def plan_settings(**over):
    data = {"goal_sets": {"crossing": {"poses": CROSSING}},
            "planners": {"choreograph": {"backend": "choreograph"}}, **over}
    return from_config(BenchPlanSettings, data, PLAN)


def test_goal_sets_take_their_own_seeds_or_the_stages():
    s = plan_settings(seeds=3, goal_sets={"crossing": {"poses": CROSSING, "seeds": 5},
                                          "one_arm": {"joints": {"left": [0] * 7}, "arms": ["left"]}})
    assert s.seeds_of("crossing") == 5 and s.seeds_of("one_arm") == 3
    assert s.goal_sets["one_arm"].arms == ("left",) and s.goal_sets["one_arm"].goals == {"left": (0.0,) * 7}
    assert s.goal_sets["crossing"].poses["left"][4] == 1.0


@pytest.mark.parametrize("over, named", [
    ({"goal_sets": {"crossing": {"poses": CROSSING, "wrong": 1}}},
     f"{PLAN}.goal_sets.crossing.wrong: not a goal set setting; allowed: ['poses', 'joints'"),
    ({"goal_sets": {"crossing": {"poses": CROSSING, "joints": {"left": [0] * 7}}}},
     f"{PLAN}.goal_sets.crossing.poses="),
    ({"goal_sets": {"crossing": {"seeds": 2}}}, "exactly one of poses or joints"),
    ({"goal_sets": {"crossing": {"poses": CROSSING, "seeds": 0}}}, f"{PLAN}.goal_sets.crossing.seeds=0"),
    ({"goal_sets": {}}, f"{PLAN}.goal_sets={{}}: allowed: a mapping of goal-set names"),
    ({"planners": {"ompl": {"backend": "ompl"}}}, f"{PLAN}.planners=['ompl']: allowed: a mapping of labels"),
    ({"seeds": "many"}, f"{PLAN}.seeds='many': expected an integer"),
    ({"checker_states": 5}, f"{PLAN}.checker_states=5: allowed: >= 10"),
    ({"runs": 3}, f"{PLAN}.runs: not a bench plan setting"),
])
def test_a_wrong_plan_setting_names_its_key(over, named):
    with pytest.raises(ConfigError) as info:
        plan_settings(**over)
    assert named in str(info.value)


def test_each_planner_is_its_keys_over_the_base_planner_and_the_time_budget():
    s = plan_settings(time_budget_s=3, planners={"choreograph": {"backend": "choreograph"},
                                                 "slow": {"max_step_rad": 0.1}})
    lineup = planner_lineup({"time_budget_s": 20.0, "seed": 7, "max_step_rad": 0.5}, s, PLAN)
    assert lineup.seed == 7 and lineup.ompl_missing is None
    assert lineup.configs["choreograph"] == {"time_budget_s": 3.0, "max_step_rad": 0.5,
                                             "backend": "choreograph", "name": "rrt_connect"}
    assert lineup.settings["slow"].max_step_rad == 0.1 and lineup.settings["slow"].time_budget_s == 3.0
    with pytest.raises(ConfigError, match=rf"{PLAN}\.planners\.choreograph\.backend='moveit'"):
        planner_lineup(None, plan_settings(planners={"choreograph": {"backend": "moveit"}}), PLAN)


@pytest.mark.parametrize("data, named", [
    ({"runs": 0}, "pipeline.stages.bench_execute.runs=0: allowed: >= 1"),
    ({"speed": 0}, "pipeline.stages.bench_execute.speed=0.0: allowed: > 0"),
    ({"send_latency_max_s": -1}, "pipeline.stages.bench_execute.send_latency_max_s=-1.0"),
    ({"cancel_window": [0.7, 0.3]},
     "pipeline.stages.bench_execute.cancel_window=[0.7, 0.3]: allowed: [lo, hi]"),
    ({"cancel_window": [0.3]}, "pipeline.stages.bench_execute.cancel_window: expected 2 values"),
    ({"run": 3}, "pipeline.stages.bench_execute.run: not a bench execute setting; allowed: ['runs'"),
])
def test_a_wrong_execute_setting_names_its_key(data, named):
    with pytest.raises(ConfigError) as info:
        from_config(BenchExecuteSettings, data, "pipeline.stages.bench_execute")
    assert named in str(info.value)


def test_the_robot_benchmark_needs_the_robots_goal():
    key = "pipeline.stages.bench_robot"
    assert from_config(BenchRobotSettings, {"goal_poses": CROSSING}, key).goal_poses["right"][2] == 1.1
    with pytest.raises(ConfigError, match=r"goal_poses=None: allowed: .*robot.extra.bench_goal_poses"):
        from_config(BenchRobotSettings, {"goal_poses": None}, key)
    with pytest.raises(ConfigError, match=r"bench_robot\.checker_states=5: allowed: >= 10"):
        from_config(BenchRobotSettings, {"goal_poses": CROSSING, "checker_states": 5}, key)
