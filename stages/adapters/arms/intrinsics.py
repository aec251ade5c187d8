"""Stage intrinsics: ChArUco calibration of the scene camera from rendered board views."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.artifacts import JsonFile, PngFigure, PngImage
from core.errors import ConfigError
from stages.api import Stage, StageContext, StageResult
from stages.arms.perception.scene_state import scene_object


# ---------------------------------------------------------------------- intrinsics
class Intrinsics(Stage):
    """Camera intrinsics from ChArUco views (module :mod:`stages.arms.perception.intrinsics`).

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
        from stages.arms.perception.camera import ImageEffects
        from stages.arms.perception.intrinsics import calib_flags

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

        from stages.arms.perception.calibration import Calibration, CalibrationFile, now_iso
        from stages.arms.perception.intrinsics import calibrate_intrinsics, load_images, render_board_views

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

            from stages.arms.perception.camera import SceneCamera

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
