"""The hardware-in-the-loop bring-up protocol: an ordered checklist run against any arm driver.

Steps, in order (each has explicit pass/fail criteria; the first failing step stops the
protocol and every later step is recorded as "not run"):

1. ``connection``   — every arm answers a state read in time; its joint names are the robot
   config's; positions and velocities are finite and within the joint limits; the clock runs.
2. ``joint_zeros``  — the state read at a known pose (``known_pose``, default ``robot.home``)
   matches what the calibration says it should read there: ``known_pose + offset`` with the
   calibration's joint zero offsets (``reading − true angle``), or ``known_pose`` itself
   without a calibration. Tolerance ``joint_zeros.tolerance_rad``.
3. ``each_arm``     — each arm alone, at ``speed_fraction`` of its velocity and acceleration
   limits, makes a small collision-checked joint motion (``known_pose + delta`` and back); its
   goal must succeed, its send must be quicker than ``max_send_latency_s``, and the tracking
   error (recorded states against the trajectory) and final error must stay within limits.
4. ``synchronized`` — both arms together on one shared start stamp at reduced speed: the same
   limits plus the start skew between the arms and no touching arms in the recorded states.
5. ``cancel``       — both arms move; a cancel is raised mid-motion; every arm must stop
   (cancel latency: from the cancel to the last arm commanded to hold), come to rest within
   ``max_stop_time_s`` and then hold (drift over ``hold_check_s``).
6. ``full_speed``   — as step 4 at ``full_speed.speed_fraction`` (1.0) of the limits.

Steps 1–2 only read. Steps 3–6 move the robot: on a driver marked real (``is_real``), each of
them refuses to move (and fails, saying so) unless confirmed — ``confirm`` for every step or
``<step>.confirm`` for one.

Everything here is plain Python: :class:`BringUpProtocol` takes drivers (the
:class:`hardware.arms.protocol.ArmDriver` protocol), the robot's limits and an optional motion
validator; the stage in :mod:`stages.adapters.arms.bringup` adapts config to it. The steps'
criteria and settings are in :mod:`stages.arms.execution.bringup_settings`, the report in
:mod:`stages.arms.execution.bringup_report`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.errors import ConfigError, ExecutionError
from hardware.arms.protocol import ArmDriver, ArmTrajectory, CancelEvent, GoalResult, Outcome
from stages.arms.execution.bringup_report import FAIL, PASS, BringUpReport, Check, StepResult
from stages.arms.execution.bringup_settings import (
    MOVING_STEPS,
    STEP_KEYS,
    BringUpSettings,
    MotionCriteria,
    load_joint_offsets,
)
from stages.arms.execution.replay import tracking_error


def _rad(x: float) -> str:
    x = float(x)
    return f"{x:.2e} rad" if 0 < abs(x) < 1e-3 else f"{x:.4f} rad"


class StepFailed(Exception):
    """Raised inside a step: ``message`` says why; checks measured so far are kept."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


# --------------------------------------------------------------------------- driver helpers
class MarkedReal:
    """Wraps a driver and marks it real (rehearse the operator-confirmation path on a simulator)."""

    is_real = True

    def __init__(self, inner: ArmDriver):
        self.inner, self.name, self.joint_names = inner, inner.name, inner.joint_names

    def clock(self) -> float:
        return self.inner.clock()

    def read_state(self):
        return self.inner.read_state()

    def execute(self, trajectory, start_stamp, cancel, on_sent=None) -> GoalResult:
        return self.inner.execute(trajectory, start_stamp, cancel, on_sent)


class _StampTap:
    """Passes through to ``inner`` and remembers the shared start stamp it was sent."""

    def __init__(self, inner: ArmDriver, on_stamp: Callable[[float], None], on_goal: Callable[[], None]):
        self.inner, self.name, self.joint_names = inner, inner.name, inner.joint_names
        self.is_real = inner.is_real
        self._on_stamp, self._on_goal = on_stamp, on_goal

    def clock(self) -> float:
        return self.inner.clock()

    def read_state(self):
        return self.inner.read_state()

    def execute(self, trajectory, start_stamp, cancel, on_sent=None) -> GoalResult:
        self._on_stamp(float(start_stamp))
        self._on_goal()
        return self.inner.execute(trajectory, start_stamp, cancel, on_sent)


class StateRecorder:
    """Polls every driver's ``read_state`` from a thread; one row per poll (all arms)."""

    def __init__(self, drivers: Mapping[str, ArmDriver], period_s: float = 0.002):
        self.drivers = dict(drivers)
        self.period_s = float(period_s)
        self.stamps: dict[str, list[float]] = {a: [] for a in self.drivers}
        self.positions: dict[str, list[np.ndarray]] = {a: [] for a in self.drivers}
        self.velocities: dict[str, list[np.ndarray]] = {a: [] for a in self.drivers}
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                states = {a: d.read_state() for a, d in self.drivers.items()}
            except Exception as exc:  # noqa: BLE001 - reported by the step
                self.error = exc
                return
            with self._lock:
                for a, st in states.items():
                    self.stamps[a].append(float(st.stamp))
                    self.positions[a].append(np.asarray(st.positions, float).copy())
                    self.velocities[a].append(np.asarray(st.velocities, float).copy())
            self._stop.wait(self.period_s)

    def __enter__(self) -> StateRecorder:
        self._thread = threading.Thread(target=self._loop, name="bringup-recorder", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)

    def arrays(self, arm: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        with self._lock:
            n = len(self.stamps[arm])
            dof = len(self.drivers[arm].joint_names)
            if n == 0:
                return np.zeros(0), np.zeros((0, dof)), np.zeros((0, dof))
            return (np.array(self.stamps[arm]), np.array(self.positions[arm]),
                    np.array(self.velocities[arm]))

    def rows(self, arms: Sequence[str]) -> np.ndarray:
        """Positions of ``arms`` side by side, one row per poll."""
        with self._lock:
            n = min(len(self.positions[a]) for a in arms)
            if n == 0:
                return np.zeros((0, sum(len(self.drivers[a].joint_names) for a in arms)))
            return np.hstack([np.array(self.positions[a][:n]) for a in arms])


# --------------------------------------------------------------------------- the protocol
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


# validate(arm names in order, waypoints over their joints) -> None if safe, else the reason
MotionValidator = Callable[[Sequence[str], np.ndarray], "str | None"]
# count(arm names in order, positions over their joints) -> number of states where arms touch
StateChecker = Callable[[Sequence[str], np.ndarray], int]


class BringUpProtocol:
    """Runs the checklist against ``drivers`` (one per arm, all sharing one clock)."""

    def __init__(self, drivers: Mapping[str, ArmDriver], arms: Mapping[str, ArmLimitsSpec],
                 settings: BringUpSettings | None = None, validate: MotionValidator | None = None,
                 count_touching: StateChecker | None = None, log: logging.Logger | None = None):
        missing = sorted(set(arms) - set(drivers))
        if missing:
            raise ExecutionError(f"no driver for arm(s) {missing}; drivers: {sorted(drivers)}")
        self.arms = {a: arms[a] for a in arms}
        self.drivers = {a: drivers[a] for a in self.arms}
        self.settings = settings or BringUpSettings()
        self.validate = validate
        self.count_touching = count_touching
        self.log = log or logging.getLogger("choreograph.bringup")
        self.goals_sent = 0
        self.report: BringUpReport | None = None   # filled in as the steps run (kept on Ctrl-C)
        self._goal_lock = threading.Lock()
        s = self.settings
        self.known_pose = {}
        for a, spec in self.arms.items():
            q = (s.known_pose or {}).get(a)
            q = spec.home if q is None else np.asarray(q, float)
            if q.shape != spec.home.shape:
                raise ConfigError(f"{s.config_prefix}.known_pose.{a} must have {spec.home.size} values, "
                                  f"got {q.size}")
            self.known_pose[a] = q
        self.deltas = {}
        for a, spec in self.arms.items():
            d = (s.deltas_rad or {}).get(a)
            if d is None:
                d = s.amplitude_rad * np.array([(-1.0) ** j for j in range(len(spec.joints))])
            d = np.asarray(d, float)
            if d.shape != spec.home.shape:
                raise ConfigError(f"{s.config_prefix}.deltas_rad.{a} must have {spec.home.size} values, "
                                  f"got {d.size}")
            self.deltas[a] = d
        unknown = sorted((set(s.known_pose or {}) | set(s.deltas_rad or {})) - set(self.arms))
        if unknown:
            raise ConfigError(f"{s.config_prefix} names arm(s) {unknown}; the arms are {sorted(self.arms)}")
        self.offsets = load_joint_offsets(s.calibration, {a: len(sp.joints) for a, sp in self.arms.items()})

    # ------------------------------------------------------------------ running
    @property
    def is_real(self) -> bool:
        return any(bool(getattr(d, "is_real", False)) for d in self.drivers.values())

    @property
    def clock(self) -> Callable[[], float]:
        return next(iter(self.drivers.values())).clock

    def run(self) -> BringUpReport:
        kind = "real" if self.is_real else "simulated"
        report = self.report = BringUpReport([StepResult(k) for k in STEP_KEYS], kind, tuple(self.arms))
        for step in report.steps:
            t0 = time.perf_counter()
            self.log.info("bring-up step %d (%s)", step.number, step.title)
            try:
                if step.key in MOVING_STEPS and self.is_real and not self.settings.step_confirmed(step.key):
                    p = self.settings.config_prefix
                    real = [a for a, d in self.drivers.items() if getattr(d, "is_real", False)]
                    raise StepFailed(
                        f"arm(s) {real} are a real robot: refusing to move without operator confirmation; "
                        f"check that the workspace is clear and re-run with {p}.confirm=true (every step) "
                        f"or {p}.{step.key}.confirm=true (this step)")
                getattr(self, f"_step_{step.key}")(step)
                bad = [c for c in step.checks if not c.passed]
                if bad:
                    raise StepFailed("; ".join(f"{c.criterion}: measured {c.measured}" for c in bad))
                step.status = PASS
            except StepFailed as exc:
                step.status, step.message = FAIL, exc.message
            except KeyboardInterrupt:
                step.status, step.message = FAIL, "interrupted by the operator (SIGINT); arms cancelled"
                raise
            finally:
                step.seconds = time.perf_counter() - t0
                report.goals_sent = self.goals_sent
            if step.status == FAIL:
                self.log.error("bring-up step %d (%s) failed: %s", step.number, step.title, step.message)
                break
            self.log.info("bring-up step %d (%s) passed", step.number, step.title)
        return report

    # ------------------------------------------------------------------ step 1
    def _step_connection(self, step: StepResult) -> None:
        c = self.settings.connection
        for arm, driver in self.drivers.items():
            spec = self.arms[arm]
            state, seconds, error = _timed_read(driver, c.max_read_s)
            if error is not None:
                step.checks.append(Check(f"{arm} answers a state read within {c.max_read_s:g} s",
                                         error, False, {f"{arm}_answers": False}))
                continue
            step.checks.append(Check(f"{arm} answers a state read within {c.max_read_s:g} s",
                                     f"{seconds * 1000:.2f} ms", seconds <= c.max_read_s,
                                     {f"{arm}_answers": True, f"{arm}_read_s": seconds}))
            names_ok = tuple(driver.joint_names) == spec.joints
            step.checks.append(Check(f"{arm} driver joints are the robot config's",
                                     "match" if names_ok else f"{list(driver.joint_names)}", names_ok))
            q = np.asarray(state.positions, float).reshape(-1)
            qd = np.asarray(state.velocities, float).reshape(-1)
            shape_ok = q.shape == spec.home.shape and qd.shape == spec.home.shape
            finite = shape_ok and bool(np.all(np.isfinite(q)) and np.all(np.isfinite(qd)))
            step.checks.append(Check(f"{arm} state has {spec.home.size} finite positions and velocities",
                                     f"{q.size} positions, {qd.size} velocities, "
                                     f"{'all finite' if finite else 'not finite'}", finite,
                                     {f"{arm}_state_finite": finite}))
            if not finite:
                continue
            margin = np.minimum(q - spec.lower, spec.upper - q)
            j = int(np.argmin(margin))
            ok = bool(margin[j] >= -c.limit_tolerance_rad)
            step.checks.append(Check(f"{arm} within joint limits (tolerance {c.limit_tolerance_rad:g} rad)",
                                     f"smallest margin {margin[j]:.4f} rad ({spec.joints[j]})", ok,
                                     {f"{arm}_limit_margin_rad": float(margin[j])}))
        c0, w0 = self.clock(), time.perf_counter()
        time.sleep(c.clock_wait_s)
        advanced = self.clock() - c0
        step.checks.append(Check("the driver clock advances", f"+{advanced:.4f} s over "
                                 f"{time.perf_counter() - w0:.3f} s wall", advanced > 0,
                                 {"clock_advance_s": advanced}))

    # ------------------------------------------------------------------ step 2
    def _step_joint_zeros(self, step: StepResult) -> None:
        c = self.settings.joint_zeros
        against = "the calibration" if self.offsets is not None else "home (no calibration given)"
        for arm, driver in self.drivers.items():
            spec = self.arms[arm]
            reads = np.array([np.asarray(driver.read_state().positions, float) for _ in range(c.samples)])
            measured = reads.mean(axis=0)
            expected = self.known_pose[arm] + (self.offsets[arm] if self.offsets is not None else 0.0)
            err = np.abs(measured - expected)
            j = int(np.argmax(err))
            step.checks.append(Check(
                f"{arm} reading at the known pose vs {against} ≤ {c.tolerance_rad:g} rad",
                f"{_rad(err[j])} ({spec.joints[j]})", bool(err[j] <= c.tolerance_rad),
                {f"{arm}_zero_error_rad": float(err[j])}))

    # ------------------------------------------------------------------ step 3
    def _step_each_arm(self, step: StepResult) -> None:
        c = self.settings.each_arm
        for arm in self.arms:
            per_arm = self._test_motion([arm], c.speed_fraction)
            run = self._run_motion(per_arm, c.max_send_latency_s, settle_s=c.settle_s)
            self._motion_checks(step, run, c, synchronized=False)
            if not all(ch.passed for ch in step.checks):
                return   # do not move the next arm after one failed

    # ------------------------------------------------------------------ steps 4 and 6
    def _step_synchronized(self, step: StepResult) -> None:
        c = self.settings.synchronized
        run = self._run_motion(self._test_motion(list(self.arms), c.speed_fraction), c.max_send_latency_s,
                               settle_s=c.settle_s)
        self._motion_checks(step, run, c, synchronized=True)

    def _step_full_speed(self, step: StepResult) -> None:
        c = self.settings.full_speed
        run = self._run_motion(self._test_motion(list(self.arms), c.speed_fraction or 1.0),
                               c.max_send_latency_s, settle_s=c.settle_s)
        self._motion_checks(step, run, c, synchronized=True)

    # ------------------------------------------------------------------ step 5
    def _step_cancel(self, step: StepResult) -> None:
        c = self.settings.cancel
        per_arm = self._test_motion(list(self.arms), c.speed_fraction)
        duration = float(next(iter(per_arm.values())).times[-1])
        run = self._run_motion(per_arm, c.max_send_latency_s, cancel_at_s=c.at_fraction * duration,
                               hold_s=c.hold_settle_s + c.hold_check_s)
        for arm, r in run.report.results.items():
            step.checks.append(Check(f"{arm} stopped mid-motion by the cancel (outcome cancelled)",
                                     f"{r.outcome.value}" + (f" ({r.reason})" if r.reason else ""),
                                     r.outcome == Outcome.CANCELLED,
                                     {f"{arm}_outcome": r.outcome.value}))
        if run.cancel_clock_s is None:
            step.checks.append(Check("the cancel is raised mid-motion", "the motion never reached "
                                     f"{c.at_fraction:.0%} of its duration", False))
            return
        lat = run.report.cancel_latency_s
        step.checks.append(Check(f"cancel latency (cancel → last arm holding) ≤ "
                                 f"{c.max_latency_s * 1000:g} ms",
                                 "not measured" if lat is None else f"{lat * 1000:.3f} ms",
                                 lat is not None and lat <= c.max_latency_s,
                                 {} if lat is None else {"latency_s": lat}))
        worst_stop, worst_drift = 0.0, 0.0
        for arm in per_arm:
            stamps, q, qd = run.recorder.arrays(arm)
            after = stamps >= run.cancel_clock_s
            moving = np.abs(qd).max(axis=1) > c.stopped_speed_rad_s if len(qd) else np.zeros(0, bool)
            idx = np.flatnonzero(after & moving)
            stop_s = float(stamps[idx[-1]] - run.cancel_clock_s) if idx.size else 0.0
            window = (stamps >= run.cancel_clock_s + c.hold_settle_s) & \
                     (stamps <= run.cancel_clock_s + c.hold_settle_s + c.hold_check_s)
            drift = float(np.abs(q[window] - q[window][0]).max()) if window.sum() > 1 else float("nan")
            worst_stop = max(worst_stop, stop_s)
            worst_drift = max(worst_drift, drift) if np.isfinite(drift) else float("nan")
            step.checks.append(Check(f"{arm} at rest (< {c.stopped_speed_rad_s:g} rad/s) within "
                                     f"{c.max_stop_time_s:g} s of the cancel", f"{stop_s:.3f} s",
                                     stop_s <= c.max_stop_time_s, {f"{arm}_stop_time_s": stop_s}))
            step.checks.append(Check(f"{arm} holds: drift over {c.hold_check_s:g} s ≤ "
                                     f"{c.hold_tolerance_rad:g} rad",
                                     "not measured (no states)" if not np.isfinite(drift) else _rad(drift),
                                     bool(np.isfinite(drift) and drift <= c.hold_tolerance_rad),
                                     {f"{arm}_hold_drift_rad": drift} if np.isfinite(drift) else {}))

    # ------------------------------------------------------------------ motions
    def _current(self) -> dict[str, np.ndarray]:
        return {a: np.asarray(d.read_state().positions, float).copy() for a, d in self.drivers.items()}

    def _test_motion(self, moving: Sequence[str], fraction: float | None) -> dict[str, ArmTrajectory]:
        """current → known pose + delta → known pose for the ``moving`` arms, checked, retimed."""
        from stages.arms.planning.path import JointPath
        from stages.arms.retiming.retime import retime_with_report

        fraction = float(fraction or self.settings.speed_fraction)
        now = self._current()
        order = list(self.arms)
        reasons = []
        for signs in _sign_choices(len(moving)):
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
            p = self.settings.config_prefix
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

    def _count_goal(self) -> None:
        with self._goal_lock:
            self.goals_sent += 1

    def _run_motion(self, per_arm: Mapping[str, ArmTrajectory], max_send_latency_s: float,
                    cancel_at_s: float | None = None, hold_s: float = 0.0,
                    settle_s: float = 0.0) -> _MotionRun:
        from stages.arms.execution.executor import SynchronizedExecutor

        s = self.settings
        stamp_box: list[float] = []
        stamp_ready = threading.Event()

        def on_stamp(t: float) -> None:   # a stamp that passed is retried: the last one is the motion's
            stamp_box.append(t)
            stamp_ready.set()

        taps = {a: _StampTap(self.drivers[a], on_stamp, self._count_goal) for a in per_arm}
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
            _wait_clock(self.clock, hold_s if cancel_at_s is not None else settle_s, s.clock_speed)
        if recorder.error is not None:
            raise StepFailed(f"reading the state during the motion failed: "
                             f"{type(recorder.error).__name__}: {recorder.error}")
        final = self._current()
        return _MotionRun(per_arm, report, recorder, final, duration,
                          cancel_clock[0] if cancel_clock else None)

    def _motion_checks(self, step: StepResult, run: _MotionRun, c: MotionCriteria,
                       synchronized: bool) -> None:
        rep = run.report
        for arm, r in rep.results.items():
            tail = f" ({r.reason})" if r.reason else ""
            step.checks.append(Check(f"{arm} goal outcome is succeeded", f"{r.outcome.value}{tail}", r.ok,
                                     {f"{arm}_outcome": r.outcome.value}))
            lat = r.send_latency_s
            if np.isfinite(lat):
                step.checks.append(Check(f"{arm} goal send ≤ {c.max_send_latency_s * 1000:g} ms",
                                         f"{lat * 1000:.2f} ms", bool(lat <= c.max_send_latency_s),
                                         {f"{arm}_send_latency_s": float(lat)}))
        if not rep.ok:
            return
        for arm, tr in run.per_arm.items():
            stamps, q, _ = run.recorder.arrays(arm)
            err = tracking_error(tr.times, tr.positions, rep.start_stamp, stamps, q)
            step.checks.append(Check(f"{arm} tracking error ≤ {c.max_tracking_error_rad:g} rad",
                                     "not measured (no states)" if not np.isfinite(err) else _rad(err),
                                     bool(np.isfinite(err) and err <= c.max_tracking_error_rad),
                                     {f"{arm}_tracking_error_max_rad": err} if np.isfinite(err) else {}))
            fin = float(np.abs(run.final[arm] - tr.positions[-1]).max())
            step.checks.append(Check(f"{arm} final error ≤ {c.max_final_error_rad:g} rad", _rad(fin),
                                     fin <= c.max_final_error_rad, {f"{arm}_final_error_rad": fin}))
        if synchronized:
            skew = rep.start_skew_s
            step.checks.append(Check(f"start skew between the arms ≤ {c.max_start_skew_s * 1000:g} ms",
                                     f"{skew * 1000:.3f} ms", skew <= c.max_start_skew_s,
                                     {"start_skew_s": skew}))
            if self.count_touching is not None:
                arms = list(run.per_arm)
                rows = run.recorder.rows(arms)
                touching = int(self.count_touching(arms, rows)) if len(rows) else 0
                step.checks.append(Check("no recorded state where the arms touch",
                                         f"{touching} of {len(rows)} states", touching == 0,
                                         {"colliding_states": touching, "recorded_states": int(len(rows))}))


@dataclass
class _MotionRun:
    per_arm: Mapping[str, ArmTrajectory]
    report: Any  # ExecutionReport
    recorder: StateRecorder
    final: dict[str, np.ndarray]
    duration_s: float
    cancel_clock_s: float | None


def _sign_choices(n: int) -> list[tuple[float, ...]]:
    """+ for all arms first, then every other combination of directions."""
    import itertools

    return [tuple(float(s) for s in combo) for combo in itertools.product((1.0, -1.0), repeat=n)]


def _timed_read(driver: ArmDriver, timeout_s: float):
    """(state, seconds, error message or None): a read that hangs does not hang the protocol."""
    box: dict[str, Any] = {}

    def read():
        t0 = time.perf_counter()
        try:
            box["state"] = driver.read_state()
        except Exception as exc:  # noqa: BLE001 - reported as the check's measurement
            box["error"] = f"read_state raised {type(exc).__name__}: {exc}"
        box["seconds"] = time.perf_counter() - t0

    t = threading.Thread(target=read, name=f"read-{driver.name}", daemon=True)
    t.start()
    t.join(timeout_s)
    if t.is_alive():
        return None, timeout_s, f"no answer within {timeout_s:g} s"
    if "error" in box:
        return None, box["seconds"], box["error"]
    return box["state"], box["seconds"], None


def _wait_clock(clock: Callable[[], float], seconds: float, clock_speed: float) -> None:
    """Wait until the driver clock has advanced ``seconds`` (bounded in wall time)."""
    if seconds <= 0:
        return
    target = clock() + seconds
    deadline = time.perf_counter() + 2.0 * seconds / clock_speed + 1.0
    while True:
        remaining = target - clock()
        if remaining <= 0:
            return
        if time.perf_counter() > deadline:
            raise StepFailed(f"the driver clock stopped advancing (waited for {seconds:g} s of it)")
        time.sleep(min(0.005, remaining / clock_speed))
