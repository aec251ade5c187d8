"""Stage teleop: scripted gamepad input builds paths on the fly and the robot follows them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.errors import ConfigError
from core.settings import from_config
from hardware.mecanum.params import DriveParams
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.control.follow_files import teleop_files
from stages.mecanum.control.settings import FollowerSettings
from stages.mecanum.control.teleop import run_teleop
from stages.mecanum.control.teleop_settings import TeleopRunSettings, TeleopSettings
from stages.mecanum.recording import record_teleop


class Teleop(Stage):
    """A scripted gamepad session: every target becomes a Hermite path, followed at once."""

    outputs = ("metrics",)

    def __init__(self, script: Mapping[str, Any] | TeleopSettings,
                 follower: Mapping[str, Any] | FollowerSettings,
                 drive: Mapping[str, Any] | DriveParams | None = None, **params: Any):
        self.script = from_config(TeleopSettings, script, "teleop")
        self.follower = from_config(FollowerSettings, follower, "follower")
        if self.follower.kind != "skidaddle":
            raise ConfigError("teleop follows with follower.kind=skidaddle (Road Runner plans "
                              f"offline); got {self.follower.kind!r}")
        self.drive = from_config(DriveParams, drive, "drive")
        self.settings = from_config(TeleopRunSettings, params, "pipeline.stages.teleop")

    def run(self, ctx: StageContext) -> StageResult:
        s = self.settings
        res = run_teleop(self.script, self.follower, self.drive, s)
        record_teleop(ctx.recorder, res, self.drive)
        files = teleop_files(res, self.script.name, self.drive, animate=s.animate,
                             max_frames=s.max_frames, fps=s.fps)
        return StageResult(outputs={"metrics": res.metrics}, metrics=res.metrics, files=files)
