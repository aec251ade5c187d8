"""Stage logs: Road Runner's ramp logs, read from a team's tuning folder or made on the simulator."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from core.artifacts import JsonFile
from core.settings import from_config
from hardware.mecanum.params import DriveParams
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.tuning.logset import read_ramp_logs, simulated_ramp_logs
from stages.mecanum.tuning.ramp_logs import ramp_log_json
from stages.mecanum.tuning.settings import RampLogsSettings


class RampLogs(Stage):
    """The forward, angular (and lateral) ramps a drive fit reads."""

    outputs = ("logs",)

    def __init__(self, drive: Mapping[str, Any] | DriveParams | None = None, **params: Any):
        self.settings = from_config(RampLogsSettings, params, "pipeline.stages.logs")
        self.drive = from_config(DriveParams, drive, "drive")
        self.robot = from_config(DriveParams, {**dataclasses.asdict(self.drive), **self.settings.truth},
                                 "pipeline.stages.logs.truth")

    def run(self, ctx: StageContext) -> StageResult:
        s = self.settings
        if s.folder is None:
            logs = simulated_ramp_logs(self.robot, s.ramp)
            ctx.log.info("ramp logs simulated on %s (%s over the drive config)", self.robot.name, s.truth)
        else:
            logs = read_ramp_logs(s.folder, s.in_per_tick)
            ctx.log.info("ramp logs: %s", logs.files)
        files = {f"{kind}.json": JsonFile(ramp_log_json(log))   # what the fit read, in Road Runner's schema
                 for kind, log in (("forward-ramp", logs.forward), ("angular-ramp", logs.angular),
                                   ("lateral-ramp", logs.lateral)) if log is not None}
        metrics = {"simulated": s.folder is None, "in_per_tick": logs.in_per_tick,
                   "forward_samples": len(logs.forward.voltages.values),
                   "angular_samples": len(logs.angular.voltages.values)}
        return StageResult(outputs={"logs": logs}, metrics=metrics, files=files)
