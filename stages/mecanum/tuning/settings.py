"""Settings of ``pipeline=fit_drive``'s stages (``pipeline.stages.<stage>``), read with
:func:`core.settings.from_config`; no Hydra import."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

from core.settings import require
from hardware.mecanum.params import DriveParams
from stages.mecanum.tuning.ramp_sim import RampSettings

FITTED = ("motor_free_speed_rpm", "motor_stall_torque_nm", "rolling_friction_coefficient",
          "track_width_in", "battery_voltage_v")   # what the ramps determine (drive_fit's module doc)


@dataclass(frozen=True)
class RampLogsSettings:
    """``pipeline.stages.logs``: Road Runner's ramp logs from ``folder`` (its
    ``RoadRunner/tuning`` folder: ``forward-ramp/<ms>.json``, ``angular-ramp/<ms>.json``, the newest
    of each; or ``forward-ramp*.json`` beside each other), with the drive encoders'
    ``in_per_tick`` (the quickstart's ``MecanumDrive.PARAMS.inPerTick``; the logs do not hold it).
    ``folder: null`` runs the loggers on the simulator instead, its robot the ``drive`` config
    with ``truth`` over it (the values a fit should find), logged as ``ramp``."""

    folder: str | None = None
    in_per_tick: float | None = None
    truth: dict[str, Any] = field(default_factory=dict)
    ramp: RampSettings = field(default_factory=RampSettings)

    def __post_init__(self) -> None:
        allowed = [f.name for f in fields(DriveParams)]
        for key in self.truth:
            require(key in allowed, f"truth.{key}", self.truth[key], f"a DriveParams key: {allowed}")
        require(self.folder is None or self.in_per_tick is not None, "in_per_tick", self.in_per_tick,
                "the drive encoders' inches per tick (a number > 0) with a folder of real logs")
        require(self.in_per_tick is None or (math.isfinite(self.in_per_tick) and self.in_per_tick > 0),
                "in_per_tick", self.in_per_tick, "a finite number > 0")


@dataclass(frozen=True)
class FitDriveSettings:
    """``pipeline.stages.fit``: the fitted drive's ``name`` (its config file
    ``conf/drive/<name>.yaml`` in the stage folder) and the fit's sliding window."""

    name: str = "fitted"
    window_s: float = 0.25

    def __post_init__(self) -> None:
        require(bool(self.name) and "/" not in self.name, "name", self.name, "a file name without '/'")
        require(self.window_s > 0, "window_s", self.window_s, "> 0 s")


@dataclass(frozen=True)
class TuneSettings:
    """``pipeline.stages.tune``: each follower's gains tuned by the one procedure
    (:func:`~stages.mecanum.tuning.gains.tune_gains`) within ``budget`` runs of the paths."""

    budget: int = 30
    max_time_s: float = 20.0

    def __post_init__(self) -> None:
        require(self.budget >= 1, "budget", self.budget, "≥ 1")
        require(self.max_time_s > 0, "max_time_s", self.max_time_s, "> 0 s")
