"""The robot config as one settings tree: every shipped robot reads, YAML ints work, errors name the key."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from core.errors import ConfigError
from core.settings import schema
from hardware.arms.ros2 import Ros2Connection, Ros2Settings
from hardware.resources import REPO_ROOT
from hardware.robot_settings import ArmSettings, RobotSettings, robot_settings

ROBOTS = sorted((REPO_ROOT / "conf" / "robot").glob("*.yaml"))


def _arm(**extra) -> dict:
    return {"joints": ["a", "b"], "ee_site": "tip", **extra}


@pytest.mark.parametrize("path", ROBOTS, ids=[p.stem for p in ROBOTS])
def test_every_shipped_robot_reads_through_the_hydra_schema(path):
    merged = OmegaConf.merge(OmegaConf.structured(schema(RobotSettings)), OmegaConf.load(path))
    s = robot_settings(merged)
    assert s == robot_settings(OmegaConf.to_container(OmegaConf.load(path)))
    assert s.name == path.stem and s.arms and set(s.home) <= set(s.arms)
    assert (s.mjcf is None) != (s.build is None)


def test_yaml_ints_become_floats():
    s = robot_settings({"clearance_m": 0, "arms": {"arm": _arm(velocity_limits=[1, 2])},
                        "home": {"arm": [0, 1]}, "fixed_joints": {"c": 1}})
    assert s.home == {"arm": (0.0, 1.0)} and isinstance(s.home["arm"][0], float)
    assert s.arms["arm"].velocity_limits == (1.0, 2.0) and s.fixed_joints == {"c": 1.0}
    assert s.clearance_m == 0.0 and s.name == "robot" and s.collision_matrix.samples == 200
    merged = OmegaConf.merge(OmegaConf.structured(schema(RobotSettings)),
                             OmegaConf.create({"arms": {"arm": _arm()}, "home": {"arm": [0, 1]}}))
    assert robot_settings(merged).home == {"arm": (0.0, 1.0)}


@pytest.mark.parametrize("change, named", [
    ({"clearance_m": "abc"}, "robot.clearance_m='abc': expected a number"),
    ({"clearance_m": -1}, "robot.clearance_m=-1.0: allowed: a distance >= 0"),
    ({"arms": {}}, "robot.arms={}: allowed:"),
    ({"arms": {"arm": {"joints": ["a"]}}}, "robot.arms.arm.ee_site: required"),
    ({"arms": {"arm": _arm(jionts=1)}}, "robot.arms.arm.jionts: not an arm setting"),
    ({"arms": {"arm": _arm(joints=["a", "a"])}}, "listed twice: ['a']"),
    ({"arms": {"arm": _arm(velocity_limits=[1])}}, "robot.arms.arm.velocity_limits=[1.0]: allowed: 2 limits"),
    ({"arms": {"arm": _arm(acceleration_limits=[1, 0])}}, "robot.arms.arm.acceleration_limits"),
    ({"arms": {"arm": _arm(gripper={"actuators": []})}}, "robot.arms.arm.gripper.actuators=[]"),
    ({"arms": {"arm": _arm(), "other": _arm()}}, "is listed in both arms 'arm' and 'other'"),
    ({"home": {"arm": [0]}}, "robot.home.arm=[0.0]: allowed: 2 finite joint values"),
    ({"home": {"middle": [0, 0]}}, "robot.home.middle"),
    ({"collision_matrix": {"sample": 3}}, "robot.collision_matrix.sample: not a collision"),
    ({"extras": {}}, "robot.extras: not a robot setting; allowed: ['name', 'mjcf', 'build'"),
])
def test_a_wrong_key_type_or_value_names_the_full_key(change, named):
    cfg = {"name": "r", "mjcf": "r.xml", "arms": {"arm": _arm()}, **change}
    with pytest.raises(ConfigError) as info:
        robot_settings(cfg)
    assert named in str(info.value)


def test_settings_pass_through_and_are_frozen():
    s = robot_settings({"arms": {"arm": _arm()}})
    assert robot_settings(s) is s and isinstance(s.arms["arm"], ArmSettings)
    with pytest.raises(AttributeError):
        s.name = "x"


class _Robot:
    arm_names = ("left", "right")
    arms = ()


def test_ros2_settings_are_checked_before_ros_is_needed():
    conn = Ros2Connection(_Robot(), {"action_names": {"left": "/l"}, "server_timeout_s": 1})
    assert conn.settings == Ros2Settings(action_names={"left": "/l"}, server_timeout_s=1.0)
    assert conn.action_names == {"left": "/l", "right": "/right_arm_controller/follow_joint_trajectory"}
    with pytest.raises(ConfigError, match=r"hardware\.ros2\.node: not a ros2 setting; allowed: \['node_n"):
        Ros2Connection(_Robot(), {"node": "x"})
    with pytest.raises(ConfigError, match=r"hardware\.ros2\.action_names names arm\(s\) \['middle'\]"):
        Ros2Connection(_Robot(), {"action_names": {"middle": "/m"}})
