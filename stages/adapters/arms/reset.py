"""Stage reset: drop, find, pick and place the peg, as many times as asked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from core.artifacts import JsonFile, Mp4Video, PngImage
from core.errors import ExecutionError
from stages.api import Stage, StageContext, StageResult
from stages.arms.execution.replay import render_states
from stages.arms.execution.rig import hardware_settings
from stages.arms.planning.goals import planner_settings
from stages.arms.reset.plan import ResetPlanner
from stages.arms.reset.reset import run_reset
from stages.arms.reset.setup import build_rig, drop_peg, reset_settings
from stages.arms.reset.task import TaskSpec


class Reset(Stage):
    """Drop the peg at a seeded random pose, then: perceive → grasp → plan all → execute → check."""

    outputs = ("outcome",)

    def __init__(self, scene: Mapping[str, Any], task: Mapping[str, Any], reset: Mapping[str, Any] | None = None,
                 planner: Mapping[str, Any] | None = None, hardware: Mapping[str, Any] | None = None,
                 drop: Mapping[str, Any] | None = None, camera: Mapping[str, Any] | None = None,
                 calibration: str | None = None, max_attempts: int = 3, surface_z: float = 0.75,
                 video: bool = True, fps: float = 15.0):
        self.scene = dict(scene)
        self.task = TaskSpec.from_config(task)
        self.settings = reset_settings(reset)
        self.planner = planner_settings(planner)
        self.hw = hardware_settings(hardware)
        self.drop = dict(drop or {})
        self.camera = dict(camera or {})
        self.calibration = calibration
        self.max_attempts, self.surface_z = int(max_attempts), float(surface_z)
        self.video, self.fps = bool(video), float(fps)

    def run(self, ctx: StageContext, world) -> StageResult:
        rng = ctx.rng
        rig, half = build_rig(world, self.scene, self.hw, self.camera, self.calibration, ctx.seed)
        planner = ResetPlanner(world, self.planner, self.settings)
        try:
            dropped = drop_peg(rig, rng, self.drop)
            ctx.metrics.update({"drop.settled": dropped.settled, "drop.time_s": dropped.sim_time_s})
            ctx.log.info("peg dropped at %s, came to rest at %s", np.round(dropped.start_pose[:3], 3),
                         np.round(dropped.rest_pose[:3], 3))
            with rig.sim:
                outcome = run_reset(rig, planner, self.task, half, self.surface_z, rng,
                                    self.max_attempts, ctx.log)
        finally:
            rig.close()
            ctx.metrics["stamp_retries"] = rig.stamp_retries
        ctx.metrics.update(outcome.metrics)
        self._save(ctx, world, rig, outcome)
        if not outcome.success:
            last = outcome.failures[-1] if outcome.failures else {"reason": "unknown"}
            raise ExecutionError(f"reset failed after {outcome.attempts} attempts; last: {last['reason']}")
        return StageResult(outputs={"outcome": outcome}, metrics=outcome.metrics)

    def _save(self, ctx, world, rig, outcome) -> None:
        from stages.arms.perception.peg_pose import draw_overlay

        ctx.save("candidates.json", JsonFile(outcome.candidates))
        ctx.save("attempts.json", JsonFile({"success": outcome.success, "attempts": outcome.attempts,
                                             "failures": outcome.failures}))
        for name, (image, est) in outcome.images.items():
            try:
                ctx.save(name, PngImage(draw_overlay(image, rig.layout, rig.estimator.camera, est)))
            except Exception:  # noqa: BLE001 - the overlay is a picture; keep the raw image then
                ctx.save(name, PngImage(image))
        times, qpos = rig.sim.recorded()
        if self.video and len(times):
            ctx.save("reset.mp4", Mp4Video(render_states(world.model, times, qpos, "overview", self.fps),
                                           self.fps))
