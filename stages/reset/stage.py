"""The reset stage: drop the peg anywhere (physics), then reset it automatically."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from stages.artifacts import JsonFile, Mp4Video, PngImage
from stages.errors import ConfigError, ExecutionError
from stages.execution.replay import render_states
from stages.execution.stage import hardware_settings
from stages.graph import Stage, StageContext, StageResult
from stages.planning.stage import planner_settings
from stages.reset.plan import ResetPlanner, ResetSettings
from stages.reset.reset import run_reset
from stages.reset.task import TaskSpec

DROP_KEYS = ("x_range", "y_range", "z_range", "settle_s", "max_s")


def reset_settings(cfg: Mapping[str, Any] | None) -> ResetSettings:
    cfg = dict(cfg or {})
    allowed = [f.name for f in dataclasses.fields(ResetSettings)]
    unknown = sorted(set(cfg) - set(allowed))
    if unknown:
        raise ConfigError(f"reset.{unknown[0]} is not a reset setting; allowed: {allowed}")
    return ResetSettings(**cfg)


def build_rig(world, scene: Mapping[str, Any], hardware, camera_cfg, calibration, seed,
              hold_noslip_iterations: int = 0):
    from stages.perception.camera import ImageEffects
    from stages.perception.tags import layout_from_config
    from stages.reset.rig import ResetRig

    peg_cfg = (scene.get("objects") or {}).get("peg")
    if peg_cfg is None:
        raise ConfigError("the reset needs a tagged peg: scene.objects.peg (use scene=reset_cell)")
    layout = layout_from_config(peg_cfg, "peg")
    effects = ImageEffects.from_config((camera_cfg or {}).get("effects"), "camera.effects")
    rig = ResetRig(world, layout, hardware, (camera_cfg or {}).get("name", "scene_camera"), effects,
                   calibration, seed=seed, hold_noslip_iterations=hold_noslip_iterations)
    return rig, np.asarray(peg_cfg.get("size", [0.04, 0.04, 0.14]), float) / 2


def drop_peg(rig, rng, drop: Mapping[str, Any]):
    """Release the peg at a random pose above the workspace and let physics settle it."""
    from stages.perception.sim import drop_body, random_drop_pose

    unknown = sorted(set(drop) - set(DROP_KEYS))
    if unknown:
        raise ConfigError(f"drop.{unknown[0]} is not a drop setting; allowed: {list(DROP_KEYS)}")
    pose = random_drop_pose(rng, drop.get("x_range", (0.4, 0.65)), drop.get("y_range", (-0.25, 0.25)),
                            drop.get("z_range", (0.85, 0.95)))
    with rig.sim.lock:
        return drop_body(rig.model, rig.sim.data, "peg", pose, float(drop.get("settle_s", 0.3)),
                         float(drop.get("max_s", 4.0)))


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
        from stages.perception.peg_pose import draw_overlay

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
