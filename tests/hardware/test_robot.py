"""The built-in twin_panda robot: kinematics, limits, home clearance, gripper, config checks."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

from core.errors import ConfigError
from hardware.geometry import collision_pairs, geom_name, min_clearance, pair_distances
from hardware.resources import REPO_ROOT, resolve_mjcf_path
from hardware.robot import DEFAULT_ACCELERATION_LIMIT, DEFAULT_VELOCITY_LIMIT, RobotSpec
from hardware.robot_file import load_robot

mujoco = pytest.importorskip("mujoco")

CONF = REPO_ROOT / "conf"
# Franka's published limits (datasheet / libfranka docs)
FRANKA_LOWER = [-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973]
FRANKA_UPPER = [2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973]
FRANKA_VEL = [2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61]
FRANKA_ACC = [15, 7.5, 10, 12.5, 15, 20, 20]
# Franka's modified DH table (a_{i-1}, d_i, alpha_{i-1}), then the flange (d = 0.107)
FRANKA_DH = [(0, 0.333, 0), (0, 0, -math.pi / 2), (0, 0.316, math.pi / 2),
             (0.0825, 0, math.pi / 2), (-0.0825, 0.384, -math.pi / 2), (0, 0, math.pi / 2),
             (0.088, 0, math.pi / 2)]


def robot_config() -> dict:
    return OmegaConf.to_container(OmegaConf.load(CONF / "robot" / "twin_panda.yaml"))


def scene_config() -> dict:
    return OmegaConf.to_container(OmegaConf.load(CONF / "scene" / "table.yaml"))


@pytest.fixture(scope="module")
def robot():
    return load_robot(robot_config())


@pytest.fixture(scope="module")
def scene():
    from hardware.models.scene import build_scene

    model = build_scene(robot_config(), scene_config()).model
    return model, RobotSpec.from_config(robot_config(), model)


def _dh(a, d, alpha, q):
    ca, sa, cq, sq = math.cos(alpha), math.sin(alpha), math.cos(q), math.sin(q)
    return np.array([[cq, -sq, 0, a], [sq * ca, cq * ca, -sa, -d * sa],
                     [sq * sa, cq * sa, ca, d * ca], [0, 0, 0, 1]])


def franka_flange(q) -> np.ndarray:
    T = np.eye(4)
    for (a, d, alpha), qi in zip(FRANKA_DH, q, strict=True):
        T = T @ _dh(a, d, alpha, qi)
    return T @ _dh(0, 0.107, 0, 0)


def test_every_joint_has_position_velocity_acceleration_limits(robot):
    model, spec = robot
    assert spec.arm_names == ("left", "right")
    assert len(spec.joint_names()) == 14
    for arm in spec.arms:
        assert arm.joints == tuple(f"{arm.name}_joint{i}" for i in range(1, 8))
        for jid in arm.joint_ids:
            assert model.jnt_limited[jid]
        np.testing.assert_allclose(arm.lower, FRANKA_LOWER)
        np.testing.assert_allclose(arm.upper, FRANKA_UPPER)
        np.testing.assert_allclose(arm.velocity_limits, FRANKA_VEL)
        np.testing.assert_allclose(arm.acceleration_limits, FRANKA_ACC)
        assert all(a >= 0 for a in arm.joint_actuator_ids), "every arm joint has an actuator"
        for a, lo, hi in zip(arm.joint_actuator_ids, arm.lower, arm.upper, strict=True):
            np.testing.assert_allclose(model.actuator_ctrlrange[a], [lo, hi])
        assert arm.gripper is not None and arm.gripper.actuators == (f"{arm.name}_fingers",)
    assert spec.clearance_m == 0.005


def test_forward_kinematics_match_franka_dh(robot):
    model, spec = robot
    data = mujoco.MjData(model)
    flange = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, "left_flange_site")
    base = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "left_link0")
    arm = spec.arm("left")
    mujoco.mj_kinematics(model, data)
    # q = 0: flange at (0.088, 0, 0.926) from the base, z pointing down
    np.testing.assert_allclose(data.site_xpos[flange] - data.xpos[base], [0.088, 0, 0.926],
                               atol=1e-9)
    np.testing.assert_allclose(data.site_xmat[flange].reshape(3, 3)[:, 2], [0, 0, -1], atol=1e-9)
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = rng.uniform(arm.lower, arm.upper)
        data.qpos[list(arm.qpos_indices)] = q
        mujoco.mj_kinematics(model, data)
        T = franka_flange(q)
        np.testing.assert_allclose(data.site_xpos[flange] - data.xpos[base], T[:3, 3], atol=1e-9)
        np.testing.assert_allclose(data.site_xmat[flange].reshape(3, 3), T[:3, :3], atol=1e-9)


def test_layout_shoulders_and_table(scene):
    model, spec = scene
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    left, right = (data.xpos[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, f"{a}_link0")]
                   for a in ("left", "right"))
    assert 0.4 <= np.linalg.norm(left - right) <= 0.5
    top = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "table_top")
    assert data.geom_xpos[top][0] > 0.2, "the table is in front (+x)"


def test_home_is_collision_free_at_clearance(scene):
    model, spec = scene
    data = mujoco.MjData(model)
    data.qpos[:] = spec.home_qpos(model)
    mujoco.mj_forward(model, data)
    pairs = collision_pairs(model)
    names = {(geom_name(model, a), geom_name(model, b)) for a, b in pairs}
    names |= {(b, a) for a, b in names}
    # the pairs cover arm-arm, arm-self (non-adjacent), arm-torso and arm-table
    for pair in [("left_hand_c0", "right_hand_c0"), ("left_link1_c0", "left_link3_c0"),
                 ("left_link7_c0", "torso_c0"), ("right_finger1_pad", "table_top")]:
        assert pair in names, pair
    closest = min_clearance(model, data, pairs)
    assert closest.distance_m >= spec.clearance_m, str(closest)
    assert np.all(pair_distances(model, data, pairs) >= spec.clearance_m)
    # cross-check with MuJoCo's own collision pipeline: with a margin of half the clearance on
    # every geom (margins add up), no checked pair comes closer than the clearance
    m2 = copy.deepcopy(model)
    m2.geom_margin[:] = spec.clearance_m / 2
    d2 = mujoco.MjData(m2)
    d2.qpos[:] = data.qpos
    mujoco.mj_forward(m2, d2)
    checked = {tuple(sorted(p)) for p in pairs.tolist()}
    close = [c for c in d2.contact[: d2.ncon] if tuple(sorted(c.geom.tolist())) in checked]
    assert not close, [(geom_name(model, c.geom[0]), geom_name(model, c.geom[1])) for c in close]
    # each home gripper is above the table, in front of its own shoulder, pointing down
    for arm in spec.arms:
        p = data.site_xpos[arm.ee_site_id]
        base = data.xpos[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, f"{arm.name}_link0")]
        assert 0.25 < p[0] < 0.85 and abs(p[1] - base[1]) < 0.05 and p[2] > 0.8
        assert data.site_xmat[arm.ee_site_id].reshape(3, 3)[2, 2] < -0.99


def test_excluded_pairs_follow_the_documented_rule(robot):
    model, _ = robot
    pairs = {(geom_name(model, a), geom_name(model, b)) for a, b in collision_pairs(model)}
    pairs |= {(b, a) for a, b in pairs}
    for adjacent in [("left_link0_c1", "left_link1_c0"), ("left_link3_c0", "left_link4_c0"),
                     ("left_link7_c0", "left_hand_c0"), ("left_hand_c0", "left_finger1_c0"),
                     ("left_link7_c0", "left_finger1_c0"), ("left_finger1_pad", "left_finger2_pad"),
                     ("left_link0_c0", "torso_c0")]:
        assert adjacent not in pairs, adjacent
    # visual geoms never take part
    visual = {g for g in range(model.ngeom)
              if model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 0}
    assert visual and not visual & {g for p in collision_pairs(model) for g in p}
    # at q = 0 the closed fingers touch (pads meet), which the rule allows
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    f1, f2 = (mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, f"left_finger{i}_pad")
              for i in (1, 2))
    assert mujoco.mj_geomDistance(model, data, f1, f2, 1.0, None) <= 1e-9


@pytest.mark.parametrize("opening", [0.0, 0.013, 0.04])
def test_ee_site_sits_between_the_fingertips(robot, opening):
    model, spec = robot
    data = mujoco.MjData(model)
    data.qpos[:] = spec.home_qpos(model)
    for arm in spec.arms:
        for f in (1, 2):
            j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, f"{arm.name}_finger{f}_joint")
            data.qpos[model.jnt_qposadr[j]] = opening
    mujoco.mj_kinematics(model, data)
    for arm in spec.arms:
        pads = [data.geom_xpos[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM,
                                                 f"{arm.name}_finger{f}_pad")] for f in (1, 2)]
        site = data.site_xpos[arm.ee_site_id]
        R = data.site_xmat[arm.ee_site_id].reshape(3, 3)
        assert np.linalg.norm(site - (pads[0] + pads[1]) / 2) < 0.002
        gap = pads[0] - pads[1]
        # the fingers close along the site's y axis; z (approach) is perpendicular to it
        assert abs(abs(gap @ R[:, 1]) - (2 * opening + 0.003)) < 1e-6
        assert abs(gap @ R[:, 2]) < 1e-9
        hand = data.xpos[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, f"{arm.name}_hand")]
        assert (site - hand) @ R[:, 2] > 0.09, "z points from the hand out through the fingertips"


def test_one_actuator_drives_both_fingers(robot):
    model, spec = robot
    data = mujoco.MjData(model)
    data.qpos[:] = spec.home_qpos(model)
    arm = spec.arm("left")
    data.ctrl[list(arm.joint_actuator_ids)] = arm.home
    data.ctrl[arm.gripper.actuator_ids[0]] = 0.025
    for _ in range(400):
        mujoco.mj_step(model, data)
    q = [data.qpos[model.jnt_qposadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT,
                                                       f"left_finger{f}_joint")]] for f in (1, 2)]
    np.testing.assert_allclose(q, [0.025, 0.025], atol=5e-4)
    # the arm held its home pose while the gripper moved
    np.testing.assert_allclose(data.qpos[list(arm.qpos_indices)], arm.home, atol=2e-3)


@pytest.mark.parametrize("where, bad, real", [
    (("arms", "left", "joints", 3), "left_joint_four", "left_joint4"),
    (("arms", "right", "ee_site"), "right_tcp", "right_grip_site"),
    (("arms", "left", "gripper", "actuators", 0), "left_gripper", "left_fingers"),
])
def test_a_wrong_name_is_a_config_error_listing_the_real_names(robot, where, bad, real):
    model, _ = robot
    cfg = robot_config()
    node = cfg
    for k in where[:-1]:
        node = node[k]
    node[where[-1]] = bad
    with pytest.raises(ConfigError) as e:
        RobotSpec.from_config(cfg, model)
    msg = str(e.value)
    assert bad in msg and real in msg, msg


def test_bad_values_are_config_errors(robot):
    model, _ = robot
    cases = []
    c = robot_config()
    c["home"]["left"][3] = 0.5  # q4 must be negative
    cases.append((c, "robot.home.left"))
    c = robot_config()
    c["arms"]["left"]["velocity_limits"] = [1.0] * 6
    cases.append((c, "velocity_limits"))
    c = robot_config()
    c["arms"]["left"]["acceleration_limits"][0] = -1
    cases.append((c, "acceleration_limits"))
    c = robot_config()
    c["clearance_m"] = "abc"
    cases.append((c, "clearance_m"))
    c = robot_config()
    c["arms"]["right"]["joints"] = c["arms"]["left"]["joints"]
    cases.append((c, "both arms"))
    c = robot_config()
    c["home"]["middle"] = [0.0] * 7
    cases.append((c, "middle"))
    c = robot_config()
    c["arms"]["left"]["gripper"]["open"] = 0.08
    cases.append((c, "ctrlrange"))
    for cfg, word in cases:
        with pytest.raises(ConfigError, match=word):
            RobotSpec.from_config(cfg, model)


def test_missing_limits_come_from_the_mjcf_or_documented_defaults(robot):
    model, _ = robot
    cfg = robot_config()
    for arm in cfg["arms"].values():
        del arm["velocity_limits"], arm["acceleration_limits"]
    spec = RobotSpec.from_config(cfg, model)  # twin_panda.xml carries them as <custom> numerics
    np.testing.assert_allclose(spec.velocity_limits(), FRANKA_VEL * 2)
    np.testing.assert_allclose(spec.acceleration_limits(), FRANKA_ACC * 2)

    bare = mujoco.MjModel.from_xml_string("""
    <mujoco><compiler angle="radian"/><worldbody><body><joint name="j1" range="-1 1"/><geom size="0.1"/>
      <body><joint name="j2"/><geom size="0.1"/><site name="tip"/></body></body>
    </worldbody></mujoco>""")
    spec = RobotSpec.from_config({"name": "bare", "arms": {"a": {"joints": ["j1", "j2"],
                                                                 "ee_site": "tip"}}}, bare)
    arm = spec.arm("a")
    assert arm.velocity_limits == (DEFAULT_VELOCITY_LIMIT,) * 2
    assert arm.acceleration_limits == (DEFAULT_ACCELERATION_LIMIT,) * 2
    assert arm.lower == (-1.0, -math.pi) and arm.upper == (1.0, math.pi)  # unlimited hinge
    assert arm.home == (0.0, 0.0) and arm.gripper is None and arm.joint_actuator_ids == (-1, -1)
    with pytest.raises(ConfigError, match="unknown arm 'b'.*a"):
        spec.arm("b")


def test_robot_spec_indices_and_home_qpos(robot):
    model, spec = robot
    q = spec.home_qpos(model)
    assert q.shape == (model.nq,)
    np.testing.assert_allclose(q[spec.qpos_indices()], spec.home())
    assert spec.qpos_indices(["right"]).tolist() == list(spec.arm("right").qpos_indices)
    for arm in spec.arms:
        for name, adr in zip(arm.joints, arm.qpos_indices, strict=True):
            assert model.jnt_qposadr[model.joint(name).id] == adr
    summary = spec.summary()
    assert summary["arms"]["left"]["ee_site"] == "left_grip_site"


def test_config_may_be_an_omegaconf_node(robot):
    model, _ = robot
    spec = RobotSpec.from_config(OmegaConf.create(robot_config()), model)
    assert spec.name == "twin_panda"


def test_resolve_mjcf_path(tmp_path):
    p = resolve_mjcf_path("hardware/models/twin_panda.xml")
    assert p == REPO_ROOT / "hardware" / "models" / "twin_panda.xml" and p.is_file()
    f = tmp_path / "r.xml"
    f.write_text("<mujoco/>")
    assert resolve_mjcf_path(str(f)) == f.resolve()
    with pytest.raises(ConfigError, match="no file"):
        resolve_mjcf_path("hardware/models/nope.xml")
    with pytest.raises(ConfigError, match="empty"):
        resolve_mjcf_path("")


def test_deep_copy_of_config_is_not_mutated(robot):
    model, _ = robot
    cfg = robot_config()
    before = copy.deepcopy(cfg)
    RobotSpec.from_config(cfg, model)
    assert cfg == before
    assert Path(RobotSpec.from_config(cfg, model).mjcf).is_file()
