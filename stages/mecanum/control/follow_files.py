"""The files of control runs: one run's log and pictures, the follower comparison table,
the tele-op session's files.

Artifacts (``core.artifacts``) keyed by file name; the stage adapters hand them to the runner.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.artifacts import JsonFile, PngFigure, TextFile
from hardware.mecanum import drawing
from hardware.mecanum.params import DriveParams
from stages.mecanum.control import plots
from stages.mecanum.control.csv_log import log_csv
from stages.mecanum.control.follow_sim import FollowRun
from stages.mecanum.control.metrics import METRIC_KEYS
from stages.mecanum.control.teleop import TeleopResult
from stages.mecanum.paths.bundle import GifFile, PathBundle
from stages.mecanum.paths.precompute import EntrySpeedTable


def run_files(run: FollowRun, path: PathBundle, table: EntrySpeedTable, *, animate: bool,
              max_frames: int, fps: float, prefix: str = "") -> dict[str, Any]:
    """log.csv, field.png, graphs.png, follow.gif for one run."""

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
    """Markdown: one row per follower, the follow metrics as columns."""
    cols = (*METRIC_KEYS, "slip_ticks", "stopped")
    lines = [f"# {path_name}: follower comparison", "",
             "| follower | " + " | ".join(cols) + " |",
             "|---|" + "---:|" * len(cols)]
    for name, m in runs.items():
        lines.append(f"| {name} | " + " | ".join(format_cell(m[c]) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def teleop_files(res: TeleopResult, script_name: str, drive: DriveParams, *, animate: bool,
                 max_frames: int, fps: float) -> dict[str, Any]:
    """log.csv, field.png, graphs.png, events.json, teleop.gif of a tele-op session."""

    log = res.log
    pts = np.vstack(res.paths) if res.paths else log["pose"][:, :2]
    files: dict[str, Any] = {"log.csv": TextFile(log_csv(log, np.nan_to_num(
        np.asarray(log["cross_track_in"]))), ".csv")}
    speed = np.hypot(*log["velocity"][:, :2].T)
    title = (f"teleop {script_name}: {res.metrics['replans']} paths, "
             f"{res.metrics['interrupted']} interrupted")
    files["field.png"] = PngFigure(plots.teleop_figure(
        res.paths, res.targets, log["pose"], speed, res.limits.max_speed_in_s, title))
    files["graphs.png"] = PngFigure(plots.graphs_figure(
        log, np.abs(np.nan_to_num(log["cross_track_in"])), title))
    files["events.json"] = JsonFile(res.events)
    if animate:
        frames = drawing.animation_frames(pts, log["pose"], log["time_s"],
                                          (drive.length_in, drive.width_in),
                                          max_frames, dpi=50, title="teleop")
        files["teleop.gif"] = GifFile(drawing.gif_bytes(frames, fps))
    return files
