"""This project's drive model fitted to Road Runner ramp logs (drive encoders + IMU).

The simulator's equations, per wheel ``τ = τ_stall (V/V_rated − ω/ω_free)`` and on the body
``m_eff a = Σ f − rolling``, summed over the four wheels and integrated over sliding windows
(so nothing is differentiated), are linear in three unknowns::

    forward ramp:  m_eff Δv = A ∫ΣV dt − B ∫Σs dt − c m ∫φ(v) dt
    A = τ_stall/(r V_rated),  B = τ_stall/(r² ω_free),  c = μ_roll g,  φ(v) = v / max(|v|, 0.5 in/s)

with ``s`` the wheel surface speeds (encoders × ``in_per_tick``), ``V`` power × logged battery
voltage (held from one encoder read to the next), ``v`` the mean wheel speed. What a ramp can tell:

* ``ω_free`` (``motor_free_speed_rpm``): from A/B, the slope of the steady ramp: well determined.
* ``τ_stall`` and ``μ_roll``: only through ``m_eff`` — the torque per unit of acceleration needs
  the acceleration to *change* (the start, and the hold at full power after the ramp); in a pure
  ramp ``a`` is constant and ``m_eff a`` cannot be told from rolling resistance. So ``mass_kg``,
  ``wheel_inertia_kg_m2`` (in ``m_eff``), ``wheel_radius_in``, ``gear_ratio`` and
  ``motor_rated_voltage_v`` are *given* (the config), and the torque and friction fitted against them.
* ``k_in = (track width + wheelbase)/2``: from the angular ramp, kinematically — the wheels'
  differential travel against the IMU's heading change; ``track_width_in = 2 k − wheelbase_in``
  with the wheelbase given (only the sum is seen).
* ``battery_voltage_v``: the logs' mean voltage. Yaw inertia stays given; the angular ramp's
  equation with the fitted terms is reported as a check, with the inertia it would imply.

On the simulator's logs (11 s: the 9 s ramp, then 2 s held) every fitted value lands within 1 % of
the truth; stop the logger before the hold and torque and friction drift by about 5 %.
:func:`local_speed` and :func:`window_bounds` are the sample-level helpers the integral form uses
(shared with :func:`~stages.mecanum.tuning.roadrunner_fit.fit_forward_feedforward`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np

from core.artifacts import atomic_write_text
from core.errors import ConfigError
from hardware.mecanum.params import G_IN_S2, KG_M2_TO_KG_IN2, NM_TO_KG_IN2_S2, DriveParams
from hardware.mecanum.simulator import ROLL_EPS_IN_S
from stages.mecanum.tuning.ramp_logs import AngularRampLog, DriveFitError, ForwardRampLog

FORWARD = "fit: forward ramp"
ANGULAR = "fit: angular ramp"


@dataclass(frozen=True)
class FittedValue:
    """One ``DriveParams`` value: where it came from and how well its equation fits (None: given)."""

    name: str
    value: float | str
    source: str  # "fit: forward ramp" | "fit: angular ramp" | "log: ..." | "given"
    rms_residual: float | None = None
    residual_unit: str = ""
    samples: int = 0


@dataclass(frozen=True)
class DriveFit:
    params: DriveParams  # the fitted drive: fitted values, the rest as given
    values: tuple[FittedValue, ...]  # one per DriveParams field, in its order
    k_in: FittedValue
    angular_check_rms_rad_s2: float  # the angular ramp's yaw equation with the fitted terms
    implied_inertia_kg_m2: float  # the yaw inertia that equation would fit best

    def value(self, name: str) -> FittedValue:
        for v in self.values:
            if v.name == name:
                return v
        raise KeyError(f"{name!r} is not a DriveParams field; allowed: {[v.name for v in self.values]}")


def local_speed(times: np.ndarray, positions: np.ndarray, half_window_s: float) -> np.ndarray:
    """Slope of a least-squares line through the positions within ±half_window of each sample."""
    out = np.empty(len(times))
    lo = np.searchsorted(times, times - half_window_s, "left")
    hi = np.searchsorted(times, times + half_window_s, "right")
    for i, (a, b) in enumerate(zip(lo, hi, strict=True)):
        t, x = times[a:b] - times[i], positions[a:b]
        tc = t - t.mean()
        den = float(np.sum(tc * tc))
        out[i] = float(np.sum(tc * (x - x.mean()))) / den if den > 0 else 0.0
    return out


def window_bounds(times: np.ndarray, window_s: float, edge_s: float) -> list[tuple[int, int]]:
    """Sliding windows [a, b] (sample indices) of about ``window_s``, clear of the ends by ``edge_s``."""
    first = int(np.searchsorted(times, times[0] + edge_s))
    last = int(np.searchsorted(times, times[-1] - edge_s, "right")) - 1
    step = max(1, int(np.searchsorted(times, times[0] + window_s)) // 4)
    out = []
    for a in range(first, last, step):
        b = int(np.searchsorted(times, times[a] + window_s))
        if b > last:
            break
        out.append((a, b))
    return out


def _phi(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.abs(v), ROLL_EPS_IN_S)


def _held_integral(values: np.ndarray, t: np.ndarray, a: int, b: int) -> float:
    """∫ over [t_a, t_b] of a signal whose sample j holds over (t_{j-1}, t_j]."""
    return float(np.sum(values[a + 1:b + 1] * np.diff(t[a:b + 1])))


def _solve(rows: list, target: list, what: str) -> tuple[np.ndarray, np.ndarray]:
    A, y = np.array(rows, float), np.array(target, float)
    if len(y) < A.shape[1] + 2:
        raise DriveFitError(f"{what}: {len(y)} usable windows; the fit needs at least {A.shape[1] + 2}")
    scale = np.abs(A).max(axis=0)
    scale[scale == 0] = 1.0
    coef, *_ = np.linalg.lstsq(A / scale, y, rcond=None)
    return coef / scale, y - A @ (coef / scale)


def _forward_terms(log: ForwardRampLog, drive: DriveParams, in_per_tick: float, window_s: float):
    enc = log.forward_encoders
    if not enc:
        raise DriveFitError(f"{log.source}: field 'forwardEncPositions' lists no encoder")
    t = enc[0].positions.times_s
    x = np.mean([e.positions.values for e in enc], axis=0) * in_per_tick  # mean wheel travel, in
    v = local_speed(t, x, 0.05)
    volts = np.sum([p.values for p in log.powers], axis=0) * log.voltages.values * (4 / len(log.powers))
    m, m_eff = drive.mass_kg, drive.effective_mass_kg
    rows, target, spans = [], [], []
    for a, b in window_bounds(t, window_s, 0.06):
        if np.min(np.abs(v[a:b + 1])) < 2 * ROLL_EPS_IN_S:  # the creeping start: φ is not known there
            continue
        rows.append([_held_integral(volts, t, a, b), -4 * (x[b] - x[a]),
                     -m * _held_integral(_phi(v), t, a, b)])
        target.append(m_eff * (v[b] - v[a]))
        spans.append(t[b] - t[a])
    return rows, target, np.array(spans)


def _k_fit(log: AngularRampLog, in_per_tick: float, window_s: float) -> tuple[float, float, int]:
    if not (log.left_encoders and log.right_encoders):
        raise DriveFitError(f"{log.source}: fields 'leftEncPositions'/'rightEncPositions' are empty: the "
                            "drive fit needs the drive encoders (a dead-wheel log has no wheel speeds)")
    t = log.left_encoders[0].positions.times_s
    diff = 0.5 * (np.mean([e.positions.values for e in log.right_encoders], axis=0)
                  - np.mean([e.positions.values for e in log.left_encoders], axis=0)) * in_per_tick
    rate = log.ang_vels[2]
    heading = np.interp(t, rate.times_s, np.r_[0.0, np.cumsum(0.5 * (rate.values[1:] + rate.values[:-1])
                                                              * np.diff(rate.times_s))])
    spans = window_bounds(t, window_s, 0.06)
    x = np.array([heading[b] - heading[a] for a, b in spans])
    y = np.array([diff[b] - diff[a] for a, b in spans])
    if len(x) < 3 or not np.any(x):
        raise DriveFitError(f"{log.source}: the IMU's z rate never turns the robot; no track width")
    k = float(np.dot(x, y) / np.dot(x, x))
    return k, float(np.sqrt(np.mean((y - k * x) ** 2))), len(x)


def fit_drive(forward: ForwardRampLog, angular: AngularRampLog, given: DriveParams, in_per_tick: float,
              window_s: float = 0.25) -> DriveFit:
    """Fit the motor and friction terms (forward ramp) and ``k_in`` (angular ramp); see the module doc."""
    if not (math.isfinite(in_per_tick) and in_per_tick > 0):
        raise DriveFitError(f"in_per_tick must be a finite number > 0; got {in_per_tick!r}")
    rows, target, spans = _forward_terms(forward, given, in_per_tick, window_s)
    (A, B, c), resid = _solve(rows, target, forward.source)
    if not (A > 0 and B > 0 and c >= 0):
        raise DriveFitError(f"{forward.source}: the forward ramp does not fit a motor (A={A:.3g}, B={B:.3g}, "
                            f"c={c:.3g}; all must be > 0): check the encoder directions and in_per_tick")
    r, vr = given.wheel_radius_in, given.motor_rated_voltage_v
    tau_stall = A * r * vr  # at the wheel, kg·in²/s²
    w_free = tau_stall / (r * r * B)
    fwd_rms = float(np.sqrt(np.mean((resid / (given.effective_mass_kg * spans)) ** 2)))  # in/s²
    k, k_rms, k_n = _k_fit(angular, in_per_tick, window_s)
    battery = float(np.mean(np.r_[forward.voltages.values, angular.voltages.values]))
    fitted = {
        "motor_free_speed_rpm": (w_free * 60 / (2 * math.pi) * given.gear_ratio, FORWARD, fwd_rms, "in/s^2"),
        "motor_stall_torque_nm": (tau_stall / NM_TO_KG_IN2_S2 / given.gear_ratio, FORWARD, fwd_rms, "in/s^2"),
        "rolling_friction_coefficient": (c / G_IN_S2, FORWARD, fwd_rms, "in/s^2"),
        "track_width_in": (2 * k - given.wheelbase_in, ANGULAR, k_rms, "in"),
        "battery_voltage_v": (battery, "log: mean battery voltage",
                              float(np.std(np.r_[forward.voltages.values, angular.voltages.values])), "V"),
    }
    counts = {FORWARD: len(target), ANGULAR: k_n}
    try:
        params = replace(given, **{name: v[0] for name, v in fitted.items()})
    except ConfigError as e:  # DriveParams refuses the values (e.g. a track width past the footprint)
        raise DriveFitError(f"the fitted drive is not a valid DriveParams: {e}") from e
    values = tuple(
        FittedValue(f.name, fitted[f.name][0], fitted[f.name][1], fitted[f.name][2], fitted[f.name][3],
                    counts.get(fitted[f.name][1], len(forward.voltages.values)))
        if f.name in fitted else FittedValue(f.name, getattr(given, f.name), "given")
        for f in fields(DriveParams))
    check, inertia = _angular_check(angular, params, in_per_tick, window_s)
    return DriveFit(params, values, FittedValue("k_in", k, ANGULAR, k_rms, "in", k_n), check, inertia)


def _angular_check(log: AngularRampLog, drive: DriveParams, in_per_tick: float, window_s: float):
    """RMS of the yaw equation (rad/s²) with the fitted terms, and the yaw inertia fitting it best."""
    t = log.left_encoders[0].positions.times_s
    sigma_s = (np.sum([e.positions.values for e in log.right_encoders], axis=0)
               - np.sum([e.positions.values for e in log.left_encoders], axis=0)) * in_per_tick
    sigma_s *= 4 / (len(log.left_encoders) + len(log.right_encoders))
    sigma_v = (np.sum([p.values for p in log.right_powers], axis=0)
               - np.sum([p.values for p in log.left_powers], axis=0)) * log.voltages.values
    sigma_v *= 4 / (len(log.left_powers) + len(log.right_powers))
    omega = np.interp(t, log.ang_vels[2].times_s, log.ang_vels[2].values)
    r, k = drive.wheel_radius_in, drive.k_in
    A = drive.wheel_stall_torque / (r * drive.motor_rated_voltage_v)
    B = drive.wheel_stall_torque / (r * r * drive.wheel_free_speed_rad_s)
    reach = math.hypot(drive.wheelbase_in / 2, drive.track_width_in / 2)
    friction = drive.rolling_friction_coefficient * drive.mass_kg * G_IN_S2 * reach
    spin = 4 * drive.wheel_inertia * k * k / r**2
    torque_dt, d_omega, spans = [], [], []
    for a, b in window_bounds(t, window_s, 0.06):
        if np.min(np.abs(omega[a:b + 1] * reach)) < 2 * ROLL_EPS_IN_S:
            continue
        torque_dt.append(k * (A * _held_integral(sigma_v, t, a, b) - B * (sigma_s[b] - sigma_s[a]))
                         - friction * _held_integral(_phi(omega * reach), t, a, b))
        d_omega.append(omega[b] - omega[a])
        spans.append(t[b] - t[a])
    if len(d_omega) < 3:
        raise DriveFitError(f"{log.source}: the robot barely turns; no angular check")
    torque_dt, d_omega, spans = np.array(torque_dt), np.array(d_omega), np.array(spans)
    rms = float(np.sqrt(np.mean(((torque_dt / (drive.yaw_inertia + spin) - d_omega) / spans) ** 2)))
    implied = float(np.dot(d_omega, torque_dt) / np.dot(d_omega, d_omega)) - spin
    return rms, implied / KG_M2_TO_KG_IN2


# -- the drive config YAML -----------------------------------------------------------------------
def drive_yaml_text(fit: DriveFit) -> str:
    """``conf/drive/<name>.yaml`` text: every DriveParams key, each with its source and residual."""
    lines = ["# A drive fitted to Road Runner ramp logs (stages/mecanum/tuning/drive_fit.py).",
             "# Each value says where it came from; residuals are RMS over the fit's windows.",
             f"# k_in = (track width + wheelbase)/2 = {fit.k_in.value:.4f} in ({ANGULAR}).",
             f"# angular ramp check: yaw equation RMS {fit.angular_check_rms_rad_s2:.3g} rad/s^2; "
             f"implied yaw inertia {fit.implied_inertia_kg_m2:.4g} kg m^2."]
    for v in fit.values:
        value = v.value if isinstance(v.value, str) else _number(v.value)
        note = v.source if v.rms_residual is None else (
            f"{v.source}, RMS {v.rms_residual:.3g} {v.residual_unit} over {v.samples} samples")
        lines.append(f"{v.name}: {value}".ljust(44) + f"# {note}")
    return "\n".join(lines) + "\n"


def write_drive_yaml(path: Path | str, fit: DriveFit) -> Path:
    """Write :func:`drive_yaml_text` atomically."""
    return atomic_write_text(path, drive_yaml_text(fit))


def _number(x: float) -> str:
    text = f"{x:.6g}"
    return text if any(ch in text for ch in ".en") else text + ".0"
