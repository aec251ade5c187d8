"""Stage adapters: Follow, FollowCompare, Teleop and SweepSummary.

They check their config at construction (a wrong follower key fails before anything
runs), run the domain code of ``stages.mecanum.control`` on the simulator, and hand back
metrics and files. No Hydra here.
"""

from __future__ import annotations

import csv
import io
import json
import math
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from core.artifacts import PngFigure, TextFile
from core.errors import ConfigError
from hardware.mecanum.simulator import MecanumSimulator, OdometryNoise
from stages.mecanum.control.factory import build_follower, start_pose_of
from stages.mecanum.control.loop import LoopLog, run_loop
from stages.mecanum.control.metrics import METRIC_KEYS, follow_metrics, polyline_distance
from stages.mecanum.paths.bundle import GifFile, PathBundle
from stages.mecanum.paths.precompute import EntrySpeedTable


@dataclass(frozen=True)
class SimSettings:
    dt_s: float = 0.01
    substeps: int = 10
    max_time_s: float = 20.0
    settle_s: float = 0.3
    start_offset: tuple = (0.0, 0.0, 0.0)  # x_in, y_in, heading_rad from the path's start
    start_velocity: tuple = (0.0, 0.0, 0.0)  # field frame in/s, rad/s
    odometry_noise: dict | None = None  # OdometryNoise fields
    battery_reading_v: float | None = None  # what the voltage sensor reads (None = true)

    @classmethod
    def from_kwargs(cls, where: str, **kw) -> SimSettings:
        allowed = [f.name for f in fields(cls)]
        unknown = sorted(set(kw) - set(allowed))
        if unknown:
            raise ConfigError(f"{where} has unknown key(s) {unknown}; allowed: {allowed}")
        s = cls(**kw)
        for name in ("dt_s", "max_time_s"):
            v = getattr(s, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ConfigError(f"{where}.{name} must be > 0; got {v!r}")
        for name in ("start_offset", "start_velocity"):
            v = np.asarray(getattr(s, name), dtype=float)
            if v.shape != (3,) or not np.all(np.isfinite(v)):
                raise ConfigError(f"{where}.{name} must be 3 finite numbers; got {v.tolist()}")
        if s.odometry_noise is not None:
            OdometryNoise(**s.odometry_noise)
        return s


@dataclass
class FollowRun:
    name: str
    log: LoopLog
    metrics: dict
    deviation: np.ndarray
    wall_s: float


def simulate(follower_cfg: dict, path: PathBundle, table: EntrySpeedTable, sim: SimSettings,
             seed: int = 0, where: str = "follower") -> FollowRun:
    """One follower on one path from the path's start (plus the configured offset)."""
    start = start_pose_of(table, sim.start_offset)
    follower = build_follower(follower_cfg, drive=path.drive, table=table, chain=path.chain,
                              start_heading=float(start_pose_of(table)[2]), dt_s=sim.dt_s,
                              where=where)
    noise = OdometryNoise(**sim.odometry_noise) if sim.odometry_noise else None
    simulator = MecanumSimulator(path.drive, dt_s=sim.dt_s, substeps=sim.substeps, pose=start,
                                 velocity=sim.start_velocity, noise=noise, seed=seed)
    t0 = time.perf_counter()
    log = run_loop(simulator, follower, max_time_s=sim.max_time_s, settle_s=sim.settle_s,
                   battery_reading_v=sim.battery_reading_v)
    wall = time.perf_counter() - t0
    m = follow_metrics(log["time_s"], log["pose"], log["velocity"], log["traction"],
                       log["saturated"], log["slipping"], table.points_in)
    compute, step = log["compute_s"], log["sim_s"][:-1]
    m.update({
        "follower": follower.name, "ticks": log.ticks,
        "compute_median_us": float(np.median(compute) * 1e6),
        "compute_p99_us": float(np.percentile(compute, 99) * 1e6),
        "sim_step_median_us": float(np.median(step) * 1e6) if len(step) else 0.0,
        "sim_realtime_factor": float(len(step) * sim.dt_s / max(step.sum(), 1e-12)),
        "loop_realtime_factor": float(m["duration_s"] / max(wall, 1e-12)),
    })
    m["accel_limit_in_s2"] = float(follower.params.max_profile_accel_in_s2
                                   if hasattr(follower, "profile") else table.limits.max_accel_in_s2)
    if hasattr(follower, "profile"):  # the baseline: how far behind its own plan it fell
        from stages.mecanum.control.metrics import track_progress

        actual = track_progress(log["pose"], np.asarray(follower.path.points))
        m["max_lag_in"] = float(np.max(log["progress_in"] - actual))
        m["planned_time_s"] = follower.profile.duration_s
        m["planned_peak_centripetal_in_s2"] = float(np.max(
            follower.profile.v ** 2 * np.abs(follower.profile.curvature)))
    dev = polyline_distance(log["pose"], table.points_in)
    return FollowRun(follower.name, log, m, dev, wall)


LOG_COLUMNS = ("time_s", "x_in", "y_in", "heading_rad", "vx_in_s", "vy_in_s", "omega_rad_s",
               "speed_in_s", "ax_in_s2", "ay_in_s2", "power_lf", "power_lb", "power_rb",
               "power_rf", "volts_lf", "volts_lb", "volts_rb", "volts_rf", "wheel_lf_in_s",
               "wheel_lb_in_s", "wheel_rb_in_s", "wheel_rf_in_s", "traction_max", "slipping",
               "saturated", "deviation_in", "cross_track_in", "heading_error_rad",
               "target_speed_in_s", "progress_in", "segment", "mode", "active", "compute_us")


def log_csv(log: LoopLog, deviation: np.ndarray) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(LOG_COLUMNS)
    p, v, a = log["pose"], log["velocity"], log["accel"]
    for k in range(log.ticks):
        w.writerow([f"{log['time_s'][k]:.3f}", *(f"{x:.4f}" for x in p[k]),
                    *(f"{x:.4f}" for x in v[k]), f"{math.hypot(v[k, 0], v[k, 1]):.4f}",
                    *(f"{x:.3f}" for x in a[k, :2]), *(f"{x:.4f}" for x in log["power"][k]),
                    *(f"{x:.3f}" for x in log["volts"][k]),
                    *(f"{x:.3f}" for x in log["wheel_speed_in_s"][k]),
                    f"{log['traction'][k].max():.3f}", int(log["slipping"][k]),
                    int(log["saturated"][k]), f"{deviation[k]:.4f}",
                    f"{log['cross_track_in'][k]:.4f}", f"{log['heading_error_rad'][k]:.5f}",
                    f"{log['target_speed_in_s'][k]:.3f}", f"{log['progress_in'][k]:.3f}",
                    int(log["segment"][k]), log.mode[k], log.active[k],
                    f"{log['compute_s'][k] * 1e6:.1f}"])
    return buf.getvalue()


def run_files(run: FollowRun, path: PathBundle, table: EntrySpeedTable, *, animate: bool,
              max_frames: int, fps: float, prefix: str = "") -> dict[str, Any]:
    """log.csv, field.png, graphs.png, follow.gif for one run."""
    from hardware.mecanum import drawing
    from stages.mecanum.control import plots

    log, m = run.log, run.metrics
    speed = np.hypot(*log["velocity"][:, :2].T)
    worst = log["pose"][int(np.argmax(run.deviation)), :2]
    title = (f"{path.name} · {run.name}: max dev {m['max_deviation_in']:.2f} in, "
             f"end {m['end_error_in']:.2f} in, stop {m['time_to_stop_s']:.2f} s")
    footprint = (path.drive.length_in, path.drive.width_in)
    files: dict[str, Any] = {
        f"{prefix}log.csv": TextFile(log_csv(log, run.deviation), ".csv"),
        f"{prefix}field.png": PngFigure(plots.field_figure(
            table.points_in, log["pose"], speed, max(table.limits.max_speed_in_s, speed.max()),
            original=path.original.sample(), footprint_in=footprint, focus=worst, title=title)),
        f"{prefix}graphs.png": PngFigure(plots.graphs_figure(log, run.deviation, title)),
    }
    if animate:
        frames = drawing.animation_frames(table.points_in, log["pose"], log["time_s"], footprint,
                                          max_frames, dpi=50, title=f"{path.name} {run.name}")
        files[f"{prefix}follow.gif"] = GifFile(drawing.gif_bytes(frames, fps))
    return files


def format_cell(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def compare_table(path_name: str, runs: dict[str, dict]) -> str:
    cols = (*METRIC_KEYS, "slip_ticks", "stopped")
    lines = [f"# {path_name}: follower comparison", "",
             "| follower | " + " | ".join(cols) + " |",
             "|---|" + "---:|" * len(cols)]
    for name, m in runs.items():
        lines.append(f"| {name} | " + " | ".join(format_cell(m[c]) for c in cols) + " |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- sweeps
SWEEP_COLUMNS = ("path", "follower", "accel_limit_in_s2", *METRIC_KEYS, "slip_ticks",
                 "stopped", "compute_median_us", "status", "run")


def gather_sweep(sweep_dir: Path) -> list[dict]:
    """One row per job folder (``<sweep_dir>/<n>/metrics.json`` of ``pipeline=follow``)."""
    rows = []
    for metrics_file in sorted(Path(sweep_dir).glob("*/metrics.json"),
                               key=lambda p: (len(p.parent.name), p.parent.name)):
        m = json.loads(metrics_file.read_text())
        status_file = metrics_file.parent / "status.json"
        status = json.loads(status_file.read_text())["status"] if status_file.exists() else "?"
        if "follow.follower" not in m:
            continue
        row = {"path": m.get("follow.path", m.get("path.name", "?")),
               "follower": m["follow.follower"], "status": status,
               "run": metrics_file.parent.name}
        for k in SWEEP_COLUMNS[2:-2]:
            row[k] = m.get(f"follow.{k}")
        rows.append(row)
    limits: dict[str, set] = {}
    for r in rows:  # one follower swept over several limits: tell them apart
        limits.setdefault(r["follower"], set()).add(r["accel_limit_in_s2"])
    for r in rows:
        if len(limits[r["follower"]]) > 1:
            r["follower"] = f"{r['follower']}@{r['accel_limit_in_s2']:g}"
    return rows
