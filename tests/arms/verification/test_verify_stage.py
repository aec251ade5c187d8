import logging

import numpy as np
import pytest
from omegaconf import OmegaConf

from core.errors import VerificationError
from stages.adapters.arms.verify import Verify
from stages.api import StageContext
from stages.arms.planning.path import JointPath
from stages.arms.retiming.retime import retime_with_report
from stages.arms.world import build_world
from tests.conftest import CONF


@pytest.fixture(scope="module")
def world():
    return build_world(OmegaConf.to_container(OmegaConf.load(CONF / "robot/twin_panda.yaml")),
                       OmegaConf.to_container(OmegaConf.load(CONF / "scene/table.yaml")))


def ctx(tmp_path):
    return StageContext("verify", 0, tmp_path, logging.getLogger("test"))


def straight(world, goal):
    names = tuple(world.robot.joint_names())
    path = JointPath(names, np.stack([world.robot.home(), goal]))
    vel, acc = world.robot.velocity_limits(), world.robot.acceleration_limits()
    traj = retime_with_report(path, vel, acc).trajectory
    return path, traj


def test_colliding_trajectory_fails_naming_sample_time_and_pair(world, tmp_path):
    goal = world.robot.home()
    goal[0] -= 1.2   # left arm swings into the right arm
    goal[7] += 1.2
    path, traj = straight(world, goal)
    with pytest.raises(VerificationError, match=r"sample \d+ \(t=\d+\.\d+ s\): \S+ – \S+ at -?\d+\.\d+ mm"):
        Verify(max_repairs=1).run(ctx(tmp_path), world, traj, path)


def test_clean_trajectory_passes_every_sample(world, tmp_path):
    goal = world.robot.home()
    goal[0] += 0.4
    path, traj = straight(world, goal)
    result = Verify().run(ctx(tmp_path), world, traj, path)
    assert result.metrics["samples"] == traj.num_samples
    assert result.metrics["violations"] == 0 and result.metrics["repairs"] == 0
    assert result.metrics["min_clearance_m"] >= 0.005


def test_checks_without_raising_keep_the_last_reports_of_a_trajectory_no_repair_clears(world):
    from stages.arms.bench.samples import sample_clearance
    from stages.arms.verification.verify import check_and_repair

    goal = world.robot.home()
    goal[0] -= 1.2   # the colliding swing above: a tighter blend cannot clear a straight line
    goal[7] += 1.2
    path, traj = straight(world, goal)
    verified = check_and_repair(world, traj, path, max_repairs=2)
    assert not verified.ok and verified.repairs == 2 and verified.max_deviation_rad == 0.0
    assert verified.clearance.violations > 0
    # what the benchmarks record for a plan
    checked = sample_clearance(world, path.joint_names, path.waypoints, 125.0, 0.02)
    assert checked["violations"] > 0 and checked["min_clearance_m"] < 0.005
    assert checked["samples"] > 0 and checked["max_deviation_rad"] == 0.0
