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
