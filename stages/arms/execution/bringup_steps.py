"""What each bring-up step measures and checks: one method per step, each appending a
:class:`~stages.arms.execution.bringup_report.Check` per criterion to its step's result."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from hardware.arms.protocol import Outcome
from stages.arms.execution.bringup_drivers import timed_read
from stages.arms.execution.bringup_motion import BringUpMotions, MotionRun
from stages.arms.execution.bringup_report import Check, StepResult, fmt_rad
from stages.arms.execution.bringup_settings import BringUpSettings, MotionSettings
from stages.arms.execution.replay import tracking_error

# count(arm names in order, positions over their joints) -> number of states where arms touch
StateChecker = Callable[[Sequence[str], np.ndarray], int]


class BringUpSteps:
    """The six steps' measurements against ``settings``' criteria (named by the step keys)."""

    def __init__(self, motions: BringUpMotions, settings: BringUpSettings,
                 offsets: Mapping[str, np.ndarray] | None = None, count_touching: StateChecker | None = None):
        self.motions, self.settings, self.offsets = motions, settings, offsets
        self.count_touching = count_touching
        self.drivers, self.arms = motions.drivers, motions.arms

    # ------------------------------------------------------------------ step 1
    def connection(self, step: StepResult) -> None:
        c = self.settings.connection
        for arm, driver in self.drivers.items():
            spec = self.arms[arm]
            state, seconds, error = timed_read(driver, c.max_read_s)
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
        clock = self.motions.clock
        c0, w0 = clock(), time.perf_counter()
        time.sleep(c.clock_wait_s)
        advanced = clock() - c0
        step.checks.append(Check("the driver clock advances", f"+{advanced:.4f} s over "
                                 f"{time.perf_counter() - w0:.3f} s wall", advanced > 0,
                                 {"clock_advance_s": advanced}))

    # ------------------------------------------------------------------ step 2
    def joint_zeros(self, step: StepResult) -> None:
        c = self.settings.joint_zeros
        against = "the calibration" if self.offsets is not None else "home (no calibration given)"
        for arm, driver in self.drivers.items():
            spec = self.arms[arm]
            reads = np.array([np.asarray(driver.read_state().positions, float) for _ in range(c.samples)])
            measured = reads.mean(axis=0)
            expected = self.motions.known_pose[arm] + (self.offsets[arm] if self.offsets is not None else 0.0)
            err = np.abs(measured - expected)
            j = int(np.argmax(err))
            step.checks.append(Check(
                f"{arm} reading at the known pose vs {against} ≤ {c.tolerance_rad:g} rad",
                f"{fmt_rad(err[j])} ({spec.joints[j]})", bool(err[j] <= c.tolerance_rad),
                {f"{arm}_zero_error_rad": float(err[j])}))

    # ------------------------------------------------------------------ step 3
    def each_arm(self, step: StepResult) -> None:
        c = self.settings.each_arm
        for arm in self.arms:
            per_arm = self.motions.test_motion([arm], c.speed_fraction)
            run = self.motions.run(per_arm, c.max_send_latency_s, settle_s=c.settle_s)
            self._motion_checks(step, run, c, synchronized=False)
            if not all(ch.passed for ch in step.checks):
                return   # do not move the next arm after one failed

    # ------------------------------------------------------------------ steps 4 and 6
    def synchronized(self, step: StepResult) -> None:
        c = self.settings.synchronized
        run = self.motions.run(self.motions.test_motion(list(self.arms), c.speed_fraction),
                               c.max_send_latency_s, settle_s=c.settle_s)
        self._motion_checks(step, run, c, synchronized=True)

    def full_speed(self, step: StepResult) -> None:
        c = self.settings.full_speed
        run = self.motions.run(self.motions.test_motion(list(self.arms), c.speed_fraction or 1.0),
                               c.max_send_latency_s, settle_s=c.settle_s)
        self._motion_checks(step, run, c, synchronized=True)

    # ------------------------------------------------------------------ step 5
    def cancel(self, step: StepResult) -> None:
        c = self.settings.cancel
        per_arm = self.motions.test_motion(list(self.arms), c.speed_fraction)
        duration = float(next(iter(per_arm.values())).times[-1])
        run = self.motions.run(per_arm, c.max_send_latency_s, cancel_at_s=c.at_fraction * duration,
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
        for arm in per_arm:
            stamps, q, qd = run.recorder.arrays(arm)
            after = stamps >= run.cancel_clock_s
            moving = np.abs(qd).max(axis=1) > c.stopped_speed_rad_s if len(qd) else np.zeros(0, bool)
            idx = np.flatnonzero(after & moving)
            stop_s = float(stamps[idx[-1]] - run.cancel_clock_s) if idx.size else 0.0
            window = (stamps >= run.cancel_clock_s + c.hold_settle_s) & \
                     (stamps <= run.cancel_clock_s + c.hold_settle_s + c.hold_check_s)
            drift = float(np.abs(q[window] - q[window][0]).max()) if window.sum() > 1 else float("nan")
            step.checks.append(Check(f"{arm} at rest (< {c.stopped_speed_rad_s:g} rad/s) within "
                                     f"{c.max_stop_time_s:g} s of the cancel", f"{stop_s:.3f} s",
                                     stop_s <= c.max_stop_time_s, {f"{arm}_stop_time_s": stop_s}))
            step.checks.append(Check(f"{arm} holds: drift over {c.hold_check_s:g} s ≤ "
                                     f"{c.hold_tolerance_rad:g} rad",
                                     "not measured (no states)" if not np.isfinite(drift) else fmt_rad(drift),
                                     bool(np.isfinite(drift) and drift <= c.hold_tolerance_rad),
                                     {f"{arm}_hold_drift_rad": drift} if np.isfinite(drift) else {}))

    # ------------------------------------------------------------------ the motion steps' checks
    def _motion_checks(self, step: StepResult, run: MotionRun, c: MotionSettings,
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
                                     "not measured (no states)" if not np.isfinite(err) else fmt_rad(err),
                                     bool(np.isfinite(err) and err <= c.max_tracking_error_rad),
                                     {f"{arm}_tracking_error_max_rad": err} if np.isfinite(err) else {}))
            fin = float(np.abs(run.final[arm] - tr.positions[-1]).max())
            step.checks.append(Check(f"{arm} final error ≤ {c.max_final_error_rad:g} rad", fmt_rad(fin),
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
