"""Stage ``group_vs_independent``: the ArmGroup and the independent baseline on the same goals."""

from __future__ import annotations

import numpy as np

from core.artifacts import JsonFile, PngFigure
from stages.api import Stage, StageContext, StageResult
from stages.arms.planning.checker import ClearanceChecker
from stages.arms.planning.figures import gripper_paths_figure
from stages.arms.planning.goals import make_group
from stages.arms.planning.independent import colliding_frames, detour_m, gripper_paths
from stages.arms.recording import record_detour


class GroupVsIndependent(Stage):
    """The group trajectory on the same number of frames: touching frames, clearance, detour."""

    outputs = ()

    def __init__(self, frames: int = 210):
        self.frames = int(frames)

    def run(self, ctx: StageContext, world, trajectory, independent, report) -> StageResult:
        group = make_group(world)
        times = np.linspace(0.0, float(trajectory.times[-1]), self.frames)
        frames = np.stack([np.interp(times, trajectory.times, trajectory.positions[:, j])
                           for j in range(trajectory.positions.shape[1])], axis=1)
        touching = colliding_frames(ClearanceChecker.for_world(world, trajectory.joint_names, 0.0), frames)
        grip_group = gripper_paths(group, trajectory.positions)
        grip_indep = gripper_paths(group, independent.positions)
        detours = detour_m(grip_group, grip_indep)
        worst_arm = max(detours, key=detours.get)
        record_detour(ctx.recorder, grip_group, detours)
        ctx.log.info("group plan: %d of %d frames touch; detour %.3f m (%s)", touching.sum(),
                     self.frames, detours[worst_arm], worst_arm)
        return StageResult(
            metrics={"frames": self.frames, "colliding_frames": int(touching.sum()),
                     "min_clearance_m": float(report["min_clearance_m"]),
                     "detour_m": detours[worst_arm], "detour_arm": worst_arm,
                     **{f"{a}_detour_m": d for a, d in detours.items()},
                     "duration_s": float(trajectory.times[-1])},
            files={"gripper_paths.png": PngFigure(gripper_paths_figure(grip_group, grip_indep)),
                   "detour.json": JsonFile(detours)},
        )
