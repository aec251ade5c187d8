"""Stage follow: one follower drives the simulated robot along the path."""

from __future__ import annotations

from core.artifacts import JsonFile
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.control.factory import check_follower_config
from stages.mecanum.control.follow_run import SimSettings, run_files, simulate
from stages.mecanum.paths.bundle import PathBundle
from stages.mecanum.paths.precompute import EntrySpeedTable


class Follow(Stage):
    """One follower on the simulator along the precomputed path."""

    outputs = ("metrics",)

    def __init__(self, follower: dict, animate: bool = True, max_frames: int = 40,
                 fps: float = 10.0, **sim):
        self.follower = check_follower_config(follower, "follower")
        self.sim = SimSettings.from_kwargs("pipeline.stages.follow", **sim)
        self.animate, self.max_frames, self.fps = bool(animate), int(max_frames), float(fps)

    def run(self, ctx: StageContext, path: PathBundle, table: EntrySpeedTable) -> StageResult:
        run = simulate(self.follower, path, table, self.sim, ctx.seed)
        m = run.metrics
        ctx.log.info("%s on %s: max deviation %.2f in, end error %.2f in, time to stop %.2f s, "
                     "overshoot %.2f in, peak traction %.2f, %d saturated ticks; loop %.0f µs "
                     "median (p99 %.0f µs), simulator %.1f× real time", run.name, path.name,
                     m["max_deviation_in"], m["end_error_in"], m["time_to_stop_s"],
                     m["overshoot_in"], m["peak_traction_fraction"], m["saturated_ticks"],
                     m["compute_median_us"], m["compute_p99_us"], m["sim_realtime_factor"])
        files = run_files(run, path, table, animate=self.animate, max_frames=self.max_frames,
                          fps=self.fps)
        files["summary.json"] = JsonFile({"path": path.name, "follower": self.follower,
                                          "metrics": m})
        return StageResult(outputs={"metrics": m}, metrics={**m, "path": path.name}, files=files)
