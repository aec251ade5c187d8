"""Stage perceive: find the tagged peg in the scene camera's image and fit its pose."""

from __future__ import annotations

import time

import numpy as np

from core.artifacts import JsonFile, PngImage
from core.errors import ConfigError, PerceptionError
from stages.api import Stage, StageContext, StageResult
from stages.arms.perception.scene_state import SimState, resting_face, scene_object, table_height


# ---------------------------------------------------------------------- perceive
class Perceive(Stage):
    """Render the scene camera, estimate the peg's pose, score it against the simulator.

    ``calibration``: a calibration file (``calibration=<file>``) whose camera matrix,
    distortion and pose replace the MJCF camera's for the estimate (the image is still rendered
    by the simulator's true camera). ``prior``: ``resting`` (the peg lies on the table, one face
    down — resolves single-tag flips) or ``none``. ``image``: :class:`ImageEffects` keys.
    Metrics: ``position_error_m``, ``rotation_error_deg``, ``tags_seen`` (the peg's tags detected),
    ``tags_used``, ``foreign_tags``, ``reprojection_px``, ``confidence``, ``time_s`` (detection +
    fit for the frame), ``detect_time_s``.
    """

    outputs = ("estimate",)
    PRIORS = ("resting", "none")

    def __init__(self, scene: dict, peg: str = "peg", camera: str = "scene_camera",
                 image: dict | None = None, detector: dict | None = None,
                 calibration: str | None = None, prior: str = "resting",
                 ambiguity_ratio: float = 2.0, outlier_px: float = 4.0,
                 max_incidence_deg: float = 65.0):
        from core.tag_layouts import layout_from_config
        from stages.arms.perception.camera import ImageEffects
        from stages.arms.perception.detection import TagDetector

        self.layout = layout_from_config(scene_object(scene, peg, "the tagged peg", (":add_tagged_peg",)),
                                         peg)
        self.peg, self.camera = peg, camera
        self.effects = ImageEffects.from_config(image, "perception.image")
        det = dict(detector or {})
        unknown = sorted(set(det) - {"refine", "params"})
        if unknown:
            raise ConfigError(f"perception.detector: unknown key(s) {unknown}; allowed: refine, params")
        self.detector = TagDetector(self.layout.dictionary, det.get("refine", "ecc"),
                                    det.get("params"), self.layout.quiet_zone_cells)
        if prior not in self.PRIORS:
            raise ConfigError(f"perception.prior={prior!r}; allowed: {', '.join(self.PRIORS)}")
        self.prior_kind = prior
        self.table_z = table_height(scene) if prior == "resting" else None
        self.calibration = None
        if calibration:
            from stages.arms.perception.calibration import load_calibration

            self.calibration = load_calibration(calibration)
            if self.calibration.T_world_cam is None:
                raise ConfigError(f"calibration={calibration!r} has no camera pose (T_world_camera): "
                                  "it holds intrinsics only; use the extrinsics stage's file")
        self.ambiguity_ratio, self.outlier_px = float(ambiguity_ratio), float(outlier_px)
        self.max_incidence_deg = float(max_incidence_deg)

    def run(self, ctx: StageContext, world, state: SimState) -> StageResult:
        from core.se3 import rotation_angle_deg
        from stages.arms.perception.camera import CameraModel, SceneCamera
        from stages.arms.perception.peg_pose import draw_overlay, estimate_pose, resting_prior

        data = state.apply(world.model)
        t_render = time.perf_counter()
        with SceneCamera(world.model, self.camera, self.effects) as cam:
            image = cam.render(data, ctx.rng)
            true_cam = cam.model_at(data)
        render_s = time.perf_counter() - t_render
        est_cam = true_cam
        if self.calibration is not None:
            est_cam = CameraModel.from_calibration(self.calibration, self.camera)
            if (est_cam.width, est_cam.height) != (true_cam.width, true_cam.height):
                raise ConfigError(f"calibration image size {est_cam.width}x{est_cam.height} differs "
                                  f"from camera {self.camera!r} ({true_cam.width}x{true_cam.height})")
        prior = resting_prior(self.layout, self.table_z) if self.prior_kind == "resting" else None
        T_true = np.asarray(state.truth.get("T_world_peg")) if state.truth else None
        detections = self.detector.detect(image)
        seen = sorted({int(i) for i in detections.ids if int(i) in set(self.layout.ids)})
        ctx.metrics.update({"tags_seen": len(seen), "detect_time_s": detections.time_s,
                            "render_time_s": render_s})
        try:
            est = estimate_pose(detections, self.layout, est_cam, prior, self.ambiguity_ratio,
                                self.outlier_px, max_incidence_deg=self.max_incidence_deg)
        except PerceptionError:
            PngImage(image).save(ctx.out_dir / "image.png")
            PngImage(draw_overlay(image, self.layout, est_cam, None, detections, T_true)).save(
                ctx.out_dir / "overlay.png")
            raise
        metrics = {"tags_seen": len(seen), "tags_used": len(est.tag_ids),
                   "foreign_tags": len(est.foreign_ids), "reprojection_px": est.reprojection_px,
                   "max_reprojection_px": est.max_reprojection_px, "confidence": est.confidence,
                   "ambiguous": est.ambiguous, "resolved_by": est.resolved_by,
                   "time_s": est.time_s, "detect_time_s": detections.time_s,
                   "render_time_s": render_s}
        report = est.summary()
        if est.foreign_ids:
            ctx.log.info("ignored tag ids not on the %s: %s", self.peg, list(est.foreign_ids))
        if T_true is not None:
            pos_err = float(np.linalg.norm(est.T_world_obj[:3, 3] - T_true[:3, 3]))
            rot_err = rotation_angle_deg(est.T_world_obj[:3, :3], T_true[:3, :3])
            face_ok = resting_face(est.T_world_obj[:3, :3]) == resting_face(T_true[:3, :3])
            metrics.update({"position_error_m": pos_err, "rotation_error_deg": rot_err,
                            "resting_face_correct": face_ok})
            report["truth"] = {"T_world_peg": T_true.tolist(), "position_error_m": pos_err,
                               "rotation_error_deg": rot_err}
            ctx.log.info("peg: %d tags, %.2f mm, %.3f deg, %.2f px rms, conf %.2f", len(est.tag_ids),
                         pos_err * 1000, rot_err, est.reprojection_px, est.confidence)
        report["camera"] = {"K": est_cam.K.tolist(), "dist": est_cam.dist.tolist(),
                            "T_world_cam": est_cam.T_world_cam.tolist(),
                            "source": "calibration" if self.calibration is not None else "mjcf"}
        overlay = draw_overlay(image, self.layout, est_cam, est, detections, T_true)
        files = {"image.png": PngImage(image), "overlay.png": PngImage(overlay)}
        zoom = _zoom(overlay, est_cam, self.layout, est.T_world_obj)
        if zoom is not None:
            files["overlay_zoom.png"] = PngImage(zoom)
        return StageResult(outputs={"estimate": JsonFile(report)}, metrics=metrics, files=files)


def _zoom(image: np.ndarray, camera, layout, T_world_obj: np.ndarray, scale: int = 3):
    """The overlay around the object, enlarged (the peg is ~150 px in a 1280x960 frame)."""
    import cv2

    box = layout.box_corners()
    if box is None:
        return None
    uv = camera.project(box @ T_world_obj[:3, :3].T + T_world_obj[:3, 3])
    h, w = image.shape[:2]
    pad = 30
    x0, y0 = (int(max(0, np.floor(uv[:, k].min() - pad))) for k in (0, 1))
    x1, y1 = int(min(w, np.ceil(uv[:, 0].max() + pad))), int(min(h, np.ceil(uv[:, 1].max() + pad)))
    if x1 - x0 < 8 or y1 - y0 < 8:
        return None
    return cv2.resize(image[y0:y1, x0:x1], None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST)
