"""The retime stage: the group path → a 125 Hz trajectory under every joint's limits."""

from __future__ import annotations

from core.artifacts import NpzFile
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.arms.recording import record_trajectory
from stages.arms.retiming.retime import retime_with_report
from stages.arms.retiming.settings import RetimerSettings
from stages.arms.world import limits_for


class Retime(Stage):
    """Time-parameterizes the path at ``rate_hz``; zero limit violations at the samples."""

    outputs = ("trajectory",)

    def __init__(self, rate_hz: float = 125.0, max_deviation_rad: float = 0.02):
        settings = from_config(RetimerSettings, {"rate_hz": rate_hz, "max_deviation_rad": max_deviation_rad},
                               "retimer")
        self.rate_hz = settings.rate_hz
        self.options = {"max_deviation_rad": settings.max_deviation_rad}

    def run(self, ctx: StageContext, world, path) -> StageResult:
        vel, acc = limits_for(world, path.joint_names)
        result = retime_with_report(path, vel, acc, self.rate_hz, **self.options)
        traj = result.trajectory
        ctx.log.info("retimed %d waypoints to %.3f s (%d samples at %g Hz)", len(path.waypoints),
                     result.duration_s, traj.num_samples, self.rate_hz)
        record_trajectory(ctx.recorder, world, traj)
        metrics = result.metrics()
        metrics["time_s"] = metrics.pop("compute_time_s")
        return StageResult(outputs={"trajectory": traj}, metrics=metrics,
                           files={"trajectory.npz": NpzFile(traj.to_npz_arrays())})
