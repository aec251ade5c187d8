"""A fault-injecting wrapper for any arm driver: slow sends, failures, rejections, hangs."""

from __future__ import annotations

import threading

import numpy as np

from hardware.arms.protocol import ArmDriver, ArmTrajectory, CancelEvent, DriverWrapper, GoalResult, Outcome


class FaultyDriver(DriverWrapper):
    """Wraps ``inner`` and injects, as configured:

    - ``send_latency_s`` + uniform ``[0, send_jitter_s]`` before the goal is sent (on the driver's
      clock's stopwatch: wall seconds on a wall clock, simulated seconds on virtual time);
    - ``fail_at_s``: the arm fails that long (driver clock) after the start stamp, mid-motion;
    - ``reject``: the goal is refused;
    - ``hang``: the goal is never acknowledged (the call blocks until cancelled).
    """

    def __init__(self, inner: ArmDriver, send_latency_s: float = 0.0, send_jitter_s: float = 0.0,
                 fail_at_s: float | None = None, reject: bool = False, hang: bool = False,
                 seed: int | None = None):
        super().__init__(inner)
        self.send_latency_s, self.send_jitter_s = float(send_latency_s), float(send_jitter_s)
        self.fail_at_s, self.reject, self.hang = fail_at_s, bool(reject), bool(hang)
        self.rng = np.random.default_rng(seed)
        self._rng_lock = threading.Lock()

    def execute(self, trajectory: ArmTrajectory, start_stamp: float, cancel: CancelEvent,
                on_sent=None) -> GoalResult:
        with self._rng_lock:
            delay = self.send_latency_s + self.send_jitter_s * float(self.rng.random())
        timing = self.timing
        t0 = timing.stopwatch()
        if delay > 0 and timing.wait_for(cancel.is_set, timeout_s=delay):
            return GoalResult(self.name, Outcome.CANCELLED, "cancelled while sending")
        if self.reject:
            return GoalResult(self.name, Outcome.REJECTED, "goal rejected (injected fault)",
                              send_latency_s=timing.stopwatch() - t0)
        if self.hang:
            timing.wait_for(cancel.is_set)
            return GoalResult(self.name, Outcome.TIMEOUT, "goal never acknowledged (injected hang)")
        if self.fail_at_s is None:
            result = self.inner.execute(trajectory, start_stamp, cancel, on_sent)
        else:
            result = self._execute_then_fail(trajectory, start_stamp, cancel, on_sent)
        return GoalResult(result.arm, result.outcome, result.reason, result.sent_s, result.started_s,
                          result.ended_s, timing.stopwatch() - t0 if np.isnan(result.send_latency_s)
                          else result.send_latency_s + delay, result.stopped_at)

    def _execute_then_fail(self, trajectory, start_stamp, cancel, on_sent) -> GoalResult:
        """Run on the inner driver with a private cancel that fires at the fault time."""
        own = CancelEvent(self.timing.stopwatch)
        cancel.subscribe(lambda: own.set(cancel.reason))
        fault_at = start_stamp + float(self.fail_at_s)

        def trip():
            if not self.timing.wait_for(own.is_set, until=fault_at):
                own.set(f"injected fault at t={self.fail_at_s:.3f} s into the motion")

        self.timing.thread(trip, name=f"fault-{self.name}")
        result = self.inner.execute(trajectory, start_stamp, own, on_sent)
        own.set("done")
        if result.outcome == Outcome.CANCELLED and own.reason.startswith("injected fault"):
            return GoalResult(result.arm, Outcome.FAILED, own.reason, result.sent_s, result.started_s,
                              result.ended_s, result.send_latency_s, result.stopped_at)
        return result
