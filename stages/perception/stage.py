"""Perception and calibration stages: drop, perceive, intrinsics.

* :class:`DropPeg` (``drop``) — release the tagged peg at a seeded random pose above the table and
  let MuJoCo physics settle it (no pose is set after the release).
* :class:`Perceive` (``perception``) — render the scene camera (with image effects), estimate the
  peg's pose, compare with the simulator's truth; overlay image saved every time.
* :class:`Intrinsics` (``intrinsics``) — ChArUco views (simulated, or ``images=<folder>``) →
  camera matrix and distortion, saved as ``intrinsics/intrinsics.yaml``.
The extrinsics stages live beside: :mod:`stages.perception.plate_extrinsics` (a tag plate on each
hand, ``pipeline=calibrate``) and :mod:`stages.perception.peg_extrinsics` (the tagged peg carried
by each arm, ``pipeline=calibrate_peg``).

Every stage reads the scene config (``scene: ${scene}``) for the objects it uses and fails at
construction, naming the key, when one is missing.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from stages.artifacts import JsonFile, PngFigure, PngImage
from stages.errors import ConfigError, PerceptionError
from stages.graph import Stage, StageContext, StageResult


def scene_object(scene: Mapping[str, Any], name: str, what: str, kinds: Sequence[str]) -> dict:
    objects = dict((scene or {}).get("objects") or {})
    if name not in objects:
        raise ConfigError(f"scene has no object {name!r} ({what}); objects: "
                          f"{sorted(objects) or 'none'}. Use scene=peg_table, or add one of kind "
                          f"{' / '.join(kinds)}")
    obj = dict(objects[name])
    if not any(str(obj.get("kind", "")).endswith(k) for k in kinds):
        raise ConfigError(f"scene.objects.{name}.kind={obj.get('kind')!r}; {what} must be of "
                          f"kind {' / '.join(kinds)}")
    return obj


def _table_height(scene: Mapping[str, Any]) -> float:
    table = (scene or {}).get("table")
    if not table:
        raise ConfigError("the resting prior needs scene.table (its height)")
    return float(table.get("height", 0.75))


@dataclass
class SimState:
    """A physics state handed from one stage to the next (not a file)."""

    qpos: np.ndarray
    qvel: np.ndarray
    ctrl: np.ndarray
    time: float
    truth: dict = field(default_factory=dict)

    def apply(self, model):
        import mujoco

        data = mujoco.MjData(model)
        data.qpos[:], data.qvel[:], data.ctrl[:] = self.qpos, self.qvel, self.ctrl
        data.time = self.time
        mujoco.mj_forward(model, data)
        return data


def _resting_face(R: np.ndarray) -> str:
    """The peg-frame face pointing down (world -z)."""
    down = R.T @ np.array([0.0, 0.0, -1.0])
    k = int(np.argmax(np.abs(down)))
    return ("+" if down[k] > 0 else "-") + "xyz"[k]


# ---------------------------------------------------------------------- drop
class DropPeg(Stage):
    """Release the peg at a seeded random pose (or ``start_pose``) and let physics settle it.

    ``region``: ``x``, ``y`` ranges (world, m) and ``height_m`` above the table top of the
    release point; the orientation is uniformly random. The arms hold their home pose.
    """

    outputs = ("state",)

    def __init__(self, scene: dict, peg: str = "peg", region: dict | None = None,
                 start_pose: Sequence[float] | None = None, settle_s: float = 0.3,
                 max_s: float = 4.0):
        self.peg = peg
        scene_object(scene, peg, "the tagged peg", (":add_tagged_peg",))
        self.table_z = _table_height(scene)
        region = dict(region or {})
        unknown = sorted(set(region) - {"x", "y", "height_m"})
        if unknown:
            raise ConfigError(f"drop.region: unknown key(s) {unknown}; allowed: x, y, height_m")
        self.x = tuple(float(v) for v in region.get("x", (0.45, 0.75)))
        self.y = tuple(float(v) for v in region.get("y", (-0.05, 0.4)))
        self.h = tuple(float(v) for v in region.get("height_m", (0.08, 0.18)))
        for key, r in (("x", self.x), ("y", self.y), ("height_m", self.h)):
            if len(r) != 2 or r[0] > r[1]:
                raise ConfigError(f"drop.region.{key} must be [low, high], got {list(r)}")
        if self.h[0] < 0.05:
            raise ConfigError("drop.region.height_m: release at least 0.05 m above the table "
                              "(the peg must not start inside it)")
        self.start_pose = None if start_pose is None else np.asarray(start_pose, float)
        if self.start_pose is not None and self.start_pose.shape != (7,):
            raise ConfigError(f"drop.start_pose must be [x, y, z, qw, qx, qy, qz], got {start_pose}")
        self.settle_s, self.max_s = float(settle_s), float(max_s)

    def run(self, ctx: StageContext, world) -> StageResult:
        import mujoco

        from stages.perception.sim import drop_body, hold_actuators_at_qpos, random_drop_pose

        model = world.model
        data = mujoco.MjData(model)
        data.qpos[:] = world.home_qpos()
        mujoco.mj_forward(model, data)
        hold_actuators_at_qpos(model, data)
        pose = self.start_pose
        if pose is None:
            pose = random_drop_pose(ctx.rng, self.x, self.y,
                                    (self.table_z + self.h[0], self.table_z + self.h[1]))
        r = drop_body(model, data, self.peg, pose, self.settle_s, self.max_s)
        if not r.settled:
            ctx.log.warning("the peg was still moving after %.1f s of simulation", self.max_s)
        T = r.T_world_body
        face = _resting_face(T[:3, :3])
        truth = {"T_world_peg": T.tolist(), "pose": r.rest_pose.tolist(),
                 "start_pose": r.start_pose.tolist(), "resting_face": face,
                 "settled": r.settled, "sim_time_s": r.sim_time_s}
        ctx.log.info("peg released at %s, rests at %s on face %s after %.2f s", np.round(pose[:3], 3),
                     np.round(T[:3, 3], 3), face, r.sim_time_s)
        state = SimState(data.qpos.copy(), data.qvel.copy(), data.ctrl.copy(), float(data.time), truth)
        return StageResult(
            outputs={"state": state},
            metrics={"settled": r.settled, "settle_time_s": r.sim_time_s,
                     "release_height_m": float(pose[2] - self.table_z), "resting_face": face,
                     "x_m": float(T[0, 3]), "y_m": float(T[1, 3])},
            files={"drop.json": JsonFile(truth)})


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
        from stages.perception.camera import ImageEffects
        from stages.perception.detection import TagDetector
        from stages.perception.tags import layout_from_config

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
        self.table_z = _table_height(scene) if prior == "resting" else None
        self.calibration = None
        if calibration:
            from stages.perception.calibration import load_calibration

            self.calibration = load_calibration(calibration)
            if self.calibration.T_world_cam is None:
                raise ConfigError(f"calibration={calibration!r} has no camera pose (T_world_camera): "
                                  "it holds intrinsics only; use the extrinsics stage's file")
        self.ambiguity_ratio, self.outlier_px = float(ambiguity_ratio), float(outlier_px)
        self.max_incidence_deg = float(max_incidence_deg)

    def run(self, ctx: StageContext, world, state: SimState) -> StageResult:
        from stages.perception.camera import CameraModel, SceneCamera, rotation_angle_deg
        from stages.perception.peg_pose import draw_overlay, estimate_pose, resting_prior

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
            face_ok = _resting_face(est.T_world_obj[:3, :3]) == _resting_face(T_true[:3, :3])
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


# ---------------------------------------------------------------------- intrinsics
class Intrinsics(Stage):
    """Camera intrinsics from ChArUco views (module :mod:`stages.perception.intrinsics`).

    Simulated (default): the scene's board (a mocap body) is held at ``views`` random poses in
    front of ``camera`` and rendered with ``image`` effects; the result is scored against the MJCF
    camera (``focal_error_pct``, principal-point errors). Real: ``images=<folder>`` of photos of
    the same board (its config is ``scene.objects.<board>``). ``flags``: ``cv2.CALIB_*`` names.
    """

    outputs = ("intrinsics",)

    def __init__(self, scene: dict, board: str = "board", camera: str = "scene_camera",
                 views: int = 30, images: str | None = None, min_corners: int = 12,
                 min_views: int = 8, flags: Sequence[str] = (), image: dict | None = None,
                 pose: dict | None = None, save_views: int = 4):
        from hardware.models.charuco import CharucoSpec
        from stages.perception.camera import ImageEffects
        from stages.perception.intrinsics import calib_flags

        self.board_name = board
        self.board_cfg = scene_object(scene, board, "the ChArUco board", (":add_charuco_board",))
        self.spec = CharucoSpec.from_config(self.board_cfg, f"scene.objects.{board}")
        self.camera = camera
        if int(views) < 1:
            raise ConfigError(f"intrinsics.views must be >= 1, got {views}")
        self.views, self.images = int(views), images
        if images is not None and not Path(str(images)).expanduser().is_dir():
            raise ConfigError(f"intrinsics.images={images!r} is not a folder")
        self.min_corners, self.min_views = int(min_corners), int(min_views)
        calib_flags(flags)
        self.flags = tuple(flags)
        self.effects = ImageEffects.from_config(image, "intrinsics.image")
        pose = dict(pose or {})
        unknown = sorted(set(pose) - {"distance_m", "offset", "tilt_deg", "roll_deg"})
        if unknown:
            raise ConfigError(f"intrinsics.pose: unknown key(s) {unknown}; allowed: distance_m, "
                              "offset, tilt_deg, roll_deg")
        self.pose = pose
        self.save_views = int(save_views)

    def run(self, ctx: StageContext, world=None) -> StageResult:
        import cv2

        from stages.perception.calibration import Calibration, CalibrationFile, now_iso
        from stages.perception.intrinsics import calibrate_intrinsics, load_images, render_board_views

        board = self.spec.board()
        true_K = None
        t0 = time.perf_counter()
        if self.images is not None:
            images, names = load_images(self.images)
            source = str(Path(self.images).expanduser().resolve())
        else:
            if world is None:
                raise ConfigError("intrinsics: give images=<folder>, or wire a scene (world) input "
                                  "to render views in simulation")
            import mujoco

            from stages.perception.camera import SceneCamera

            data = mujoco.MjData(world.model)
            data.qpos[:] = world.home_qpos()
            mujoco.mj_forward(world.model, data)
            with SceneCamera(world.model, self.camera, self.effects) as cam:
                images, _ = render_board_views(world.model, data, cam, self.board_name, self.views,
                                               ctx.rng, **self.pose)
                true_K = cam.model_at(data).K
            names = [f"view{k:03d}" for k in range(len(images))]
            source = "simulation"
        render_s = time.perf_counter() - t0
        ctx.metrics["views"] = len(images)
        t1 = time.perf_counter()
        board_info = {"squares": list(self.spec.squares), "square_m": self.spec.square_m,
                      "marker_m": self.spec.marker_m, "dictionary": self.spec.dictionary}
        result = calibrate_intrinsics(images, board, names, self.min_corners, self.min_views,
                                      self.flags, board_info=board_info)
        calib_s = time.perf_counter() - t1
        metrics = {"views": len(images), "views_used": len(result.views_used),
                   "views_rejected": len(result.views_rejected), "rms_px": result.rms_px,
                   "per_view_max_px": max(result.per_view_rms_px.values()),
                   "calibrate_time_s": calib_s, "render_time_s": render_s,
                   "fx_px": float(result.camera_matrix[0, 0]), "fy_px": float(result.camera_matrix[1, 1]),
                   "cx_px": float(result.camera_matrix[0, 2]), "cy_px": float(result.camera_matrix[1, 2])}
        report = result.summary()
        report["source"] = source
        if true_K is not None:
            errs = result.errors_against(true_K)
            metrics.update(errs)
            report["truth"] = {"camera_matrix": true_K.tolist(), **errs}
        ctx.log.info("intrinsics: %d/%d views, RMS %.3f px, K = %s", len(result.views_used),
                     len(images), result.rms_px, np.round(result.camera_matrix, 2).tolist())
        cal = Calibration(result.camera_matrix, result.distortion, result.image_size,
                          date=now_iso(), source_run=str(ctx.out_dir.parent), camera_name=self.camera,
                          method=f"ChArUco intrinsics ({source})",
                          metrics={"rms_px": result.rms_px, "views_used": len(result.views_used)})
        files: dict[str, Any] = {"report.json": JsonFile(report),
                                 "per_view_errors.png": PngFigure(_per_view_plot(result))}
        detector = cv2.aruco.CharucoDetector(board)
        for k in range(min(self.save_views, len(images))):
            img = images[k].copy()
            grey = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
            cc, ci, mc, mi = detector.detectBoard(grey)
            bgr = cv2.cvtColor(img, cv2.COLOR_RGB2BGR)
            if mi is not None:
                cv2.aruco.drawDetectedMarkers(bgr, mc, mi)
            if ci is not None:
                for c in np.asarray(cc).reshape(-1, 2):
                    cv2.circle(bgr, (int(round(c[0])), int(round(c[1]))), 4, (0, 0, 255), 1,
                               cv2.LINE_AA)
            files[f"{names[k].rsplit('.', 1)[0]}.png"] = PngImage(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
        return StageResult(outputs={"intrinsics": CalibrationFile(cal)}, metrics=metrics, files=files)


def _per_view_plot(result):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3))
    names = list(result.per_view_rms_px)
    ax.bar(range(len(names)), [result.per_view_rms_px[n] for n in names], color="tab:blue")
    ax.axhline(result.rms_px, color="k", lw=1, ls="--", label=f"overall RMS {result.rms_px:.3f} px")
    ax.set_xlabel("view (used)")
    ax.set_ylabel("RMS reprojection error [px]")
    ax.set_title(f"ChArUco calibration: {len(names)} views used, {len(result.views_rejected)} rejected")
    ax.legend()
    return fig
