"""Stage extrinsics of ``pipeline=calibrate_peg``: camera pose and joint zeros from the tagged peg,
carried by each arm over the board (the procedure: :mod:`stages.arms.calibration.peg_procedure`)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

from core.artifacts import JsonFile, PngFigure, PngImage
from core.errors import PerceptionError
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.arms.calibration.peg_procedure import FitRejected, PegCalibration
from stages.arms.calibration.report import calibration_of, peg_outcome
from stages.arms.calibration.scoring import peg_hidden_offsets_deg, peg_scores
from stages.arms.calibration.settings import PegCalibrationSettings
from stages.arms.execution.rig import hardware_settings
from stages.arms.perception.calibration import CalibrationFile
from stages.arms.perception.plots import residual_plot
from stages.arms.planning.goals import planner_settings
from stages.arms.recording.calibration import SpotViewRecorder, record_calibration_motion, record_camera_fit
from stages.arms.recording.rosbag import BAG_STATE_RATE_HZ, write_motion_bag
from stages.arms.reset.plan import ResetPlanner
from stages.arms.reset.setup import build_rig

PAD_STUDS = "hardware.models.grip:add_pad_studs"   # the form-fit grip's studs (calib_cell)


class PegExtrinsics(Stage):
    """The tagged-peg calibration in the simulated cell. ``scene``, ``planner`` and ``hardware`` are
    the run's groups (the simulated drivers carry the hidden offsets, ``hardware.joint_offsets_deg``
    or random); the rest are :class:`~stages.arms.calibration.settings.PegCalibrationSettings`.
    Saves ``calibration.yaml``, ``report.json``, ``residuals.png``, ``spots.json`` (also on failure)
    and a few spots' images; scores the fit against the simulator's truth."""

    outputs = ("calibration",)

    def __init__(self, scene: Mapping[str, Any], planner: Mapping[str, Any] | None = None,
                 hardware: Mapping[str, Any] | None = None, **settings: Any):
        self.scene = dict(scene)
        self.planner = planner_settings(planner)
        self.hw = hardware_settings(hardware)
        # the arms default to those the cell holds the peg with (a region left null: not that arm)
        regions = {arm: r for arm, r in dict(settings.get("region") or {}).items() if r is not None}
        if settings.get("arms") is None:
            settings = {**settings, "arms": list(regions)}
        self.settings = from_config(PegCalibrationSettings, {**settings, "region": regions},
                                    "pipeline.stages.extrinsics")
        objects = (self.scene.get("objects") or {}).values()
        if not any((obj or {}).get("kind") == PAD_STUDS for obj in objects):
            # no form-fit grip in this cell (a robot's own fingers): the peg is held by friction, and
            # there is nothing to seat
            self.settings = dataclasses.replace(self.settings, seat_swings=0)

    def run(self, ctx: StageContext, world, intrinsics=None) -> StageResult:
        t_start = time.perf_counter()
        s, rng, robot = self.settings, ctx.rng, world.robot
        for a in s.arms:
            robot.arm(a)   # ConfigError listing the arms when unknown
        hidden_deg = peg_hidden_offsets_deg(self.hw, robot, s.hidden_offsets_max_deg, rng)
        rig, half = build_rig(world, self.scene, dataclasses.replace(self.hw, joint_offsets_deg=hidden_deg),
                              s.camera, None, ctx.seed, s.hold_noslip_iterations)
        planner = ResetPlanner(world, self.planner, s.reset, hands=rig.hands)
        calibration = PegCalibration(rig, planner, half, s,
                                     getattr(intrinsics, "calibration", intrinsics), ctx.log, ctx.progress,
                                     on_view=SpotViewRecorder(ctx.recorder, "peg"))
        try:
            calibration.collect(rng)
        finally:
            rig.close()
            ctx.metrics.update({**calibration.spots.counts(), "stamp_retries": rig.stamp_retries})
            ctx.save("spots.json", JsonFile(calibration.spots.record()))   # kept on failure
            record_calibration_motion(ctx.recorder, world, *rig.sim.recorded())
            joints = world.robot.joint_names()
            write_motion_bag(ctx.out_dir / "motion_bag", world, rig.moves, *rig.sim.recorded(), joints,
                             state_rate_hz=BAG_STATE_RATE_HZ)
        try:
            result = calibration.fit()
        except FitRejected as e:   # kept beside spots.json; the run fails as before, a PerceptionError
            ctx.save("report.json", JsonFile(e.report))
            raise PerceptionError(str(e)) from None
        scores = peg_scores(result, hidden_deg, calibration.true_camera)
        metrics, report = peg_outcome(result, scores, time.perf_counter() - t_start, ctx.log)
        record_camera_fit(ctx.recorder, result.camera, result.fit.T_world_cam, metrics)
        cal = calibration_of(result, str(ctx.out_dir.parent), s.camera.name,
                             "joint fit of camera pose, joint zero offsets and grasps (tagged peg)")
        files = {"report.json": JsonFile(report), "residuals.png": PngFigure(residual_plot(result.fit)),
                 **{name: PngImage(image) for name, image in result.spots.images.items()}}
        return StageResult(outputs={"calibration": CalibrationFile(cal)}, metrics=metrics, files=files)
