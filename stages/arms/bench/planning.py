"""``pipeline=bench_plan``: choreograph's planner and OMPL's side by side, on the same checks.

For every goal set (conf/pipeline/bench_plan.yaml) and seed, the goal configurations are
solved once (IK, shared by every planner), then each planner plans start → goal in the
same process, interleaved seed by seed, with the same :class:`ClearanceChecker`, the same
:class:`EdgeChecker` and the same shortcutting. Per planner and goal set it reports the
success rate, the median and 90th-percentile planning time (search + smoothing; the search
alone as ``search_*``), the joint-space path length after smoothing and the number of
clearance checks, and the ratio of medians choreograph / OMPL RRTConnect.

It also measures, in the same run: the checker's states per second against a bare
``mj_kinematics`` + ``mj_collision`` loop over the same states on the same model (the floor
of any Python-driven check), the speed-up of checking in two threads (one ``MjData`` per
thread), and our retimer's duration against TOPP-RA's on the crossing paths.

Goal set keys: ``poses`` or ``joints`` (per arm; arms not named hold still), optionally
``cartesian`` (a lockstep straight-line move from where the first goal ends), ``arms`` (the
group; default all), ``start`` (per arm; default home), ``objects`` (extra scene objects,
e.g. the walls of a narrow gap), ``seeds`` (default the stage's ``seeds``).
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from core.artifacts import JsonFile, TextFile
from core.errors import ChoreographError, ConfigError, PlanningError
from stages.api import Stage, StageContext, StageResult
from stages.arms.planning.goals import make_group, planner_settings, start_configuration
from stages.arms.planning.rrt import path_length

OURS = "choreograph"
GOAL_SET_KEYS = ("poses", "joints", "cartesian", "arms", "start", "objects", "seeds")


# ------------------------------------------------------------------------- goal sets
def _goal_sets(cfg: Mapping[str, Any], seeds: int) -> dict[str, dict]:
    if not isinstance(cfg, Mapping) or not cfg:
        raise ConfigError("bench_plan.goal_sets must map goal-set names to goals")
    out = {}
    for name, spec in cfg.items():
        where = f"bench_plan.goal_sets.{name}"
        if not isinstance(spec, Mapping):
            raise ConfigError(f"{where} must be a mapping with poses or joints")
        spec = dict(spec)
        unknown = sorted(set(spec) - set(GOAL_SET_KEYS))
        if unknown:
            raise ConfigError(f"{where}.{unknown[0]} is not a goal-set key; allowed: {list(GOAL_SET_KEYS)}")
        if bool(spec.get("poses")) == bool(spec.get("joints")):
            raise ConfigError(f"{where} needs exactly one of poses or joints")
        spec["seeds"] = int(spec.get("seeds") or seeds)
        if spec["seeds"] < 1:
            raise ConfigError(f"{where}.seeds must be >= 1")
        out[str(name)] = spec
    return out


def _planners(base: Mapping[str, Any] | None, cfg: Mapping[str, Any]) -> dict[str, Any]:
    """label → PlannerSettings (each entry's keys over the base planner config)."""
    if not isinstance(cfg, Mapping) or OURS not in cfg:
        raise ConfigError(f"bench_plan.planners must map labels to planner settings and include {OURS!r}")
    out = {}
    for label, over in cfg.items():
        merged = {**dict(base or {}), **dict(over or {})}
        if merged.get("backend", OURS) == OURS:
            merged["name"] = "rrt_connect"
        out[str(label)] = merged
    return out


# ------------------------------------------------------------------------- one plan
def _plan(group, spec, start, goal_qs, moving, rng) -> dict[str, Any]:
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
    if path is not None and spec.get("cartesian"):
        try:
            tail = group.plan_cartesian(spec["cartesian"], path[-1], rng).path.waypoints
            path = list(path) + list(tail[1:])
        except PlanningError as exc:
            path, err = None, exc
    elapsed = time.perf_counter() - t0
    checks = group.checker.checks + group.touch_checker.checks - c0
    if path is None:
        return {"ok": False, "time_s": elapsed, "search_s": search, "smooth_s": smooth, "checks": checks,
                "length_rad": float("nan"), "error": str(err), "path": None}
    arr = np.asarray(path, float)
    return {"ok": True, "time_s": elapsed, "search_s": search, "smooth_s": smooth, "checks": checks,
            "length_rad": path_length(arr), "error": None, "path": arr}


def _goal_configurations(group, spec, start, rng) -> list[np.ndarray]:
    if spec.get("joints"):
        goal = group.compose(dict(spec["joints"]), start, "goal.joints")
        group.within_limits(goal, "goal.joints")
        return [goal]
    return group.goal_configurations(dict(spec["poses"]), start, rng)


# ------------------------------------------------------------------------- summaries
def _summary(runs: list[dict]) -> dict[str, float]:
    ok = [r for r in runs if r["ok"]]
    times = np.array([r["time_s"] for r in runs])   # failures count at the time they took

    def med(key, rows):
        return float(np.median([r[key] for r in rows])) if rows else float("nan")

    return {"success_rate": len(ok) / max(1, len(runs)),
            "median_time_s": float(np.median(times)) if runs else float("nan"),
            "p90_time_s": float(np.percentile(times, 90)) if runs else float("nan"),
            "search_median_time_s": med("search_s", runs),
            "smooth_median_time_s": med("smooth_s", runs),
            "path_length_rad": med("length_rad", ok),
            "checks": med("checks", runs),
            "runs": len(runs)}


def _load_average() -> float:
    import os

    try:
        return float(os.getloadavg()[0])
    except OSError:   # pragma: no cover - not on every platform
        return float("nan")


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 and np.isfinite(a) and np.isfinite(b) else float("nan")


def _finite(metrics: dict[str, Any]) -> dict[str, Any]:
    """metrics.json holds numbers: NaN (nothing measured) becomes a string."""
    return {k: ("n/a" if isinstance(v, float) and not np.isfinite(v) else v) for k, v in metrics.items()}


# ------------------------------------------------------------------------- checker throughput
def checker_throughput(checker, states: np.ndarray, repeats: int = 5) -> dict[str, float]:
    """The checker's is_valid and a bare mj_kinematics + mj_collision loop over the same states
    on the same model (best of ``repeats``), and both split over two threads."""
    import mujoco

    model = checker._collide_model   # the model is_valid runs MuJoCo on
    adr = checker.qpos_adr

    def bare(chunk):
        d = mujoco.MjData(model)
        d.qpos[:] = checker.base_qpos
        qpos = d.qpos
        for q in chunk:
            qpos[adr] = q
            mujoco.mj_kinematics(model, d)
            mujoco.mj_collision(model, d)

    def ours(chunk):
        valid = checker.is_valid
        for q in chunk:
            valid(q)

    def query(chunk):
        q_fn = checker.clearance_query
        for q in chunk:
            q_fn(q)

    def once(fn, threads: int) -> float:
        chunks = [states[i::threads] for i in range(threads)]
        if threads == 1:
            t0 = time.perf_counter()
            fn(chunks[0])
            return time.perf_counter() - t0
        workers = [threading.Thread(target=fn, args=(c,)) for c in chunks]
        t0 = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return time.perf_counter() - t0

    ours(states[:50])   # warm up this thread's MjData
    query(states[:50])
    runs = {"bare": (bare, 1), "ours": (ours, 1), "query": (query, 1), "bare2": (bare, 2), "ours2": (ours, 2)}
    best = dict.fromkeys(runs, np.inf)
    for _ in range(repeats):   # interleaved, best of each: other load on the machine hits all alike
        for key, (fn, threads) in runs.items():
            best[key] = min(best[key], once(fn, threads))
    n = len(states)
    return {"states": n, "states_per_s": n / best["ours"], "bare_states_per_s": n / best["bare"],
            "throughput_ratio": best["bare"] / best["ours"], "query_states_per_s": n / best["query"],
            "threads2_speedup": best["ours"] / best["ours2"],
            "bare_threads2_speedup": best["bare"] / best["bare2"]}


def _threads_agree(checker, states: np.ndarray) -> bool:
    """Two threads give the same answers as one (the property the speed-up relies on)."""
    single = [checker.is_valid(q) for q in states]
    out: dict[int, list[bool]] = {}

    def work(k):
        out[k] = [checker.is_valid(q) for q in states[k::2]]

    workers = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    merged = [None] * len(states)
    merged[0::2], merged[1::2] = out[0], out[1]
    return merged == single


# ------------------------------------------------------------------------- the stage
class BenchPlan(Stage):
    """Side-by-side planning benchmark; metrics ``<goal_set>.<planner>.*``, a table in table.md."""

    outputs = ()

    def __init__(self, goal_sets: Mapping[str, Any], planners: Mapping[str, Any],
                 planner: Mapping[str, Any] | None = None, robot: Mapping[str, Any] | None = None,
                 scene: Mapping[str, Any] | None = None, seeds: int = 10, reference: str = "ompl_RRTConnect",
                 time_budget_s: float | None = None, checker_states: int = 4000,
                 rate_hz: float = 125.0, max_deviation_rad: float = 0.02, toppra_repeats: int = 1):
        self.goal_sets = _goal_sets(goal_sets, int(seeds))
        base = dict(planner or {})
        if time_budget_s is not None:
            base["time_budget_s"] = float(time_budget_s)
        self.seed = base.pop("seed", None)
        self.planner_cfgs = _planners(base, planners)
        self.ompl_labels = [k for k, v in self.planner_cfgs.items() if v.get("backend") == "ompl"]
        self.ompl_missing = None
        try:
            self.settings = {k: planner_settings(v) for k, v in self.planner_cfgs.items()}
        except ConfigError as exc:
            if "pip install" not in str(exc):
                raise
            # OMPL is optional here: without it the benchmark runs choreograph's planner alone
            self.ompl_missing = str(exc)
            self.settings = {k: planner_settings(v) for k, v in self.planner_cfgs.items()
                             if v.get("backend") != "ompl"}
            self.ompl_labels = []
        self.reference = reference
        self.robot_cfg, self.scene_cfg = robot, scene
        self.checker_states = int(checker_states)
        self.rate_hz, self.max_deviation_rad = float(rate_hz), float(max_deviation_rad)
        self.toppra_repeats = int(toppra_repeats)

    def _world(self, world, objects):
        if not objects:
            return world
        if self.robot_cfg is None or self.scene_cfg is None:
            raise ConfigError("bench_plan: a goal set with objects needs the stage's robot and scene configs")
        from stages.arms.world import build_world

        scene = copy.deepcopy(dict(self.scene_cfg))
        scene["objects"] = {**dict(scene.get("objects") or {}), **dict(objects)}
        return build_world(self.robot_cfg, scene)

    def run(self, ctx: StageContext, world) -> StageResult:
        if self.ompl_missing:
            ctx.log.warning("OMPL planners skipped: %s", self.ompl_missing)
        base_seed = int(self.seed if self.seed is not None else ctx.seed)
        jobs = [(name, k) for name, spec in self.goal_sets.items() for k in range(spec["seeds"])]
        groups: dict[str, dict[str, Any]] = {}
        starts: dict[str, np.ndarray] = {}
        runs: dict[str, dict[str, list[dict]]] = {n: {p: [] for p in self.settings} for n in self.goal_sets}
        ik_times: dict[str, list[float]] = {n: [] for n in self.goal_sets}
        notes: dict[str, str] = {}
        for name, k in ctx.progress(jobs, desc="bench_plan"):
            spec = self.goal_sets[name]
            if name not in groups:
                w = self._world(world, spec.get("objects"))
                groups[name] = {p: make_group(w, spec.get("arms"), st) for p, st in self.settings.items()}
                first = groups[name][OURS]
                starts[name] = start_configuration(first, w, spec.get("start"))
                groups[name]["_world"] = w
            group0 = groups[name][OURS]
            start = starts[name]
            goals = dict(spec.get("poses") or spec.get("joints"))
            moving = group0._moving_mask(goals)
            t0 = time.perf_counter()
            try:
                goal_qs = _goal_configurations(group0, spec, start,
                                               np.random.default_rng([base_seed, k, 1]))
            except ChoreographError as exc:
                notes[name] = f"goal configurations: {exc}"
                for p in self.settings:
                    runs[name][p].append({"ok": False, "time_s": 0.0, "search_s": 0.0, "smooth_s": 0.0,
                                          "checks": 0, "length_rad": float("nan"), "error": str(exc),
                                          "path": None})
                continue
            ik_times[name].append(time.perf_counter() - t0)
            for p in self.settings:   # interleaved, seed by seed, so load drifts hit all alike
                rng = np.random.default_rng([base_seed, k, 2])
                runs[name][p].append(_plan(groups[name][p], spec, start, goal_qs, moving, rng))

        metrics: dict[str, Any] = {}
        summaries: dict[str, dict[str, dict]] = {}
        for name, per in runs.items():
            summaries[name] = {}
            for p, rs in per.items():
                summ = _summary(rs)
                summaries[name][p] = summ
                for key, v in summ.items():
                    metrics[f"{name}.{p}.{key}"] = v
                fails = [r["error"] for r in rs if not r["ok"]]
                if fails:
                    ctx.log.info("%s / %s: %d failures, e.g. %s", name, p, len(fails), fails[0])
            metrics[f"{name}.seeds"] = self.goal_sets[name]["seeds"]
            ik = ik_times[name]
            metrics[f"{name}.ik_median_time_s"] = float(np.median(ik)) if ik else "n/a"
            if self.reference in per:
                ours, ref = summaries[name][OURS], summaries[name][self.reference]
                metrics[f"{name}.time_ratio_vs_ompl"] = _ratio(ours["median_time_s"], ref["median_time_s"])
                metrics[f"{name}.search_time_ratio_vs_ompl"] = _ratio(ours["search_median_time_s"],
                                                                      ref["search_median_time_s"])
                metrics[f"{name}.checks_ratio_vs_ompl"] = _ratio(ours["checks"], ref["checks"])

        # checker throughput over states along the planned crossing-like paths and around home
        crossing = next(iter(self.goal_sets))
        group = groups[crossing][OURS]
        states = self._states(group, runs[crossing][OURS], starts[crossing], np.random.default_rng(base_seed))
        ctx.log.info("checker throughput over %d states", len(states))
        thr = checker_throughput(group.checker, states)
        thr["threads_agree"] = _threads_agree(group.checker, states[:600])
        metrics.update({f"checker.{k}": v for k, v in thr.items()})

        metrics.update(self._retime(ctx, groups[crossing]["_world"], group, runs[crossing][OURS]))
        metrics["ompl_available"] = self.ompl_missing is None
        metrics["load_average_1min"] = _load_average()   # other work on the machine skews the times
        metrics = _finite(metrics)
        table = _table(summaries, metrics, self.reference, self.goal_sets)
        ctx.log.info("\n%s", table)
        # dotted keys are kept as they are by the runner: give them this stage's prefix
        metrics = {f"{ctx.name}.{k}": v for k, v in metrics.items()}
        details = {n: {p: [{k: v for k, v in r.items() if k != "path"} for r in rs] for p, rs in per.items()}
                   for n, per in runs.items()}
        return StageResult(metrics=metrics,
                           files={"table.md": TextFile(table, ".md"),
                                  "runs.json": JsonFile({"runs": details, "notes": notes,
                                                         "planners": self.planner_cfgs})})

    def _states(self, group, runs, start, rng) -> np.ndarray:
        """Half: states along the smoothed paths at the edge resolution; half: random near home."""
        n = self.checker_states
        along = []
        for r in runs:
            if r["path"] is None:
                continue
            for a, b in zip(r["path"][:-1], r["path"][1:], strict=True):
                steps = group.edges.steps(a, b)
                along.extend(a + (b - a) * t for t in np.arange(steps) / steps)
        along = np.array(along).reshape(-1, group.dof)
        if len(along) > n // 2:
            along = along[rng.choice(len(along), n // 2, replace=False)]
        rand = np.clip(start + rng.normal(0, 0.5, (n - len(along), group.dof)), group.lower, group.upper)
        return np.concatenate([along, rand])

    def _retime(self, ctx, world, group, runs) -> dict[str, Any]:
        from stages.arms.planning.path import JointPath
        from stages.arms.world import limits_for

        paths = [JointPath(group.joint_names, r["path"]) for r in runs if r["path"] is not None]
        if not paths:
            return {"retime.paths": 0}
        vel, acc = limits_for(world, group.joint_names)
        import logging

        logging.getLogger("toppra").setLevel(logging.WARNING)   # it logs every solver choice at INFO
        try:
            from stages.arms.retiming.toppra_compare import retime_benchmark

            rows = retime_benchmark(paths, vel, acc, self.rate_hz, repeats=self.toppra_repeats,
                                    max_deviation_rad=self.max_deviation_rad)
        except ChoreographError as exc:   # toppra not installed
            ctx.log.warning("retime vs TOPP-RA skipped: %s", exc)
            return {"retime.paths": len(paths), "retime.toppra": f"unavailable: {exc}"}
        ratios = np.array([r.ratio for r in rows])
        return {"retime.paths": len(rows), "retime.toppra_ratio_median": float(np.median(ratios)),
                "retime.toppra_ratio_max": float(ratios.max()),
                "retime.max_acceleration_ratio": float(max(r.max_acceleration_ratio for r in rows)),
                "retime.max_velocity_ratio": float(max(r.max_velocity_ratio for r in rows))}


def _fmt(v, digits=3):
    if isinstance(v, str):
        return v
    if isinstance(v, float) and not np.isfinite(v):
        return "n/a"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def _table(summaries, metrics, reference, goal_sets) -> str:
    lines = ["| goal set | planner | seeds | success | median s | p90 s | search median s | "
             "smooth median s | length rad | checks | median ours/OMPL |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, per in summaries.items():
        ratio = metrics.get(f"{name}.time_ratio_vs_ompl", "n/a")
        for p, s in per.items():
            lines.append(f"| {name} | {p} | {goal_sets[name]['seeds']} | {s['success_rate']:.0%} | "
                         f"{_fmt(s['median_time_s'])} | {_fmt(s['p90_time_s'])} | "
                         f"{_fmt(s['search_median_time_s'], 4)} | {_fmt(s['smooth_median_time_s'])} | "
                         f"{_fmt(s['path_length_rad'], 2)} | {_fmt(s['checks'], 0)} | "
                         f"{_fmt(ratio, 2) if p == OURS else ''} |")
    c = {k.split(".", 1)[1]: v for k, v in metrics.items() if k.startswith("checker.")}
    lines += ["", "| checker | value |", "|---|---|"]
    for key in ("states", "states_per_s", "bare_states_per_s", "throughput_ratio", "query_states_per_s",
                "threads2_speedup", "bare_threads2_speedup", "threads_agree"):
        if key in c:
            lines.append(f"| {key} | {_fmt(c[key], 2)} |")
    lines += ["", "| retime vs TOPP-RA | value |", "|---|---|"]
    for key, v in metrics.items():
        if key.startswith("retime."):
            lines.append(f"| {key.split('.', 1)[1]} | {_fmt(v, 4)} |")
    return "\n".join(lines) + "\n"
