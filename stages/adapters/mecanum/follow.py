"""Stage follow: one follower drives the simulated robot along the path."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.artifacts import JsonFile
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.control.follow_files import run_files
from stages.mecanum.control.follow_settings import FollowSettings
from stages.mecanum.control.follow_sim import simulate
from stages.mecanum.control.settings import FollowerSettings
from stages.mecanum.paths.bundle import PathBundle
from stages.mecanum.paths.precompute import EntrySpeedTable
from stages.mecanum.recording import record_follow


class Follow(Stage):
    """One follower on the simulator along the precomputed path."""

    outputs = ("metrics",)

    def __init__(self, follower: Mapping[str, Any] | FollowerSettings, **params: Any):
        self.follower = from_config(FollowerSettings, follower, "follower")
        self.settings = from_config(FollowSettings, params, "pipeline.stages.follow")

    def run(self, ctx: StageContext, path: PathBundle, table: EntrySpeedTable) -> StageResult:
        s = self.settings
        run = simulate(self.follower, path, table, s, ctx.seed)
        m = run.metrics
        ctx.log.info("%s on %s: max deviation %.2f in, end error %.2f in, time to stop %.2f s, "
                     "overshoot %.2f in, peak traction %.2f, %d saturated ticks; loop %.0f µs "
                     "median (p99 %.0f µs), simulator %.1f× real time", run.name, path.name,
                     m["max_deviation_in"], m["end_error_in"], m["time_to_stop_s"],
                     m["overshoot_in"], m["peak_traction_fraction"], m["saturated_ticks"],
                     m["compute_median_us"], m["compute_p99_us"], m["sim_realtime_factor"])
        record_follow(ctx.recorder, run, path.drive)
        files = run_files(run, path, table, animate=s.animate, max_frames=s.max_frames,
                          fps=s.fps)
        files["summary.json"] = JsonFile({"path": path.name, "follower": self.follower.as_dict(),
                                          "metrics": m})
        return StageResult(outputs={"metrics": m}, metrics={**m, "path": path.name}, files=files)
