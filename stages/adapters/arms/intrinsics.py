"""Stage intrinsics: ChArUco calibration of the scene camera from rendered board views."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np

from core.artifacts import JsonFile, PngFigure, PngImage
from core.errors import ConfigError
from core.settings import from_config
from hardware.models.charuco import CharucoSpec
from stages.api import Stage, StageContext, StageResult
from stages.arms.perception.calibration import Calibration, CalibrationFile, now_iso
from stages.arms.perception.camera import SceneCamera
from stages.arms.perception.intrinsics import (
    calibrate_intrinsics,
    draw_board_detection,
    load_images,
    simulated_board_views,
)
from stages.arms.perception.plots import per_view_errors_figure
from stages.arms.perception.scene_config import scene_object
from stages.arms.perception.settings import IntrinsicsSettings


class Intrinsics(Stage):
    """Camera intrinsics from ChArUco views (module :mod:`stages.arms.perception.intrinsics`).

    Simulated (default): the scene's board (a mocap body) is held at ``views`` random poses in
    front of ``camera`` and rendered with ``image`` effects; the result is scored against the MJCF
    camera (``focal_error_pct``, principal-point errors). Real: ``images=<folder>`` of photos of
    the same board (its config is ``scene.objects.<board>``). Settings:
    :class:`~stages.arms.perception.settings.IntrinsicsSettings`.
    """

    outputs = ("intrinsics",)

    def __init__(self, scene: dict, **settings: Any):
        self.settings = s = from_config(IntrinsicsSettings, settings, "pipeline.stages.intrinsics")
        board_cfg = scene_object(scene, s.board, "the ChArUco board", (":add_charuco_board",))
        self.spec = CharucoSpec.from_config(board_cfg, f"scene.objects.{s.board}")

    def run(self, ctx: StageContext, world=None) -> StageResult:
        s, board = self.settings, self.spec.board()
        true_K = None
        t0 = time.perf_counter()
        if s.images is not None:
            images, names = load_images(s.images)
            source = str(Path(s.images).expanduser().resolve())
        else:
            if world is None:
                raise ConfigError("intrinsics: give images=<folder>, or wire a scene (world) input "
                                  "to render views in simulation")
            with SceneCamera(world.model, s.camera, s.image) as cam:
                images, true_K = simulated_board_views(world.model, world.home_qpos(), cam, s.board, s.views,
                                                       ctx.rng, **dataclasses.asdict(s.pose))
            names = [f"view{k:03d}" for k in range(len(images))]
            source = "simulation"
        render_s = time.perf_counter() - t0
        ctx.metrics["views"] = len(images)
        t1 = time.perf_counter()
        board_info = {"squares": list(self.spec.squares), "square_m": self.spec.square_m,
                      "marker_m": self.spec.marker_m, "dictionary": self.spec.dictionary}
        result = calibrate_intrinsics(images, board, names, s.min_corners, s.min_views, s.flags,
                                      board_info=board_info)
        metrics = {"views": len(images), **result.metrics(), "calibrate_time_s": time.perf_counter() - t1,
                   "render_time_s": render_s}
        report = {**result.summary(), "source": source}
        if true_K is not None:
            errs = result.errors_against(true_K)
            metrics.update(errs)
            report["truth"] = {"camera_matrix": true_K.tolist(), **errs}
        ctx.log.info("intrinsics: %d/%d views, RMS %.3f px, K = %s", len(result.views_used),
                     len(images), result.rms_px, np.round(result.camera_matrix, 2).tolist())
        cal = Calibration(result.camera_matrix, result.distortion, result.image_size,
                          date=now_iso(), source_run=str(ctx.out_dir.parent), camera_name=s.camera,
                          method=f"ChArUco intrinsics ({source})",
                          metrics={"rms_px": result.rms_px, "views_used": len(result.views_used)})
        files: dict[str, Any] = {"report.json": JsonFile(report),
                                 "per_view_errors.png": PngFigure(per_view_errors_figure(result))}
        for k in range(min(s.save_views, len(images))):
            files[f"{names[k].rsplit('.', 1)[0]}.png"] = PngImage(draw_board_detection(images[k], board))
        return StageResult(outputs={"intrinsics": CalibrationFile(cal)}, metrics=metrics, files=files)
