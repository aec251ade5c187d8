"""Per-wheel PIDF with kS, kV, kA feedforward and battery-voltage compensation.

Each wheel's command is, in volts,

    V = kS·sgn(v*) + kV·v* + kA·a*  +  kP·(v* − v) + kI·∫(v* − v) + kD·d(v* − v)/dt

with ``v*``, ``a*`` the wheel's target surface speed (in/s) and motor-space acceleration
(in/s², see :mod:`stages.mecanum.control.allocator`) and ``v`` its encoder speed. The gains are
in volts at the motor's rated voltage, as an FTC team would tune them; **battery
compensation** turns volts into motor power with the battery's *measured* voltage,
``power = V / V_battery``, so a fresh 13.5 V pack and a tired 11.5 V one drive the
same. The power is clipped to [−1, 1] (a clipped tick is a *saturated* tick).

:func:`model_feedforward` derives kS, kV, kA from the drivetrain's physics (what the
quickstart's ramp and feedforward tuners would measure on this robot):

* ``kV = V_rated / (ω_free · r)``: the back-EMF voltage per in/s of wheel surface speed;
* ``kA = V_rated / τ_stall · r · m_eff / 4``: the voltage per in/s² of translational
  wheel acceleration, ``m_eff`` the mass with the wheels' reflected inertia;
* ``kS = V_rated / τ_stall · r · c_rr N``: the rolling resistance of one wheel.

The FTC convention applies ``kS·sgn(v)`` per wheel. On a mecanum drive that is only right
straight ahead or sideways: moving at 30° it compensates the forward part of the rolling
resistance and none of the sideways part. So SKIDADDLE's loop passes ``static``: the
least-norm wheel forces that cancel the body's rolling resistance at its present velocity,
in units of one wheel's ``c_rr N`` (see ``MotorModel.static``); the baseline keeps ``sgn(v)``.

The target speed ``v*`` integrates the allocated accelerations from the measured speed
and is held within ``track_band_in_s`` of it (anti-windup), so the feedback corrects what
the model misses (rolling resistance off the rolling axis, slip) without winding up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.settings import require
from hardware.mecanum.params import G_IN_S2, DriveParams
from stages.mecanum.control.settings import FeedforwardGains, PidGains

SIGN_BAND_IN_S = 0.5  # kS fades in linearly over ±this wheel speed (no chatter at rest)


@dataclass(frozen=True)
class Feedforward:
    kS: float  # V
    kV: float  # V per in/s of wheel surface speed
    kA: float  # V per in/s² of (motor-space) wheel acceleration

    def __post_init__(self) -> None:
        for k in ("kS", "kV", "kA"):
            v = getattr(self, k)
            require(math.isfinite(v) and v >= 0, k, v, "a finite number ≥ 0")

    def volts(self, speed_in_s: np.ndarray, accel_in_s2: np.ndarray,
              static: np.ndarray | None = None) -> np.ndarray:
        """``kS·static + kV·v + kA·a``; ``static`` defaults to ``sgn(v)`` per wheel (the
        FTC convention), or is the body-level distribution of :mod:`stages.mecanum.control.allocator`."""
        static = smooth_sign(speed_in_s) if static is None else np.asarray(static)
        return (self.kS * static + self.kV * np.asarray(speed_in_s)
                + self.kA * np.asarray(accel_in_s2))


def smooth_sign(v: np.ndarray) -> np.ndarray:
    return np.clip(np.asarray(v, dtype=float) / SIGN_BAND_IN_S, -1.0, 1.0)


def model_feedforward(drive: DriveParams) -> Feedforward:
    """kS, kV, kA of an ideally tuned robot (rated-voltage volts; see the module doc)."""
    volts_per_torque = drive.motor_rated_voltage_v / drive.wheel_stall_torque
    r = drive.wheel_radius_in
    kv = drive.motor_rated_voltage_v / (drive.wheel_free_speed_rad_s * r)
    ka = volts_per_torque * r * drive.effective_mass_kg / 4.0
    ks = volts_per_torque * r * drive.rolling_friction_coefficient * drive.mass_kg * G_IN_S2 / 4
    return Feedforward(ks, kv, ka)


def feedforward_for(gains: FeedforwardGains | str | None, drive: DriveParams) -> Feedforward:
    """``"model"`` (or None) → :func:`model_feedforward`; gains → those, any gain left out
    (None) taken from the model."""
    model = model_feedforward(drive)
    if gains is None or gains == "model":
        return model
    return Feedforward(*(getattr(model, k) if getattr(gains, k) is None else getattr(gains, k)
                         for k in ("kS", "kV", "kA")))


class WheelPIDF:
    """Four independent wheel controllers (order leftFront, leftBack, rightBack, rightFront)."""

    def __init__(self, feedforward: Feedforward, gains: PidGains, rated_voltage_v: float = 12.0):
        self.ff, self.gains, self.rated_v = feedforward, gains, float(rated_voltage_v)
        self.reset(np.zeros(4))

    def reset(self, wheel_speeds_in_s: np.ndarray) -> None:
        self.target = np.array(wheel_speeds_in_s, dtype=float)
        self.integral = np.zeros(4)
        self.last_error = np.zeros(4)

    def update(self, wheel_accel_in_s2: np.ndarray, measured_in_s: np.ndarray, dt_s: float,
               battery_v: float, static: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, bool]:
        """One tick: (power in [−1, 1], volts commanded, saturated?).

        The target speed used this tick is the one at the middle of the step
        (``v + a·dt/2``): the acceleration is held for the whole step."""
        g = self.gains
        a = np.asarray(wheel_accel_in_s2, dtype=float)
        v = np.asarray(measured_in_s, dtype=float)
        target = np.clip(self.target, v - g.track_band_in_s, v + g.track_band_in_s)
        mid = target + 0.5 * a * dt_s
        error = target - v
        if g.kI > 0:
            self.integral = np.clip(self.integral + error * dt_s, -g.i_limit_v / g.kI,
                                    g.i_limit_v / g.kI)
        deriv = (error - self.last_error) / dt_s if g.kD > 0 else 0.0
        self.last_error = error
        volts = self.ff.volts(mid, a, static) + g.kP * error + g.kI * self.integral + g.kD * deriv
        self.target = target + a * dt_s
        power = volts / battery_v
        saturated = bool(np.any(np.abs(power) > 1.0))
        return np.clip(power, -1.0, 1.0), volts, saturated
