"""The parallel-jaw gripper description: derived from the robot file, measured on it, checked."""

from __future__ import annotations

import dataclasses

import mujoco
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ConfigError
from hardware.gripper import describe_gripper
from hardware.robot import ArmSpec, GripperSpec
from hardware.robot_settings import GripperSettings

GRIPPER = """
<mujoco>
  <option gravity="0 0 0" timestep="0.002"/>
  <worldbody>
    <body name="arm">
      <joint name="wrist" type="hinge" axis="0 0 1" range="-1 1"/>
      <geom type="box" size="0.02 0.05 0.01" contype="0" conaffinity="0" mass="1"/>
      <site name="grip" pos="0 0 -0.05"/>
      <body name="f1" pos="0 {gap} -0.05">
        <joint name="j1" type="slide" axis="0 1 0" range="0 0.1"/>
        <geom name="pad1" type="box" pos="0 {pad} 0" size="0.01 {pad} 0.02" mass="0.1"/>
      </body>
      {third}
      <body name="f2" pos="0 -{gap} -0.05">
        <joint name="j2" type="slide" axis="0 -1 0" range="0 0.1"/>
        <geom name="pad2" type="box" pos="0 -{pad} 0" size="0.01 {pad} 0.02" mass="0.1"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="wrist_act" joint="wrist" kp="100"/>
    <position name="a1" joint="j1" kp="200" kv="20"/>
    <position name="a2" joint="j2" kp="200" kv="20"/>
    {third_act}
  </actuator>
</mujoco>
"""
THIRD = ('<body name="f3" pos="0.04 0 -0.05"><joint name="j3" type="slide" axis="1 0 0" range="0 0.1"/>'
         '<geom name="pad3" type="box" size="0.005 0.005 0.005" mass="0.1"/></body>')


def model_and_arm(gap=0.005, pad=0.002, open_=0.04, third=False, **gripper):
    xml = GRIPPER.format(gap=gap, pad=pad, third=THIRD if third else "",
                         third_act='<position name="a3" joint="j3" kp="200" kv="20"/>' if third else "")
    model = mujoco.MjModel.from_xml_string(xml)
    acts = ("a1", "a2", "a3") if third else ("a1", "a2")
    cfg = GripperSettings(actuators=acts, open=open_, closed=0.0, **gripper)
    spec = GripperSpec(acts, tuple(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a) for a in acts),
                       open_, 0.0, cfg)
    arm = ArmSpec("left", ("wrist",), (0,), (0,), (0,), (-1.0,), (1.0,), (1.0,), (1.0,), "grip", 0, (0.0,),
                  (0,), spec)
    return model, arm


@settings(max_examples=15, deadline=None)
@given(gap=st.floats(0.002, 0.02), pad=st.floats(0.001, 0.005), open_=st.floats(0.01, 0.06))
def test_the_openings_measured_on_the_model_are_the_geometry(gap, pad, open_):
    model, arm = model_and_arm(gap, pad, open_)
    g = describe_gripper(model, arm, model.qpos0, "robot.arms.left.gripper")
    # each finger's pad faces the other at y = ±gap (its box spans gap..gap + 2 pad, outward)
    assert g.opening_closed_m == pytest.approx(2 * gap, abs=2e-4)
    assert g.opening_open_m == pytest.approx(2 * (gap + open_), abs=2e-4)
    assert g.finger_joints == ("j1", "j2") and [len(p) for p in g.pads] == [1, 1]
    # the pads (2 cm half-height about the site) reach 2 cm past it: a 4 cm object is taken only so
    # deep that the tips stay 8 mm off its support (grasp_depth_m, 2 cm, would put them on it)
    assert g.tip_past_site_m == pytest.approx(0.02, abs=1e-9)
    assert g.depth_for(0.04) == pytest.approx(0.012) and g.depth_for(0.2) == g.grasp_depth_m
    # a configured opening that matches is accepted; one that does not names the key and both values
    ok = dataclasses.replace(arm.gripper.settings, opening_m=(g.opening_closed_m, g.opening_open_m))
    describe_gripper(model, _with(arm, ok), model.qpos0, "k")
    bad = dataclasses.replace(ok, opening_m=(g.opening_closed_m, g.opening_open_m + 0.005))
    with pytest.raises(ConfigError, match=r"k\.opening_m: the open opening"):
        describe_gripper(model, _with(arm, bad), model.qpos0, "k")


def _with(arm, gripper_settings):
    return dataclasses.replace(arm, gripper=dataclasses.replace(arm.gripper, settings=gripper_settings))


def test_three_fingers_are_not_a_parallel_jaw_gripper():
    model, arm = model_and_arm(third=True)
    with pytest.raises(ConfigError, match="parallel-jaw gripper.*3 finger bodies"):
        describe_gripper(model, arm, model.qpos0, "robot.arms.left.gripper")


def test_no_gripper_section_and_a_wrong_finger_joint_name_the_key():
    model, arm = model_and_arm()
    with pytest.raises(ConfigError, match="arm 'left' has no gripper section"):
        describe_gripper(model, dataclasses.replace(arm, gripper=None), model.qpos0, "robot.arms.left")
    typo = dataclasses.replace(arm.gripper.settings, finger_joints=("j1", "j9"))
    with pytest.raises(ConfigError, match=r"gripper\.finger_joints: joint 'j9' is not in the robot file"):
        describe_gripper(model, _with(arm, typo), model.qpos0, "robot.arms.left.gripper")
    slanted = dataclasses.replace(arm.gripper.settings, closing_axis=(0.0, 1.0, 1.0))
    with pytest.raises(ConfigError, match="must be perpendicular"):
        describe_gripper(model, _with(arm, slanted), model.qpos0, "robot.arms.left.gripper")


def test_an_object_wider_than_the_open_gripper_does_not_fit():
    model, arm = model_and_arm(gap=0.005, open_=0.02)   # opens to 50 mm
    g = describe_gripper(model, arm, model.qpos0, "robot.arms.left.gripper")
    g.check_fits(0.035, "task.peg.size")
    with pytest.raises(ConfigError, match=r"task\.peg\.size: the object is 45\.0 mm wide.*opens to 50\.0 mm"):
        g.check_fits(0.045, "task.peg.size")
    with pytest.raises(ConfigError, match="closes only to 10.0 mm"):
        g.check_fits(0.008, "task.peg.size")
