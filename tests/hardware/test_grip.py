"""The form-fit grip of calib_cell: collision geometry only, checked config, the camera sees no change."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import ConfigError
from tests.arms.perception.test_peg_physics import _peg_world


def _geoms(model, body: str) -> list[int]:
    import mujoco

    bid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body)
    return [g for g in range(model.ngeom) if model.geom_bodyid[g] == bid]


def test_the_grip_is_collision_geometry_the_camera_does_not_see(tmp_path):
    import mujoco

    from stages.arms.perception.camera import SceneCamera

    plain, fitted = _peg_world(tmp_path / "a"), _peg_world(tmp_path / "b", form_fit=True)
    m = fitted.model
    box = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "peg_geom")
    assert m.geom_contype[box] == 0 and m.geom_conaffinity[box] == 0          # visual surface, mass
    grip = [g for g in _geoms(m, "peg") if m.geom_contype[g] and g != box]
    assert len(grip) > 20 and all(m.geom_group[g] == 3 for g in grip)

    def peg_mass(model):
        return model.body_mass[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "peg")]

    assert peg_mass(m) == pytest.approx(peg_mass(plain.model))                 # the same 0.1 kg
    for finger in ("left_finger1", "left_finger2", "right_finger1", "right_finger2"):
        studs = [g for g in _geoms(m, finger) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE]
        assert len(studs) == 4 and all(m.geom_group[g] == 3 for g in studs)
    images = []
    for w in (plain, fitted):
        d = mujoco.MjData(w.model)
        d.qpos[:] = w.home_qpos()
        mujoco.mj_forward(w.model, d)
        with SceneCamera(w.model) as cam:
            images.append(cam.render(d, clean=True).astype(int))
    assert np.abs(images[0] - images[1]).max() == 0


@pytest.mark.parametrize("change, message", [
    ({"rib_m": 0.006}, "rib_m < pitch_m"),
    ({"depth_m": 0.001}, "depth_m"),
    ({"body": "nothing"}, "no tagged peg"),
    ({"colour": 1}, r"scene\.objects\.grip_pockets\.colour: not a .*setting; allowed: \['body'"),
])
def test_bad_pocket_settings_fail_naming_the_key(tmp_path, change, message):
    with pytest.raises(ConfigError, match=message):
        _peg_world(tmp_path, form_fit=True, pockets=change)


GRIPPER = """
<mujoco><worldbody><body name="hand" pos="0 0 1">
  <body name="a" pos="0 0.03 0"><joint name="ja" type="slide" axis="0 1 0"/>
    <geom type="box" size="0.01 0.004 0.025" pos="0 0.004 0.025"/></body>
  <body name="b" pos="0 -0.03 0" quat="0 0 0 1"><joint name="jb" type="slide" axis="0 1 0"/>
    <geom type="box" size="0.01 0.004 0.025" pos="0 0.004 0.025"/></body>
</body></worldbody></mujoco>"""


def test_studs_go_on_each_measured_pad_facing_the_other_finger():
    """Two fingers whose frames face opposite ways (b turned 180° about z): each pad is found on the
    side toward the other finger, its studs protrude by ``protrusion_m`` and count back from the tip."""
    import mujoco

    from hardware.models.grip import add_pad_studs

    spec = mujoco.MjSpec.from_string(GRIPPER)
    add_pad_studs(spec, "pad_studs", {"fingers": ["a", "b"], "pad_y_m": None, "radius_m": 0.0025,
                                      "protrusion_m": 0.002, "xs_m": [-0.004, 0.004], "zs_m": [0.01]}, None)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    for finger in ("a", "b"):
        studs = [g for g in _geoms(model, finger) if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE]
        assert len(studs) == 2
        for g in studs:
            # the pad's face is y = 0 in both fingers' frames (the box spans 0..8 mm, facing -y)
            local = model.geom_pos[g]
            assert local[1] - 0.0025 == pytest.approx(-0.002)      # the stud's tip 2 mm past the face
            assert local[2] == pytest.approx(0.05 - 0.01)           # 10 mm back from the fingertip
        for g in studs:   # the faces are 30 mm either side of the hand: each stud's tip 2 mm inside
            assert abs(data.geom_xpos[g][1]) - 0.0025 == pytest.approx(0.028)


def test_studs_on_fingers_that_do_not_face_along_y_ask_for_a_placement():
    import mujoco

    from hardware.models.grip import add_pad_studs

    spec = mujoco.MjSpec.from_string(GRIPPER.replace('quat="0 0 0 1"', 'quat="0.7071068 0 0 0.7071068"'))
    with pytest.raises(ConfigError, match=r"pad_studs\.fingers: the pad of 'b' does not face"):
        add_pad_studs(spec, "pad_studs", {"fingers": ["a", "b"], "pad_y_m": None}, None)
    with pytest.raises(ConfigError, match=r"pairs of finger bodies"):
        add_pad_studs(spec, "pad_studs", {"fingers": ["a"], "pad_y_m": None}, None)


def test_coupled_fingers_move_as_one_and_a_wrong_joint_names_the_key():
    """A servo on one finger only: tied by the joint equality, the other finger follows it."""
    import mujoco

    from hardware.models.grip import couple_fingers

    spec = mujoco.MjSpec.from_string(GRIPPER.replace("</worldbody>", "</worldbody><actuator>"
                                                     '<position joint="ja" kp="200"/></actuator>'))
    couple_fingers(spec, "coupled", {"joints": [["ja", "jb"]]}, None)
    model = spec.compile()
    model.opt.gravity[:] = 0
    data = mujoco.MjData(model)
    data.ctrl[0] = 0.01
    for _ in range(2000):
        mujoco.mj_step(model, data)
    assert data.qpos[0] == pytest.approx(0.01, abs=1e-3)
    assert data.qpos[1] == pytest.approx(data.qpos[0], abs=1e-4)
    with pytest.raises(ConfigError, match=r"scene\.objects\.coupled\.joints: 'jc' is not a joint"):
        couple_fingers(mujoco.MjSpec.from_string(GRIPPER), "coupled", {"joints": [["ja", "jc"]]}, None)
    with pytest.raises(ConfigError, match=r"coupled\.joints"):
        couple_fingers(mujoco.MjSpec.from_string(GRIPPER), "coupled", {"joints": [["ja"]]}, None)
