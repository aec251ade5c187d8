"""Synchronized multi-arm execution: one shared start stamp, one thread per arm, one cancel.

1. The per-arm trajectories must share their timestamps (else refused).
2. One start stamp, a moment in the future, is computed once: now + a buffer large
   enough for the slowest goal send seen so far.
3. Each arm sends its goal from its own thread against that stamp, so the motors
   start together however long each send takes.
4. If any arm fails, is rejected, times out, or the run is interrupted, a shared
   cancel event stops every other arm mid-motion (drivers subscribe to it, so the
   stop goes out from the failing thread at once — no polling).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from hardware.arms.protocol import ArmDriver, ArmTrajectory, CancelEvent, GoalResult, Outcome
from stages.errors import ExecutionError


@dataclass
class ExecutionReport:
    results: dict[str, GoalResult]
    start_stamp: float
    start_buffer_s: float
    cancel_reason: str | None
    cancel_latency_s: float | None  # from the cancel to the last arm commanded to hold
    send_latency_s: dict[str, float] = field(default_factory=dict)

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


class SynchronizedExecutor:
    """Runs per-arm trajectories on their drivers from one start stamp.

    ``start_buffer_s`` is the minimum lead of the stamp over "now" in wall seconds; it grows
    to ``safety × (slowest send seen)`` when sends are slow (× ``clock_speed`` on the clock).
    ``ack_timeout_s``: a goal that has not come back by its motion's end plus this
    is declared TIMEOUT and everything is cancelled.
    """

    def __init__(self, drivers: Mapping[str, ArmDriver], start_buffer_s: float = 0.05,
                 ack_timeout_s: float = 2.0, send_safety: float = 1.5, clock_speed: float = 1.0):
        self.drivers = dict(drivers)
        self.start_buffer_s = float(start_buffer_s)
        self.ack_timeout_s = float(ack_timeout_s)
        self.send_safety = float(send_safety)
        self.clock_speed = float(clock_speed)
        self.slowest_send_s = 0.0

    def lead_s(self) -> float:
        """Lead of the stamp in clock seconds: the buffer or the slowest send (wall), × clock speed."""
        return max(self.start_buffer_s, self.send_safety * self.slowest_send_s) * self.clock_speed

    def run(self, per_arm: Mapping[str, ArmTrajectory], cancel: CancelEvent | None = None) -> ExecutionReport:
        unknown = set(per_arm) - set(self.drivers)
        if unknown:
            raise ExecutionError(f"no driver for arm(s) {sorted(unknown)}; drivers: {sorted(self.drivers)}")
        check_shared_timestamps(per_arm)
        cancel = cancel or CancelEvent()
        clock = next(iter(self.drivers.values())).clock
        lead = self.lead_s()
        stamp = clock() + lead
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

        threads = {arm: threading.Thread(target=run_arm, args=(arm,), name=f"arm-{arm}", daemon=True)
                   for arm in per_arm}
        for t in threads.values():
            t.start()
        duration = float(next(iter(per_arm.values())).times[-1])
        t_wall = time.perf_counter()
        ack_deadline = t_wall + lead / self.clock_speed + self.ack_timeout_s
        deadline = t_wall + (lead + duration) / self.clock_speed + self.ack_timeout_s
        try:
            for arm, ev in acked.items():
                if not ev.wait(max(0.0, ack_deadline - time.perf_counter())) and arm not in results:
                    cancel.set(f"arm {arm!r} timeout: goal not acknowledged within {self.ack_timeout_s:.2f} s "
                               "of the start stamp")
                    break
            for arm, t in threads.items():
                t.join(max(0.0, deadline - time.perf_counter()))
                if t.is_alive():
                    cancel.set(f"arm {arm!r} timeout: no result {self.ack_timeout_s:.2f} s after its motion "
                               "should have ended")
            for t in threads.values():
                t.join(self.ack_timeout_s)
        except KeyboardInterrupt:
            cancel.set("interrupted by the user (SIGINT)")
            for t in threads.values():
                t.join(self.ack_timeout_s)
            raise
        for arm, t in threads.items():
            if arm not in results:
                results[arm] = GoalResult(arm, Outcome.TIMEOUT, "the goal was never acknowledged")
        sends = {a: r.send_latency_s for a, r in results.items() if np.isfinite(r.send_latency_s)}
        if sends:
            self.slowest_send_s = max(self.slowest_send_s, *sends.values())
        latency = None
        if cancel.is_set() and cancel.set_wall_s is not None:
            stops = [r.stopped_wall_s for r in results.values() if np.isfinite(r.stopped_wall_s)]
            latency = max(stops) - cancel.set_wall_s if stops else None
        return ExecutionReport(results, stamp, lead, cancel.reason if cancel.is_set() else None,
                               latency, sends)
