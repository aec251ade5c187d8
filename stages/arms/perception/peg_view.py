"""The tagged peg seen by the scene camera: render, detect, fit its pose, and the pictures of it.

:class:`PegCamera` is the perception stage's procedure: :meth:`~PegCamera.look` renders the camera
(with image effects) and detects tags, :meth:`~PegCamera.estimate` fits the peg's pose
(:func:`~stages.arms.perception.peg_pose.estimate_pose`, with the resting prior unless
``prior: none``), :meth:`~PegCamera.report` gives the figures and the estimate's record, scored
against the simulator's truth when there is one. The image is always rendered by the simulator's
true camera; a calibration file replaces the camera model the estimate uses.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.errors import ConfigError
from core.tag_layouts import TagLayout, layout_from_config
from stages.arms.perception.calibration import Calibration, load_calibration
from stages.arms.perception.camera import CameraModel, SceneCamera
from stages.arms.perception.detection import TagDetections, TagDetector
from stages.arms.perception.peg_pose import PoseEstimate, draw_overlay, estimate_pose, resting_prior
from stages.arms.perception.scene_config import scene_object, table_height
from stages.arms.perception.scoring import pose_errors
from stages.arms.perception.settings import PerceiveSettings


@dataclass(frozen=True)
class PegLook:
    """One frame of the scene camera and the tags in it."""

    image: np.ndarray
    detections: TagDetections
    camera: CameraModel      # the model the estimate uses (the MJCF camera, or the calibration's)
    tags_seen: int           # the peg's own tags among the detections
    render_time_s: float


class PegCamera:
    """The scene camera looking for the tagged peg (``settings``: :class:`PerceiveSettings`)."""

    def __init__(self, layout: TagLayout, settings: PerceiveSettings, table_z: float | None = None,
                 calibration: Calibration | None = None):
        self.layout, self.settings, self.calibration = layout, settings, calibration
        self.detector = TagDetector(layout.dictionary, settings.detector.refine, settings.detector.params,
                                    layout.quiet_zone_cells)
        self.prior = resting_prior(layout, table_z) if settings.prior == "resting" else None

    @classmethod
    def from_scene(cls, scene: Mapping[str, Any], settings: PerceiveSettings) -> PegCamera:
        """The peg's tag layout from ``scene.objects.<peg>``, the table height for the resting prior,
        and the calibration file if one is given (it must hold the camera's pose)."""
        peg = settings.peg
        layout = layout_from_config(scene_object(scene, peg, "the tagged peg", (":add_tagged_peg",)), peg)
        table_z = table_height(scene) if settings.prior == "resting" else None
        calibration = None
        if settings.calibration:
            calibration = load_calibration(settings.calibration)
            if calibration.T_world_cam is None:
                raise ConfigError(f"calibration={settings.calibration!r} has no camera pose "
                                  "(T_world_camera): it holds intrinsics only; use the extrinsics "
                                  "stage's file")
        return cls(layout, settings, table_z, calibration)

    def look(self, model, data, rng: np.random.Generator) -> PegLook:
        """Render the camera at ``data``'s state and detect the tags."""
        name = self.settings.camera
        t_render = time.perf_counter()
        with SceneCamera(model, name, self.settings.image) as cam:
            image = cam.render(data, rng)
            true_cam = cam.model_at(data)
        render_s = time.perf_counter() - t_render
        camera = true_cam
        if self.calibration is not None:
            camera = CameraModel.from_calibration(self.calibration, name)
            if (camera.width, camera.height) != (true_cam.width, true_cam.height):
                raise ConfigError(f"calibration image size {camera.width}x{camera.height} differs "
                                  f"from camera {name!r} ({true_cam.width}x{true_cam.height})")
        detections = self.detector.detect(image)
        seen = {int(i) for i in detections.ids if int(i) in set(self.layout.ids)}
        return PegLook(image, detections, camera, len(seen), render_s)

    def estimate(self, look: PegLook) -> PoseEstimate:
        """The peg's pose from the frame (PerceptionError when it is not found)."""
        s = self.settings
        return estimate_pose(look.detections, self.layout, look.camera, self.prior, s.ambiguity_ratio,
                             s.outlier_px, max_incidence_deg=s.max_incidence_deg)

    def overlay(self, look: PegLook, estimate: PoseEstimate | None,
                T_true: np.ndarray | None = None) -> np.ndarray:  # noqa: N803
        """The frame with the detections, the fitted outline and the true one (if known)."""
        return draw_overlay(look.image, self.layout, look.camera, estimate, look.detections, T_true)

    def report(self, look: PegLook, est: PoseEstimate,
               T_true: np.ndarray | None = None) -> tuple[dict[str, Any], dict[str, Any]]:  # noqa: N803
        """(metrics, the estimate's record); with ``T_true``, its errors against the simulator."""
        metrics: dict[str, Any] = {
            "tags_seen": look.tags_seen, "tags_used": len(est.tag_ids), "foreign_tags": len(est.foreign_ids),
            "reprojection_px": est.reprojection_px, "max_reprojection_px": est.max_reprojection_px,
            "confidence": est.confidence, "ambiguous": est.ambiguous, "resolved_by": est.resolved_by,
            "time_s": est.time_s, "detect_time_s": look.detections.time_s,
            "render_time_s": look.render_time_s}
        report = est.summary()
        if T_true is not None:
            errors = pose_errors(est.T_world_obj, T_true)
            metrics.update(errors.metrics())
            report["truth"] = {"T_world_peg": T_true.tolist(), "position_error_m": errors.position_m,
                               "rotation_error_deg": errors.rotation_deg}
        report["camera"] = {"K": look.camera.K.tolist(), "dist": look.camera.dist.tolist(),
                            "T_world_cam": look.camera.T_world_cam.tolist(),
                            "source": "calibration" if self.calibration is not None else "mjcf"}
        return metrics, report

    def zoom(self, image: np.ndarray, look: PegLook, T_world_obj: np.ndarray,  # noqa: N803
             scale: int = 3, pad_px: int = 30) -> np.ndarray | None:
        """``image`` around the peg at ``T_world_obj``, enlarged (the peg is ~150 px in a 1280x960
        frame); None when the peg's box is not in the frame."""
        import cv2

        box = self.layout.box_corners()
        if box is None:
            return None
        uv = look.camera.project(box @ T_world_obj[:3, :3].T + T_world_obj[:3, 3])
        h, w = image.shape[:2]
        x0, y0 = (int(max(0, np.floor(uv[:, k].min() - pad_px))) for k in (0, 1))
        x1 = int(min(w, np.ceil(uv[:, 0].max() + pad_px)))
        y1 = int(min(h, np.ceil(uv[:, 1].max() + pad_px)))
        if x1 - x0 < 8 or y1 - y0 < 8:
            return None
        return cv2.resize(image[y0:y1, x0:x1], None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST)
