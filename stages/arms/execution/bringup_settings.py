"""Bring-up settings: the protocol's steps, each step's pass/fail criteria, and the
calibration's joint zero offsets the ``joint_zeros`` step checks against (config -> typed, with
errors naming the key)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import ConfigError

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


# --------------------------------------------------------------------------- settings
@dataclass(frozen=True)
class ConnectionCriteria:
    max_read_s: float = 0.5            # wall time a state read may take
    limit_tolerance_rad: float = 1e-3  # how far outside a joint limit a reading may be
    clock_wait_s: float = 0.05         # wall time over which the clock must advance
    confirm: bool = False              # (read-only step: never needs confirmation)


@dataclass(frozen=True)
class JointZeroCriteria:
    tolerance_rad: float = 0.01
    samples: int = 10                  # state reads averaged
    confirm: bool = False              # (read-only step: never needs confirmation)


@dataclass(frozen=True)
class MotionCriteria:
    """Limits of a motion step (each arm alone, synchronized, full speed)."""

    speed_fraction: float | None = None   # None: the protocol's speed_fraction
    max_tracking_error_rad: float = 0.01
    max_final_error_rad: float = 0.005
    max_send_latency_s: float = 0.1       # wall time a goal send may take
    max_start_skew_s: float = 0.002       # between the arms' actual starts (driver clock)
    settle_s: float = 0.2                 # wait after the motion before the final error is read
    confirm: bool = False


@dataclass(frozen=True)
class CancelCriteria:
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


@dataclass(frozen=True)
class BringUpSettings:
    confirm: bool = False                 # operator confirms every moving step (real drivers)
    speed_fraction: float = 0.2           # of the velocity and acceleration limits, steps 3–5
    amplitude_rad: float = 0.2            # default test motion: this much on every joint
    deltas_rad: Mapping[str, Sequence[float]] | None = None   # per arm, overrides amplitude_rad
    known_pose: Mapping[str, Sequence[float]] | None = None   # per arm; None = robot.home
    calibration: Any = None               # {arm: offsets} / {joint_offsets_rad: {...}} / file path
    rate_hz: float = 125.0
    sample_period_s: float = 0.002        # wall period of the state recorder
    start_buffer_s: float = 0.1           # minimum lead of the shared start stamp (driver clock)
    max_start_lead_s: float = 1.0         # a passed stamp is retried with twice the lead, up to this (wall)
    ack_timeout_s: float = 2.0
    clock_speed: float = 1.0              # driver-clock seconds per wall second (sim speed)
    config_prefix: str = "pipeline.stages.bringup"   # how the messages name the settings
    connection: ConnectionCriteria = field(default_factory=ConnectionCriteria)
    joint_zeros: JointZeroCriteria = field(default_factory=JointZeroCriteria)
    each_arm: MotionCriteria = field(default_factory=MotionCriteria)
    synchronized: MotionCriteria = field(default_factory=MotionCriteria)
    cancel: CancelCriteria = field(default_factory=CancelCriteria)
    full_speed: MotionCriteria = field(default_factory=lambda: MotionCriteria(
        speed_fraction=1.0, max_tracking_error_rad=0.03, max_final_error_rad=0.005))

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None, prefix: str = "pipeline.stages.bringup"
                    ) -> BringUpSettings:
        """Settings from plain config; a wrong key or value is a ConfigError naming it."""
        cfg = dict(cfg or {})
        kwargs: dict[str, Any] = {"config_prefix": prefix}
        nested = {"connection": ConnectionCriteria, "joint_zeros": JointZeroCriteria,
                  "each_arm": MotionCriteria, "synchronized": MotionCriteria,
                  "cancel": CancelCriteria, "full_speed": MotionCriteria}
        top = [f for f in dataclasses.fields(cls) if f.name not in ("config_prefix",)]
        allowed = [f.name for f in top]
        for key, value in cfg.items():
            if key not in allowed:
                raise ConfigError(f"{prefix}.{key} is not a bring-up setting; allowed: {allowed}")
            if key in nested:
                default = getattr(cls(), key)
                kwargs[key] = _criteria(nested[key], value, default, f"{prefix}.{key}")
            elif key in ("deltas_rad", "known_pose"):
                kwargs[key] = _per_arm(value, f"{prefix}.{key}")
            elif key == "calibration":
                kwargs[key] = value
            elif key == "confirm":
                kwargs[key] = _bool(value, f"{prefix}.{key}")
            else:
                kwargs[key] = _positive(value, f"{prefix}.{key}")
        settings = cls(**kwargs)
        if not 0 < settings.speed_fraction <= 1:
            raise ConfigError(f"{prefix}.speed_fraction must be in (0, 1], got {settings.speed_fraction}")
        if not 0 < settings.cancel.at_fraction < 1:
            raise ConfigError(f"{prefix}.cancel.at_fraction must be in (0, 1), "
                              f"got {settings.cancel.at_fraction}")
        for key in ("each_arm", "synchronized", "cancel", "full_speed"):
            f = getattr(settings, key).speed_fraction
            if f is not None and not 0 < f <= 1:
                raise ConfigError(f"{prefix}.{key}.speed_fraction must be in (0, 1] or null, got {f}")
        return settings

    def step_confirmed(self, step: str) -> bool:
        return self.confirm or bool(getattr(self, step).confirm)


def _bool(value: Any, key: str) -> bool:
    if isinstance(value, bool):
        return value
    raise ConfigError(f"{key} must be true or false, got {value!r}")


def _positive(value: Any, key: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{key} must be a number, got {value!r}") from None
    if not (np.isfinite(x) and x > 0):
        raise ConfigError(f"{key} must be a finite number > 0, got {value!r}")
    return x


def _per_arm(value: Any, key: str) -> dict[str, list[float]] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key} must map arm names to lists of numbers (or be null), got {value!r}")
    out = {}
    for arm, v in value.items():
        try:
            out[str(arm)] = [float(x) for x in v]
        except (TypeError, ValueError):
            raise ConfigError(f"{key}.{arm} must be a list of numbers, got {v!r}") from None
    return out


def _criteria(cls, value: Any, default, key: str):
    if value is None:
        return default
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key} must be a mapping of criteria, got {value!r}")
    allowed = [f.name for f in dataclasses.fields(cls)]
    kw = {}
    for k, v in value.items():
        if k not in allowed:
            raise ConfigError(f"{key}.{k} is not a criterion of this step; allowed: {allowed}")
        if k == "confirm":
            kw[k] = _bool(v, f"{key}.{k}")
        elif k == "samples":
            kw[k] = max(1, int(_positive(v, f"{key}.{k}")))
        elif k == "speed_fraction" and v is None:
            kw[k] = None
        else:
            kw[k] = _positive(v, f"{key}.{k}")
    return dataclasses.replace(default, **kw)


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
            from hardware.robot import REPO_ROOT

            path = REPO_ROOT / path
        if not path.exists():
            raise ConfigError(f"calibration file {str(calibration)!r} does not exist")
        from omegaconf import OmegaConf

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
