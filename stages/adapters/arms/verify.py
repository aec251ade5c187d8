"""The verify stage: every 125 Hz sample re-checked for clearance and limits, repaired or failed."""

from __future__ import annotations

import time

from core.artifacts import JsonFile, PngFigure
from stages.api import Stage, StageContext, StageResult
from stages.arms.recording import record_verified
from stages.arms.verification.plots import clearance_figure, joint_profiles_figure
from stages.arms.verification.verify import verify_trajectory
from stages.arms.world import limits_for, position_limits_for


class Verify(Stage):
    """Re-checks the trajectory; on a violation re-retimes with tighter corner blends
    (down to none: the exact checked polyline) up to ``max_repairs`` times, else fails
    naming the sample, its time and the geom pair (:mod:`stages.arms.verification.verify`)."""

    outputs = ("trajectory", "report")

    def __init__(self, rate_hz: float = 125.0, max_repairs: int = 3, max_deviation_rad: float = 0.02):
        self.rate_hz, self.max_repairs = float(rate_hz), int(max_repairs)
        self.max_deviation_rad = float(max_deviation_rad)

    def run(self, ctx: StageContext, world, trajectory, path=None) -> StageResult:
        t0 = time.perf_counter()
        v = verify_trajectory(world, trajectory, path, self.rate_hz, self.max_repairs, self.max_deviation_rad,
                              ctx.progress, ctx.log)
        elapsed_s = time.perf_counter() - t0
        record_verified(ctx.recorder, world, v)
        clear, traj = v.clearance, v.trajectory
        lower, upper = position_limits_for(world, traj.joint_names)
        vel, acc = limits_for(world, traj.joint_names)
        report = v.report()
        return StageResult(
            outputs={"trajectory": traj, "report": report},
            metrics={"samples": clear.distances_m.size, "violations": clear.violations + v.limits.violations,
                     "min_clearance_m": clear.min_clearance_m, "worst_sample": clear.worst_sample,
                     "worst_pair": " – ".join(clear.pairs[clear.worst_sample]), "repairs": v.repairs,
                     "time_s": elapsed_s},
            files={"report.json": JsonFile(report), "clearance.png": PngFigure(clearance_figure(clear)),
                   "joint_profiles.png": PngFigure(joint_profiles_figure(traj, lower, upper, vel, acc))},
        )
