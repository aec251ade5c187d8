"""Execution benchmark: start skew, cancel latency and colliding states under random send latency.

Over ``runs`` runs of one two-arm trajectory (the crossing plan in ``pipeline=bench_execute``)
on the physics driver, each arm's goal send is delayed by a random latency, uniform in
``[0, send_latency_max_s]`` per arm and per run. Each run is done three ways, every one on a
fresh simulation:

- **synchronized**: the :class:`SynchronizedExecutor` (one shared start stamp in the future);
- **naive**: the same sends, but each arm starts its trajectory the moment its goal arrives
  (what an executor without a shared stamp does) — for comparison;
- **cancel**: synchronized, and one arm (alternating) fails mid-motion at a random point
  (``cancel_window`` of the duration); the shared cancel must stop the other arm.

The stamp's lead is ``start_buffer_s`` (default: ``hardware.start_buffer_s`` or 3× the largest
injected latency, whichever is larger) and grows with the slowest send seen, carried across runs
as one long-lived executor would. A run that does not end as it should (e.g. a goal that
arrived after the stamp because the machine stalled) is not dropped silently: it is counted in
``failed_runs`` and listed with its reason in ``runs.json``; the figures are over the others.

Reported (:class:`ExecutionFigures`): start skew median/max (synchronized and naive), cancel
latency median/max (from the shared cancel to the last arm commanded to hold, wall time),
colliding states of the synchronized and naive runs (every recorded physics state checked), and
the sequential baseline (one arm after the other, every ``sequential_check_every``-th state checked).

Latency is on the robot's clock. On virtual time (``hardware.clock=sim``, the default) a 50 ms send
is 50 ms of simulated time, the stamp, the sends and the cancel all happen on known physics steps,
and every figure is the same on any machine under any load: start skews and cancel latencies are
simulated seconds (a cancel reaches the other arm on the failing arm's own step: 0). On the wall
clock (``hardware.clock=wall``) the simulation runs ``speed`` times faster than real time, the
wall-time delay injected is ``latency / speed``, and cancel latencies and measured send latencies
(``send_latency_measured_*_s``: the injected delay plus the wait for the physics lock) are wall time —
what a threaded executor costs on this machine (on virtual time they are simulated seconds). Start
skews are always on the robot's clock, quantized to the physics step (the arms can only start on a
step).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.errors import ExecutionError
from hardware.arms.faults import FaultyDriver
from hardware.arms.protocol import ArmTrajectory, CancelEvent, DriverWrapper, GoalResult, Outcome
from stages.arms.bench.settings import BenchExecuteSettings
from stages.arms.execution.executor import SynchronizedExecutor, split_trajectory
from stages.arms.execution.replay import colliding_states
from stages.arms.execution.rig import simulated_robot
from stages.arms.execution.settings import HardwareSettings

_log = logging.getLogger(__name__)


def _no_progress(items, **_):
    return items


class StartOnArrival(DriverWrapper):
    """The naive executor's arm: ignores the shared stamp and starts when its goal arrives."""

    def __init__(self, inner, step_s: float):
        super().__init__(inner)
        self.step_s = float(step_s)

    def execute(self, trajectory: ArmTrajectory, start_stamp: float, cancel: CancelEvent,
                on_sent=None) -> GoalResult:
        for _ in range(5):   # "now" can pass between reading the clock and submitting: retry
            result = self.inner.execute(trajectory, self.inner.clock() + self.step_s, cancel, on_sent)
            if result.outcome != Outcome.LATE:
                return result
        return result


def median_max(values) -> tuple[float, float]:
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], float)
    return (float(np.median(v)), float(v.max())) if v.size else (float("nan"), float("nan"))


@dataclass
class ExecutionRun:
    """One run that completed all three ways (a row of runs.json)."""

    run: int
    seed: int
    start_skew_s: float = float("nan")
    colliding_states: int = 0
    send_latency_s: dict[str, float] = field(default_factory=dict)
    start_offset_s: float = float("nan")
    naive_start_skew_s: float = float("nan")
    naive_colliding_states: int = 0
    failing_arm: str = ""
    fail_at_s: float = float("nan")
    cancel_latency_s: float | None = None


@dataclass(frozen=True)
class ExecutionFigures:
    """The benchmark's figures; each field is a metric ``bench_execute.<field>``."""

    runs: int
    completed_runs: int
    failed_runs: int
    start_buffer_s: float
    speed: float
    duration_s: float
    physics_step_s: float
    send_latency_max_s: float
    send_latency_measured_median_s: float
    send_latency_measured_max_s: float
    start_skew_median_s: float
    start_skew_max_s: float
    start_offset_max_s: float
    naive_start_skew_median_s: float
    naive_start_skew_max_s: float
    cancel_latency_median_s: float
    cancel_latency_max_s: float
    cancel_latency_under_8ms: bool
    colliding_states: int
    checked_states: int
    naive_colliding_states: int
    naive_checked_states: int
    naive_runs_touching: int
    sequential_colliding_states: int
    sequential_checked_states: int
    sequential_duration_s: float
    bench_wall_s: float


@dataclass
class ExecutionBenchResult:
    runs: list[ExecutionRun]      # the runs that completed all three ways
    failures: list[str]           # every run that did not, with its reason
    figures: ExecutionFigures


class ExecutionBenchmark:
    """The execution benchmark on ``hardware`` (its speed and faults are the benchmark's own)."""

    def __init__(self, settings: BenchExecuteSettings, hardware: HardwareSettings):
        self.settings, self.hw = settings, hardware
        # lead of the shared stamp (robot clock): at least 3× the largest injected latency
        self.start_buffer_s = settings.start_buffer_s if settings.start_buffer_s is not None else max(
            hardware.start_buffer_s, 3.0 * settings.send_latency_max_s)
        self._slowest_send_s = 0.0   # carried across runs, as one long-lived executor would
        # robot-clock seconds per stopwatch second: the wall clock runs at the benchmark's speed; on
        # virtual time the injected latency is simulated seconds and nothing is scaled
        self.clock_speed = settings.speed if hardware.clock == "wall" else 1.0

    # ------------------------------------------------------------------ one run
    def _robot(self, world, q0, names, seed: int, naive: bool, fail: dict[str, float] | None = None):
        s = self.settings
        hw = dataclasses.replace(self.hw, speed=s.speed, faults={})
        sim, plain = simulated_robot(world, q0, names, hw, seed)
        step = float(world.model.opt.timestep)
        drivers = {}
        for k, (arm, d) in enumerate(plain.items()):
            inner = StartOnArrival(d, step) if naive else d
            drivers[arm] = FaultyDriver(inner, send_jitter_s=s.send_latency_max_s / self.clock_speed,
                                        fail_at_s=(fail or {}).get(arm), seed=seed * 7 + k)
        return sim, drivers

    def _execute(self, world, per_arm, q0, names, seed, naive=False, fail=None):
        sim, drivers = self._robot(world, q0, names, seed, naive, fail)
        executor = SynchronizedExecutor.from_hardware(drivers, self.hw, start_buffer_s=self.start_buffer_s)
        executor.slowest_send_s = self._slowest_send_s
        with sim:
            report = executor.run(per_arm)
            sim.run_until_idle(1.0)
        self._slowest_send_s = executor.slowest_send_s
        times, qpos = sim.recorded()
        return report, times, qpos

    @staticmethod
    def _touching(world, names, qpos, every: int) -> tuple[int, int]:
        adr = np.array([i for a in world.robot.arms if set(a.joints) <= set(names) for i in a.qpos_indices])
        joint_names = [j for a in world.robot.arms if set(a.joints) <= set(names) for j in a.joints]
        checked = qpos[::every, adr]
        return int(colliding_states(world, joint_names, checked).sum()), int(len(checked))

    # ------------------------------------------------------------------ the benchmark
    def run(self, world, trajectory, rng: np.random.Generator, seed: int, progress: Callable = _no_progress,
            log: logging.Logger = _log) -> ExecutionBenchResult:
        """``runs`` runs three ways (seeds and failure points from ``rng``), then the sequential
        baseline (seeded with ``seed``)."""
        s = self.settings
        names = tuple(trajectory.joint_names)
        arms = {a.name: a.joints for a in world.robot.arms if set(a.joints) <= set(names)}
        if len(arms) < 2:
            raise ExecutionError(f"the execution benchmark needs a trajectory of two or more arms; "
                                 f"it has {sorted(arms)}")
        if any(self.hw.faults_of(a) for a in self.hw.faults):
            log.warning("hardware.faults is ignored here: the benchmark injects its own latency")
        per_arm = split_trajectory(trajectory, arms)
        q0 = np.asarray(trajectory.positions[0], float)
        duration = float(trajectory.times[-1])
        seeds = rng.integers(0, 2**31 - 1, size=s.runs)
        fail_fraction = rng.uniform(*s.cancel_window, size=s.runs)
        arm_names = list(arms)
        records: list[ExecutionRun] = []
        failures: list[str] = []
        totals = {"sync_touching": 0, "sync_checked": 0, "naive_touching": 0, "naive_checked": 0}
        t0 = time.perf_counter()
        for i in progress(range(s.runs), total=s.runs, desc="bench_execute"):
            rec = ExecutionRun(run=i, seed=int(seeds[i]))
            sync, _, qpos = self._execute(world, per_arm, q0, names, rec.seed)
            if not sync.ok:
                failures.append(f"run {i} synchronized: {sync.failure()}")
                log.warning(failures[-1])
                continue
            touching, checked = self._touching(world, names, qpos, s.check_every)
            counts = {"sync_touching": touching, "sync_checked": checked}
            rec.start_skew_s, rec.colliding_states = sync.start_skew_s, touching
            rec.send_latency_s = {a: r.send_latency_s for a, r in sync.results.items()}
            rec.start_offset_s = max(abs(r.started_s - sync.start_stamp) for r in sync.results.values())

            naive, _, qpos = self._execute(world, per_arm, q0, names, rec.seed, naive=True)
            if not naive.ok:
                failures.append(f"run {i} naive: {naive.failure()}")
                log.warning(failures[-1])
                continue
            touching, checked = self._touching(world, names, qpos, s.check_every)
            counts.update(naive_touching=touching, naive_checked=checked)
            rec.naive_start_skew_s, rec.naive_colliding_states = naive.start_skew_s, touching

            failing = arm_names[i % len(arm_names)]
            fail_at = float(fail_fraction[i] * duration)
            cancel, _, _ = self._execute(world, per_arm, q0, names, rec.seed, fail={failing: fail_at})
            others = [r for a, r in cancel.results.items() if a != failing]
            if cancel.results[failing].outcome != Outcome.FAILED or \
                    any(r.outcome != Outcome.CANCELLED for r in others):
                failures.append(f"run {i} cancel test: expected {failing} failed and the others "
                                f"cancelled, got { {a: r.outcome.value for a, r in cancel.results.items()} } "
                                f"({cancel.failure()})")
                log.warning(failures[-1])
                continue
            rec.failing_arm, rec.fail_at_s, rec.cancel_latency_s = failing, fail_at, cancel.cancel_latency_s
            records.append(rec)
            for key, n in counts.items():   # only runs that completed all three ways count
                totals[key] += n
        wall = time.perf_counter() - t0
        if not records:
            raise ExecutionError(f"every benchmark run failed; first: {failures[0]}")

        seq_touching, seq_checked, seq_duration = self.sequential(world, per_arm, q0, names, seed)
        skew_med, skew_max = median_max(r.start_skew_s for r in records)
        naive_med, naive_max = median_max(r.naive_start_skew_s for r in records)
        cancel_med, cancel_max = median_max(r.cancel_latency_s for r in records)
        lat_med, lat_max = median_max(v for r in records for v in r.send_latency_s.values())
        figures = ExecutionFigures(
            runs=s.runs, completed_runs=len(records), failed_runs=len(failures),
            start_buffer_s=self.start_buffer_s, speed=s.speed, duration_s=duration,
            physics_step_s=float(world.model.opt.timestep), send_latency_max_s=s.send_latency_max_s,
            send_latency_measured_median_s=lat_med, send_latency_measured_max_s=lat_max,
            start_skew_median_s=skew_med, start_skew_max_s=skew_max,
            start_offset_max_s=max(r.start_offset_s for r in records),
            naive_start_skew_median_s=naive_med, naive_start_skew_max_s=naive_max,
            cancel_latency_median_s=cancel_med, cancel_latency_max_s=cancel_max,
            cancel_latency_under_8ms=bool(cancel_max < 0.008),
            colliding_states=totals["sync_touching"], checked_states=totals["sync_checked"],
            naive_colliding_states=totals["naive_touching"], naive_checked_states=totals["naive_checked"],
            naive_runs_touching=sum(r.naive_colliding_states > 0 for r in records),
            sequential_colliding_states=seq_touching, sequential_checked_states=seq_checked,
            sequential_duration_s=seq_duration, bench_wall_s=wall)
        return ExecutionBenchResult(records, failures, figures)

    def sequential(self, world, per_arm, q0, names, seed) -> tuple[int, int, float]:
        """The old execution layer's way: one arm after the other on one simulation."""
        hw = dataclasses.replace(self.hw, speed=self.settings.speed, faults={})
        sim, drivers = simulated_robot(world, q0, names, hw, seed)
        with sim:
            for arm, tr in per_arm.items():
                report = SynchronizedExecutor.from_hardware({arm: drivers[arm]}, hw).run({arm: tr})
                if not report.ok:
                    raise ExecutionError(f"sequential baseline: {report.failure()}")
            sim.run_until_idle(1.0)
        times, qpos = sim.recorded()
        touching, checked = self._touching(world, names, qpos, self.settings.sequential_check_every)
        return touching, checked, float(times[-1] - times[0]) if len(times) else 0.0


def runs_record(result: ExecutionBenchResult) -> dict[str, Any]:
    """runs.json: every completed run's figures and every failed run's reason."""
    return {"runs": [dataclasses.asdict(r) for r in result.runs], "failures": result.failures}
