"""Stage extrinsics of ``pipeline=calibrate``: camera pose and joint zeros from a tag plate on each
hand, the arms driven over a grid of spots in physics with hidden joint zero offsets (the
procedure: :mod:`stages.arms.calibration.plate_procedure`) -> ``extrinsics/calibration.yaml``."""

from __future__ import annotations

import time
from typing import Any

from core.artifacts import JsonFile, PngFigure, PngImage
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.arms.calibration.plate_procedure import PlateCalibration, plate_layouts
from stages.arms.calibration.report import calibration_of, plate_outcome
from stages.arms.calibration.scoring import plate_hidden_offsets_rad, plate_scores
from stages.arms.calibration.settings import PlateCalibrationSettings
from stages.arms.perception.calibration import CalibrationFile
from stages.arms.perception.plots import residual_plot
from stages.arms.recording.calibration import SpotViewRecorder, record_camera_fit


class PlateExtrinsics(Stage):
    """Camera pose and joint zero offsets from spots the arms visit, in physics; settings:
    :class:`~stages.arms.calibration.settings.PlateCalibrationSettings`. Metrics against the hidden
    truth: ``joint_offset_error_deg_max``, ``camera_position_error_m``, ``camera_rotation_error_deg``;
    and ``spots``, ``residual_rms_m``, ``condition_number``, ``unobservable_joints``."""

    outputs = ("calibration",)

    def __init__(self, scene: dict, **settings: Any):
        self.settings = from_config(PlateCalibrationSettings, settings, "pipeline.stages.extrinsics")
        self.layouts = plate_layouts(scene, self.settings)

    def run(self, ctx: StageContext, world, intrinsics=None) -> StageResult:
        t_start = time.perf_counter()
        s, rng = self.settings, ctx.rng
        for a in s.arms:
            world.robot.arm(a)  # ConfigError listing the arms when unknown
        hidden = plate_hidden_offsets_rad(s, world.robot, rng)
        calibration = PlateCalibration(world, s, self.layouts, hidden,
                                       getattr(intrinsics, "calibration", intrinsics), ctx.log, ctx.progress,
                                       on_view=SpotViewRecorder(ctx.recorder, "plate"))
        try:
            calibration.observe(rng)
        finally:
            if calibration.visited:
                ctx.metrics["spots_visited"] = calibration.visited
        ctx.metrics.update(calibration.spots.seen_counts())
        result = calibration.fit()
        true_T_world_cam = calibration.true_camera.T_world_cam
        scores = plate_scores(result.fit, hidden, true_T_world_cam, s.arms)
        metrics, report = plate_outcome(result, scores, hidden, true_T_world_cam,
                                        time.perf_counter() - t_start, ctx.log)
        record_camera_fit(ctx.recorder, result.camera, result.fit.T_world_cam, metrics)
        cal = calibration_of(result, str(ctx.out_dir.parent), s.camera,
                             "joint fit of camera pose and joint zero offsets (hand tag plates)")
        files = {"report.json": JsonFile(report), "residuals.png": PngFigure(residual_plot(result.fit)),
                 **{name: PngImage(image) for name, image in result.spots.images.items()}}
        return StageResult(outputs={"calibration": CalibrationFile(cal)}, metrics=metrics, files=files)
