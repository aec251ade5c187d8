"""Stage teleop: scripted gamepad input builds paths on the fly and the robot follows them."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.artifacts import JsonFile, PngFigure, TextFile
from core.errors import ConfigError
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.control.factory import check_follower_config
from stages.mecanum.control.follow_run import log_csv
from stages.mecanum.paths.bundle import GifFile


class Teleop(Stage):
    """A scripted gamepad session: every target becomes a Hermite path, followed at once."""

    outputs = ("metrics",)

    def __init__(self, script: dict, follower: dict, drive: dict | None = None,
                 flatness_in: float = 0.05, accel_fraction: float = 0.8,
                 speed_fraction: float = 0.9, animate: bool = True, max_frames: int = 40,
                 fps: float = 10.0, dt_s: float = 0.01, substeps: int = 10):
        from hardware.mecanum.params import DriveParams
        from stages.mecanum.control.teleop import TeleopScript
        from stages.mecanum.paths.limits import PathLimits

        self.script = TeleopScript.from_config(script, "teleop")
        self.follower = check_follower_config(follower, "follower")
        if self.follower["kind"] != "skidaddle":
            raise ConfigError("teleop follows with follower.kind=skidaddle (Road Runner plans "
                              f"offline); got {self.follower['kind']!r}")
        self.drive = DriveParams.from_dict(drive, "drive")
        self.limits = PathLimits.from_drive(self.drive, accel_fraction, speed_fraction)
        self.flatness_in = float(flatness_in)
        self.dt_s, self.substeps = float(dt_s), int(substeps)
        self.animate, self.max_frames, self.fps = bool(animate), int(max_frames), float(fps)

    def run(self, ctx: StageContext) -> StageResult:
        from hardware.mecanum import drawing
        from stages.mecanum.control import plots
        from stages.mecanum.control.teleop import run_teleop

        res = run_teleop(self.script, self.follower, self.drive, self.limits,
                         flatness_in=self.flatness_in, dt_s=self.dt_s, substeps=self.substeps)
        log = res.log
        pts = np.vstack(res.paths) if res.paths else log["pose"][:, :2]
        files: dict[str, Any] = {"log.csv": TextFile(log_csv(log, np.nan_to_num(
            np.asarray(log["cross_track_in"]))), ".csv")}
        speed = np.hypot(*log["velocity"][:, :2].T)
        title = (f"teleop {self.script.name}: {res.metrics['replans']} paths, "
                 f"{res.metrics['interrupted']} interrupted")
        fig = plots.field_figure(res.paths[0] if res.paths else pts[:2], log["pose"], speed,
                                 self.limits.max_speed_in_s, title=title)
        ax = fig.axes[0]
        for k, p in enumerate(res.paths):
            ax.plot(p[:, 0], p[:, 1], "-", color="#2ca02c", linewidth=0.9, zorder=3,
                    label="Hermite paths" if k == 0 else None)
        for tgt in res.targets:
            ax.plot(tgt[0], tgt[1], "k*", markersize=9, zorder=6)
        ax.legend(loc="upper left", fontsize=7)
        files["field.png"] = PngFigure(fig)
        files["graphs.png"] = PngFigure(plots.graphs_figure(
            log, np.abs(np.nan_to_num(log["cross_track_in"])), title))
        files["events.json"] = JsonFile(res.events)
        if self.animate:
            frames = drawing.animation_frames(pts, log["pose"], log["time_s"],
                                              (self.drive.length_in, self.drive.width_in),
                                              self.max_frames, dpi=50, title="teleop")
            files["teleop.gif"] = GifFile(drawing.gif_bytes(frames, self.fps))
        return StageResult(outputs={"metrics": res.metrics}, metrics=res.metrics, files=files)
