"""The scene builder, its standalone XML, offscreen rendering, camera models, distances."""

from __future__ import annotations

import os

import numpy as np
import pytest
from omegaconf import OmegaConf

from core.errors import ConfigError
from hardware.geometry import collision_pairs, min_clearance, pair_distances
from hardware.models.scene import SCENE_CAMERA, build_scene, look_at_quat
from hardware.render import (
    OffscreenRenderer,
    RenderError,
    camera_intrinsics,
    camera_pose,
    project_points,
)
from hardware.resources import REPO_ROOT
from hardware.robot import RobotSpec

mujoco = pytest.importorskip("mujoco")

CONF = REPO_ROOT / "conf"


def robot_config() -> dict:
    return OmegaConf.to_container(OmegaConf.load(CONF / "robot" / "twin_panda.yaml"))


def scene_config() -> dict:
    return OmegaConf.to_container(OmegaConf.load(CONF / "scene" / "table.yaml"))


@pytest.fixture(scope="module")
def scene():
    return build_scene(robot_config(), scene_config())


@pytest.fixture(scope="module")
def renderer(scene):
    with OffscreenRenderer(scene.model) as r:
        yield r


def test_scene_has_table_cameras_and_a_big_enough_buffer(scene):
    m = scene.model
    assert scene.cameras[0] == SCENE_CAMERA and "overview" in scene.cameras
    cfg = scene_config()
    for name in scene.cameras:
        cid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_CAMERA, name)
        w, h = cfg["cameras"][name]["resolution"]
        assert tuple(m.cam_resolution[cid]) == (w, h)
        assert m.vis.global_.offwidth >= w and m.vis.global_.offheight >= h
        assert m.cam_fovy[cid] == pytest.approx(cfg["cameras"][name]["fovy_deg"])
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    top = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "table_top")
    assert d.geom_xpos[top][2] + m.geom_size[top][2] == pytest.approx(cfg["table"]["height"])
    x0 = d.geom_xpos[top][0] - m.geom_size[top][0]
    x1 = d.geom_xpos[top][0] + m.geom_size[top][0]
    assert (x0, x1) == pytest.approx((0.25, 0.85))
    # the scene camera looks at the table centre
    cid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_CAMERA, SCENE_CAMERA)
    uv = project_points(m, d, SCENE_CAMERA, [[0.55, 0.0, 0.75]])[0]
    w, h = m.cam_resolution[cid]
    np.testing.assert_allclose(uv, [(w - 1) / 2, (h - 1) / 2], atol=1.0)


def test_home_keyframe_matches_the_config(scene):
    m = scene.model
    spec = RobotSpec.from_config(robot_config(), m)
    key = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, "home")
    np.testing.assert_allclose(m.key_qpos[key], spec.home_qpos(m))


HELD = """<mujoco model="held"><compiler angle="radian"/><worldbody>
  <body name="link" pos="0 0 1"><joint name="j" range="-1 1"/><geom size="0.05"/><site name="tip"/>
    <body name="finger"><joint name="finger" type="slide" range="0.01 0.03"/><geom size="0.01"/></body>
    <body name="head"><joint name="head" range="-1 1"/><geom size="0.01"/></body></body>
</worldbody></mujoco>"""


def test_home_keyframe_holds_the_joints_outside_the_arms(tmp_path):
    """The home key has the held joints too: robot.fixed_joints, and the middle of the range where
    qpos0 is outside it (as RobotSpec.home_qpos has them)."""
    (tmp_path / "held.xml").write_text(HELD)
    rcfg = {"name": "held", "mjcf": str(tmp_path / "held.xml"),
            "arms": {"a": {"joints": ["j"], "ee_site": "tip"}},
            "home": {"a": [0.2]}, "fixed_joints": {"head": 0.5}}
    m = build_scene(rcfg, {"cameras": {SCENE_CAMERA: {"pos": [2, 0, 1.5], "lookat": [0, 0, 1]}}}).model
    key = m.key_qpos[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, "home")]
    adr = {n: m.jnt_qposadr[m.joint(n).id] for n in ("j", "finger", "head")}
    assert (key[adr["j"]], key[adr["finger"]], key[adr["head"]]) == pytest.approx((0.2, 0.02, 0.5))
    np.testing.assert_allclose(key, RobotSpec.from_config(rcfg, m).home_qpos(m))


def test_scene_xml_round_trips_from_any_folder(scene, tmp_path, monkeypatch):
    path = tmp_path / "run" / "scene.xml"
    path.parent.mkdir()
    path.write_text(scene.xml)
    monkeypatch.chdir(tmp_path)
    m2 = mujoco.MjModel.from_xml_path(str(path))
    m = scene.model
    assert (m2.nq, m2.nv, m2.nu, m2.ngeom, m2.nbody, m2.ncam, m2.nkey, m2.neq, m2.ntendon) == (
        m.nq, m.nv, m.nu, m.ngeom, m.nbody, m.ncam, m.nkey, m.neq, m.ntendon)
    np.testing.assert_allclose(m2.geom_size, m.geom_size)
    np.testing.assert_allclose(m2.body_pos, m.body_pos, atol=1e-9)
    np.testing.assert_allclose(m2.cam_quat, m.cam_quat, atol=1e-6)
    assert m2.vis.global_.offwidth == m.vis.global_.offwidth
    assert collision_pairs(m2).tolist() == collision_pairs(m).tolist()


def test_scene_xml_loads_for_a_robot_with_meshes_and_textures(tmp_path, monkeypatch):
    """A robot whose MJCF reads relative mesh and texture files: the written XML still loads."""
    import cv2

    robot_dir = tmp_path / "robot"
    (robot_dir / "assets").mkdir(parents=True)
    (robot_dir / "assets" / "cube.obj").write_text(
        "v -0.05 -0.05 -0.05\nv 0.05 -0.05 -0.05\nv 0.05 0.05 -0.05\nv -0.05 0.05 -0.05\n"
        "v -0.05 -0.05 0.05\nv 0.05 -0.05 0.05\nv 0.05 0.05 0.05\nv -0.05 0.05 0.05\n"
        "f 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\n"
        "f 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n")
    cv2.imwrite(str(robot_dir / "assets" / "skin.png"), np.full((8, 8, 3), 200, np.uint8))
    (robot_dir / "arm.xml").write_text("""
    <mujoco model="one_link"><compiler meshdir="assets" texturedir="assets"/>
      <asset><mesh name="cube" file="cube.obj"/><texture name="skin" type="2d" file="skin.png"/>
        <material name="skin" texture="skin"/></asset>
      <worldbody><body name="link" pos="0 0 1"><joint name="j" range="-1 1"/>
        <geom type="mesh" mesh="cube" material="skin"/><site name="tip" pos="0 0 0.1"/></body>
      </worldbody></mujoco>""")
    rcfg = {"name": "one_link", "mjcf": str(robot_dir / "arm.xml"),
            "arms": {"a": {"joints": ["j"], "ee_site": "tip"}},
            "home": {"a": [0.2]}}
    scfg = {"cameras": {SCENE_CAMERA: {"pos": [2, 0, 1.5], "lookat": [0, 0, 1]}}}
    scene = build_scene(rcfg, scfg)
    out = tmp_path / "elsewhere"
    out.mkdir()
    (out / "scene.xml").write_text(scene.xml)
    monkeypatch.chdir(out)
    m2 = mujoco.MjModel.from_xml_path(str(out / "scene.xml"))
    assert m2.nmesh == 1 and m2.ntex >= 1 and m2.nkey == 1
    assert m2.key_qpos[0][0] == pytest.approx(0.2)


def test_objects_by_kind_box_and_dotted_builder(tmp_path, monkeypatch):
    import cv2

    img = np.zeros((32, 32, 3), np.uint8)
    img[:, :16] = (0, 0, 255)
    cv2.imwrite(str(tmp_path / "board.png"), img)
    scfg = scene_config()
    scfg["objects"] = {
        "peg": {"kind": "box", "free": True, "mass": 0.1, "size": [0.02, 0.02, 0.05],
                "pos": [0.5, 0.0, 0.8]},
        "board": {"kind": "hardware.models.elements:add_box", "size": [0.1, 0.1, 0.002],
                  "pos": [0.6, 0.2, 0.752], "texture": "board.png"},
    }
    scene = build_scene(robot_config(), scfg, asset_dir=tmp_path)
    m = scene.model
    peg = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "peg")
    assert m.body_jntnum[peg] == 1 and m.body_mass[peg] == pytest.approx(0.1)
    assert mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_MATERIAL, "board_mat") >= 0
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "scene.xml").write_text(scene.xml)
    monkeypatch.chdir(tmp_path / "out")
    assert mujoco.MjModel.from_xml_path("scene.xml").nq == m.nq
    # the free peg is a checked body against the arms and the table
    pairs = collision_pairs(m)
    peg_geom = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "peg_geom")
    top = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "table_top")
    assert [min(peg_geom, top), max(peg_geom, top)] in pairs.tolist()


def test_contact_options_and_objects_left_out_by_null():
    cfg = scene_config()
    robot = robot_config()
    cfg["objects"] = {"peg": {"kind": "box", "free": True, "mass": 0.1, "size": [0.02, 0.02, 0.05],
                              "pos": [0.5, 0.0, 0.8]}, "gone": None}
    plain = build_scene(robot, cfg).model
    cfg["contact"] = {"cone": "pyramidal", "impratio": 3}
    model = build_scene(robot, cfg).model
    assert plain.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC and plain.opt.impratio == 10   # the file's own
    assert model.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL and model.opt.impratio == 3
    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "peg") >= 0
    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "gone") < 0


@pytest.mark.parametrize("change, word", [
    (lambda c: c["cameras"].pop(SCENE_CAMERA), "scene_camera"),
    (lambda c: c["cameras"]["overview"].update(fovy=40), "fovy_deg"),
    (lambda c: c["table"].update(hieght=0.7), "hieght"),
    (lambda c: c["cameras"]["overview"].update(resolution=[640]), "resolution"),
    (lambda c: c.update(objects={"x": {"kind": "os:system"}}), "kind"),
    (lambda c: c.update(objects={"x": {"kind": "hardware.models.scene:nope"}}), "nope"),
    (lambda c: c.update(objects={"x": {"kind": "box", "size": [0.1, 0.1, -1]}}), "size"),
    (lambda c: c.update(contact={"cone": "round"}), r"contact\.cone"),
    (lambda c: c.update(contact={"impratio": 0.5}), "impratio"),
    (lambda c: c.update(cell={"start_xy": [0.4]}), r"cell\.start_xy"),
])
def test_bad_scene_configs_are_config_errors(change, word):
    cfg = scene_config()
    change(cfg)
    with pytest.raises(ConfigError, match=word):
        build_scene(robot_config(), cfg)


def test_render_from_the_scene_camera_is_not_blank(scene, renderer):
    data = mujoco.MjData(scene.model)
    mujoco.mj_resetDataKeyframe(scene.model, data, 0)
    mujoco.mj_forward(scene.model, data)
    w, h = scene_config()["cameras"][SCENE_CAMERA]["resolution"]
    img = renderer.render(data, SCENE_CAMERA)
    assert img.shape == (h, w, 3) and img.dtype == np.uint8
    assert img.std() > 20
    assert len(np.unique(img.reshape(-1, 3)[::97], axis=0)) > 50
    assert os.environ["MUJOCO_GL"] in ("egl", "osmesa")
    with pytest.raises(RenderError, match="cameras: scene_camera"):
        renderer.render(data, "nope")


def test_pinhole_model_matches_the_render():
    """A bright sphere projects where camera_intrinsics + camera_pose say it does."""
    xml = """
    <mujoco><visual><global offwidth="320" offheight="240"/><headlight ambient="1 1 1"/></visual>
      <worldbody>
        <camera name="cam" pos="0.3 -0.2 1.0" quat="{q}" fovy="50" resolution="320 240"/>
        <geom name="ball" type="sphere" size="0.01" pos="{p}" rgba="1 0 0 1"/>
      </worldbody></mujoco>"""
    target = np.array([0.12, 0.05, 0.1])
    q = look_at_quat([0.3, -0.2, 1.0], [0.0, 0.0, 0.0])
    m = mujoco.MjModel.from_xml_string(xml.format(q=" ".join(map(str, q)),
                                                  p=" ".join(map(str, target))))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    K = camera_intrinsics(m, "cam")
    assert (K.width, K.height, K.cx, K.cy) == (320, 240, 159.5, 119.5)
    assert K.fx == pytest.approx(120 / np.tan(np.radians(25)))
    T = camera_pose(m, d, "cam")
    p_cam = np.linalg.inv(T) @ np.r_[target, 1.0]
    assert p_cam[2] > 0, "OpenCV frame: the point in front has z > 0"
    with OffscreenRenderer(m) as r:
        img = r.render(d, "cam").astype(int)
    red = (img[..., 0] > 150) & (img[..., 1] < 80) & (img[..., 2] < 80)
    assert red.sum() > 10
    vs, us = np.nonzero(red)
    uv = project_points(m, d, "cam", [target])[0]
    np.testing.assert_allclose([us.mean(), vs.mean()], uv, atol=1.0)
    samples = m.vis.quality.offsamples
    with OffscreenRenderer(m, preview=True) as r:    # the videos' quality: same picture, same place
        fast = r.render(d, "cam").astype(int)
    assert m.vis.quality.offsamples == samples, "the model's own quality is left as it was"
    red_fast = (fast[..., 0] > 150) & (fast[..., 1] < 80) & (fast[..., 2] < 80)
    assert red_fast.sum() > 10   # edges differ without multisampling (20 and 23 px seen), not the place
    vs, us = np.nonzero(red_fast)
    np.testing.assert_allclose([us.mean(), vs.mean()], uv, atol=1.0)


def test_distances_are_true_distances_whatever_the_margins():
    xml = """
    <mujoco><worldbody>
      <body name="a"><freejoint/><geom name="a" type="sphere" size="0.05" margin="{m}"/></body>
      <body name="b" pos="0.13 0 0"><geom name="b" type="capsule" size="0.02 0.1" margin="{m}"/>
      </body>
      <body name="c" pos="0 0.5 0"><geom name="c" type="box" size="0.1 0.1 0.1"
        contype="0" conaffinity="0"/></body>
    </worldbody></mujoco>"""
    for margin in (0.0, 0.005):
        m = mujoco.MjModel.from_xml_string(xml.format(m=margin))
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
        pairs = collision_pairs(m)
        assert pairs.tolist() == [[0, 1]], "the visual box is not a collision geom"
        np.testing.assert_allclose(pair_distances(m, d, pairs), [0.13 - 0.05 - 0.02], atol=1e-9)
        c = min_clearance(m, d)
        assert c.distance_m == pytest.approx(0.06) and {c.name1, c.name2} == {"a", "b"}
        d.qpos[0] = 0.1  # move the sphere into the capsule: negative = penetration
        mujoco.mj_forward(m, d)
        assert min_clearance(m, d).distance_m == pytest.approx(-0.04, abs=1e-6)


def test_the_gripper_holds_a_peg_by_friction_alone():
    """A 0.1 kg peg between the open fingers: close, let gravity act, swing the arm."""
    model0 = build_scene(robot_config(), scene_config()).model
    spec = RobotSpec.from_config(robot_config(), model0)
    arm = spec.arm("left")
    d0 = mujoco.MjData(model0)
    d0.qpos[:] = spec.home_qpos(model0)
    mujoco.mj_kinematics(model0, d0)
    R = d0.site_xmat[arm.ee_site_id].reshape(3, 3)
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, R.ravel())
    pos = d0.site_xpos[arm.ee_site_id] + 0.02 * R[:, 2]  # 2 cm deeper than the pad centres
    cfg = scene_config()
    cfg["objects"] = {"peg": {"kind": "box", "free": True, "mass": 0.1, "size": [0.02, 0.02, 0.05],
                              "pos": pos.tolist(), "quat": quat.tolist()}}
    m = build_scene(robot_config(), cfg).model
    spec = RobotSpec.from_config(robot_config(), m)
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    peg = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "peg")
    m.body_gravcomp[peg] = 1.0  # float while the fingers close
    for a in spec.arms:
        d.ctrl[list(a.joint_actuator_ids)] = a.home
        d.ctrl[a.gripper.actuator_ids[0]] = a.gripper.open
    d.ctrl[arm.gripper.actuator_ids[0]] = arm.gripper.closed
    for _ in range(150):
        mujoco.mj_step(m, d)
    m.body_gravcomp[peg] = 0.0  # from now on only friction holds it

    def rel():
        R = d.site_xmat[arm.ee_site_id].reshape(3, 3)
        return R.T @ (d.xpos[peg] - d.site_xpos[arm.ee_site_id])

    start = rel()
    home = np.array(arm.home)
    for i in range(750):  # 1.5 s: swing joints 1 and 4
        t = i * m.opt.timestep
        q = home.copy()
        q[0] += 0.4 * np.sin(2.0 * t)
        q[3] += 0.3 * np.sin(3.0 * t)
        d.ctrl[list(arm.joint_actuator_ids)] = q
        mujoco.mj_step(m, d)
    finger = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "left_finger1_joint")]
    assert d.qpos[finger] == pytest.approx(0.02, abs=1e-3), "the fingers rest on the peg"
    assert np.linalg.norm(rel() - start) < 0.003, "the peg did not slip"
