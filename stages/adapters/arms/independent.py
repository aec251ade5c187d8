"""Stages of the crossing benchmark: the independent baseline and the group-vs-baseline comparison."""

from __future__ import annotations

import numpy as np

from core.artifacts import NpzFile
from stages.api import Stage, StageContext, StageResult
from stages.arms.planning.checker import ClearanceChecker
from stages.arms.planning.goals import make_group, planner_settings
from stages.arms.planning.independent import colliding_frames, plan_independent
from stages.arms.recording import record_independent
from stages.arms.retiming.retime import retime_with_report
from stages.arms.world import limits_for


class Independent(Stage):
    """Plans each arm alone to the group's goal, runs them on one clock, counts touching frames."""

    outputs = ("independent",)

    def __init__(self, frames: int = 210, planner=None, rate_hz: float = 125.0,
                 max_deviation_rad: float = 0.02):
        self.frames = int(frames)
        self.settings = planner_settings(planner)
        self.rate_hz, self.max_deviation_rad = float(rate_hz), float(max_deviation_rad)

    def run(self, ctx: StageContext, world, path) -> StageResult:
        group = make_group(world, None, self.settings)
        vel, acc = limits_for(world, group.joint_names)
        index = {j: i for i, j in enumerate(group.joint_names)}

        def retime(p):
            cols = [index[j] for j in p.joint_names]
            return retime_with_report(p, [vel[c] for c in cols], [acc[c] for c in cols], self.rate_hz,
                                      max_deviation_rad=self.max_deviation_rad).trajectory

        start, goal = path.waypoints[0], path.waypoints[-1]
        plan = plan_independent(group, start, goal, ctx.rng, retime)
        frames = plan.at(np.linspace(0.0, plan.duration_s, self.frames))
        touching = colliding_frames(ClearanceChecker.for_world(world, group.joint_names, 0.0), frames)
        within = colliding_frames(ClearanceChecker.for_world(world, group.joint_names, world.clearance_m),
                                  frames)
        record_independent(ctx.recorder, world, plan.joint_names,
                           np.linspace(0.0, plan.duration_s, self.frames), frames, touching)
        ctx.log.info("independent plans run together: %d of %d frames touch", touching.sum(), self.frames)
        return StageResult(
            outputs={"independent": plan},
            metrics={"frames": self.frames, "colliding_frames": int(touching.sum()),
                     "frames_within_clearance": int(within.sum()), "duration_s": plan.duration_s,
                     **{f"{a}_duration_s": d for a, d in plan.durations_s.items()}},
            files={"frames.npz": NpzFile({"joint_names": list(plan.joint_names), "frames": frames,
                                          "colliding": touching}),
                   **{f"{a}_path.npz": NpzFile({"joint_names": list(p.joint_names),
                                                "waypoints": p.waypoints}) for a, p in plan.paths.items()}},
        )
