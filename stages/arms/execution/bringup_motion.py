"""Bring-up's test motions: planned around the known pose, checked, retimed at a fraction of the
limits, and run through the synchronized executor while every arm's state is recorded."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from core.errors import ConfigError
from hardware.arms.protocol import ArmDriver, ArmTrajectory, CancelEvent
from stages.arms.execution.bringup_drivers import StampTap, StateRecorder, wait_clock
from stages.arms.execution.bringup_report import StepFailed
from stages.arms.execution.bringup_settings import CONFIG_PREFIX, BringUpSettings
from stages.arms.execution.executor import ExecutionReport, SynchronizedExecutor
from stages.arms.planning.path import JointPath
from stages.arms.retiming.retime import retime_with_report

# validate(arm names in order, waypoints over their joints) -> None if safe, else the reason
MotionValidator = Callable[[Sequence[str], np.ndarray], "str | None"]


@dataclass(frozen=True)
class ArmLimitsSpec:
    """What the protocol needs to know of one arm (from the robot config)."""

    joints: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    velocity_limits: np.ndarray
    acceleration_limits: np.ndarray
    home: np.ndarray

    @classmethod
    def from_arm_spec(cls, arm) -> ArmLimitsSpec:
        return cls(tuple(arm.joints), np.asarray(arm.lower, float), np.asarray(arm.upper, float),
                   np.asarray(arm.velocity_limits, float), np.asarray(arm.acceleration_limits, float),
                   np.asarray(arm.home, float))


@dataclass
class MotionRun:
    """One test motion as it ran: the trajectories, the executor's report and the recorded states."""

    per_arm: Mapping[str, ArmTrajectory]
    report: ExecutionReport
    recorder: StateRecorder
    final: dict[str, np.ndarray]
    duration_s: float
    cancel_clock_s: float | None


class BringUpMotions:
    """The arms as bring-up moves them: their drivers (one clock), limits, known pose and test deltas.

    A wrong ``known_pose`` or ``deltas_rad`` (length, arm names) is a ConfigError at construction;
    messages name the settings under ``config_prefix``.
    """

    def __init__(self, drivers: Mapping[str, ArmDriver], arms: Mapping[str, ArmLimitsSpec],
                 settings: BringUpSettings, validate: MotionValidator | None = None,
                 config_prefix: str = CONFIG_PREFIX):
        self.drivers, self.arms, self.settings, self.validate = drivers, arms, settings, validate
        self.config_prefix = config_prefix
        self.goals_sent = 0
        self._goal_lock = threading.Lock()
        s, p = settings, config_prefix
        self.known_pose = {}
        for a, spec in arms.items():
            q = (s.known_pose or {}).get(a)
            q = spec.home if q is None else np.asarray(q, float)
            if q.shape != spec.home.shape:
                raise ConfigError(f"{p}.known_pose.{a} must have {spec.home.size} values, "
                                  f"got {q.size}")
            self.known_pose[a] = q
        self.deltas = {}
        for a, spec in arms.items():
            d = (s.deltas_rad or {}).get(a)
            if d is None:
                d = s.amplitude_rad * np.array([(-1.0) ** j for j in range(len(spec.joints))])
            d = np.asarray(d, float)
            if d.shape != spec.home.shape:
                raise ConfigError(f"{p}.deltas_rad.{a} must have {spec.home.size} values, "
                                  f"got {d.size}")
            self.deltas[a] = d
        unknown = sorted((set(s.known_pose or {}) | set(s.deltas_rad or {})) - set(arms))
        if unknown:
            raise ConfigError(f"{p} names arm(s) {unknown}; the arms are {sorted(arms)}")

    @property
    def clock(self) -> Callable[[], float]:
        return next(iter(self.drivers.values())).clock

    def current(self) -> dict[str, np.ndarray]:
        return {a: np.asarray(d.read_state().positions, float).copy() for a, d in self.drivers.items()}

    def _count_goal(self) -> None:
        with self._goal_lock:
            self.goals_sent += 1

    # ------------------------------------------------------------------ planning
    def test_motion(self, moving: Sequence[str], fraction: float | None) -> dict[str, ArmTrajectory]:
        """current → known pose + delta → known pose for the ``moving`` arms, checked, retimed."""
        fraction = float(fraction or self.settings.speed_fraction)
        now = self.current()
        order = list(self.arms)
        reasons = []
        for signs in sign_choices(len(moving)):
            target = dict(now)
            end = dict(now)
            bad = None
            for arm, sign in zip(moving, signs, strict=True):
                spec = self.arms[arm]
                goal = self.known_pose[arm] + sign * self.deltas[arm]
                if np.any(goal < spec.lower) or np.any(goal > spec.upper):
                    bad = f"{arm}: known pose {'+' if sign > 0 else '−'} delta leaves the joint limits"
                    break
                target[arm], end[arm] = goal, self.known_pose[arm]
            if bad is None and self.validate is not None:
                wp = np.stack([np.concatenate([w[a] for a in order]) for w in (now, target, end)])
                bad = self.validate(order, wp)
            if bad is None:
                break
            reasons.append(bad)
        else:
            p = self.config_prefix
            raise StepFailed(f"no safe test motion for arm(s) {list(moving)} ({'; '.join(reasons)}); "
                             f"set {p}.deltas_rad or {p}.amplitude_rad")
        names = [j for a in moving for j in self.arms[a].joints]
        wp = np.stack([np.concatenate([w[a] for a in moving]) for w in (now, target, end)])
        vel = np.concatenate([self.arms[a].velocity_limits for a in moving]) * fraction
        acc = np.concatenate([self.arms[a].acceleration_limits for a in moving]) * fraction
        traj = retime_with_report(JointPath(tuple(names), wp), vel, acc, self.settings.rate_hz,
                                  max_deviation_rad=0.0).trajectory
        out, i = {}, 0
        for a in moving:
            n = len(self.arms[a].joints)
            sl = slice(i, i + n)
            out[a] = ArmTrajectory(self.arms[a].joints, np.asarray(traj.times, float),
                                   np.asarray(traj.positions)[:, sl], np.asarray(traj.velocities)[:, sl],
                                   np.asarray(traj.accelerations)[:, sl])
            i += n
        return out

    # ------------------------------------------------------------------ running
    def run(self, per_arm: Mapping[str, ArmTrajectory], max_send_latency_s: float,
            cancel_at_s: float | None = None, hold_s: float = 0.0, settle_s: float = 0.0) -> MotionRun:
        """Run ``per_arm`` from one start stamp while recording; a cancel at start + ``cancel_at_s``."""
        s = self.settings
        stamp_box: list[float] = []
        stamp_ready = threading.Event()

        def on_stamp(t: float) -> None:   # a stamp that passed is retried: the last one is the motion's
            stamp_box.append(t)
            stamp_ready.set()

        taps = {a: StampTap(self.drivers[a], on_stamp, self._count_goal) for a in per_arm}
        lead = max(s.start_buffer_s, 1.5 * max_send_latency_s * s.clock_speed)
        executor = SynchronizedExecutor(taps, start_buffer_s=lead, ack_timeout_s=s.ack_timeout_s,
                                        clock_speed=s.clock_speed, max_start_lead_s=s.max_start_lead_s)
        cancel = CancelEvent()
        duration = float(next(iter(per_arm.values())).times[-1])
        cancel_clock: list[float] = []
        stop_watch = threading.Event()

        def watch() -> None:   # raise the cancel test's cancel at start stamp + cancel_at_s
            if not stamp_ready.wait(lead / s.clock_speed + s.ack_timeout_s):
                return
            while not stop_watch.is_set() and not cancel.is_set():
                at = stamp_box[-1] + float(cancel_at_s)
                now = self.clock()
                if now >= at:
                    cancel_clock.append(now)
                    cancel.set("bring-up cancel test")
                    return
                stop_watch.wait(min(0.0005, max(0.0, (at - now) / s.clock_speed)))

        watcher = None
        with StateRecorder(self.drivers, s.sample_period_s) as recorder:
            if cancel_at_s is not None:
                watcher = threading.Thread(target=watch, name="bringup-cancel", daemon=True)
                watcher.start()
            try:
                report = executor.run(per_arm, cancel)
            finally:
                stop_watch.set()
                if watcher is not None:
                    watcher.join(1.0)
            wait_clock(self.clock, hold_s if cancel_at_s is not None else settle_s, s.clock_speed)
        if recorder.error is not None:
            raise StepFailed(f"reading the state during the motion failed: "
                             f"{type(recorder.error).__name__}: {recorder.error}")
        final = self.current()
        return MotionRun(per_arm, report, recorder, final, duration,
                         cancel_clock[0] if cancel_clock else None)


def sign_choices(n: int) -> list[tuple[float, ...]]:
    """+ for all arms first, then every other combination of directions."""
    return [tuple(float(s) for s in combo) for combo in itertools.product((1.0, -1.0), repeat=n)]
