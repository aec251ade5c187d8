"""Settings of the ``follower`` config group (and the checks the control settings share).

Frozen dataclasses, units in the field names, read with :func:`core.settings.from_config`
(``from_config(FollowerSettings, cfg.follower, "follower")``), which checks keys and types
and names the full key in every error; the ranges are checked here. No Hydra import.

A follower's ``kind`` selects the follower; the YAML is flat (``conf/follower/*.yaml``):
SKIDADDLE's groups (``along_path``, ``scheduler``, ``pidf``, ...) and the Road Runner-style
follower's numbers (``max_profile_accel_in_s2``, ...) are all fields of one
:class:`FollowerSettings` (so the whole group is one Hydra structured config, with no
``None`` sub-node an override could not descend into), at the defaults of
:class:`SkidaddleSettings` and :class:`RoadRunnerParams`; the other kind's settings must
stay at their defaults (a changed one is an error naming it).
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass, field
from typing import Any, Literal

from core.errors import ConfigError
from core.settings import InvalidSetting, from_config, require, setting_names

HeadingMode = Literal["tangent", "constant"]  # face along the path | hold the start heading
HEADINGS: tuple[str, ...] = typing.get_args(HeadingMode)
Pose = tuple[float, float, float]  # x_in, y_in, heading_rad


def is_finite(value: float) -> bool:
    return value is not None and math.isfinite(value)


def _non_negative(settings: Any) -> None:
    """Every number of ``settings`` (None = left to a default) finite and ≥ 0."""
    for name in setting_names(type(settings)):
        value = getattr(settings, name)
        if value is not None:
            require(is_finite(value) and value >= 0, name, value, "a finite number ≥ 0")


def require_positive(name: str, value: float) -> None:
    require(is_finite(value) and value > 0, name, value, "a finite number > 0")


def require_animation(settings: Any) -> None:
    require(settings.max_frames >= 1, "max_frames", settings.max_frames, "≥ 1")
    require_positive("fps", settings.fps)


# ----------------------------------------------------------------------- SKIDADDLE
@dataclass(frozen=True)
class FeedforwardGains:
    """kS, kV, kA in volts at the motor's rated voltage; None = the drivetrain model's."""

    kS: float | None = None  # V
    kV: float | None = None  # V per in/s of wheel surface speed
    kA: float | None = None  # V per in/s² of wheel acceleration

    def __post_init__(self) -> None:
        _non_negative(self)


@dataclass(frozen=True)
class BackOntoPathSettings:
    """Cancel the transverse velocity (priority 0 by default)."""

    tau_s: float = 0.05
    max_accel_in_s2: float | None = None  # None: the drivetrain's traction acceleration
    weight: float = 1.0
    priority: int = 0

    def __post_init__(self) -> None:
        _non_negative(self)


@dataclass(frozen=True)
class HeadingControlSettings:
    """The heading PD loop."""

    omega_n_rad_s: float = 8.0
    zeta: float = 1.0
    max_accel_rad_s2: float = 20.0
    weight: float = 1.0
    priority: int = 1

    def __post_init__(self) -> None:
        _non_negative(self)


@dataclass(frozen=True)
class AlongPathSettings:
    """Speed the convergent part up (or brake it) toward the precomputed limit."""

    tau_s: float = 0.1
    max_accel_in_s2: float | None = None  # None: the path's acceleration budget
    max_brake_in_s2: float | None = None  # None: the path's braking budget
    weight: float = 1.0
    priority: int = 1

    def __post_init__(self) -> None:
        _non_negative(self)


@dataclass(frozen=True)
class EndCorrectionSettings:
    """Near the end, steer the whole velocity onto the end point."""

    tau_s: float = 0.05
    gain_per_s: float = 8.0  # speed per inch of distance near the point
    brake_in_s2: float = 60.0  # the braking the approach plans with
    max_speed_in_s: float | None = None  # None: the path's max speed
    max_accel_in_s2: float | None = None  # None: the path's acceleration budget
    weight: float = 1.0
    priority: int = 0

    def __post_init__(self) -> None:
        _non_negative(self)


@dataclass(frozen=True)
class StopSettings:
    """The default controller: bring the velocity to zero."""

    tau_s: float = 0.1
    max_accel_in_s2: float | None = None  # None: the path's acceleration budget
    max_accel_rad_s2: float = 20.0
    weight: float = 1.0
    priority: int = 0

    def __post_init__(self) -> None:
        _non_negative(self)


@dataclass(frozen=True)
class SchedulerSettings:
    """Projection, look-ahead by braking distance, the end zone."""

    lookahead_min_in: float = 1.5  # goal distance ahead at low speed
    lookahead_max_in: float = 12.0
    lookahead_gain: float = 1.0  # look-ahead = gain × braking distance v² / (2 b)
    window_in: float = 24.0  # projection search window ahead of the robot
    end_zone_in: float = 3.0  # end correction takes over this far from the end
    end_tolerance_in: float = 0.2  # at rest within this of the end point = done
    rest_speed_in_s: float = 0.5

    def __post_init__(self) -> None:
        _non_negative(self)


@dataclass(frozen=True)
class AllocatorSettings:
    voltage_reserve: float = 0.1  # share of the battery voltage kept for the PIDF's feedback
    traction_fraction: float = 0.95  # share of each wheel's friction limit handed out
    cruise_voltage_fraction: float = 0.9  # cruise no faster than this share of the voltage

    def __post_init__(self) -> None:
        _non_negative(self)


@dataclass(frozen=True)
class PidGains:
    """Per-wheel PIDF feedback, volts at the motor's rated voltage."""

    kP: float = 0.25  # V per in/s
    kI: float = 0.5  # V per in
    kD: float = 0.0  # V per in/s²
    i_limit_v: float = 1.0  # |kI·∫e| ≤ this
    track_band_in_s: float = 3.0  # the target speed stays within this of the measured one

    def __post_init__(self) -> None:
        _non_negative(self)


@dataclass(frozen=True)
class SkidaddleSettings:
    """SKIDADDLE's controllers, scheduler, allocator and wheel PIDF."""

    back_onto_path: BackOntoPathSettings = field(default_factory=BackOntoPathSettings)
    heading_control: HeadingControlSettings = field(default_factory=HeadingControlSettings)
    along_path: AlongPathSettings = field(default_factory=AlongPathSettings)
    end_correction: EndCorrectionSettings = field(default_factory=EndCorrectionSettings)
    stop: StopSettings = field(default_factory=StopSettings)
    scheduler: SchedulerSettings = field(default_factory=SchedulerSettings)
    allocator: AllocatorSettings = field(default_factory=AllocatorSettings)
    pidf: PidGains = field(default_factory=PidGains)


# ------------------------------------------------------------- Road Runner-style baseline
@dataclass(frozen=True)
class RoadRunnerParams:
    """The Road Runner 1.0-style follower (defaults: the quickstart's limits, tuned gains)."""

    max_wheel_vel_in_s: float = 50.0
    min_profile_accel_in_s2: float = -30.0
    max_profile_accel_in_s2: float = 50.0
    max_ang_vel_rad_s: float = math.pi
    resolution_in: float = 0.25  # profile sample spacing
    axial_gain: float = 6.0
    lateral_gain: float = 6.0
    heading_gain: float = 6.0
    axial_vel_gain: float = 0.5
    lateral_vel_gain: float = 0.5
    heading_vel_gain: float = 0.5
    end_correction_s: float = 0.0  # 0 = stop commanding when the profile ends
    end_tolerance_in: float = 0.2

    def __post_init__(self) -> None:
        for name in ("max_wheel_vel_in_s", "max_profile_accel_in_s2", "max_ang_vel_rad_s",
                     "resolution_in", "end_tolerance_in"):
            require_positive(name, getattr(self, name))
        require(is_finite(self.min_profile_accel_in_s2) and self.min_profile_accel_in_s2 < 0,
                "min_profile_accel_in_s2", self.min_profile_accel_in_s2, "< 0 (a deceleration)")
        for name in ("axial_gain", "lateral_gain", "heading_gain", "axial_vel_gain",
                     "lateral_vel_gain", "heading_vel_gain", "end_correction_s"):
            value = getattr(self, name)
            require(is_finite(value) and value >= 0, name, value, "a finite number ≥ 0")


# ---------------------------------------------------------------------- the group
_SKIDADDLE, _ROADRUNNER = SkidaddleSettings(), RoadRunnerParams()


@dataclass(frozen=True)
class FollowerSettings:
    """The ``follower`` config group (``conf/follower/*.yaml``), either kind."""

    kind: Literal["skidaddle", "roadrunner"]
    name: str | None = None  # None: the kind
    heading: HeadingMode = "constant"
    # "model" (or None): kS, kV, kA from the drivetrain's physics; or FeedforwardGains' keys
    feedforward: FeedforwardGains | Any = "model"
    # kind: skidaddle
    back_onto_path: BackOntoPathSettings = field(default_factory=BackOntoPathSettings)
    heading_control: HeadingControlSettings = field(default_factory=HeadingControlSettings)
    along_path: AlongPathSettings = field(default_factory=AlongPathSettings)
    end_correction: EndCorrectionSettings = field(default_factory=EndCorrectionSettings)
    stop: StopSettings = field(default_factory=StopSettings)
    scheduler: SchedulerSettings = field(default_factory=SchedulerSettings)
    allocator: AllocatorSettings = field(default_factory=AllocatorSettings)
    pidf: PidGains = field(default_factory=PidGains)
    # kind: roadrunner
    max_wheel_vel_in_s: float = _ROADRUNNER.max_wheel_vel_in_s
    min_profile_accel_in_s2: float = _ROADRUNNER.min_profile_accel_in_s2
    max_profile_accel_in_s2: float = _ROADRUNNER.max_profile_accel_in_s2
    max_ang_vel_rad_s: float = _ROADRUNNER.max_ang_vel_rad_s
    resolution_in: float = _ROADRUNNER.resolution_in
    axial_gain: float = _ROADRUNNER.axial_gain
    lateral_gain: float = _ROADRUNNER.lateral_gain
    heading_gain: float = _ROADRUNNER.heading_gain
    axial_vel_gain: float = _ROADRUNNER.axial_vel_gain
    lateral_vel_gain: float = _ROADRUNNER.lateral_vel_gain
    heading_vel_gain: float = _ROADRUNNER.heading_vel_gain
    end_correction_s: float = _ROADRUNNER.end_correction_s
    end_tolerance_in: float = _ROADRUNNER.end_tolerance_in

    def __post_init__(self) -> None:
        if self.name is None:
            object.__setattr__(self, "name", self.kind)
        ff = self.feedforward
        if ff is not None and not isinstance(ff, FeedforwardGains) and ff != "model":
            try:  # one of two shapes: checked here, so the error names what both allow
                object.__setattr__(self, "feedforward",
                                   from_config(FeedforwardGains, ff, "feedforward"))
            except ConfigError as exc:
                raise InvalidSetting("feedforward", ff, "'model' or a mapping of "
                                     f"{setting_names(FeedforwardGains)}, each ≥ 0 ({exc})"
                                     ) from None
        other = "roadrunner" if self.kind == "skidaddle" else "skidaddle"
        for name in _KIND_KEYS[other]:  # the other kind's keys stay at their defaults
            value = getattr(self, name)
            require(value == getattr(_DEFAULTS[other], name), name, _plain(value),
                    f"only with kind: {other} (this is {self.kind})")
        if self.kind == "roadrunner":
            self.roadrunner()  # its ranges, named by key

    def _of(self, kind: str) -> dict[str, Any]:
        return {k: getattr(self, k) for k in _KIND_KEYS[kind]}

    def skidaddle(self) -> SkidaddleSettings:
        """SKIDADDLE's settings (``kind: skidaddle``)."""
        return SkidaddleSettings(**self._of("skidaddle"))

    def roadrunner(self) -> RoadRunnerParams:
        """The baseline's parameters (``kind: roadrunner``)."""
        return RoadRunnerParams(**self._of("roadrunner"))

    def as_dict(self) -> dict[str, Any]:
        """The common settings and this kind's, plain (None left out): a run's summary."""
        other = set(_KIND_KEYS["roadrunner" if self.kind == "skidaddle" else "skidaddle"])
        return {k: v for k, v in _plain(self).items() if k not in other}


_KIND_KEYS = {"skidaddle": setting_names(SkidaddleSettings),
              "roadrunner": setting_names(RoadRunnerParams)}
_DEFAULTS: dict[str, Any] = {"skidaddle": _SKIDADDLE, "roadrunner": _ROADRUNNER}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if getattr(value, f.name) is not None}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
