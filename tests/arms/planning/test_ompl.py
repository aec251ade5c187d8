"""The OMPL back-end: same goals, same checks, our smoothing; a clear error without OMPL."""

import builtins
import sys

import numpy as np
import pytest
from omegaconf import OmegaConf

from core.errors import ConfigError
from stages.arms.planning.goals import make_group, planner_settings, start_configuration
from stages.arms.planning.settings import PlannerSettings
from tests.conftest import CONF

try:
    import ompl  # noqa: F401

    HAVE_OMPL = True
except ImportError:
    HAVE_OMPL = False
needs_ompl = pytest.mark.skipif(
    not HAVE_OMPL, reason='OMPL is not installed: pip install "choreograph[ompl]" (or pip install ompl) '
                          "to run the OMPL back-end tests")


@pytest.fixture(scope="module")
def world():
    from stages.arms.world import build_world

    return build_world(OmegaConf.to_container(OmegaConf.load(CONF / "robot/twin_panda.yaml")),
                       OmegaConf.to_container(OmegaConf.load(CONF / "scene/table.yaml")))


def crossing_goals():
    return OmegaConf.to_container(OmegaConf.load(CONF / "pipeline/crossing.yaml"))["params"]["goal_poses"]


def dense_check(group, path, factor=4):
    """Every state at `factor`x the planner's edge resolution is at the true clearance."""
    for a, b in zip(path[:-1], path[1:], strict=True):
        n = group.edges.steps(a, b) * factor
        for i in range(n + 1):
            q = a + (b - a) * i / n
            assert group.exact_checker.is_valid(q), group.exact_checker.proximity(q)


@needs_ompl
def test_ompl_plans_the_crossing_at_clearance(world):
    group = make_group(world, None, PlannerSettings(backend="ompl", name="RRTConnect", time_budget_s=20))
    start = start_configuration(group, world, None)
    result = group.plan_to_poses(crossing_goals(), start, np.random.default_rng(0))
    wp = result.path.waypoints
    assert np.allclose(wp[0], start)
    for arm, pose in crossing_goals().items():
        reached = group.ee_pose(arm, wp[-1])
        assert np.linalg.norm(reached[:3] - np.array(pose[:3])) < 1e-3
    assert any("ompl RRTConnect" in n for n in result.notes)
    assert result.checks > 0
    dense_check(group, wp)


@needs_ompl
def test_ompl_same_seed_same_path(world):
    group = make_group(world, None, PlannerSettings(backend="ompl", name="RRTConnect"))
    start = start_configuration(group, world, None)
    goal = {"left": [0.3, 0.1, 0.0, -2.3, 0.0, 2.4, 0.7854]}
    paths = [group.plan_to_joints(goal, start, np.random.default_rng(5)).path.waypoints for _ in range(2)]
    assert np.array_equal(paths[0], paths[1])


@needs_ompl
@pytest.mark.parametrize("name", ["RRTstar", "PRM", "BITstar"])
def test_other_ompl_planners_by_name(world, name):
    group = make_group(world, ["left"], PlannerSettings(backend="ompl", name=name, time_budget_s=10))
    start = start_configuration(group, world, None)
    result = group.plan_to_poses({"left": [0.55, 0.15, 0.95, 0.0, 1.0, 0.0, 0.0]}, start,
                                 np.random.default_rng(1))
    dense_check(group, result.path.waypoints, factor=2)


@needs_ompl
def test_unknown_ompl_planner_names_the_allowed_ones():
    with pytest.raises(ConfigError, match="RRTConnect"):
        planner_settings({"backend": "ompl", "name": "RRTWhatever"})


def test_unknown_backend_is_a_config_error():
    with pytest.raises(ConfigError, match="allowed"):
        planner_settings({"backend": "moveit"})
    with pytest.raises(ConfigError, match="rrt_connect"):
        planner_settings({"backend": "choreograph", "name": "RRTConnect"})


def test_missing_ompl_says_which_pip_install_fixes_it(monkeypatch):
    real_import = builtins.__import__

    def no_ompl(name, *args, **kwargs):
        if name == "ompl" or name.startswith("ompl."):
            raise ImportError("No module named 'ompl'")
        return real_import(name, *args, **kwargs)

    for mod in [m for m in sys.modules if m == "ompl" or m.startswith("ompl.")]:
        monkeypatch.delitem(sys.modules, mod)
    monkeypatch.setattr(builtins, "__import__", no_ompl)
    with pytest.raises(ConfigError) as err:
        planner_settings({"backend": "ompl", "name": "RRTConnect"})
    assert 'pip install "choreograph[ompl]"' in str(err.value)


def test_planner_ompl_config_composes(compose):
    cfg = compose(["pipeline=crossing", "planner=ompl"])
    assert cfg.planner.backend == "ompl" and cfg.planner.name == "RRTConnect"
    assert cfg.planner.time_budget_s == OmegaConf.load(CONF / "planner/rrt_connect.yaml").time_budget_s
