"""IK: distinct solutions that reach the pose; restarts that stop closing in are given up early."""

import numpy as np
import pytest

from core.errors import PlanningError
from stages.arms.planning.ik import ArmIK
from tests.arms.planning.test_fast_checks import world  # noqa: F401 - the fixture

CROSSING_LEFT = [0.45, -0.15, 0.90, 0.0, 1.0, 0.0, 0.0]


def _ik(world):  # noqa: F811
    arm = world.robot.arm("left")
    return ArmIK(world.model, arm.joints, arm.ee_site, arm.lower, arm.upper, world.home_qpos())


def _counting(ik):
    calls = []
    inner = ik._set
    ik._set = lambda q: calls.append(1) or inner(q)
    return calls


def test_solutions_reach_the_pose_and_are_distinct(world):  # noqa: F811
    ik = _ik(world)
    sols = ik.solve(CROSSING_LEFT, world.robot.arm("left").home, np.random.default_rng(0), max_solutions=4)
    assert len(sols) >= 2
    for s in sols:
        pose = ik.forward(s.q)
        assert np.linalg.norm(pose[:3] - CROSSING_LEFT[:3]) < 1e-4
        assert abs(abs(float(np.dot(pose[3:], CROSSING_LEFT[3:]))) - 1.0) < 1e-6
    for a in range(len(sols)):
        for b in range(a):
            assert np.linalg.norm(sols[a].q - sols[b].q) >= 0.2


def test_an_unreachable_pose_gives_up_each_restart_once_it_stalls(world):  # noqa: F811
    ik = _ik(world)
    calls = _counting(ik)
    with pytest.raises(PlanningError) as err:
        ik.solve([2.5, 0.0, 0.9, 0.0, 1.0, 0.0, 0.0], world.robot.arm("left").home, np.random.default_rng(1),
                 restarts=20)
    assert err.value.reason == "unreachable"
    # 21 starts of at most 150 iterations each: a stalled start stops after a few windows of 10
    assert len(calls) < 21 * 150 / 3, len(calls)
