"""Robot assembly from MJCF parts (hardware.assembly): inline parts, then the pip robot packages."""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest

from core.errors import ConfigError
from hardware.assembly import assemble
from hardware.resources import resolve_resource

mujoco = pytest.importorskip("mujoco")

# a 2-link arm along +x: j1 limited (degrees in the file), j2 unlimited, a rotated tool site
ARM = """<mujoco model="arm">
  <compiler angle="degree"/>
  <size nuser_actuator="2"/>
  <worldbody>
    <body name="link1">
      <joint name="j1" type="hinge" axis="0 0 1" range="-90 90"/>
      <geom type="capsule" size="0.03" fromto="0 0 0 0.3 0 0"/>
      <body name="link2" pos="0.3 0 0">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <geom type="capsule" size="0.03" fromto="0 0 0 0.3 0 0"/>
        <site name="tool" pos="0.3 0 0" euler="0 90 0"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""

GRIPPER = """<mujoco model="gripper">
  <worldbody>
    <body name="palm">
      <geom type="box" size="0.02 0.04 0.01"/>
      <body name="left_finger" pos="0 0.02 0.03">
        <joint name="finger_l" type="slide" axis="0 1 0" range="0 0.03"/>
        <geom type="box" size="0.005 0.005 0.02"/>
      </body>
      <body name="right_finger" pos="0 -0.02 0.03">
        <joint name="finger_r" type="slide" axis="0 -1 0" range="0 0.03"/>
        <geom type="box" size="0.005 0.005 0.02"/>
      </body>
    </body>
  </worldbody>
  ACTUATORS
</mujoco>"""
GRIPPER_ACTUATORS = """<actuator>
    <position name="fl" joint="finger_l" kp="50" ctrlrange="0 0.03"/>
    <position name="fr" joint="finger_r" kp="50" ctrlrange="0 0.03"/>
  </actuator>"""

TETRA_OBJ = "v 0 0 0\nv 0.05 0 0\nv 0 0.05 0\nv 0 0 0.05\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"


def _write(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return str(p)


def _files(tmp_path) -> dict[str, str]:
    return {"arm": _write(tmp_path, "arm.xml", ARM),
            "gripper": _write(tmp_path, "gripper.xml", GRIPPER.replace("ACTUATORS", GRIPPER_ACTUATORS)),
            "bare_gripper": _write(tmp_path, "bare_gripper.xml", GRIPPER.replace("ACTUATORS", ""))}


def _compile(spec):
    """Compile and fail on any MuJoCo warning (e.g. 'Attach conflict')."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = spec.compile()
    assert not [str(w.message) for w in caught]
    return model


def _forward(model, qpos=None):
    data = mujoco.MjData(model)
    if qpos is not None:
        data.qpos[:] = qpos
    mujoco.mj_kinematics(model, data)
    return data


def _two_arms(f, **arm_extra):
    return {"base": {"box": {"size": [0.1, 0.2, 0.3], "pos": [0, 0, 1]}},
            "arms": {"left": {"file": f["arm"], "mount": {"pos": [0, 0.3, 0.2]}, **arm_extra},
                     "right": {"file": f["arm"], "mount": {"pos": [0, -0.3, 0.2], "euler_deg": [0, 0, 90]},
                               **arm_extra}}}


# ---------------------------------------------------------------------- inline parts
def test_two_copies_on_a_box_torso_are_prefixed_and_mounted(tmp_path):
    model = _compile(assemble(_two_arms(_files(tmp_path))))
    names = {model.joint(i).name for i in range(model.njnt)}
    assert names == {"left/j1", "left/j2", "right/j1", "right/j2"}
    box = model.geom("base_box")
    assert (box.contype[0], box.conaffinity[0]) == (1, 1)
    assert model.body(box.bodyid[0]).name == "base"
    data = _forward(model)
    base = np.array([0, 0, 1.0])
    np.testing.assert_allclose(data.site("left/tool").xpos, base + [0.6, 0.3, 0.2], atol=1e-9)
    np.testing.assert_allclose(data.site("right/tool").xpos, base + [0.0, 0.3, 0.2], atol=1e-9)  # Rz(90)
    assert model.nuser_actuator == 2  # carried over from the part's <size>


def test_a_base_part_and_arms_on_the_world(tmp_path):
    f = _files(tmp_path)
    base = _write(tmp_path, "base.xml", '<mujoco><worldbody><body name="torso" pos="0 0 0.8">'
                  '<geom type="box" size="0.1 0.1 0.1"/></body><body name="cart"><geom size="0.1"/></body>'
                  "</worldbody></mujoco>")
    arms = {"left": {"file": f["arm"], "mount": {"pos": [0, 0.2, 0]}}}
    with pytest.raises(ConfigError, match=r"robot\.build\.base: .*\['torso', 'cart'\].*root_body"):
        assemble({"base": {"file": base}, "arms": arms})
    model = _compile(assemble({"base": {"file": base, "root_body": "torso"}, "arms": arms}))
    assert model.body(model.body("left/link1").parentid[0]).name == "base/torso"
    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "base/cart") == -1
    np.testing.assert_allclose(_forward(model).site("left/tool").xpos, [0.6, 0.2, 0.8], atol=1e-9)
    model = _compile(assemble({"arms": arms}))  # no base: on the world body
    assert model.body("left/link1").parentid[0] == 0


def test_euler_deg_is_extrinsic_xyz_like_mujoco(tmp_path):
    f = _files(tmp_path)
    euler = [30.0, -50.0, 120.0]
    model = _compile(assemble({"arms": {"a": {"file": f["arm"], "mount": {"euler_deg": euler}}}}))
    ref = mujoco.MjModel.from_xml_string(
        '<mujoco><compiler angle="degree" eulerseq="XYZ"/><worldbody>'
        f'<body name="b" euler="{euler[0]} {euler[1]} {euler[2]}"><geom size="0.1"/></body>'
        "</worldbody></mujoco>")
    q, q_ref = _forward(model).body("a/link1").xquat, _forward(ref).body("b").xquat
    assert min(np.abs(q - q_ref).max(), np.abs(q + q_ref).max()) < 1e-9


def test_gripper_at_a_site_and_at_a_body(tmp_path):
    f = _files(tmp_path)
    build = {"arms": {"left": {"file": f["arm"], "gripper": {"file": f["gripper"], "site": "tool"}},
                      "right": {"file": f["arm"], "mount": {"pos": [0, -1, 0]},
                                "gripper": {"file": f["gripper"], "body": "link2",
                                            "mount": {"pos": [0.3, 0, 0.05], "quat": [0, 0, 0, 1]}}}}}
    model = _compile(assemble(build))
    assert {"left/hand/finger_l", "right/hand/finger_r"} <= {model.joint(i).name for i in range(model.njnt)}
    assert {model.actuator(i).name for i in range(model.nu)} == {"left/hand/fl", "left/hand/fr",
                                                                 "right/hand/fl", "right/hand/fr"}
    data = _forward(model, [0.4, -0.7, 0.01, 0.02, -0.3, 1.1, 0.0, 0.0])
    palm, tool = data.body("left/hand/palm"), data.site("left/tool")
    np.testing.assert_allclose(palm.xpos, tool.xpos, atol=1e-9)
    np.testing.assert_allclose(palm.xmat, tool.xmat, atol=1e-9)
    link2, rpalm = data.body("right/link2"), data.body("right/hand/palm")
    np.testing.assert_allclose(rpalm.xpos, link2.xpos + link2.xmat.reshape(3, 3) @ [0.3, 0, 0.05], atol=1e-9)


def test_gripper_site_mount_offset_is_in_the_site_frame(tmp_path):
    f = _files(tmp_path)
    build = {"arms": {"a": {"file": f["arm"], "gripper": {"file": f["gripper"], "site": "tool",
                                                          "mount": {"pos": [0, 0, 0.1]}}}}}
    data = _forward(_compile(assemble(build)))
    tool = data.site("a/tool")
    np.testing.assert_allclose(data.body("a/hand/palm").xpos,
                               tool.xpos + tool.xmat.reshape(3, 3) @ [0, 0, 0.1], atol=1e-9)


def test_a_gripper_without_actuators_needs_position_actuators(tmp_path):
    f = _files(tmp_path)
    arm = {"file": f["arm"], "gripper": {"file": f["bare_gripper"], "site": "tool"}}
    with pytest.raises(ConfigError, match=r"arms\.left\.gripper: a gripper file without actuators"):
        assemble({"arms": {"left": arm}})
    arm["position_actuators"] = {"joints": ["hand/finger_l", "hand/finger_r"], "kp": 40}
    model = _compile(assemble({"arms": {"left": arm}}))
    assert model.nu == 2 and model.actuator("left/hand/finger_l").gainprm[0] == 40


def test_position_actuators(tmp_path):
    f = _files(tmp_path)
    pa = {"joints": ["j1", "j2"], "kp": [100, 50], "kv": 3, "forcerange": [-10, 10]}
    model = _compile(assemble(_two_arms(f, position_actuators=pa)))
    assert model.nu == 4
    for arm in ("left", "right"):
        for jn, kp in (("j1", 100), ("j2", 50)):
            a = model.actuator(f"{arm}/{jn}")
            assert a.trntype[0] == mujoco.mjtTrn.mjTRN_JOINT
            assert model.joint(a.trnid[0]).name == f"{arm}/{jn}"
            assert a.gaintype[0] == mujoco.mjtGain.mjGAIN_FIXED
            assert a.biastype[0] == mujoco.mjtBias.mjBIAS_AFFINE
            np.testing.assert_allclose(a.gainprm[:1], [kp])
            np.testing.assert_allclose(a.biasprm[:3], [0, -kp, -3])
            np.testing.assert_allclose(a.forcerange, [-10, 10])
        np.testing.assert_allclose(model.actuator(f"{arm}/j1").ctrlrange, [-np.pi / 2, np.pi / 2])  # radians
        assert model.actuator_ctrllimited[model.actuator(f"{arm}/j2").id] == 0  # j2 has no range


def test_an_omegaconf_build_is_accepted(tmp_path):
    from omegaconf import OmegaConf

    pa = {"joints": ["j1", "j2"], "kp": [100, 50], "forcerange": [[-1, 1], [-2, 2]]}
    model = _compile(assemble(OmegaConf.create(_two_arms(_files(tmp_path), position_actuators=pa))))
    np.testing.assert_allclose(model.actuator("right/j2").forcerange, [-2, 2])


def test_position_actuator_errors(tmp_path):
    f = _files(tmp_path)
    key = r"robot\.build\.arms\.left\.position_actuators"
    with pytest.raises(ConfigError, match=key + r".*'elbow'.*joints: \['j1', 'j2'\]"):
        assemble(_two_arms(f, position_actuators={"joints": ["j1", "elbow"], "kp": 10}))
    with pytest.raises(ConfigError, match=key + r".*'j1' already has an actuator"):
        assemble(_two_arms(f, position_actuators={"joints": ["j1", "j1"], "kp": 10}))
    with pytest.raises(ConfigError, match=key + r"\.kp"):
        assemble(_two_arms(f, position_actuators={"joints": ["j1", "j2"], "kp": [10]}))
    arm = {"file": f["arm"], "gripper": {"file": f["gripper"], "site": "tool"},
           "position_actuators": {"joints": ["hand/finger_l"], "kp": 10}}
    with pytest.raises(ConfigError, match=r"'hand/finger_l' already has an actuator"):
        assemble({"arms": {"left": arm}})


def test_assembled_spec_with_meshes_saves_and_reloads_elsewhere(tmp_path):
    _write(tmp_path, "parts/meshes/tetra.obj", TETRA_OBJ)
    arm = _write(tmp_path, "parts/arm.xml", ARM.replace(
        '<size nuser_actuator="2"/>', '<compiler meshdir="meshes"/><asset><mesh file="tetra.obj"/></asset>')
        .replace('<site name="tool"', '<geom type="mesh" mesh="tetra"/><site name="tool"'))
    spec = assemble({"arms": {"left": {"file": arm}, "right": {"file": arm, "mount": {"pos": [0, 1, 0]}}}})
    assert _compile(spec).nmesh == 2
    out = _write(tmp_path, "elsewhere/robot.xml", spec.to_xml())
    assert mujoco.MjModel.from_xml_path(out).nmesh == 2


# ---------------------------------------------------------------------- errors
def test_part_errors_name_the_key(tmp_path):
    f = _files(tmp_path)
    key = r"robot\.build\.arms\.left"
    with pytest.raises(ConfigError, match=key + r"\.file: no file at .*nope\.xml"):
        assemble({"arms": {"left": {"file": str(tmp_path / "nope.xml")}}})
    bad = _write(tmp_path, "bad.xml", "<mujoco><worldbody><body name='a'></worldbody></mujoco>")
    with pytest.raises(ConfigError, match=key + r": .*bad\.xml does not load as MJCF"):
        assemble({"arms": {"left": {"file": bad}}})
    no_mesh = _write(tmp_path, "no_mesh.xml", '<mujoco><asset><mesh file="missing_part.stl"/></asset>'
                     '<worldbody><body><geom type="mesh" mesh="missing_part"/></body></worldbody></mujoco>')
    with pytest.raises(ConfigError, match=key + r": asset file .*missing_part\.stl does not resolve"):
        assemble({"arms": {"left": {"file": no_mesh}}})
    with pytest.raises(ConfigError, match=key + r"\.root_body='hand'.*\['link1', 'link2'\]"):
        assemble({"arms": {"left": {"file": f["arm"], "root_body": "hand"}}})
    with pytest.raises(ConfigError, match=key + r"\.mesh_dir: not a part setting; allowed: \['file', 'frag"):
        assemble({"arms": {"left": {"file": f["arm"], "mesh_dir": "x"}}})
    with pytest.raises(ConfigError, match=key + r"\.gripper\.site='wrist'.*sites: \['tool'\]"):
        assemble({"arms": {"left": {"file": f["arm"], "gripper": {"file": f["gripper"], "site": "wrist"}}}})
    with pytest.raises(ConfigError, match=r"robot\.build\.base\.cylinder: not a base setting; allowed: \["):
        assemble({"base": {"cylinder": {}}, "arms": {"left": {"file": f["arm"]}}})


def test_root_body_keeps_only_the_subtree(tmp_path):
    cart = '<body name="cart"><joint name="c"/><geom size="0.1"/></body>'
    two = _write(tmp_path, "two.xml", ARM.replace("<worldbody>", "<worldbody>" + cart))
    model = _compile(assemble({"arms": {"a": {"file": two, "root_body": "link1"}}}))  # a top-level body
    assert [model.joint(i).name for i in range(model.njnt)] == ["a/j1", "a/j2"]
    model = _compile(assemble({"arms": {"a": {"file": two, "root_body": "link2"}}}))  # a nested body
    assert [model.joint(i).name for i in range(model.njnt)] == ["a/j2"]
    assert [model.site(i).name for i in range(model.nsite)] == ["a/tool"]


def test_pkg_resolution_and_a_missing_package():
    with pytest.raises(ConfigError, match=r"arms\.a\.file: package 'no_such_pkg_xyz'.*pip install -e"):
        resolve_resource("pkg://no_such_pkg_xyz/a.xml", "robot.build.arms.a.file")
    if importlib.util.find_spec("dm_control") is None:
        pytest.skip("dm_control is not installed (pip install -e '.[robots]')")
    p = resolve_resource("pkg://dm_control/third_party/kinova/jaco_arm.xml", "k")
    assert p.is_file() and p.parts[-4:] == ("dm_control", "third_party", "kinova", "jaco_arm.xml")
    with pytest.raises(ConfigError, match=r"k: no file at /.*dm_control/third_party/kinova/nope\.xml"):
        resolve_resource("pkg://dm_control/third_party/kinova/nope.xml", "k")


# ---------------------------------------------------------------------- the robot packages
needs = {pkg: pytest.mark.skipif(importlib.util.find_spec(pkg) is None, reason=f"{pkg} is not installed")
         for pkg in ("dm_control", "gymnasium_robotics")}
KINOVA = "pkg://dm_control/third_party/kinova"
GR = "pkg://gymnasium_robotics/envs/assets"
FRANKA = f"{GR}/kitchen_franka/franka_assets"


@needs["dm_control"]
def test_two_jaco_arms_with_hands_on_a_torso():
    jaco = {"file": f"{KINOVA}/jaco_arm.xml",
            "gripper": {"file": f"{KINOVA}/jaco_hand.xml", "site": "wristsite"},
            "position_actuators": {"joints": [f"joint_{i}" for i in range(1, 7)]
                                   + [f"hand/finger_{i}" for i in range(1, 4)], "kp": 20, "kv": 1}}
    build = {"base": {"box": {"size": [0.1, 0.2, 0.3], "pos": [0, 0, 1]}},
             "arms": {"left": {**jaco, "mount": {"pos": [0, 0.25, 0.2], "euler_deg": [-90, 0, 0]}},
                      "right": {**jaco, "mount": {"pos": [0, -0.25, 0.2], "euler_deg": [90, 0, 0]}}}}
    model = _compile(assemble(build))
    assert (model.nbody, model.njnt, model.nu) == (30, 18, 18)
    # the hand sits where MuJoCo's own site attach puts it
    ref = mujoco.MjSpec.from_file(str(resolve_resource(f"{KINOVA}/jaco_arm.xml", "k")))
    hand = mujoco.MjSpec.from_file(str(resolve_resource(f"{KINOVA}/jaco_hand.xml", "k")))
    ref.attach(hand, prefix="hand/", site=ref.site("wristsite"))
    alone = _compile(assemble({"arms": {"a": jaco}}))
    q = np.random.default_rng(0).uniform(0.2, 1.2, alone.nq)
    a, r = _forward(alone, q), _forward(ref.compile(), q)
    for s in ("gripsite", "pinchsite"):
        np.testing.assert_allclose(a.site(f"a/hand/{s}").xpos, r.site(f"hand/{s}").xpos, atol=1e-12)


@needs["gymnasium_robotics"]
def test_two_kitchen_pandas_from_fragments():
    panda = {"fragments": {"assets": [f"{FRANKA}/assets.xml"], "actuators": [f"{FRANKA}/actuator.xml"],
                           "worldbody": [f"{FRANKA}/chain.xml"], "meshdir": f"{FRANKA}/meshes"}}
    build = {"base": {"box": {"size": [0.1, 0.2, 0.3], "pos": [0, 0, 1]}},
             "arms": {"left": {**panda, "mount": {"pos": [0, 0.25, 0.2], "euler_deg": [-90, 0, 0]}},
                      "right": {**panda, "mount": {"pos": [0, -0.25, 0.2], "euler_deg": [90, 0, 0]}}}}
    model = _compile(assemble(build))  # no 'Attach conflict' on nuser_actuator
    for arm in ("left", "right"):
        ids = [i for i in range(model.nu) if model.actuator(i).name.startswith(f"{arm}/")]
        assert len(ids) == 9
        assert all(model.actuator_biastype[i] == mujoco.mjtBias.mjBIAS_AFFINE for i in ids)
    np.testing.assert_allclose(model.jnt_range[model.joint("left/robot:panda0_joint4").id], [-3.0718, -0.4])


@needs["gymnasium_robotics"]
def test_fetch_from_fragments_without_its_mocap_weld():
    fetch = {"fragments": {"assets": [f"{GR}/fetch/shared.xml"], "worldbody": [f"{GR}/fetch/robot.xml"],
                           "meshdir": f"{GR}/stls/fetch", "texturedir": f"{GR}/textures"},
             "root_body": "robot0:base_link"}
    model = _compile(assemble({"arms": {"a": fetch, "b": {**fetch, "mount": {"pos": [0, 2, 0]}}}}))
    assert (model.neq, model.nmocap, model.njnt) == (0, 0, 30)
    assert model.body("a/robot0:base_link").parentid[0] == 0
    assert model.site("b/robot0:grip").id >= 0
