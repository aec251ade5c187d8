"""Synchronized multi-arm execution: one shared start stamp, one thread per arm, one cancel.

1. The per-arm trajectories must share their timestamps (else refused).
2. One start stamp, a moment in the future, is computed once: now + a buffer large
   enough for the slowest goal send seen so far.
3. Each arm sends its goal from its own thread against that stamp, so the motors
   start together however long each send takes.
4. If any arm fails, is rejected, times out, or the run is interrupted, a shared
   cancel event stops every other arm mid-motion (drivers subscribe to it, so the
   stop goes out from the failing thread at once — no polling).
5. If the stamp is about to pass before every arm has acknowledged its goal (a slow send,
   a busy machine), or a driver reports it passed (``Outcome.LATE``), and no arm has moved
   yet (an arm that started holding still has not), the goals sent are cancelled and all are
   sent again on a new stamp with twice the lead, up to ``max_start_lead_s``; an arm that
   already started a motion is never re-sent (that is the cancel-all of 4).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from core.errors import ExecutionError
from hardware.arms.clock import Clock, WallClock
from hardware.arms.protocol import ArmDriver, ArmTrajectory, CancelEvent, GoalResult, Outcome
from stages.arms.execution.settings import HardwareSettings


@dataclass
class ExecutionReport:
    results: dict[str, GoalResult]
    start_stamp: float
    start_buffer_s: float
    cancel_reason: str | None
    cancel_latency_s: float | None  # from the cancel to the last arm commanded to hold
    send_latency_s: dict[str, float] = field(default_factory=dict)
    leads_s: tuple[float, ...] = ()   # the stamp's lead of every try (clock s); the last one ran

    @property
    def stamp_retries(self) -> int:
        return max(len(self.leads_s) - 1, 0)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results.values())

    @property
    def start_skew_s(self) -> float:
        starts = [r.started_s for r in self.results.values() if np.isfinite(r.started_s)]
        return float(max(starts) - min(starts)) if len(starts) > 1 else 0.0

    def failure(self) -> str:
        bad = [r for r in self.results.values() if r.outcome not in (Outcome.SUCCEEDED, Outcome.CANCELLED)]
        first = bad[0] if bad else next((r for r in self.results.values() if not r.ok), None)
        if first is None:
            return ""
        return f"arm {first.arm!r} {first.outcome.value}: {first.reason or 'no reason given'}"


def split_trajectory(trajectory, arms: Mapping[str, tuple[str, ...]]) -> dict[str, ArmTrajectory]:
    """Per-arm shares of a group trajectory (same timestamps by construction)."""
    index = {j: i for i, j in enumerate(trajectory.joint_names)}
    out = {}
    for arm, joints in arms.items():
        cols = [index[j] for j in joints]
        out[arm] = ArmTrajectory(tuple(joints), np.asarray(trajectory.times, float),
                                 np.asarray(trajectory.positions)[:, cols],
                                 np.asarray(trajectory.velocities)[:, cols],
                                 np.asarray(trajectory.accelerations)[:, cols])
    return out


def check_shared_timestamps(per_arm: Mapping[str, ArmTrajectory]) -> None:
    items = list(per_arm.items())
    ref_arm, ref = items[0]
    for arm, tr in items[1:]:
        if tr.times.shape != ref.times.shape or not np.array_equal(tr.times, ref.times):
            raise ExecutionError(
                f"arm {arm!r} and arm {ref_arm!r} do not share timestamps ({tr.times.size} vs "
                f"{ref.times.size} samples); synchronized execution needs one shared time base")


def _moves(trajectory: ArmTrajectory) -> bool:
    """Does the trajectory go anywhere (not one position held for its whole duration)?"""
    return bool(np.ptp(np.asarray(trajectory.positions), axis=0).max(initial=0.0) > 1e-12)


class SynchronizedExecutor:
    """Runs per-arm trajectories on their drivers from one start stamp.

    Durations are on the drivers' clock's stopwatch (``driver.timing``): simulated seconds on
    virtual time, wall seconds on a wall clock (``speed`` clock seconds per wall second).
    ``start_buffer_s`` is the minimum lead of the stamp over "now"; it grows to
    ``safety × (slowest send seen)`` when sends are slow (× ``speed`` on the clock).
    Every arm must acknowledge its goal within the first ``1 − STAMP_GUARD`` of the lead; if
    one does not (or a driver answers ``LATE``) and no arm has moved, all are sent again with
    twice the lead, as long as it stays within ``max_start_lead_s``.
    ``ack_timeout_s``: a goal that has not come back by its motion's end plus this
    is declared TIMEOUT and everything is cancelled.
    """

    STAMP_GUARD = 0.25   # the last quarter of the lead is kept clear of sends: the goals sent are
    #                      cancelled before the stamp so that no arm starts alone

    def __init__(self, drivers: Mapping[str, ArmDriver], start_buffer_s: float = 0.05,
                 ack_timeout_s: float = 2.0, send_safety: float = 1.5, clock_speed: float = 1.0,
                 max_start_lead_s: float = 1.0):
        self.drivers = dict(drivers)
        first = next(iter(self.drivers.values()))
        # the drivers' clock: how it passes and is waited on (a driver without one: a wall clock at
        # ``clock_speed``); on virtual time every duration below is simulated seconds
        self.timing: Clock = getattr(first, "timing", None) or WallClock(first.clock, clock_speed)
        self.start_buffer_s = float(start_buffer_s)
        self.ack_timeout_s = float(ack_timeout_s)
        self.send_safety = float(send_safety)
        self.clock_speed = float(self.timing.speed)
        self.max_start_lead_s = max(float(max_start_lead_s), self.start_buffer_s)
        self.slowest_send_s = 0.0

    @classmethod
    def from_hardware(cls, drivers: Mapping[str, ArmDriver], hardware: HardwareSettings,
                      **overrides) -> SynchronizedExecutor:
        """The executor the ``hardware`` settings describe (start_buffer_s, ack_timeout_s, speed,
        max_start_lead_s); ``overrides`` replace any of its keyword arguments."""
        kwargs = {"start_buffer_s": hardware.start_buffer_s, "ack_timeout_s": hardware.ack_timeout_s,
                  "clock_speed": hardware.speed, "max_start_lead_s": hardware.max_start_lead_s, **overrides}
        return cls(drivers, **kwargs)

    def lead_s(self) -> float:
        """Lead of the stamp in clock seconds: the buffer or the slowest send (stopwatch s), × clock speed."""
        return min(max(self.start_buffer_s, self.send_safety * self.slowest_send_s),
                   self.max_start_lead_s) * self.clock_speed

    def run(self, per_arm: Mapping[str, ArmTrajectory], cancel: CancelEvent | None = None) -> ExecutionReport:
        """Run every arm from one stamp; a stamp that passes before any arm moved is retried."""
        unknown = set(per_arm) - set(self.drivers)
        if unknown:
            raise ExecutionError(f"no driver for arm(s) {sorted(unknown)}; drivers: {sorted(self.drivers)}")
        check_shared_timestamps(per_arm)
        outer = cancel or CancelEvent(self.timing.stopwatch)
        leads: list[float] = []
        lead = self.lead_s()
        while True:
            leads.append(lead)
            report, late = self._attempt(per_arm, outer, lead)
            # an arm that started a motion cannot be sent again; one that only holds still (a segment of
            # the other arm's) has not moved, and its cancel leaves it where it is
            moved = any(np.isfinite(r.started_s) and _moves(per_arm[a]) for a, r in report.results.items())
            report.leads_s = tuple(leads)
            if not late or moved or outer.is_set():
                return report
            if lead >= self.max_start_lead_s * self.clock_speed * (1 - 1e-9):
                tried = ", ".join(f"{x / self.clock_speed:.3g}" for x in leads)
                unit = "s" if self.timing.simulated else "s wall"
                report.cancel_reason = (f"the start stamp passed before arm(s) {late} acknowledged their "
                                        f"goals, on every try (leads tried: {tried} {unit}; "
                                        "hardware.max_start_lead_s bounds them)")
                for arm in late:
                    r = report.results[arm]
                    if r.outcome in (Outcome.CANCELLED, Outcome.LATE):
                        report.results[arm] = dataclasses.replace(r, outcome=Outcome.LATE,
                                                                  reason=report.cancel_reason)
                return report
            lead = min(2.0 * lead, self.max_start_lead_s * self.clock_speed)
            # this machine needs that lead now: later runs of this executor start from it
            self.slowest_send_s = max(self.slowest_send_s, lead / self.clock_speed / self.send_safety)

    def _attempt(self, per_arm: Mapping[str, ArmTrajectory], outer: CancelEvent,
                 lead: float) -> tuple[ExecutionReport, list[str]]:
        """One try on one stamp; also the arms that had not acknowledged before it (else [])."""
        timing = self.timing
        cancel = CancelEvent(timing.stopwatch)
        outer.subscribe(lambda: cancel.set(outer.reason))
        results: dict[str, GoalResult] = {}
        acked = {arm: threading.Event() for arm in per_arm}

        def run_arm(arm: str) -> None:
            driver = self.drivers[arm]
            try:
                result = driver.execute(per_arm[arm], stamp, cancel, acked[arm].set)
            except Exception as exc:  # noqa: BLE001 - a driver crash is a failed arm
                result = GoalResult(arm, Outcome.FAILED, f"driver raised {type(exc).__name__}: {exc}")
            results[arm] = result
            acked[arm].set()   # answered (a rejection is an answer too)
            if not result.ok:
                cancel.set(f"arm {arm!r} {result.outcome.value}: {result.reason}")

        def all_acked() -> bool:
            return all(ev.is_set() for ev in acked.values())

        def all_answered() -> bool:
            return len(results) == len(per_arm)

        with timing.actor():   # on virtual time, the clock waits for this thread too
            stamp = timing.now() + lead
            threads = {arm: timing.thread(run_arm, name=f"arm-{arm}", args=(arm,)) for arm in per_arm}
            duration = float(next(iter(per_arm.values())).times[-1])
            late: list[str] = []
            try:
                # a wall clock runs at most ``speed`` x wall (the simulation never catches up on a
                # stall), so at this deadline the stamp is still ahead: no arm has started yet
                timing.wait_for(all_acked, timeout_s=(1.0 - self.STAMP_GUARD) * lead / timing.speed)
                late = [a for a, ev in acked.items() if not ev.is_set()]
                if late:
                    cancel.set(f"arm(s) {late} had not acknowledged their goals "
                               f"{(1 - self.STAMP_GUARD) * lead:.3f} s into the stamp's {lead:.3f} s lead")
                # the motion ends on the driver's clock; from then each arm has ack_timeout_s to report
                timing.wait_for(all_answered, until=stamp + duration)
                if not timing.wait_for(all_answered, timeout_s=self.ack_timeout_s):
                    silent = sorted(set(per_arm) - set(results))
                    cancel.set(f"arm {silent[0]!r} timeout: no result {self.ack_timeout_s:.2f} s after its "
                               "motion should have ended")
                    timing.wait_for(all_answered, timeout_s=self.ack_timeout_s)
            except KeyboardInterrupt:
                cancel.set("interrupted by the user (SIGINT)")
                for t in threads.values():
                    t.join(self.ack_timeout_s)
                raise
        for arm in threads:
            if arm not in results:
                results[arm] = GoalResult(arm, Outcome.TIMEOUT, "the goal was never acknowledged")
        late += [a for a, r in results.items() if r.outcome == Outcome.LATE and a not in late]
        sends = {a: r.send_latency_s for a, r in results.items() if np.isfinite(r.send_latency_s)}
        if sends:
            self.slowest_send_s = max(self.slowest_send_s, *sends.values())
        latency = None
        if cancel.is_set() and cancel.set_at is not None:
            stops = [r.stopped_at for r in results.values() if np.isfinite(r.stopped_at)]
            latency = max(stops) - cancel.set_at if stops else None
        return ExecutionReport({arm: results[arm] for arm in per_arm}, stamp, lead,
                               cancel.reason if cancel.is_set() else None, latency, sends), late
