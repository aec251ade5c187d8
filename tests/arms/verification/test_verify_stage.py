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
