"""Stage reset: drop, find, pick and place the peg, as many times as asked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.artifacts import JsonFile, Mp4Video, PngImage
from core.errors import ExecutionError
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.arms.execution.replay import render_states
from stages.arms.execution.rig import hardware_settings
from stages.arms.planning.goals import planner_settings
from stages.arms.recording import record_reset
from stages.arms.recording.rosbag import write_motion_bag
from stages.arms.reset.run import ResetRunSettings, drop_and_reset
from stages.arms.reset.task import TaskSpec


class Reset(Stage):
    """Drop the peg at a seeded random pose, then: perceive → grasp → plan all → execute → check.

    Settings: :class:`~stages.arms.reset.run.ResetRunSettings` (``reset``, ``drop``, ``camera``,
    ``calibration``, ``max_attempts``, ``surface_z``, ``video``, ``fps``)."""

    outputs = ("outcome",)

    def __init__(self, scene: Mapping[str, Any], task: Mapping[str, Any],
                 planner: Mapping[str, Any] | None = None, hardware: Mapping[str, Any] | None = None,
                 **settings: Any):
        self.scene = dict(scene)
        self.task = TaskSpec.from_config(task)
        self.planner = planner_settings(planner)
        self.hw = hardware_settings(hardware)
        self.settings = from_config(ResetRunSettings, settings, "pipeline.stages.reset")

    def run(self, ctx: StageContext, world) -> StageResult:
        run = drop_and_reset(world, self.scene, self.task, self.planner, self.hw, self.settings, ctx.seed,
                             ctx.rng, ctx.log, ctx.metrics)
        record_reset(ctx.recorder, world, run)
        outcome = run.outcome
        ctx.metrics.update(outcome.metrics)
        ctx.save("candidates.json", JsonFile(outcome.candidates))
        ctx.save("attempts.json", JsonFile({"success": outcome.success, "attempts": outcome.attempts,
                                             "failures": outcome.failures}))
        for name, image in run.pictures.items():
            ctx.save(name, PngImage(image))
        joints = world.robot.joint_names()
        write_motion_bag(ctx.out_dir / "motion_bag", world, run.moves, run.times_s, run.qpos, joints)
        fps = self.settings.fps
        if self.settings.video and len(run.times_s):
            frames = render_states(world.model, run.times_s, run.qpos, "overview", fps)
            ctx.save("reset.mp4", Mp4Video(frames, fps))
        if not outcome.success:
            last = outcome.failures[-1] if outcome.failures else {"reason": "unknown"}
            raise ExecutionError(f"reset failed after {outcome.attempts} attempts; last: {last['reason']}")
        return StageResult(outputs={"outcome": outcome}, metrics=outcome.metrics)
