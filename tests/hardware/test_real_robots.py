"""Real robot files by config alone: the shipped robots plan, and a lab's own file (ints in its YAML,
its own ``table`` body, fingers that overlap in the file) plans from the CLI."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
from omegaconf import OmegaConf

from core.errors import ConfigError
from stages.arms.planning.goals import make_group
from stages.arms.world import build_world
from tests.conftest import CONF, run_cli

# the robot files only (importing gymnasium_robotics would register its environments)
ROBOT_PACKAGES = ("dm_control", "gymnasium_robotics")
pytestmark = pytest.mark.skipif(not all(importlib.util.find_spec(p) for p in ROBOT_PACKAGES),
                                reason='the robot packages: pip install -e ".[robots]"')

REAL_ROBOTS = ("fetch", "twin_jaco", "twin_franka")


def _world(robot: str, scene: str = "table"):
    return build_world(OmegaConf.to_container(OmegaConf.load(CONF / f"robot/{robot}.yaml")),
                       OmegaConf.to_container(OmegaConf.load(CONF / f"scene/{scene}.yaml")))


@pytest.fixture(scope="module", params=REAL_ROBOTS)
def world(request):
    return _world(request.param)


def test_a_real_robot_is_clear_at_home_and_plans_a_joint_and_a_pose_goal(world):
    from stages.arms.world import home_proximity

    assert home_proximity(world).distance_m >= world.clearance_m
    group = make_group(world)
    rng = np.random.default_rng(0)
    start = world.robot.home()
    arm = world.robot.arms[0]
    goal = np.array(arm.home)
    goal[0] += 0.3                      # the first arm's first joint swings; the others hold still
    checker = group.exact_checker
    path = group.plan_to_joints({arm.name: goal.tolist()}, start, rng).path
    assert all(checker.is_valid(q) for q in path.waypoints)
    target = group.ee_pose(arm.name, start)
    target[1] += 0.05                   # a pose goal 5 cm to the side of where the gripper is
    path = group.plan_to_poses({arm.name: target.tolist()}, start, rng).path
    assert all(checker.is_valid(q) for q in path.waypoints)
    assert np.linalg.norm(group.ee_pose(arm.name, path.waypoints[-1])[:3] - target[:3]) < 1e-3


def test_real_grippers_are_described_from_their_files_or_refused_naming_why(world):
    from hardware.gripper import gripper_report

    report = gripper_report(world.model, world.robot, world.home_qpos())
    assert set(report) == {a.name for a in world.robot.arms}
    for g in report.values():
        if world.robot.name == "twin_jaco":   # three fingers: not a parallel-jaw gripper, said so
            assert not g["parallel_jaw"] and "3 finger bodies" in g["reason"]
            continue
        assert g["parallel_jaw"] and len(g["finger_joints"]) == 2 and all(g["pads"])
        # opens wide enough for the 40 mm peg with 5 mm to spare on each side, closes below it
        assert g["opening_open_m"] > 0.05 and g["opening_closed_m"] < 0.04


def test_the_collision_matrix_disables_the_unplanned_fingers_as_rigid():
    world = _world("twin_jaco")
    acm = world.collision_matrix.to_json(world.model)
    rigid = [(d["body1"], d["body2"]) for d in acm["disabled"] if d["reason"] == "rigid"]
    assert rigid and all("/hand/" in b1 and "/hand/" in b2 for b1, b2 in rigid)
    assert acm["counts"]["always"] == 0 and acm["checked_pairs"] > 0


LAB_ARM = """
<mujoco model="lab_arm">
  <compiler angle="radian"/>
  <worldbody>
    <body name="table" pos="0.6 0 0.3"><geom name="lab_table" type="box" size="0.2 0.2 0.02"/></body>
    <body name="base" pos="0 0 0.5">
      <geom name="base_geom" type="cylinder" size="0.05 0.05"/>
      <body name="link1" pos="0 0 0.05">
        <joint name="shoulder" type="hinge" axis="0 0 1" range="-3 3"/>
        <geom name="link1_geom" type="capsule" fromto="0 0 0 0 0 0.3" size="0.03"/>
        <body name="link2" pos="0 0 0.3">
          <joint name="elbow" type="hinge" axis="0 1 0" range="-2 2"/>
          <geom name="link2_geom" type="capsule" fromto="0 0 0 0.3 0 0" size="0.025"/>
          <site name="tool" pos="0.33 0 0"/>
          <body name="finger_a" pos="0.3 0.01 0">
            <joint name="finger_a_joint" type="slide" axis="0 1 0" range="0 0.04"/>
            <geom name="finger_a_geom" type="box" size="0.01 0.015 0.01" pos="0.02 0 0"/>
          </body>
          <body name="finger_b" pos="0.3 -0.01 0">
            <joint name="finger_b_joint" type="slide" axis="0 -1 0" range="0 0.04"/>
            <geom name="finger_b_geom" type="box" size="0.01 0.015 0.01" pos="0.02 0 0"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="shoulder" joint="shoulder" kp="50" kv="5"/>
    <position name="elbow" joint="elbow" kp="50" kv="5"/>
    <position name="fingers_a" joint="finger_a_joint" kp="20" ctrlrange="0 0.04"/>
    <position name="fingers_b" joint="finger_b_joint" kp="20" ctrlrange="0 0.04"/>
  </actuator>
</mujoco>
"""


def _lab_robot(tmp_path, **changes) -> str:
    """A lab's robot file and its YAML (ints where floats are meant); returns the --config-dir."""
    (tmp_path / "lab_arm.xml").write_text(LAB_ARM)
    cfg = {"name": "lab_arm", "mjcf": str(tmp_path / "lab_arm.xml"), "clearance_m": 0,
           "arms": {"arm": {"joints": ["shoulder", "elbow"], "ee_site": "tool",
                            "gripper": {"actuators": ["fingers_a", "fingers_b"], "open": 0, "closed": 0},
                            "velocity_limits": [1, 1], "acceleration_limits": [2, 2]}},
           "home": {"arm": [0, 1]}, **changes}
    conf = tmp_path / "conf" / "robot"
    conf.mkdir(parents=True)
    (conf / "lab_arm.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(cfg)))
    return str(tmp_path / "conf")


def test_a_labs_own_file_with_ints_a_table_body_and_overlapping_fingers_plans_from_the_cli(tmp_path):
    conf = _lab_robot(tmp_path)
    run = tmp_path / "run"
    proc = run_cli("pipeline=plan", "robot=lab_arm", f"hydra.searchpath=[file://{conf}]",
                   "robot.clearance_m=0.005", "goal.joints={arm: [1, 1]}",
                   "pipeline.stages.execute.video=false",
                   f"hydra.run.dir={run}")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    status = json.loads((run / "status.json").read_text())
    assert status["status"] == "ok"
    acm = json.loads((run / "scene" / "collision_matrix.json").read_text())
    reasons = {frozenset((d["geom1"], d["geom2"])): d["reason"] for d in acm["disabled"]}
    assert reasons[frozenset(("finger_a_geom", "finger_b_geom"))] == "rigid"   # they overlap in the file
    log = (run / "run.log").read_text()
    assert "the robot file's body table is renamed 'lab_arm/table'" in log
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["verify.violations"] == 0 and metrics["execute.colliding_states"] == 0


@pytest.mark.parametrize("change, key", [
    ({"mjcf": "/no/such/robot.xml"}, "robot.mjcf"),
    ({"mjcf": "pkg://no_such_package_xyz/robot.xml"}, "pip install"),
    ({"arms": {"arm": {"joints": ["elbow", "shoulder"], "ee_site": "tool"}}}, "not one kinematic chain"),
    ({"arms": {"arm": {"joints": ["shoulder", "elbow"], "ee_site": "nose"}}}, "robot.arms.arm.ee_site"),
    ({"allowed_pairs": [["finger_*", "no_such_geom"]]}, "robot.allowed_pairs[0]"),
    ({"fixed_joints": {"finger_a_joint": 0.5}}, "robot.fixed_joints.finger_a_joint"),
    ({"mjcf": "MESHED"}, "missing_link.stl"),
    ({"arms": {"arm": {"joints": ["shoulder", "elbow"], "ee_site": "tool"}}, "home": {"arm": [0, 9]}},
     "robot.home.arm"),
])
def test_a_bad_robot_file_or_config_fails_typed_naming_the_key(tmp_path, change, key):
    if change.get("mjcf") == "MESHED":   # a mesh file that does not resolve
        meshed = LAB_ARM.replace('<geom name="base_geom" type="cylinder" size="0.05 0.05"/>',
                                 '<geom name="base_geom" type="mesh" mesh="link"/>')
        meshed = meshed.replace("<worldbody>", '<asset><mesh name="link" file="missing_link.stl"/></asset>'
                                "<worldbody>")
        (tmp_path / "meshed.xml").write_text(meshed)
        change = {"mjcf": str(tmp_path / "meshed.xml")}
    conf = _lab_robot(tmp_path, **change)
    run = tmp_path / "run"
    proc = run_cli("pipeline=scene", "robot=lab_arm", f"hydra.searchpath=[file://{conf}]",
                   f"hydra.run.dir={run}")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    status = json.loads((run / "status.json").read_text())
    assert status["status"] == "failed" and status["error"].startswith("ConfigError")
    assert key in status["error"]


def test_the_robot_packages_leave_opencv_contrib_and_its_aruco_api_in_place():
    import importlib.metadata as md

    import cv2

    installed = {d.metadata["Name"].lower() for d in md.distributions()}
    assert "opencv-contrib-python-headless" in installed
    assert not installed & {"opencv-python", "opencv-python-headless", "opencv-contrib-python"}
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    board = cv2.aruco.CharucoBoard((5, 4), 0.04, 0.03, dictionary)
    image = board.generateImage((500, 400), marginSize=10)
    corners, ids, _, _ = cv2.aruco.CharucoDetector(board).detectBoard(image)
    assert ids is not None and len(ids) == 12   # every inner corner of a 5 x 4 board
    assert hasattr(cv2, "calibrateHandEye")


def test_a_robot_is_one_file_or_parts_not_both():
    with pytest.raises(ConfigError, match="exactly one"):
        build_world({"name": "x", "mjcf": "a.xml", "build": {"arms": {}},
                     "arms": {"a": {"joints": ["j"], "ee_site": "s"}}}, {})
