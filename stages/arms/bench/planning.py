"""The planning benchmark: choreograph's planner and OMPL's side by side, on the same checks.

For every goal set (:class:`GoalSetSettings`) and seed, the goal configurations are solved once
(IK, shared by every planner), then each planner plans start → goal in the same process,
interleaved seed by seed, with the same :class:`ClearanceChecker`, the same :class:`EdgeChecker`
and the same shortcutting. Per planner and goal set it reports the success rate, the median and
90th-percentile planning time (search + smoothing; the search alone as ``search_*``), the
joint-space path length after smoothing, the number of clearance checks, every successful plan
retimed at the rate with every sample re-checked at the true clearance (violations, the closest
sample), and the ratio of medians choreograph / OMPL RRTConnect (:mod:`stages.arms.bench.plan_report`).
``sets`` runs some goal sets only (a real robot's own crossing); ``profile`` keeps a cProfile of
choreograph's plans.

It also measures, in the same run: the checker's states per second against a bare
``mj_kinematics`` + ``mj_collision`` loop over the same states on the same model (the floor
of any Python-driven check), the speed-up of checking in two threads (one ``MjData`` per
thread), batches through the :class:`BatchChecker` with and without the pre-test, and our
retimer's duration against TOPP-RA's on the crossing paths.
"""

from __future__ import annotations

import copy
import cProfile
import io
import logging
import pstats
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from core.errors import ChoreographError, ConfigError, PlanningError
from core.settings import from_config
from stages.arms.bench.samples import sample_clearance
from stages.arms.bench.settings import OURS, BenchPlanSettings, GoalSetSettings
from stages.arms.bench.throughput import batch_throughput, checker_throughput, load_average, threads_agree
from stages.arms.planning.goals import make_group, start_configuration
from stages.arms.planning.path import JointPath
from stages.arms.planning.rrt import path_length
from stages.arms.planning.settings import PlannerSettings
from stages.arms.retiming.toppra_compare import retime_benchmark
from stages.arms.world import build_world, limits_for

_log = logging.getLogger(__name__)


def _no_progress(items, **_):
    return items


# ------------------------------------------------------------------------- the planners
@dataclass(frozen=True)
class PlannerLineup:
    """The planners of one benchmark: label → settings, and the config each came from."""

    configs: dict[str, dict[str, Any]]     # label → the base planner keys with its own over them
    settings: dict[str, PlannerSettings]   # the planners that run (OMPL's only where it is installed)
    seed: int | None = None                # the base planner's seed; None = the run's
    ompl_missing: str | None = None        # why OMPL's planners are skipped


def planner_lineup(base: Mapping[str, Any] | None, settings: BenchPlanSettings,
                   key: str = "pipeline.stages.bench_plan") -> PlannerLineup:
    """Each ``settings.planners`` entry's keys over the base ``planner`` group (and the time budget)."""
    base = dict(base or {})
    if settings.time_budget_s is not None:
        base["time_budget_s"] = float(settings.time_budget_s)
    seed = base.pop("seed", None)
    configs = {}
    for label, over in settings.planners.items():
        merged = {**base, **dict(over or {})}
        if merged.get("backend", OURS) == OURS:
            merged["name"] = "rrt_connect"
        configs[str(label)] = merged

    def build(labels) -> dict[str, PlannerSettings]:
        return {k: from_config(PlannerSettings, configs[k], f"{key}.planners.{k}") for k in labels}

    try:
        return PlannerLineup(configs, build(configs), seed)
    except ConfigError as exc:
        if "pip install" not in str(exc):
            raise
        # OMPL is optional here: without it the benchmark runs choreograph's planner alone
        return PlannerLineup(configs, build(k for k, v in configs.items() if v.get("backend") != "ompl"),
                             seed, str(exc))


# ------------------------------------------------------------------------- one plan
@dataclass
class PlanRun:
    """One planner's plan of one goal set and seed (failures count at the time they took)."""

    ok: bool
    time_s: float
    search_s: float
    smooth_s: float
    checks: int
    length_rad: float
    error: str | None
    path: np.ndarray | None = None
    samples: int = 0                            # 125 Hz samples of the retimed path, each re-checked
    violations: int = 0                         # of them closer than the clearance
    min_clearance_m: float = float("nan")

    def record(self) -> dict[str, Any]:
        """runs.json's row: everything but the path."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "path"}


def plan_once(group, spec: GoalSetSettings, start, goal_qs, moving, rng) -> PlanRun:
    """Plan start → the first reachable goal configuration (then the lockstep move, if any)."""
    s = group.settings
    c0 = group.checker.checks + group.touch_checker.checks
    t0 = time.perf_counter()
    deadline = t0 + s.time_budget_s
    search = smooth = 0.0
    path, err = None, None
    for goal in goal_qs:
        try:
            path, _ = group._plan(start, goal, moving, rng, deadline)
            search += group.last_timing.get("search_s", 0.0)
            smooth += group.last_timing.get("smooth_s", 0.0)
            break
        except PlanningError as exc:
            search += group.last_timing.get("search_s", 0.0)
            err = exc
            if exc.reason == "start_in_collision" or time.perf_counter() >= deadline:
                break
    if path is not None and spec.cartesian:
        try:
            tail = group.plan_cartesian(spec.cartesian, path[-1], rng).path.waypoints
            path = list(path) + list(tail[1:])
        except PlanningError as exc:
            path, err = None, exc
    elapsed = time.perf_counter() - t0
    checks = group.checker.checks + group.touch_checker.checks - c0
    if path is None:
        return PlanRun(False, elapsed, search, smooth, checks, float("nan"), str(err))
    arr = np.asarray(path, float)
    return PlanRun(True, elapsed, search, smooth, checks, path_length(arr), None, arr)


def goal_configurations(group, spec: GoalSetSettings, start, rng) -> list[np.ndarray]:
    if spec.joints:
        goal = group.compose(dict(spec.joints), start, "goal.joints")
        group.within_limits(goal, "goal.joints")
        return [goal]
    return group.goal_configurations(dict(spec.poses), start, rng)


# ------------------------------------------------------------------------- summaries
@dataclass(frozen=True)
class PlanSummary:
    """One planner on one goal set, over its seeds (metrics ``<goal_set>.<planner>.<field>``)."""

    success_rate: float
    median_time_s: float
    p90_time_s: float
    search_median_time_s: float
    smooth_median_time_s: float
    path_length_rad: float
    checks: float
    runs: int
    samples: int             # retimed at the rate, every sample re-checked at the clearance
    violations: int
    min_clearance_m: float


def summarize(runs: list[PlanRun]) -> PlanSummary:
    ok = [r for r in runs if r.ok]
    times = np.array([r.time_s for r in runs])   # failures count at the time they took

    def med(key, rows):
        return float(np.median([getattr(r, key) for r in rows])) if rows else float("nan")

    return PlanSummary(success_rate=len(ok) / max(1, len(runs)),
                       median_time_s=float(np.median(times)) if runs else float("nan"),
                       p90_time_s=float(np.percentile(times, 90)) if runs else float("nan"),
                       search_median_time_s=med("search_s", runs),
                       smooth_median_time_s=med("smooth_s", runs),
                       path_length_rad=med("length_rad", ok),
                       checks=med("checks", runs),
                       runs=len(runs),
                       samples=sum(r.samples for r in ok),
                       violations=sum(r.violations for r in ok),
                       min_clearance_m=min((r.min_clearance_m for r in ok), default=float("nan")))


@dataclass
class PlanBenchResult:
    """Everything the planning benchmark measured (reported by :mod:`stages.arms.bench.plan_report`)."""

    runs: dict[str, dict[str, list[PlanRun]]]          # goal set → planner → one run per seed
    summaries: dict[str, dict[str, PlanSummary]]
    seeds: dict[str, int]
    ik_times_s: dict[str, list[float]]
    notes: dict[str, str]                              # goal sets whose goals could not be solved
    checker: dict[str, Any] = field(default_factory=dict)   # throughput and threads_agree
    retime: dict[str, Any] = field(default_factory=dict)    # ours vs TOPP-RA on the first set's paths
    ompl_available: bool = True
    load_average_1min: float = float("nan")
    profile: str | None = None                              # choreograph's plans under cProfile


def profile_text(profiler, rows: int = 25) -> str:
    """The profiled plans' functions by their own time (the largest ``rows``), then by cumulative time."""
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(rows)
    stats.sort_stats("cumulative").print_stats(rows)
    return out.getvalue()


# ------------------------------------------------------------------------- the benchmark
class PlanBenchmark:
    """Goal sets × seeds × planners, then the checker's throughput and the retimer vs TOPP-RA.

    ``robot`` and ``scene`` (the config groups) rebuild the world for goal sets with ``objects``.
    """

    def __init__(self, settings: BenchPlanSettings, lineup: PlannerLineup,
                 robot: Mapping[str, Any] | None = None, scene: Mapping[str, Any] | None = None):
        self.settings, self.lineup = settings, lineup
        self.robot_cfg, self.scene_cfg = robot, scene

    def world_for(self, world, objects: Mapping[str, Any] | None):
        """The world with a goal set's extra objects (the same world when it has none)."""
        if not objects:
            return world
        if self.robot_cfg is None or self.scene_cfg is None:
            raise ConfigError("bench_plan: a goal set with objects needs the stage's robot and scene configs")
        scene = copy.deepcopy(dict(self.scene_cfg))
        scene["objects"] = {**dict(scene.get("objects") or {}), **dict(objects)}
        return build_world(self.robot_cfg, scene)

    def run(self, world, seed: int, progress: Callable = _no_progress,
            log: logging.Logger = _log) -> PlanBenchResult:
        """Every plan (interleaved, seed by seed), then the checks' and the retimer's figures."""
        goal_sets, planners = self.settings.active_sets, self.lineup.settings
        base_seed = int(self.lineup.seed if self.lineup.seed is not None else seed)
        seeds = {name: self.settings.seeds_of(name) for name in goal_sets}
        jobs = [(name, k) for name in goal_sets for k in range(seeds[name])]
        groups: dict[str, dict[str, Any]] = {}
        worlds: dict[str, Any] = {}
        starts: dict[str, np.ndarray] = {}
        runs: dict[str, dict[str, list[PlanRun]]] = {n: {p: [] for p in planners} for n in goal_sets}
        ik_times: dict[str, list[float]] = {n: [] for n in goal_sets}
        notes: dict[str, str] = {}
        profiler = cProfile.Profile() if self.settings.profile else None
        for name, k in progress(jobs, desc="bench_plan"):
            spec = goal_sets[name]
            if name not in groups:
                w = worlds[name] = self.world_for(world, spec.objects)
                groups[name] = {p: make_group(w, spec.arms, st) for p, st in planners.items()}
                starts[name] = start_configuration(groups[name][OURS], w, spec.start)
            group0, start = groups[name][OURS], starts[name]
            moving = group0._moving_mask(spec.goals)
            t0 = time.perf_counter()
            try:
                goal_qs = goal_configurations(group0, spec, start, np.random.default_rng([base_seed, k, 1]))
            except ChoreographError as exc:
                notes[name] = f"goal configurations: {exc}"
                for p in planners:
                    runs[name][p].append(PlanRun(False, 0.0, 0.0, 0.0, 0, float("nan"), str(exc)))
                continue
            ik_times[name].append(time.perf_counter() - t0)
            for p in planners:   # interleaved, seed by seed, so load drifts hit all alike
                rng = np.random.default_rng([base_seed, k, 2])
                if p == OURS and profiler is not None:
                    profiler.enable()
                run = plan_once(groups[name][p], spec, start, goal_qs, moving, rng)
                if p == OURS and profiler is not None:
                    profiler.disable()
                if run.ok:
                    self.check_samples(worlds[name], groups[name][p], run)
                runs[name][p].append(run)

        summaries = {name: {p: summarize(rs) for p, rs in per.items()} for name, per in runs.items()}
        for name, per in runs.items():
            for p, rs in per.items():
                fails = [r.error for r in rs if not r.ok]
                if fails:
                    log.info("%s / %s: %d failures, e.g. %s", name, p, len(fails), fails[0])
        result = PlanBenchResult(runs, summaries, seeds, ik_times, notes,
                                 ompl_available=self.lineup.ompl_missing is None,
                                 profile=profile_text(profiler) if profiler is not None else None)

        # checker throughput over states along the planned crossing-like paths and around home
        first = next(iter(goal_sets))
        group = groups[first][OURS]
        rng = np.random.default_rng(base_seed)
        states = self.checker_states(group, runs[first][OURS], starts[first], rng)
        log.info("checker throughput over %d states", len(states))
        result.checker = checker_throughput(group.checker, states)
        result.checker["threads_agree"] = threads_agree(group.checker, states[:600])
        result.checker.update(batch_throughput(group.checker, states))
        result.checker["batch_ratio_vs_bare"] = (result.checker["batch_states_per_s"]
                                                 / result.checker["bare_states_per_s"])
        result.retime = self.retime_vs_toppra(worlds[first], group, runs[first][OURS], log)
        result.load_average_1min = load_average()
        return result

    def check_samples(self, world, group, run: PlanRun) -> None:
        """The path retimed at the rate and every sample re-checked at the clearance (into ``run``)."""
        s = self.settings
        checked = sample_clearance(world, group.joint_names, run.path, s.rate_hz, s.max_deviation_rad)
        run.samples, run.violations = checked["samples"], checked["violations"]
        run.min_clearance_m = checked["min_clearance_m"]

    def checker_states(self, group, runs: list[PlanRun], start, rng) -> np.ndarray:
        """Half: states along the smoothed paths at the edge resolution; half: random near home."""
        n = self.settings.checker_states
        along = []
        for r in runs:
            if r.path is None:
                continue
            for a, b in zip(r.path[:-1], r.path[1:], strict=True):
                steps = group.edges.steps(a, b)
                along.extend(a + (b - a) * t for t in np.arange(steps) / steps)
        along = np.array(along).reshape(-1, group.dof)
        if len(along) > n // 2:
            along = along[rng.choice(len(along), n // 2, replace=False)]
        rand = np.clip(start + rng.normal(0, 0.5, (n - len(along), group.dof)), group.lower, group.upper)
        return np.concatenate([along, rand])

    def retime_vs_toppra(self, world, group, runs: list[PlanRun], log: logging.Logger) -> dict[str, Any]:
        """Our retimer's duration against TOPP-RA's on the planned paths (``retime.*`` metrics)."""
        paths = [JointPath(group.joint_names, r.path) for r in runs if r.path is not None]
        if not paths:
            return {"paths": 0}
        vel, acc = limits_for(world, group.joint_names)
        logging.getLogger("toppra").setLevel(logging.WARNING)   # it logs every solver choice at INFO
        try:
            s = self.settings
            rows = retime_benchmark(paths, vel, acc, s.rate_hz, repeats=s.toppra_repeats,
                                    max_deviation_rad=s.max_deviation_rad)
        except ChoreographError as exc:   # toppra not installed
            log.warning("retime vs TOPP-RA skipped: %s", exc)
            return {"paths": len(paths), "toppra": f"unavailable: {exc}"}
        ratios = np.array([r.ratio for r in rows])
        return {"paths": len(rows), "toppra_ratio_median": float(np.median(ratios)),
                "toppra_ratio_max": float(ratios.max()),
                "max_acceleration_ratio": float(max(r.max_acceleration_ratio for r in rows)),
                "max_velocity_ratio": float(max(r.max_velocity_ratio for r in rows))}
