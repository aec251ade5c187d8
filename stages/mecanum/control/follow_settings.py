"""Settings of the follow, compare and sweep-summary stages (``pipeline.stages.<stage>``).

Read with :func:`core.settings.from_config`, e.g.
``from_config(FollowSettings, params, "pipeline.stages.follow")``; no Hydra import.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from core.settings import require
from hardware.mecanum.simulator import OdometryNoise
from stages.mecanum.control.settings import (
    FollowerSettings,
    Pose,
    is_finite,
    require_animation,
    require_positive,
)


@dataclass(frozen=True)
class SimSettings:
    """One follower on the simulator: step, time limit, start, sensing."""

    dt_s: float = 0.01  # control step (a Control Hub loop)
    substeps: int = 10  # physics substeps per control step
    max_time_s: float = 20.0
    settle_s: float = 0.3  # at rest this long after the follower is done = the end
    start_offset: Pose = (0.0, 0.0, 0.0)  # x_in, y_in, heading_rad from the path's start
    start_velocity: Pose = (0.0, 0.0, 0.0)  # field frame in/s, rad/s
    odometry_noise: OdometryNoise | None = None
    battery_reading_v: float | None = None  # what the voltage sensor reads (None = true)

    def __post_init__(self) -> None:
        require_positive("dt_s", self.dt_s)
        require(self.substeps >= 1, "substeps", self.substeps, "≥ 1")
        require_positive("max_time_s", self.max_time_s)
        require(is_finite(self.settle_s) and self.settle_s >= 0, "settle_s", self.settle_s, "≥ 0")
        for name in ("start_offset", "start_velocity"):
            value = getattr(self, name)
            require(all(map(math.isfinite, value)), name, value, "3 finite numbers")
        if self.battery_reading_v is not None:
            require_positive("battery_reading_v", self.battery_reading_v)


@dataclass(frozen=True)
class FollowSettings(SimSettings):
    """``pipeline.stages.follow``: the simulation and its pictures."""

    animate: bool = True  # follow.gif
    max_frames: int = 40
    fps: float = 10.0

    def __post_init__(self) -> None:
        super().__post_init__()
        require_animation(self)


@dataclass(frozen=True)
class CompareSettings(SimSettings):
    """``pipeline.stages.compare``: several followers (name → settings) on one path."""

    followers: dict[str, FollowerSettings] = field(default_factory=dict)
    animate: bool = False
    max_frames: int = 30
    fps: float = 10.0
    follower_files: bool = True  # each follower's log.csv, field.png, graphs.png

    def __post_init__(self) -> None:
        super().__post_init__()
        require_animation(self)
        require(bool(self.followers), "followers", self.followers,
                "a non-empty mapping name → follower settings")

    def named_followers(self) -> dict[str, FollowerSettings]:
        """Each follower named by its key (the table's rows, the metrics' prefix)."""
        return {k: dataclasses.replace(f, name=k) for k, f in self.followers.items()}
