"""Road Runner 1.0's ramp-logger files, read into typed data (and written back in the same schema).

Road Runner FTC's ``ForwardRampLogger``, ``LateralRampLogger`` and ``AngularRampLogger`` ramp the
drive power at 0.1/s up to 0.9 and save one JSON object per run (``TuningFiles.save``). Every
``Signal`` is ``{"times": [s], "values": [...]}``; powers are in [-1, 1], ``voltages`` is the
battery's sensor in volts, encoder positions are ticks and velocities ticks/s (the hub's raw
16-bit values; ``*FixVels`` says whether the fit must undo their overflow), ``angVels`` are the
IMU's x, y, z rates in rad/s. No log says how many inches a tick is: that is the drive's
``inPerTick``, given separately. The keys per logger:

* forward ramp: ``type, powers[], voltages, forwardEncPositions[], forwardEncVels[],
  forwardEncFixVels[]``
* angular ramp: ``type, leftPowers[], rightPowers[], voltages, {left,right,par,perp}EncPositions[],
  {left,right,par,perp}EncVels[], {left,right,par,perp}EncFixVels[], angVels[3]``
* lateral ramp: ``type, frontLeftPower, backLeftPower, frontRightPower, backRightPower, voltages,
  perpEncPositions[], perpEncVels[], perpEncFixVels[]``

``type`` is ``mecanum`` or ``tank`` (the page's spelling; the logger serializes a Kotlin enum with
Jackson, which may write ``MECANUM``: accepted in any case, kept as written). ``*FixVels`` may be absent (the
fit page then takes true). Every failure is a :class:`DriveFitError` naming the file and field.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from core.artifacts import atomic_write_json
from core.errors import ConfigError

MIN_RAMP_SAMPLES = 10  # Road Runner drops the first and the last two samples; a line needs a few more
MIN_SPEED_TICKS_S = 20.0  # a ramp whose every encoder stays below this never moved the robot
MIN_SPEED_RAD_S = 0.05  # the same for the IMU's yaw rate, when there is no encoder
DRIVE_TYPES = ("mecanum", "tank")


class DriveFitError(ConfigError):
    """A ramp log or a drive fit is unusable; the message names the file and the field."""


@dataclass(frozen=True, eq=False)
class Signal:
    times_s: np.ndarray
    values: np.ndarray

    def to_json(self) -> dict:
        return {"times": self.times_s.tolist(), "values": self.values.tolist()}


@dataclass(frozen=True, eq=False)
class Encoder:
    """One encoder's record: positions (ticks), velocities (ticks/s, may be empty)."""

    positions: Signal
    velocities: Signal
    fix_velocities: bool = True


@dataclass(frozen=True, eq=False)
class ForwardRampLog:
    source: str
    drive_type: str
    powers: tuple[Signal, ...]  # one per motor (left front to back, then right)
    voltages: Signal
    forward_encoders: tuple[Encoder, ...]  # left + right drive encoders, or the parallel dead wheels


@dataclass(frozen=True, eq=False)
class AngularRampLog:
    source: str
    drive_type: str
    left_powers: tuple[Signal, ...]  # front to back
    right_powers: tuple[Signal, ...]
    voltages: Signal
    left_encoders: tuple[Encoder, ...]
    right_encoders: tuple[Encoder, ...]
    par_encoders: tuple[Encoder, ...]
    perp_encoders: tuple[Encoder, ...]
    ang_vels: tuple[Signal, Signal, Signal]  # IMU x, y, z rates, rad/s


@dataclass(frozen=True, eq=False)
class LateralRampLog:
    source: str
    drive_type: str
    front_left_power: Signal
    back_left_power: Signal
    front_right_power: Signal
    back_right_power: Signal
    voltages: Signal
    perp_encoders: tuple[Encoder, ...]


RampLog = ForwardRampLog | AngularRampLog | LateralRampLog

# JSON key groups of the encoder lists: (positions, velocities, fix flags) per dataclass field
_ENCODER_KEYS = {
    "forward_encoders": ("forwardEncPositions", "forwardEncVels", "forwardEncFixVels"),
    "left_encoders": ("leftEncPositions", "leftEncVels", "leftEncFixVels"),
    "right_encoders": ("rightEncPositions", "rightEncVels", "rightEncFixVels"),
    "par_encoders": ("parEncPositions", "parEncVels", "parEncFixVels"),
    "perp_encoders": ("perpEncPositions", "perpEncVels", "perpEncFixVels"),
}
_SIGNAL_KEYS = {"powers": "powers", "voltages": "voltages", "left_powers": "leftPowers",
                "right_powers": "rightPowers", "ang_vels": "angVels",
                "front_left_power": "frontLeftPower", "back_left_power": "backLeftPower",
                "front_right_power": "frontRightPower", "back_right_power": "backRightPower"}
_KIND_KEY = {"forwardEncPositions": ForwardRampLog, "angVels": AngularRampLog,
             "frontLeftPower": LateralRampLog}


# -- reading -------------------------------------------------------------------------------------
def read_ramp_log(path: Path | str, min_speed_ticks_s: float = MIN_SPEED_TICKS_S) -> RampLog:
    """Any of the three logs, told apart by its keys."""
    data, src = _load(path)
    for key, cls in _KIND_KEY.items():
        if key in data:
            return _parse(cls, data, src, min_speed_ticks_s)
    raise DriveFitError(f"{src}: not a Road Runner ramp log: none of the fields {list(_KIND_KEY)}")


def read_forward_ramp(path: Path | str, min_speed_ticks_s: float = MIN_SPEED_TICKS_S) -> ForwardRampLog:
    return _parse(ForwardRampLog, *_load(path), min_speed_ticks_s)


def read_angular_ramp(path: Path | str, min_speed_ticks_s: float = MIN_SPEED_TICKS_S) -> AngularRampLog:
    return _parse(AngularRampLog, *_load(path), min_speed_ticks_s)


def read_lateral_ramp(path: Path | str, min_speed_ticks_s: float = MIN_SPEED_TICKS_S) -> LateralRampLog:
    return _parse(LateralRampLog, *_load(path), min_speed_ticks_s)


def _load(path: Path | str) -> tuple[dict, str]:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise DriveFitError(f"{path}: cannot read the ramp log ({e.strerror})") from e
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise DriveFitError(f"{path}: not JSON ({e.msg} at line {e.lineno})") from e
    if not isinstance(data, dict):
        raise DriveFitError(f"{path}: a ramp log is a JSON object; got {type(data).__name__}")
    return data, str(path)


def _parse(cls: type, data: dict, src: str, min_speed_ticks_s: float) -> Any:
    kw: dict[str, Any] = {"source": src}
    drive_type = _field(data, "type", src)
    if not isinstance(drive_type, str) or drive_type.lower() not in DRIVE_TYPES:
        raise DriveFitError(f"{src}: field 'type' is {drive_type!r}; allowed: {list(DRIVE_TYPES)} (any case)")
    kw["drive_type"] = drive_type  # kept as written: the fit page compares it case-sensitively
    for f in fields(cls):
        if f.name in _SIGNAL_KEYS:
            key = _SIGNAL_KEYS[f.name]
            raw = _field(data, key, src)
            kw[f.name] = (tuple(_signal(s, f"{key}[{i}]", src) for i, s in enumerate(_list(raw, key, src)))
                          if f.type.startswith("tuple") else _signal(raw, key, src))
        elif f.name in _ENCODER_KEYS:
            kw[f.name] = _encoders(data, *_ENCODER_KEYS[f.name], src)
    log = cls(**kw)
    if isinstance(log, AngularRampLog) and len(log.ang_vels) != 3:
        raise DriveFitError(f"{src}: field 'angVels' holds {len(log.ang_vels)} signals; needs 3 (x, y, z)")
    _check_lengths(log)
    _check_moves(log, min_speed_ticks_s)
    return log


def _field(data: dict, key: str, src: str) -> Any:
    if key not in data:
        raise DriveFitError(f"{src}: missing field {key!r}")
    return data[key]


def _list(raw: Any, key: str, src: str) -> list:
    if not isinstance(raw, list):
        raise DriveFitError(f"{src}: field {key!r} must be a list; got {type(raw).__name__}")
    return raw


def _signal(raw: Any, key: str, src: str) -> Signal:
    if not isinstance(raw, dict) or "times" not in raw or "values" not in raw:
        raise DriveFitError(f"{src}: field {key!r} must be a signal {{'times': [...], 'values': [...]}}")
    arrays = []
    for part in ("times", "values"):
        values = _list(raw[part], f"{key}.{part}", src)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                   for v in values):
            raise DriveFitError(f"{src}: field '{key}.{part}' must hold finite numbers only")
        arrays.append(np.asarray(values, dtype=float))
    if len(arrays[0]) != len(arrays[1]):
        raise DriveFitError(f"{src}: field {key!r} has {len(arrays[0])} times but {len(arrays[1])} values")
    return Signal(*arrays)


def _encoders(data: dict, pkey: str, vkey: str, fkey: str, src: str) -> tuple[Encoder, ...]:
    pos = _list(_field(data, pkey, src), pkey, src)
    vel = _list(_field(data, vkey, src), vkey, src)
    fix = _list(data.get(fkey, [True] * len(pos)), fkey, src)
    if not len(pos) == len(vel) == len(fix) or not all(isinstance(b, bool) for b in fix):
        raise DriveFitError(f"{src}: fields {pkey!r}, {vkey!r}, {fkey!r} must list the same encoders "
                            f"(got {len(pos)}, {len(vel)}, {len(fix)}; flags are true/false)")
    return tuple(Encoder(_signal(p, f"{pkey}[{i}]", src), _signal(v, f"{vkey}[{i}]", src), f)
                 for i, (p, v, f) in enumerate(zip(pos, vel, fix, strict=True)))


def _named_signals(log: RampLog) -> list[tuple[str, Signal]]:
    """Every signal of one sample per logger loop, with its JSON key (velocities may be empty)."""
    out = []
    for f in fields(log):
        value = getattr(log, f.name)
        if f.name in _SIGNAL_KEYS:
            key = _SIGNAL_KEYS[f.name]
            out += ([(f"{key}[{i}]", s) for i, s in enumerate(value)] if isinstance(value, tuple)
                    else [(key, value)])
        elif f.name in _ENCODER_KEYS:
            pkey, vkey, _ = _ENCODER_KEYS[f.name]
            for i, e in enumerate(value):
                out.append((f"{pkey}[{i}]", e.positions))
                if len(e.velocities.times_s):
                    out.append((f"{vkey}[{i}]", e.velocities))
    return out


def _check_lengths(log: RampLog) -> None:
    named = _named_signals(log)
    key, shortest = min(named, key=lambda kv: len(kv[1].values))
    if len(shortest.values) < MIN_RAMP_SAMPLES:
        raise DriveFitError(f"{log.source}: field {key!r} has {len(shortest.values)} samples; a ramp fit "
                            f"needs at least {MIN_RAMP_SAMPLES} (the logger ran too briefly)")
    longest_key, longest = max(named, key=lambda kv: len(kv[1].values))
    if len(longest.values) != len(shortest.values):
        raise DriveFitError(f"{log.source}: field {key!r} has {len(shortest.values)} samples but "
                            f"{longest_key!r} has {len(longest.values)}; every signal has one per loop")


def encoder_speed_ticks_s(encoder: Encoder) -> np.ndarray:
    """|speed| per sample from the positions (central differences); the logged velocity if larger."""
    p = encoder.positions
    speed = np.zeros(len(p.values))
    speed[1:-1] = np.abs((p.values[2:] - p.values[:-2]) / (p.times_s[2:] - p.times_s[:-2]))
    if len(encoder.velocities.values):
        speed = np.maximum(speed, np.abs(encoder.velocities.values))
    return speed


def _check_moves(log: RampLog, min_speed_ticks_s: float) -> None:
    encs = [e for f in fields(log) if f.name in _ENCODER_KEYS for e in getattr(log, f.name)]
    if encs:
        fastest = max(float(encoder_speed_ticks_s(e).max()) for e in encs)
        if fastest < min_speed_ticks_s:
            raise DriveFitError(f"{log.source}: the power ramp never moves the robot: the fastest encoder "
                                f"reads {fastest:.3g} ticks/s, never above {min_speed_ticks_s:g} ticks/s "
                                "(motors unplugged, encoders not read, or the battery flat?)")
    elif isinstance(log, AngularRampLog):
        fastest = float(np.abs(log.ang_vels[2].values).max())
        if fastest < MIN_SPEED_RAD_S:
            raise DriveFitError(f"{log.source}: the power ramp never turns the robot: field 'angVels[2]' "
                                f"never goes above {MIN_SPEED_RAD_S} rad/s (largest {fastest:.3g})")


# -- writing (Road Runner's schema) ----------------------------------------------------------------
def ramp_log_json(log: RampLog) -> dict:
    """The log as Road Runner's logger writes it (the same keys, lists and signals)."""
    out: dict[str, Any] = {"type": log.drive_type}
    for f in fields(log):
        value = getattr(log, f.name)
        if f.name in _SIGNAL_KEYS:
            out[_SIGNAL_KEYS[f.name]] = ([s.to_json() for s in value] if isinstance(value, tuple)
                                         else value.to_json())
        elif f.name in _ENCODER_KEYS:
            pkey, vkey, fkey = _ENCODER_KEYS[f.name]
            out[pkey] = [e.positions.to_json() for e in value]
            out[vkey] = [e.velocities.to_json() for e in value]
            out[fkey] = [bool(e.fix_velocities) for e in value]
    return out


def write_ramp_log(path: Path | str, log: RampLog) -> Path:
    """Write ``log`` atomically as Road Runner's JSON (readable by :func:`read_ramp_log` and RR's page)."""
    return atomic_write_json(path, ramp_log_json(log))
