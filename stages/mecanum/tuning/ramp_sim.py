"""Road Runner's three ramp loggers, run on this project's :class:`MecanumSimulator`.

Each logger loop (``loop_period_s``, one simulator step with the voltages held) does what Road
Runner's does, in its order: set each motor's power ``min(power_per_s·t, power_max)`` at its own
time (1 ms apart; left motors front to back, then right), read the battery, bulk-read the
encoders, read the IMU. The robot is on an open field (no walls); the battery is the drive's
``battery_voltage_v``; after ``power_max`` is reached the power holds until the run ends
(``duration_s``), as it does until the driver presses stop.

Encoders are what a REV hub reports: integer positions in ticks and a velocity counted over the
hub's last 50 ms window (a multiple of 20 ticks/s) in a wrapping 16-bit register, so the logs say
``*FixVels: true``. Drive encoders sit on the gearmotor's output shaft (``encoder_ticks_per_rev``,
goBILDA 5203: 537.7), so ``in_per_tick = 2π·wheel_radius / (ticks_per_rev · gear_ratio)``
(:func:`drive_in_per_tick`). With ``dead_wheels`` set the logs carry Road Runner's three-dead-wheel
encoders instead (two parallel wheels, one perpendicular). The IMU's rates are float32 degrees
turned into radians, as the logger reads them.

Road Runner's ForwardRampLogger refuses to run without dead wheels; with drive encoders this
module writes what it would log (the forward encoders are then the four drive encoders), and its
lateral log has no encoder at all, exactly as Road Runner's lateral logger would write it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from core.settings import require
from hardware.mecanum.params import DriveParams
from hardware.mecanum.simulator import MecanumSimulator
from stages.mecanum.tuning.ramp_logs import (
    AngularRampLog,
    DriveFitError,
    Encoder,
    ForwardRampLog,
    LateralRampLog,
    RampLog,
    Signal,
    write_ramp_log,
)

RampKind = Literal["forward-ramp", "angular-ramp", "lateral-ramp"]
RAMP_KINDS: tuple[RampKind, ...] = ("forward-ramp", "angular-ramp", "lateral-ramp")
WRITE_GAP_S = 0.001  # one motor-power write (a Lynx command takes about this long)
HUB_VELOCITY_WINDOW_S = 0.05
HUB_VELOCITY_STEP = 20  # ticks/s: the window's count × 20

# per kind: the motors in the order the logger sets them (name, index in WHEEL_ORDER, sign of power)
_MOTORS = {
    "forward-ramp": (("lf", 0, 1), ("lb", 1, 1), ("rf", 3, 1), ("rb", 2, 1)),
    "angular-ramp": (("lf", 0, -1), ("lb", 1, -1), ("rf", 3, 1), ("rb", 2, 1)),
    "lateral-ramp": (("lf", 0, -1), ("rf", 3, 1), ("lb", 1, 1), ("rb", 2, -1)),
}


@dataclass(frozen=True)
class DeadWheels:
    """Road Runner's three-dead-wheel localizer: two parallel wheels, one perpendicular (robot frame)."""

    par_y_in: tuple[float, float] = (6.0, -6.0)
    perp_x_in: float = -3.0
    ticks_per_rev: float = 2000.0  # goBILDA odometry pod
    wheel_diameter_mm: float = 48.0

    @property
    def in_per_tick(self) -> float:
        return math.pi * self.wheel_diameter_mm / 25.4 / self.ticks_per_rev


@dataclass(frozen=True)
class RampSettings:
    power_per_s: float = 0.1  # Road Runner's POWER_PER_SEC
    power_max: float = 0.9  # POWER_MAX
    duration_s: float = 11.0  # the 9 s ramp, then 2 s at power_max before "stop"
    loop_period_s: float = 0.015  # four power writes, a voltage read, a bulk read, an IMU read
    physics_step_s: float = 0.001  # the simulator's substep (a loop is split into whole substeps)
    encoder_ticks_per_rev: float = 537.7  # drive encoders, at the gearmotor's output shaft
    dead_wheels: DeadWheels | None = None

    def __post_init__(self) -> None:
        for name in ("power_per_s", "power_max", "duration_s", "loop_period_s", "physics_step_s",
                     "encoder_ticks_per_rev"):
            value = getattr(self, name)
            require(math.isfinite(value) and value > 0, name, value, "a finite number > 0")
        require(self.power_max <= 1.0, "power_max", self.power_max, "≤ 1 (a motor power)")
        require(self.loop_period_s >= 5 * WRITE_GAP_S, "loop_period_s", self.loop_period_s,
                f"≥ {5 * WRITE_GAP_S} s (four power writes and a voltage read)")


def drive_in_per_tick(drive: DriveParams, settings: RampSettings = RampSettings()) -> float:
    """Inches of wheel surface per drive-encoder tick."""
    return 2 * math.pi * drive.wheel_radius_in / (settings.encoder_ticks_per_rev * drive.gear_ratio)


def simulate_ramp(kind: RampKind, drive: DriveParams, settings: RampSettings = RampSettings()) -> RampLog:
    """One logger run on the simulator, as Road Runner's typed log."""
    if kind not in RAMP_KINDS:
        raise DriveFitError(f"unknown ramp {kind!r}; allowed: {list(RAMP_KINDS)}")
    s, dt = settings, settings.loop_period_s
    sim = MecanumSimulator(drive, dt_s=dt, substeps=max(1, round(dt / s.physics_step_s)), field_size_in=None)
    steps = int(round(s.duration_s / dt))
    motors = _MOTORS[kind]
    power_t, power_v = np.zeros((4, steps)), np.zeros((4, steps))
    volt_t, volt_v, read_t = np.zeros(steps), np.full(steps, drive.battery_voltage_v), np.zeros(steps)
    wheels, robot, rates = np.zeros((steps + 1, 4)), np.zeros((steps + 1, 3)), np.zeros(steps)
    for j in range(steps):
        volts = np.zeros(4)
        for slot, (_, wheel, sign) in enumerate(motors):
            t = j * dt + (slot + 0.5) * WRITE_GAP_S
            power_t[slot, j], power_v[slot, j] = t, sign * min(s.power_per_s * t, s.power_max)
            volts[wheel] = power_v[slot, j] * drive.battery_voltage_v
        volt_t[j] = j * dt + 4.5 * WRITE_GAP_S
        state = sim.step(volts)
        read_t[j] = state.time_s
        wheels[j + 1], robot[j + 1] = state.wheel_speeds_rad_s, state.robot_velocity
        rates[j] = state.velocity[2]
    ticks_per_rad = s.encoder_ticks_per_rev * drive.gear_ratio / (2 * math.pi)
    drive_pos = _integrate(wheels, dt) * ticks_per_rad  # (steps, 4) continuous ticks, WHEEL_ORDER
    encoders = {name: _hub_encoder(read_t, drive_pos[:, wheel]) for name, wheel, _ in motors}
    powers = {name: Signal(power_t[slot], power_v[slot]) for slot, (name, _, _) in enumerate(motors)}
    par, perp = (), ()
    if s.dead_wheels is not None:
        dw = s.dead_wheels
        travel = _integrate(robot, dt)  # columns: ∫vx, ∫vy, heading
        par = tuple(_hub_encoder(read_t, (travel[:, 0] - y * travel[:, 2]) / dw.in_per_tick)
                    for y in dw.par_y_in)
        perp = (_hub_encoder(read_t, (travel[:, 1] + dw.perp_x_in * travel[:, 2]) / dw.in_per_tick),)
    volt = Signal(volt_t, volt_v)
    src = f"simulated {kind} ({drive.name})"
    left, right = (encoders["lf"], encoders["lb"]), (encoders["rf"], encoders["rb"])
    drive_encs = s.dead_wheels is None
    if kind == "forward-ramp":
        return ForwardRampLog(src, "mecanum", tuple(powers[m] for m in ("lf", "lb", "rf", "rb")), volt,
                              (*left, *right) if drive_encs else par)
    if kind == "angular-ramp":
        imu = np.radians(np.degrees(rates).astype(np.float32).astype(float))
        zeros = Signal(read_t, np.zeros(steps))
        return AngularRampLog(src, "mecanum", (powers["lf"], powers["lb"]), (powers["rf"], powers["rb"]),
                              volt, left if drive_encs else (), right if drive_encs else (), par, perp,
                              (zeros, zeros, Signal(read_t, imu)))
    return LateralRampLog(src, "mecanum", powers["lf"], powers["lb"], powers["rf"], powers["rb"], volt,
                          perp)


def simulate_ramps(drive: DriveParams, settings: RampSettings = RampSettings()) -> dict[str, RampLog]:
    return {kind: simulate_ramp(kind, drive, settings) for kind in RAMP_KINDS}


def write_simulated_ramps(folder: Path | str, drive: DriveParams,
                          settings: RampSettings = RampSettings()) -> dict[str, Path]:
    """``<folder>/{forward,angular,lateral}-ramp.json`` in Road Runner's schema."""
    folder = Path(folder)
    return {kind: write_ramp_log(folder / f"{kind}.json", log)
            for kind, log in simulate_ramps(drive, settings).items()}


def _integrate(rates: np.ndarray, dt: float) -> np.ndarray:
    """Trapezoidal running integral of per-step rates (row 0 = the start); one row per step's end."""
    return np.cumsum(0.5 * (rates[1:] + rates[:-1]) * dt, axis=0)


def _hub_encoder(read_t: np.ndarray, ticks: np.ndarray) -> Encoder:
    """A REV hub's view of a continuous tick count: integer position, 50 ms windowed velocity."""
    counts = np.round(ticks)
    before = np.round(np.interp(read_t - HUB_VELOCITY_WINDOW_S, np.r_[0.0, read_t], np.r_[0.0, ticks]))
    velocity = (counts - before) * (1.0 / HUB_VELOCITY_WINDOW_S)
    velocity = np.round(velocity / HUB_VELOCITY_STEP) * HUB_VELOCITY_STEP
    wrapped = (velocity + 32768) % 65536 - 32768  # the register is 16 bits
    return Encoder(Signal(read_t, counts), Signal(read_t.copy(), wrapped), True)
