"""The control loop on the drivetrain simulator, with a per-tick log.

A *follower* turns the robot's state into four wheel powers each tick:
:class:`SkidaddleFollower` (scheduler → allocator → per-wheel PIDF) here, and the
Road Runner-style baseline in :mod:`stages.mecanum.control.roadrunner`. :func:`run_loop` runs
one on a :class:`~hardware.mecanum.MecanumSimulator` at the simulator's step (10 ms, a
Control Hub loop): read the state, ask the follower, log the tick, apply
``power × battery voltage``. It ends once the follower says it is finished and the
robot has rested (< ``rest_speed_in_s`` and ``rest_rate_rad_s``) for ``settle_s``, or at
``max_time_s``. Each tick's compute (the follower's ``command``) and the simulator's
step are timed separately.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from hardware.mecanum.kinematics import inverse_kinematics
from hardware.mecanum.params import DriveParams
from hardware.mecanum.simulator import DriveState, MecanumSimulator
from stages.mecanum.control.allocator import AccelRequest, Allocator, MotorModel
from stages.mecanum.control.controllers import controllers_for, wrap
from stages.mecanum.control.pidf import Feedforward, WheelPIDF
from stages.mecanum.control.scheduler import HeadingFn, Scheduler, Tick
from stages.mecanum.control.settings import SkidaddleSettings
from stages.mecanum.paths.precompute import EntrySpeedTable


@dataclass(frozen=True, eq=False)
class Command:
    power: np.ndarray  # (4,) in [−1, 1]
    volts: np.ndarray  # (4,) what the controller wanted (before clipping to the battery)
    saturated: bool  # a wheel's command was clipped at full power
    active: tuple[str, ...]
    mode: str
    cross_track_in: float = math.nan
    heading_error_rad: float = math.nan
    target_speed_in_s: float = math.nan
    progress_in: float = math.nan
    segment: int = -1
    requests: tuple[AccelRequest, ...] = ()   # each controller's request this tick (SKIDADDLE)
    feedforward_v: np.ndarray | None = None   # the allocator's motor voltages (4,), before the PIDF


class Follower(Protocol):
    name: str

    def reset(self, state: DriveState) -> None: ...

    def command(self, state: DriveState) -> Command: ...

    @property
    def finished(self) -> bool: ...


def wheel_surface_speeds(state: DriveState, drive: DriveParams) -> np.ndarray:
    """The encoders' wheel surface speeds (in/s)."""
    return np.asarray(state.measured_wheel_speeds_rad_s) * drive.wheel_radius_in


class SkidaddleFollower:
    """Scheduler (controllers) → allocator (motor space, by priority) → per-wheel PIDF."""

    name = "skidaddle"

    def __init__(self, table: EntrySpeedTable | None, drive: DriveParams, heading: HeadingFn,
                 feedforward: Feedforward, settings: SkidaddleSettings | None = None, *,
                 dt_s: float = 0.01):
        self.drive, self.dt_s = drive, dt_s
        self.settings = settings = settings or SkidaddleSettings()
        alloc = settings.allocator
        self.allocator = Allocator(MotorModel(drive, feedforward), drive.battery_voltage_v,
                                   alloc.voltage_reserve, alloc.traction_fraction)
        cruise_v = self.allocator.v_max * float(alloc.cruise_voltage_fraction)
        model = self.allocator.model

        def speed_cap(direction: np.ndarray, heading: float) -> float:
            c, s = math.cos(heading), math.sin(heading)
            return model.cruise_speed(np.array([c * direction[0] + s * direction[1],
                                                -s * direction[0] + c * direction[1]]), cruise_v)

        self._speed_cap = speed_cap
        # budgets left out come from the first path's limits (tele-op's paths share them)
        self.controllers = controllers_for(settings, drive.traction_accel_in_s2,
                                           None if table is None else table.limits)
        self.stop = self.controllers.stop
        self.scheduler: Scheduler | None = None
        if table is not None:
            self.set_path(table, heading)
        self.pidf = WheelPIDF(feedforward, settings.pidf, drive.motor_rated_voltage_v)
        self.last_allocation = None

    def set_path(self, table: EntrySpeedTable, heading: HeadingFn) -> None:
        """Follow a new path from now on (tele-op replaces the path mid-motion); the
        wheels' PIDF state carries over."""
        self.scheduler = Scheduler(table, heading, self.settings.scheduler,
                                   controllers=self.controllers, speed_cap=self._speed_cap)

    def clear_path(self) -> None:
        self.scheduler = None

    def reset(self, state: DriveState) -> None:
        self.pidf.reset(wheel_surface_speeds(state, self.drive))

    @property
    def finished(self) -> bool:
        return self.scheduler is None or self.scheduler.mode == "done"

    def command(self, state: DriveState, battery_v: float | None = None) -> Command:
        pose, vel = state.measured_pose, state.velocity
        if self.scheduler is None:  # no path: the default controller holds the robot still
            reqs = [self.stop.request(vel)]
            tick = Tick(reqs, (self.stop.name,), "idle", None, -1)
        else:
            tick = self.scheduler.tick(pose, vel)
        wheels = wheel_surface_speeds(state, self.drive)
        c, s = math.cos(pose[2]), math.sin(pose[2])
        static = self.allocator.model.static(
            np.array([c * vel[0] + s * vel[1], -s * vel[0] + c * vel[1], vel[2]]))
        alloc = self.allocator.allocate(tick.requests, float(pose[2]), wheels, static)
        self.last_allocation = alloc
        power, volts, sat = self.pidf.update(alloc.wheel_accel_in_s2, wheels, self.dt_s,
                                             battery_v or self.drive.battery_voltage_v, static)
        g = tick.guidance
        extra = {"requests": tuple(tick.requests), "feedforward_v": alloc.feedforward_v}
        if g is None:
            return Command(power, volts, sat, tick.active, tick.mode, **extra)
        return Command(power, volts, sat, tick.active, tick.mode, g.cross_track_in,
                       wrap(g.heading_target_rad - float(pose[2])), g.speed_limit_in_s,
                       g.s_in, g.segment, **extra)


@dataclass
class LoopLog:
    """Per-tick arrays (row k: the state read at tick k and the command sent then)."""

    follower: str
    time_s: list = field(default_factory=list)
    pose: list = field(default_factory=list)
    velocity: list = field(default_factory=list)
    accel: list = field(default_factory=list)
    power: list = field(default_factory=list)
    volts: list = field(default_factory=list)
    wheel_speed_in_s: list = field(default_factory=list)
    traction: list = field(default_factory=list)
    slipping: list = field(default_factory=list)
    saturated: list = field(default_factory=list)
    cross_track_in: list = field(default_factory=list)
    heading_error_rad: list = field(default_factory=list)
    target_speed_in_s: list = field(default_factory=list)
    progress_in: list = field(default_factory=list)
    segment: list = field(default_factory=list)
    active: list = field(default_factory=list)
    mode: list = field(default_factory=list)
    compute_s: list = field(default_factory=list)
    sim_s: list = field(default_factory=list)
    requests: list = field(default_factory=list)       # per tick: {controller: [ax, ay, α]} asked
    feedforward_v: list = field(default_factory=list)  # per tick: the allocator's motor volts (or NaN)
    arrays: dict = field(default_factory=dict)

    def finish(self) -> LoopLog:
        for name in ("time_s", "pose", "velocity", "accel", "power", "volts",
                     "wheel_speed_in_s", "traction", "slipping", "saturated", "cross_track_in",
                     "heading_error_rad", "target_speed_in_s", "progress_in", "segment",
                     "compute_s", "sim_s", "feedforward_v"):
            self.arrays[name] = np.asarray(getattr(self, name), dtype=float)
        return self

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    @property
    def ticks(self) -> int:
        return len(self.time_s)


def run_loop(sim: MecanumSimulator, follower: Follower, *, max_time_s: float,
             settle_s: float = 0.3, rest_speed_in_s: float = 0.5,
             rest_rate_rad_s: float = 0.02, battery_reading_v: float | None = None) -> LoopLog:
    """Run ``follower`` on ``sim`` from its current state (see the module doc)."""
    drive = sim.params
    battery = battery_reading_v or drive.battery_voltage_v
    log = LoopLog(follower.name)
    state = sim.state
    follower.reset(state)
    rest_since = None
    n_max = int(math.ceil(max_time_s / sim.dt_s))
    for _ in range(n_max + 1):
        t0 = time.perf_counter()
        cmd = follower.command(state) if battery_reading_v is None else \
            follower.command(state, battery)
        t1 = time.perf_counter()
        _record(log, state, cmd, t1 - t0, drive)
        speed = math.hypot(state.velocity[0], state.velocity[1])
        at_rest = speed < rest_speed_in_s and abs(state.velocity[2]) < rest_rate_rad_s
        if at_rest and follower.finished:
            rest_since = state.time_s if rest_since is None else rest_since
            if state.time_s - rest_since >= settle_s - 1e-9:
                log.sim_s.append(0.0)
                break
        else:
            rest_since = None
        if state.time_s >= max_time_s - 1e-9:
            log.sim_s.append(0.0)
            break
        t2 = time.perf_counter()
        state = sim.step(cmd.power * drive.battery_voltage_v)
        log.sim_s.append(time.perf_counter() - t2)
    return log.finish()


def _record(log: LoopLog, st: DriveState, cmd: Command, compute_s: float,
            drive: DriveParams) -> None:
    log.time_s.append(st.time_s)
    log.pose.append(st.pose)
    log.velocity.append(st.velocity)
    log.accel.append(st.acceleration)
    log.power.append(cmd.power)
    log.volts.append(cmd.volts)
    log.wheel_speed_in_s.append(st.wheel_speeds_rad_s * drive.wheel_radius_in)
    log.traction.append(st.traction_fraction)
    log.slipping.append(np.any(st.slipping))
    log.saturated.append(cmd.saturated)
    log.cross_track_in.append(cmd.cross_track_in)
    log.heading_error_rad.append(cmd.heading_error_rad)
    log.target_speed_in_s.append(cmd.target_speed_in_s)
    log.progress_in.append(cmd.progress_in)
    log.segment.append(cmd.segment)
    log.active.append("+".join(cmd.active))
    log.mode.append(cmd.mode)
    log.compute_s.append(compute_s)
    log.requests.append({r.name: r.accel for r in cmd.requests})
    log.feedforward_v.append(cmd.feedforward_v if cmd.feedforward_v is not None else np.full(4, np.nan))


def robot_wheel_speeds(velocity_field: np.ndarray, heading: float, k_in: float) -> np.ndarray:
    """Wheel surface speeds of a field-frame velocity at ``heading`` (a helper for tests)."""
    c, s = math.cos(heading), math.sin(heading)
    v = np.asarray(velocity_field, dtype=float)
    return inverse_kinematics(np.array([c * v[0] + s * v[1], -s * v[0] + c * v[1], v[2]]), k_in)
