"""The peg's pose from rendered images: accuracy with noise, missing tags, foreign tags,
single-tag ambiguity, and the ECC corner refinement."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import PerceptionError
from core.se3 import rotation_angle_deg
from core.tag_layouts import layout_from_config
from stages.arms.perception.camera import CameraModel, ImageEffects, SceneCamera
from stages.arms.perception.detection import TagDetections, TagDetector
from stages.arms.perception.peg_pose import draw_overlay, estimate_pose, resting_prior
from tests.arms.perception.scenes import PEG, TABLE_Z, build, pose, rot, set_free_pose

LAYOUT = layout_from_config(PEG, "peg")


def resting_pose(face_down_axis: str, yaw_deg: float, x: float, y: float) -> np.ndarray:
    """The peg lying on the table (z = 0) on a long face, turned by yaw."""
    R0 = {"x": rot("y", 90), "y": rot("x", 90)}[face_down_axis]
    half = 0.02
    return pose(rot("z", yaw_deg) @ R0, [x, y, TABLE_Z + half])


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    # like the scene camera: 45 deg down, tags ~30 px across (640x480 at half the distance)
    return build(tmp_path_factory.mktemp("pose"), camera_pos=(0.38, 0.0, 0.38), lookat=(0, 0, 0),
                 plate_ids=[30])


@pytest.mark.parametrize("k", range(6))
def test_pose_error_on_noisy_renders(scene, k):
    model, data = scene
    rng = np.random.default_rng(k)
    T = resting_pose("xy"[k % 2], rng.uniform(-80, 80), rng.uniform(-0.05, 0.05),
                     rng.uniform(-0.06, 0.06))
    set_free_pose(model, data, "peg", T)
    with SceneCamera(model, "cam", ImageEffects(noise_std=3.0, blur_sigma_px=0.4)) as cam:
        image = cam.render(data, rng)
        cm = cam.model_at(data)
    est = estimate_pose(TagDetector(LAYOUT.dictionary).detect(image), LAYOUT, cm,
                        resting_prior(LAYOUT, TABLE_Z))
    pos_err = np.linalg.norm(est.T_world_obj[:3, 3] - T[:3, 3])
    rot_err = rotation_angle_deg(est.T_world_obj[:3, :3], T[:3, :3])
    assert len(est.tag_ids) >= 2
    assert pos_err < 0.003, f"{pos_err * 1000:.2f} mm with tags {est.tag_ids}"
    assert rot_err < 1.0, f"{rot_err:.2f} deg"
    assert est.reprojection_px < 0.5
    assert 0 < est.confidence <= 1
    overlay = draw_overlay(image, LAYOUT, cm, est, truth_T_world_obj=T)
    assert overlay.shape == image.shape and not np.array_equal(overlay, image)


def test_no_tags_is_peg_not_found(scene):
    model, data = scene
    set_free_pose(model, data, "peg", pose(np.eye(3), [5.0, 5.0, 0.02]))  # far out of view
    with SceneCamera(model, "cam") as cam:
        image = cam.render(data)
        cm = cam.model_at(data)
    det = TagDetector(LAYOUT.dictionary).detect(image)
    assert 30 in det.ids  # the foreign plate tag is still in view
    with pytest.raises(PerceptionError, match=r"peg not found.*\[30\]"):
        estimate_pose(det, LAYOUT, cm)
    with pytest.raises(PerceptionError, match="peg not found.*no tags detected"):
        estimate_pose(TagDetector(LAYOUT.dictionary).detect(np.zeros((48, 64, 3), np.uint8)),
                      LAYOUT, cm)


def test_foreign_tag_is_ignored_and_reported(scene):
    model, data = scene
    T = resting_pose("x", 20.0, -0.05, -0.05)
    set_free_pose(model, data, "peg", T)
    with SceneCamera(model, "cam") as cam:
        image = cam.render(data)
        cm = cam.model_at(data)
    est = estimate_pose(TagDetector(LAYOUT.dictionary).detect(image), LAYOUT, cm)
    assert est.foreign_ids == (30,)
    assert 30 not in est.tag_ids
    assert np.linalg.norm(est.T_world_obj[:3, 3] - T[:3, 3]) < 0.003


def _synthetic_single_tag(T_world_obj, tag_id, cm, rng, noise_px=0.05):
    corners = LAYOUT.tag(tag_id).corners() @ T_world_obj[:3, :3].T + T_world_obj[:3, 3]
    uv = cm.project(corners) + rng.normal(0, noise_px, (4, 2))
    return TagDetections(np.array([tag_id]), uv[None], 0.0, (cm.width, cm.height))


def test_single_tag_flip_resolved_by_the_resting_prior():
    """One tag seen nearly face-on: its two planar solutions fit equally well; physics decides."""
    K = np.array([[600.0, 0, 319.5], [0, 600.0, 239.5], [0, 0, 1]])
    from hardware.models.scene import look_at_quat

    q = look_at_quat([0.0, -0.05, 0.8], [0, 0, 0])
    import mujoco

    Rm = np.zeros(9)
    mujoco.mju_quat2Mat(Rm, q)
    T_wc = pose(Rm.reshape(3, 3) @ np.diag([1.0, -1.0, -1.0]), [0.0, -0.05, 0.8])
    cm = CameraModel(640, 480, K, np.zeros(5), T_wc)
    rng = np.random.default_rng(3)
    T = resting_pose("x", 30.0, 0.0, 0.0)   # lying on +x: the -x face (tags 2, 3) looks up
    assert LAYOUT.tag(2).face == "-x"
    det = _synthetic_single_tag(T, 2, cm, rng)
    with_prior = estimate_pose(det, LAYOUT, cm, resting_prior(LAYOUT, TABLE_Z))
    assert with_prior.ambiguous and with_prior.resolved_by == "prior"
    # one small tag measures its tilt to a few degrees; the wrong flip is off by tens of degrees
    assert rotation_angle_deg(with_prior.T_world_obj[:3, :3], T[:3, :3]) < 3.0
    assert np.linalg.norm(with_prior.T_world_obj[:3, 3] - T[:3, 3]) < 0.01
    without = estimate_pose(det, LAYOUT, cm)
    assert without.resolved_by == "reprojection" and without.confidence < with_prior.confidence
    assert with_prior.alternative_rms_px is not None
    contrary = resting_prior(LAYOUT, TABLE_Z)
    flipped = estimate_pose(det, LAYOUT, cm, lambda T_: -contrary(T_))  # prefers the other one
    assert rotation_angle_deg(flipped.T_world_obj[:3, :3], T[:3, :3]) > 10.0


def test_ecc_refinement_is_unbiased_where_subpix_is_not():
    """A supersampled synthetic tag with exactly known corners (the reason for refine=ecc)."""
    import cv2

    d = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_APRILTAG_36h11)
    tag = cv2.copyMakeBorder(cv2.aruco.generateImageMarker(d, 5, 320, borderBits=1), 40, 40, 40, 40,
                             cv2.BORDER_CONSTANT, value=255)
    ss, side = 8, 30.0
    tl = np.array([150.3, 100.7])
    dst = np.array([tl, tl + [side, 0.1 * side], tl + [side * 0.95, side * 1.1], tl + [0, side]])
    src = np.array([[-0.5, -0.5], [319.5, -0.5], [319.5, 319.5], [-0.5, 319.5]], np.float32) + 40
    H = cv2.getPerspectiveTransform(src, ((dst + 0.5) * ss - 0.5).astype(np.float32))
    big = cv2.warpPerspective(tag, H, (400 * ss, 300 * ss), flags=cv2.INTER_LINEAR, borderValue=255)
    img = cv2.GaussianBlur(cv2.resize(big, (400, 300), interpolation=cv2.INTER_AREA), (0, 0), 0.8)
    errs = {}
    for refine in ("ecc", "subpix"):
        c = TagDetector(refine=refine).detect(img).corners[0]
        errs[refine] = np.abs(c - dst).max()
    assert errs["ecc"] < 0.08, errs
    assert errs["subpix"] > 2 * errs["ecc"], errs
