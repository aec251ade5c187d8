"""Render-and-detect: every tag on every face of the peg (and a tag plate) is where the layout
says, with the right id and corner order (pins MuJoCo's box-UV texture orientation)."""

from __future__ import annotations

import numpy as np
import pytest

from core.tag_layouts import FACES, face_normal, layout_from_config, peg_layout
from stages.arms.perception.camera import SceneCamera
from stages.arms.perception.detection import TagDetector
from tests.arms.perception.scenes import PEG, build, pose, rot, set_free_pose


def _facing(face: str, spin_deg: float) -> np.ndarray:
    """A rotation turning the peg's ``face`` toward +z of the camera-facing frame, spun about it."""
    n = face_normal(face)
    a = np.cross(n, [0, 0, 1.0])
    if np.linalg.norm(a) < 1e-9:
        R = np.eye(3) if n[2] > 0 else rot("x", 180)
    else:
        ang = np.degrees(np.arccos(np.clip(n[2], -1, 1)))
        from scipy.spatial.transform import Rotation

        R = Rotation.from_rotvec(np.radians(ang) * a / np.linalg.norm(a)).as_matrix()
    return rot("z", spin_deg) @ R


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    # camera straight above, looking down at the origin
    return build(tmp_path_factory.mktemp("tags"), camera_pos=(0.0, -0.06, 0.42), lookat=(0, 0, 0),
                 table=False, plate_ids=None)


@pytest.mark.parametrize("face", FACES)
def test_every_tag_of_a_face_is_detected_where_the_layout_says(scene, face):
    model, data = scene
    layout = layout_from_config(PEG, "peg")
    R = rot("x", 12) @ _facing(face, spin_deg=23.0)   # not axis-aligned: corner order matters
    set_free_pose(model, data, "peg", pose(R, [0.0, 0.0, 0.0]))
    with SceneCamera(model, "cam") as cam:
        image = cam.render(data)
        cm = cam.model_at(data)
    det = TagDetector(layout.dictionary).detect(image)
    expected = [t.id for t in layout.tags if t.face == face]
    got = {int(i): c for i, c in zip(det.ids, det.corners, strict=True)}
    assert set(expected) <= set(got), f"face {face}: expected ids {expected}, detected {sorted(got)}"
    for tag_id in expected:
        corners_world = layout.tag(tag_id).corners() @ R.T
        uv = cm.project(corners_world)
        err = np.linalg.norm(got[tag_id] - uv, axis=1)
        assert err.max() < 0.6, f"tag {tag_id} on {face}: corner errors {err.round(2)} px"


def test_tag_plate_orientation(tmp_path):
    model, data = build(tmp_path, peg=False, table=False, plate_ids=[20, 21],
                        camera_pos=(0.05, 0.12, 0.45), lookat=(0.0, 0.12, 0.05))
    from core.tag_layouts import plate_layout

    layout = plate_layout({"ids": [20, 21], "grid": [1, 2], "size_m": 0.03}, "plate", 0.0003)
    with SceneCamera(model, "cam") as cam:
        image = cam.render(data)
        cm = cam.model_at(data)
    det = TagDetector(layout.dictionary).detect(image)
    got = {int(i): c for i, c in zip(det.ids, det.corners, strict=True)}
    assert sorted(got) == [20, 21]
    import mujoco

    bid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "plate")
    T = pose(data.xmat[bid].reshape(3, 3), data.xpos[bid])
    for tag in layout.tags:
        uv = cm.project(tag.corners() @ T[:3, :3].T + T[:3, 3])
        assert np.linalg.norm(got[tag.id] - uv, axis=1).max() < 0.6


def test_layout_checks_sizes():
    from core.errors import ConfigError

    with pytest.raises(ConfigError, match="narrowest face"):
        peg_layout([0.03, 0.03, 0.14], {**PEG["tags"], "size_m": 0.03})
    with pytest.raises(ConfigError, match="exactly 10"):
        peg_layout([0.04, 0.04, 0.14], {**PEG["tags"], "ids": [1, 2, 3]})
    with pytest.raises(ConfigError, match=r"tags\.colour: not a .* setting; allowed: \['dictionary'"):
        peg_layout([0.04, 0.04, 0.14], {**PEG["tags"], "colour": 3})


def test_layout_is_consistent():
    lay = layout_from_config(PEG, "peg")
    assert len(lay.tags) == 10 and len({t.face for t in lay.tags}) == 6
    for t in lay.tags:
        c = t.corners()
        n = np.cross(c[1] - c[0], c[3] - c[0])   # right x (down) ... clockwise seen from outside
        assert np.dot(n, t.normal) < 0            # TL->TR x TL->BL points into the face
        assert np.allclose(np.abs(t.center) @ np.abs(t.normal),
                           np.asarray(lay.half_extents) @ np.abs(t.normal) + 0.0004)
    assert len(lay.box_edges()) == 12
    board = lay.aruco_board()
    assert len(board.getIds()) == 10
