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

Reported: start skew median/max (synchronized and naive), cancel latency median/max (from the
shared cancel to the last arm commanded to hold, wall time), colliding states of the
synchronized and naive runs (every recorded physics state checked), and the sequential
baseline (one arm after the other, every ``sequential_check_every``-th state checked).

Latency is on the robot's clock: the simulation runs ``speed`` times faster than real time, so
the wall-time delay injected is ``latency / speed`` — a 50 ms send is 50 ms of robot time, as
on hardware. Start skews are in the robot's (simulation) clock; they are quantized to the
physics step (the arms can only start on a step). Cancel latencies are wall time, and so are
the measured send latencies (``send_latency_*_wall_s``: the injected delay plus the wait for the
physics lock; a scheduler stall of the physics thread shows up there without moving the clock).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from core.artifacts import JsonFile, PngFigure
from core.errors import ConfigError, ExecutionError
from hardware.arms.protocol import ArmTrajectory, CancelEvent, DriverWrapper, GoalResult, Outcome
from stages.api import Stage, StageContext, StageResult
from stages.arms.execution.executor import SynchronizedExecutor, split_trajectory
from stages.arms.execution.replay import colliding_states
from stages.arms.execution.rig import hardware_settings, simulated_robot


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


def _median_max(values) -> tuple[float, float]:
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], float)
    return (float(np.median(v)), float(v.max())) if v.size else (float("nan"), float("nan"))


class BenchExecute(Stage):
    """The execution benchmark (see the module docstring); metrics ``bench_execute.*``."""

    outputs = ()

    def __init__(self, hardware: Mapping[str, Any] | None = None, runs: int = 50, speed: float = 3.0,
                 send_latency_max_s: float = 0.05, cancel_window: tuple[float, float] = (0.3, 0.7),
                 check_every: int = 1, sequential_check_every: int = 4, bins: int = 25,
                 start_buffer_s: float | None = None):
        self.hw = hardware_settings(hardware)
        if int(runs) < 1:
            raise ConfigError(f"pipeline.stages.bench_execute.runs must be >= 1, got {runs}")
        if not float(speed) > 0:
            raise ConfigError(f"pipeline.stages.bench_execute.speed must be > 0, got {speed}")
        if not float(send_latency_max_s) >= 0:
            raise ConfigError("pipeline.stages.bench_execute.send_latency_max_s must be >= 0, "
                              f"got {send_latency_max_s}")
        lo, hi = (float(x) for x in cancel_window)
        if not 0 < lo <= hi < 1:
            raise ConfigError(f"pipeline.stages.bench_execute.cancel_window must be [lo, hi] with "
                              f"0 < lo <= hi < 1, got {list(cancel_window)}")
        self.runs, self.speed = int(runs), float(speed)
        self.latency_max_s = float(send_latency_max_s)
        self.cancel_window = (lo, hi)
        self.check_every = max(1, int(check_every))
        self.sequential_check_every = max(1, int(sequential_check_every))
        self.bins = int(bins)
        # lead of the shared stamp (robot clock): at least 3× the largest injected latency
        self.start_buffer_s = float(start_buffer_s) if start_buffer_s is not None else max(
            float(self.hw.get("start_buffer_s", 0.1)), 3.0 * self.latency_max_s)
        self._slowest_send_s = 0.0   # carried across runs, as one long-lived executor would

    # ------------------------------------------------------------------ one run
    def _robot(self, world, q0, names, seed: int, naive: bool, fail: dict[str, float] | None = None):
        from hardware.arms.faults import FaultyDriver

        hw = {**self.hw, "speed": self.speed, "faults": {}}
        sim, plain = simulated_robot(world, q0, names, hw, seed)
        step = float(world.model.opt.timestep)
        drivers = {}
        for k, (arm, d) in enumerate(plain.items()):
            inner = StartOnArrival(d, step) if naive else d
            drivers[arm] = FaultyDriver(inner, send_jitter_s=self.latency_max_s / self.speed,
                                        fail_at_s=(fail or {}).get(arm), seed=seed * 7 + k)
        return sim, drivers

    def _execute(self, world, per_arm, q0, names, seed, naive=False, fail=None):
        sim, drivers = self._robot(world, q0, names, seed, naive, fail)
        executor = SynchronizedExecutor.from_hardware(drivers, self.hw, start_buffer_s=self.start_buffer_s,
                                                      clock_speed=self.speed)
        executor.slowest_send_s = self._slowest_send_s
        with sim:
            report = executor.run(per_arm)
            sim.run_until_idle(1.0)
        self._slowest_send_s = executor.slowest_send_s
        times, qpos = sim.recorded()
        return report, times, qpos

    def _touching(self, world, names, qpos, every: int) -> tuple[int, int]:
        adr = np.array([i for a in world.robot.arms if set(a.joints) <= set(names) for i in a.qpos_indices])
        joint_names = [j for a in world.robot.arms if set(a.joints) <= set(names) for j in a.joints]
        checked = qpos[::every, adr]
        return int(colliding_states(world, joint_names, checked).sum()), int(len(checked))

    # ------------------------------------------------------------------ the benchmark
    def run(self, ctx: StageContext, world, trajectory) -> StageResult:
        names = tuple(trajectory.joint_names)
        arms = {a.name: a.joints for a in world.robot.arms if set(a.joints) <= set(names)}
        if len(arms) < 2:
            raise ExecutionError(f"the execution benchmark needs a trajectory of two or more arms; "
                                 f"it has {sorted(arms)}")
        if self.hw.get("faults"):
            ctx.log.warning("hardware.faults is ignored here: the benchmark injects its own latency")
        per_arm = split_trajectory(trajectory, arms)
        q0 = np.asarray(trajectory.positions[0], float)
        duration = float(trajectory.times[-1])
        rng = ctx.rng
        seeds = rng.integers(0, 2**31 - 1, size=self.runs)
        fail_fraction = rng.uniform(*self.cancel_window, size=self.runs)
        arm_names = list(arms)
        records: list[dict[str, Any]] = []
        failures: list[str] = []
        totals = {"sync_touching": 0, "sync_checked": 0, "naive_touching": 0, "naive_checked": 0}
        t0 = time.perf_counter()
        for i in ctx.progress(range(self.runs), total=self.runs, desc="bench_execute"):
            seed = int(seeds[i])
            rec: dict[str, Any] = {"run": i, "seed": seed}
            sync, _, qpos = self._execute(world, per_arm, q0, names, seed)
            if not sync.ok:
                failures.append(f"run {i} synchronized: {sync.failure()}")
                ctx.log.warning(failures[-1])
                continue
            touching, checked = self._touching(world, names, qpos, self.check_every)
            counts = {"sync_touching": touching, "sync_checked": checked}
            rec.update(start_skew_s=sync.start_skew_s, colliding_states=touching,
                       send_latency_s={a: r.send_latency_s for a, r in sync.results.items()},
                       start_offset_s=max(abs(r.started_s - sync.start_stamp) for r in sync.results.values()))

            naive, _, qpos = self._execute(world, per_arm, q0, names, seed, naive=True)
            if not naive.ok:
                failures.append(f"run {i} naive: {naive.failure()}")
                ctx.log.warning(failures[-1])
                continue
            touching, checked = self._touching(world, names, qpos, self.check_every)
            counts.update(naive_touching=touching, naive_checked=checked)
            rec.update(naive_start_skew_s=naive.start_skew_s, naive_colliding_states=touching)

            failing = arm_names[i % len(arm_names)]
            fail_at = float(fail_fraction[i] * duration)
            cancel, _, _ = self._execute(world, per_arm, q0, names, seed, fail={failing: fail_at})
            others = [r for a, r in cancel.results.items() if a != failing]
            if cancel.results[failing].outcome != Outcome.FAILED or \
                    any(r.outcome != Outcome.CANCELLED for r in others):
                failures.append(f"run {i} cancel test: expected {failing} failed and the others "
                                f"cancelled, got { {a: r.outcome.value for a, r in cancel.results.items()} } "
                                f"({cancel.failure()})")
                ctx.log.warning(failures[-1])
                continue
            rec.update(failing_arm=failing, fail_at_s=fail_at, cancel_latency_s=cancel.cancel_latency_s)
            records.append(rec)
            for key, n in counts.items():   # only runs that completed all three ways count
                totals[key] += n
        wall = time.perf_counter() - t0
        if not records:
            raise ExecutionError(f"every benchmark run failed; first: {failures[0]}")

        seq_touching, seq_checked, seq_duration = self._sequential(world, per_arm, q0, names, ctx.seed)
        skew_med, skew_max = _median_max(r["start_skew_s"] for r in records)
        naive_med, naive_max = _median_max(r["naive_start_skew_s"] for r in records)
        cancel_med, cancel_max = _median_max(r["cancel_latency_s"] for r in records)
        lat_med, lat_max = _median_max(v for r in records for v in r["send_latency_s"].values())
        metrics = {
            "runs": self.runs, "completed_runs": len(records), "failed_runs": len(failures),
            "start_buffer_s": self.start_buffer_s, "speed": self.speed, "duration_s": duration,
            "physics_step_s": float(world.model.opt.timestep),
            "send_latency_max_s": self.latency_max_s,
            "send_latency_median_wall_s": lat_med, "send_latency_max_wall_s": lat_max,
            "start_skew_median_s": skew_med, "start_skew_max_s": skew_max,
            "start_offset_max_s": max(r["start_offset_s"] for r in records),
            "naive_start_skew_median_s": naive_med, "naive_start_skew_max_s": naive_max,
            "cancel_latency_median_s": cancel_med, "cancel_latency_max_s": cancel_max,
            "cancel_latency_under_8ms": bool(cancel_max < 0.008),
            "colliding_states": totals["sync_touching"], "checked_states": totals["sync_checked"],
            "naive_colliding_states": totals["naive_touching"],
            "naive_checked_states": totals["naive_checked"],
            "naive_runs_touching": sum(r["naive_colliding_states"] > 0 for r in records),
            "sequential_colliding_states": seq_touching, "sequential_checked_states": seq_checked,
            "sequential_duration_s": seq_duration, "bench_wall_s": wall,
        }
        ctx.log.info("start skew median %.4f / max %.4f s (naive %.4f / %.4f s); cancel latency median "
                     "%.3f / max %.3f ms; colliding states %d (naive %d, sequential %d of %d)",
                     skew_med, skew_max, naive_med, naive_max, cancel_med * 1e3, cancel_max * 1e3,
                     totals["sync_touching"], totals["naive_touching"], seq_touching, seq_checked)
        return StageResult(metrics=metrics, files={
            "runs.json": JsonFile({"runs": records, "failures": failures}),
            "histogram.png": PngFigure(self._histogram(records, metrics)),
        })

    def _sequential(self, world, per_arm, q0, names, seed) -> tuple[int, int, float]:
        """The old execution layer's way: one arm after the other on one simulation."""
        hw = {**self.hw, "speed": self.speed, "faults": {}}
        sim, drivers = simulated_robot(world, q0, names, hw, seed)
        with sim:
            for arm, tr in per_arm.items():
                report = SynchronizedExecutor.from_hardware({arm: drivers[arm]}, hw).run({arm: tr})
                if not report.ok:
                    raise ExecutionError(f"sequential baseline: {report.failure()}")
            sim.run_until_idle(1.0)
        times, qpos = sim.recorded()
        touching, checked = self._touching(world, names, qpos, self.sequential_check_every)
        return touching, checked, float(times[-1] - times[0]) if len(times) else 0.0

    def _histogram(self, records, m):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        sync = np.array([r["start_skew_s"] for r in records]) * 1e3
        naive = np.array([r["naive_start_skew_s"] for r in records]) * 1e3
        cancel = np.array([r["cancel_latency_s"] for r in records if r["cancel_latency_s"] is not None]) * 1e3
        fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.6))
        top = max(float(naive.max(initial=0.0)), float(sync.max(initial=0.0)), 1.0)
        edges = np.linspace(0, top * 1.05, self.bins + 1)
        a.hist(naive, bins=edges, color="tab:red", alpha=0.6, label="naive: start on arrival")
        a.hist(sync, bins=edges, color="tab:blue", alpha=0.8, label="shared start stamp")
        a.axvline(2.0, color="k", ls="--", lw=1, label="target 2 ms")
        a.set_xlabel("start skew between the arms (ms, robot clock)")
        a.set_ylabel("runs")
        a.set_title(f"start skew, {len(records)} runs, send latency U(0, {self.latency_max_s * 1e3:g} ms)")
        a.legend(fontsize=8)
        b.hist(cancel, bins=self.bins, color="tab:green", alpha=0.8)
        b.axvline(8.0, color="k", ls="--", lw=1, label="target 8 ms (one 125 Hz period)")
        b.set_xlabel("cancel latency after a mid-motion failure (ms, wall)")
        b.set_title(f"median {m['cancel_latency_median_s'] * 1e3:.3f} ms, "
                    f"max {m['cancel_latency_max_s'] * 1e3:.3f} ms")
        b.legend(fontsize=8)
        fig.tight_layout()
        return fig
