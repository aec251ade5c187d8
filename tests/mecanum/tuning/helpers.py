"""Synthetic Road Runner ramp logs with known gains, and the simulated robots the tuning tests share."""

from __future__ import annotations

import numpy as np

from hardware.mecanum.params import DriveParams
from stages.mecanum.tuning.ramp_logs import AngularRampLog, Encoder, ForwardRampLog, Signal
from stages.mecanum.tuning.ramp_sim import RampSettings

BATTERY_V = 12.5
# a robot unlike the defaults (goBILDA 435 rpm motors, heavier, wider, a fresh battery)
TRUE_DRIVE = DriveParams(name="test_bot", mass_kg=15.0, inertia_kg_m2=0.55, wheelbase_in=12.0,
                         track_width_in=15.5, motor_free_speed_rpm=435.0, motor_stall_torque_nm=1.84,
                         rolling_friction_coefficient=0.06, battery_voltage_v=12.8)
FAST_SIM = RampSettings(physics_step_s=0.005)  # same physics here (no slip), a third of the time


def trajectory(n: int = 400, dt: float = 0.015):
    """A forward motion with a changing acceleration: times, positions (ticks), speeds (ticks/s)."""
    t = np.arange(n) * dt + 0.01
    v = 200 + 150 * t + 80 * np.sin(3 * t)
    x = 200 * t + 75 * t**2 - 80 / 3 * (np.cos(3 * t) - 1)
    return t, x, v


def forward_log(volts: np.ndarray, t: np.ndarray, x: np.ndarray, v: np.ndarray | None,
                fix: bool = False, source: str = "synthetic forward ramp") -> ForwardRampLog:
    """Four motors at ``volts`` (power × a constant battery), four identical encoders."""
    powers = tuple(Signal(t.copy(), volts / BATTERY_V) for _ in range(4))
    vel = Signal(t.copy(), v.copy()) if v is not None else Signal(np.zeros(0), np.zeros(0))
    enc = tuple(Encoder(Signal(t.copy(), x.copy()), vel, fix) for _ in range(4))
    return ForwardRampLog(source, "mecanum", powers, Signal(t.copy(), np.full(len(t), BATTERY_V)), enc)


def quasistatic_forward_log(ks: float, kv: float, n: int = 400) -> ForwardRampLog:
    """Applied voltage exactly kS + kV·v at every sample (what Road Runner's line assumes)."""
    t, x, v = trajectory(n)
    return forward_log(ks + kv * v, t, x, v)


def dynamic_forward_log(ks: float, kv: float, ka: float, n: int = 400) -> ForwardRampLog:
    """Each held voltage exactly kS + kV·(mean speed) + kA·(mean acceleration) over its interval."""
    t, x, v = trajectory(n)
    dt = np.diff(t, prepend=t[0] - 0.015)
    mean_v = np.diff(x, prepend=x[0] - v[0] * dt[0]) / dt
    mean_a = np.diff(v, prepend=v[0]) / dt
    return forward_log(ks + kv * mean_v + ka * mean_a, t, x, v)


def angular_log(rates: tuple[np.ndarray, np.ndarray, np.ndarray], n: int = 40) -> AngularRampLog:
    """An angular ramp with no encoder, only the IMU's three rates (rad/s)."""
    t = np.arange(n) * 0.015
    p = Signal(t, 0.1 * t)
    return AngularRampLog("synthetic angular ramp", "mecanum", (p, p), (p, p),
                          Signal(t, np.full(n, BATTERY_V)), (), (), (), (),
                          tuple(Signal(t, np.asarray(r, float)) for r in rates))
