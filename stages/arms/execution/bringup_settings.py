"""Bring-up settings: the protocol's steps, each step's pass/fail criteria, and the
calibration's joint zero offsets the ``joint_zeros`` step checks against.

Frozen dataclasses read by :func:`core.settings.from_config`: a wrong key, type or value is a
:class:`~core.errors.ConfigError` naming the full key (``pipeline.stages.bringup.<key>``, or
``pipeline.stages.bringup.<step>.<criterion>``) and what is allowed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import OmegaConf

from core.errors import ConfigError
from core.settings import from_config, require
from hardware.robot import REPO_ROOT

STEPS: tuple[tuple[str, str], ...] = (
    ("connection", "connection and state read"),
    ("joint_zeros", "joint zeros against the calibration"),
    ("each_arm", "each arm alone at reduced speed"),
    ("synchronized", "both arms synchronized at reduced speed"),
    ("cancel", "mid-motion cancel"),
    ("full_speed", "full speed"),
)
STEP_KEYS = tuple(k for k, _ in STEPS)
STEP_TITLES = dict(STEPS)
MOVING_STEPS = ("each_arm", "synchronized", "cancel", "full_speed")
CONFIG_PREFIX = "pipeline.stages.bringup"


def _require_positive(settings: Any, *names: str) -> None:
    """Every named field of ``settings`` is a finite number > 0."""
    for name in names:
        value = getattr(settings, name)
        require(math.isfinite(value) and value > 0, name, value, "a finite number > 0")


def _require_fraction(value: float | None, name: str, nullable: bool) -> None:
    if value is None and nullable:
        return
    require(value is not None and 0 < value <= 1, name, value,
            "in (0, 1] or null" if nullable else "in (0, 1]")


# --------------------------------------------------------------------------- per-step criteria
@dataclass(frozen=True)
class ConnectionSettings:
    """Step 1: every arm answers a state read in time, within its limits, and the clock runs."""

    max_read_s: float = 0.5            # wall time a state read may take
    limit_tolerance_rad: float = 1e-3  # how far outside a joint limit a reading may be
    clock_wait_s: float = 0.05         # wall time over which the clock must advance
    confirm: bool = False              # (read-only step: never needs confirmation)

    def __post_init__(self):
        _require_positive(self, "max_read_s", "limit_tolerance_rad", "clock_wait_s")


@dataclass(frozen=True)
class JointZerosSettings:
    """Step 2: the reading at the known pose against the calibration."""

    tolerance_rad: float = 0.01
    samples: int = 10                  # state reads averaged
    confirm: bool = False              # (read-only step: never needs confirmation)

    def __post_init__(self):
        _require_positive(self, "tolerance_rad")
        require(self.samples >= 1, "samples", self.samples, "an integer >= 1")


@dataclass(frozen=True)
class MotionSettings:
    """Limits of a motion step (each arm alone, synchronized, full speed)."""

    speed_fraction: float | None = None   # None: the protocol's speed_fraction
    max_tracking_error_rad: float = 0.01
    max_final_error_rad: float = 0.005
    max_send_latency_s: float = 0.1       # wall time a goal send may take
    max_start_skew_s: float = 0.002       # between the arms' actual starts (driver clock)
    settle_s: float = 0.2                 # wait after the motion before the final error is read
    confirm: bool = False

    def __post_init__(self):
        _require_fraction(self.speed_fraction, "speed_fraction", nullable=True)
        _require_positive(self, "max_tracking_error_rad", "max_final_error_rad", "max_send_latency_s",
                          "max_start_skew_s", "settle_s")


@dataclass(frozen=True)
class FullSpeedSettings(MotionSettings):
    """Step 6: a motion step at the full velocity and acceleration limits (None also means 1.0)."""

    speed_fraction: float | None = 1.0
    max_tracking_error_rad: float = 0.03


@dataclass(frozen=True)
class CancelSettings:
    """Step 5: a cancel raised mid-motion stops every arm, which then holds."""

    speed_fraction: float | None = None
    at_fraction: float = 0.4              # of the motion's duration, when the cancel is raised
    max_latency_s: float = 0.008          # cancel → last arm commanded to hold (wall)
    max_stop_time_s: float = 0.5          # cancel → every joint slower than stopped_speed_rad_s
    stopped_speed_rad_s: float = 0.05
    hold_settle_s: float = 0.3            # after the cancel, before the hold is measured
    hold_check_s: float = 0.3             # window over which the hold drift is measured
    hold_tolerance_rad: float = 0.005
    max_send_latency_s: float = 0.1
    confirm: bool = False

    def __post_init__(self):
        _require_fraction(self.speed_fraction, "speed_fraction", nullable=True)
        require(0 < self.at_fraction < 1, "at_fraction", self.at_fraction, "in (0, 1)")
        _require_positive(self, "max_latency_s", "max_stop_time_s", "stopped_speed_rad_s", "hold_settle_s",
                          "hold_check_s", "hold_tolerance_rad", "max_send_latency_s")


# --------------------------------------------------------------------------- the protocol's settings
@dataclass(frozen=True)
class BringUpSettings:
    """Everything ``pipeline.stages.bringup.*`` sets (the timing keys come from ``hardware``)."""

    confirm: bool = False                 # operator confirms every moving step (real drivers)
    speed_fraction: float = 0.2           # of the velocity and acceleration limits, steps 3–5
    amplitude_rad: float = 0.2            # default test motion: this much on every joint
    deltas_rad: dict[str, tuple[float, ...]] | None = None   # per arm, overrides amplitude_rad
    known_pose: dict[str, tuple[float, ...]] | None = None   # per arm; None = robot.home
    calibration: Any = None               # {arm: offsets} / {joint_offsets_rad: {...}} / file path
    rate_hz: float = 125.0
    sample_period_s: float = 0.002        # wall period of the state recorder
    start_buffer_s: float = 0.1           # minimum lead of the shared start stamp (driver clock)
    max_start_lead_s: float = 1.0         # a passed stamp is retried with twice the lead, up to this (wall)
    ack_timeout_s: float = 2.0
    clock_speed: float = 1.0              # driver-clock seconds per wall second (sim speed)
    connection: ConnectionSettings = field(default_factory=ConnectionSettings)
    joint_zeros: JointZerosSettings = field(default_factory=JointZerosSettings)
    each_arm: MotionSettings = field(default_factory=MotionSettings)
    synchronized: MotionSettings = field(default_factory=MotionSettings)
    cancel: CancelSettings = field(default_factory=CancelSettings)
    full_speed: FullSpeedSettings = field(default_factory=FullSpeedSettings)

    def __post_init__(self):
        _require_fraction(self.speed_fraction, "speed_fraction", nullable=False)
        _require_positive(self, "amplitude_rad", "rate_hz", "sample_period_s", "start_buffer_s",
                          "max_start_lead_s", "ack_timeout_s", "clock_speed")

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None, prefix: str = CONFIG_PREFIX) -> BringUpSettings:
        """Settings from plain config; a wrong key, type or value is a ConfigError naming it.

        A step given as null keeps that step's default criteria.
        """
        data = {k: v for k, v in dict(cfg or {}).items() if not (k in STEP_KEYS and v is None)}
        return from_config(cls, data, prefix)

    def step_confirmed(self, step: str) -> bool:
        return self.confirm or bool(getattr(self, step).confirm)


# --------------------------------------------------------------------------- the calibration
def load_joint_offsets(calibration: Any, arms: Mapping[str, int]) -> dict[str, np.ndarray] | None:
    """Joint zero offsets per arm (rad, ``reading − true angle``) from a calibration.

    ``calibration`` is None, a mapping, or a YAML/JSON file holding one. The mapping is either
    ``{arm: [offsets]}`` or has them under ``joint_offsets_rad`` (or ``joint_zero_offsets_rad``).
    Arms it does not name get zero offsets.
    """
    if calibration is None:
        return None
    data = calibration
    if isinstance(calibration, str | Path):
        path = Path(calibration)
        if not path.is_absolute() and not path.exists():
            path = REPO_ROOT / path
        if not path.exists():
            raise ConfigError(f"calibration file {str(calibration)!r} does not exist")
        data = OmegaConf.to_container(OmegaConf.load(path))   # YAML (JSON is YAML too)
    if not isinstance(data, Mapping):
        raise ConfigError(f"calibration must be a mapping of joint offsets, got {type(data).__name__}")
    for key in ("joint_offsets_rad", "joint_zero_offsets_rad"):
        if key in data:
            data = data[key]
            break
    if not isinstance(data, Mapping):
        raise ConfigError("calibration joint offsets must map arm names to lists of numbers")
    unknown = sorted(set(data) - set(arms))
    if unknown:
        raise ConfigError(f"calibration names arm(s) {unknown}; the arms are {sorted(arms)}")
    out = {}
    for arm, dof in arms.items():
        v = np.asarray(data.get(arm, np.zeros(dof)), float).reshape(-1)
        if v.shape != (dof,) or not np.all(np.isfinite(v)):
            raise ConfigError(f"calibration offsets of arm {arm!r} must be {dof} finite numbers, "
                              f"got {list(np.atleast_1d(v))}")
        out[arm] = v
    return out
