import mujoco
import numpy as np
import pytest

from core.errors import ConfigError, PlanningError
from stages.arms.planning.group import ArmGroup, ArmLimits
from stages.arms.planning.settings import PlannerSettings
from tests.arms.planning.two_link_arms import two_arm_xml


@pytest.fixture(scope="module")
def model():
    return mujoco.MjModel.from_xml_string(two_arm_xml(0.9))


def arm(name):
    lim = np.array([2.8, 2.8])
    return ArmLimits((f"{name}_j1", f"{name}_j2"), f"{name}_tip", -lim, lim)


def group(model, names=("left", "right"), **kw):
    return ArmGroup(model, {n: arm(n) for n in names}, 0.005, PlannerSettings(time_budget_s=10, **kw))


def dense_check(g, path, factor=4):
    """Re-check the path at `factor`× the planner's edge resolution, at the true clearance."""
    for a, b in zip(path[:-1], path[1:], strict=True):
        n = g.edges.steps(a, b) * factor
        for i in range(n + 1):
            assert g.exact_checker.is_valid(a + (b - a) * i / n)


def test_arms_trade_places_without_touching(model):
    g = group(model)
    start = np.array([1.2, 0.3, -1.2, -0.3])   # both arms up, on their own side
    goal = {"left": [-1.2, -0.3], "right": [1.2, 0.3]}   # both arms down: straight motion collides
    q_goal = np.array([-1.2, -0.3, 1.2, 0.3])
    assert sum(not g.checker.is_valid(start + (q_goal - start) * t) for t in np.linspace(0, 1, 50)) > 10
    res = g.plan_to_joints(goal, start, np.random.default_rng(0))
    wp = res.path.waypoints
    assert np.allclose(wp[0], start) and np.allclose(wp[-1], q_goal)
    dense_check(g, wp)
    assert res.checks > 0 and res.length_rad > 0


def test_same_seed_same_path(model):
    start = np.array([1.2, 0.3, -1.2, -0.3])
    goal = {"left": [-1.2, -0.3], "right": [1.2, 0.3]}
    p1 = group(model).plan_to_joints(goal, start, np.random.default_rng(3)).path.waypoints
    p2 = group(model).plan_to_joints(goal, start, np.random.default_rng(3)).path.waypoints
    assert np.array_equal(p1, p2)


def test_unnamed_arm_holds_still(model):
    g = group(model)
    start = np.array([1.2, 0.3, -1.2, -0.3])
    res = g.plan_to_joints({"left": [1.5, 0.5]}, start, np.random.default_rng(0))
    assert np.allclose(res.path.waypoints[:, 2:], start[2:])


def test_single_arm_group_plans(model):
    base = model.qpos0.copy()
    base[2] = -1.57   # the right arm (not in the group) points away
    g = ArmGroup(model, {"left": arm("left")}, 0.005, PlannerSettings(time_budget_s=10), base_qpos=base)
    res = g.plan_to_joints({"left": [-1.0, 0.5]}, np.array([1.0, -0.5]), np.random.default_rng(0))
    assert res.path.joint_names == ("left_j1", "left_j2")
    dense_check(g, res.path.waypoints)


@pytest.mark.parametrize("goal, reason", [
    ({"left": [0.0, 0.0], "right": [0.0, 0.0]}, "goal_in_collision"),
    ({"left": [3.5, 0.0]}, "invalid_goal"),
    ({"middle": [0.0, 0.0]}, "invalid_goal"),
    ({"left": [float("nan"), 0.0]}, "invalid_goal"),
])
def test_bad_goals_give_typed_reasons(model, goal, reason):
    with pytest.raises(PlanningError) as err:
        group(model).plan_to_joints(goal, np.array([1.2, 0.3, -1.2, -0.3]), np.random.default_rng(0))
    assert err.value.reason == reason


def test_start_touching_is_refused_but_start_within_clearance_escapes(model):
    g = group(model)
    touching = np.zeros(4)   # straight arms overlap in the middle
    with pytest.raises(PlanningError) as err:
        g.plan_to_joints({"left": [1.0, 0.0]}, touching, np.random.default_rng(0))
    assert err.value.reason == "start_in_collision" and "touches" in str(err.value)
    # left arm straight, right arm bent so that the two tips are ~3 mm apart
    reach = 0.4 + 0.35 + 0.035   # straight arm: tip cap
    m = mujoco.MjModel.from_xml_string(two_arm_xml(2 * reach + 0.003))
    g2 = ArmGroup(m, {"left": arm("left"), "right": arm("right")}, 0.005, PlannerSettings())
    q = np.array([0.0, 0.0, 0.0, 0.0])
    prox = g2.exact_checker.proximity(q)
    assert 0 < prox.distance_m < 0.005
    res = g2.plan_to_joints({"left": [0.8, 0.3]}, q, np.random.default_rng(0))
    assert "escape" in " ".join(res.notes)


def test_zero_time_budget_is_refused_naming_the_key():
    from stages.arms.planning.goals import planner_settings

    with pytest.raises(ConfigError, match="time_budget_s"):
        PlannerSettings(time_budget_s=0)
    with pytest.raises(ConfigError, match=r"planner\.time_budget_s=0\.0: allowed: > 0"):
        planner_settings({"time_budget_s": 0})
