"""The stage graph: the Stage protocol, building a graph from config, and running it.

A pipeline config names its stages; each has a ``_target_`` (a class inside the
``stages.`` or ``hardware.`` namespace), its parameters, and ``inputs`` mapping the
stage's keyword arguments to earlier outputs (``"<stage>.<output>"``). The runner
checks the whole graph before anything runs, then runs the stages in dependency
order, each with its own folder, and keeps ``metrics.json`` and ``status.json``
up to date (atomically) so a failure loses nothing measured so far.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.artifacts import Artifact, atomic_write_json
from core.errors import ChoreographError, ConfigError
from core.recording import RECORDING_FILE, Recorder
from core.rerun_recorder import open_recorder
from core.targets import check_targets, resolve_target
from stages.api import Stage, StageContext, StageResult

log = logging.getLogger("choreograph")
trace_log = logging.getLogger("choreograph.trace")  # tracebacks: run.log only


# --------------------------------------------------------------------------- targets


# --------------------------------------------------------------------------- graph
@dataclass(frozen=True)
class StageNode:
    name: str
    cls: type
    params: dict[str, Any]
    inputs: dict[str, tuple[str, str]]  # arg -> (stage, output)


@dataclass(frozen=True)
class StageGraph:
    nodes: tuple[StageNode, ...]  # in run order

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n.name for n in self.nodes)


def build_graph(stages_cfg: Mapping[str, Any]) -> StageGraph:
    """Check a pipeline's stages and order them; raise ConfigError on any bad reference."""
    if not isinstance(stages_cfg, Mapping) or not stages_cfg:
        raise ConfigError("pipeline.stages must be a non-empty mapping of stage name -> stage")
    check_targets(dict(stages_cfg), "pipeline.stages")
    declared: dict[str, StageNode] = {}
    for name, spec in stages_cfg.items():
        where = f"pipeline.stages.{name}"
        if not isinstance(spec, Mapping) or "_target_" not in spec:
            raise ConfigError(f"{where} needs a _target_ (a Stage class in stages.* or hardware.*)")
        spec = dict(spec)
        cls = resolve_target(spec.pop("_target_"), where)
        if not (isinstance(cls, type) and issubclass(cls, Stage)):
            raise ConfigError(f"{where}._target_ must be a subclass of stages.graph.Stage")
        inputs = {}
        for arg, ref in dict(spec.pop("inputs", None) or {}).items():
            stage, dot, output = str(ref).partition(".")
            if not dot or not stage or not output:
                raise ConfigError(f"{where}.inputs.{arg}={ref!r}: expected '<stage>.<output>'")
            inputs[arg] = (stage, output)
        declared[name] = StageNode(name, cls, spec, inputs)

    for node in declared.values():
        for arg, (stage, output) in node.inputs.items():
            ref = f"{stage}.{output}"
            if stage not in declared:
                raise ConfigError(
                    f"stage {node.name!r} input {arg}={ref!r}: no stage {stage!r} produces it; "
                    f"stages are {sorted(declared)}"
                )
            produced = declared[stage].cls.outputs
            if output not in produced:
                raise ConfigError(
                    f"stage {node.name!r} input {arg}={ref!r}: stage {stage!r} has no output "
                    f"{output!r}; its outputs are {list(produced)}"
                )
    return StageGraph(tuple(declared[n] for n in _topological_order(declared)))


def _topological_order(nodes: Mapping[str, StageNode]) -> list[str]:
    """Dependency order; ties keep the order stages were declared in."""
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(name: str, chain: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "visiting":
            cycle = chain[chain.index(name):] + [name]
            raise ConfigError(f"pipeline.stages has a cycle: {' -> '.join(cycle)}")
        state[name] = "visiting"
        for stage, _ in nodes[name].inputs.values():
            visit(stage, chain + [name])
        state[name] = "done"
        order.append(name)

    for name in nodes:
        visit(name, [])
    return order


# --------------------------------------------------------------------------- running
@dataclass
class RunRecord:
    status: str
    failed_stage: str | None
    error: str | None
    seconds: float
    metrics: dict[str, Any]
    outputs: dict[str, dict[str, Any]]

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def instantiate(node: StageNode) -> Stage:
    """Construct a stage from its config entry: a bad parameter is a ConfigError naming the stage."""
    try:
        return node.cls(**node.params)
    except ChoreographError:
        raise
    except TypeError as exc:
        params = inspect.signature(node.cls).parameters
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            unknown = [k for k in node.params if k not in params]
            if unknown:
                raise ConfigError(f"pipeline.stages.{node.name}.{unknown[0]}: not a parameter of "
                                  f"{node.cls.__name__}; allowed: {list(params)}") from None
        raise ConfigError(f"pipeline.stages.{node.name}: {exc}") from exc


def _check_metrics(stage: str, metrics: Mapping[str, Any]) -> dict[str, Any]:
    """``key`` becomes ``<stage>.key``; a key that already names its scope (``grasp.arm``, from a
    stage that runs several steps, like the reset) is kept as it is."""
    flat = {}
    for key, value in metrics.items():
        if isinstance(value, np.generic):
            value = value.item()
        if not isinstance(value, bool | int | float | str):
            raise TypeError(f"stage {stage!r} metric {key!r} is {type(value).__name__}; "
                            "metrics are numbers, booleans or strings")
        flat[key if "." in key else f"{stage}.{key}"] = value
    return flat


def write_run_files(run_dir: Path, metrics: Mapping[str, Any], failed: str | None,
                    error: str | None, seconds: float) -> None:
    """metrics.json, then status.json (always last)."""
    atomic_write_json(run_dir / "metrics.json", dict(metrics))
    atomic_write_json(run_dir / "status.json", {
        "status": "failed" if error else "ok", "failed_stage": failed,
        "error": error, "seconds": seconds,
    })


def record_lost_run(run_dir: Path, error: str) -> bool:
    """A run whose process ended before the runner could record it (killed, crashed): status.json
    says so, metrics.json as far as it got is kept. A run the runner did record is left as it is.
    Returns whether anything was written."""
    run_dir = Path(run_dir)
    if (run_dir / "status.json").exists():
        return False
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_json(run_dir / "status.json", {"status": "failed", "failed_stage": None,
                                                "error": error, "seconds": None})
    return True


def run_graph(graph: StageGraph, run_dir: Path, seed: int, record: bool = True,
              name: str | None = None) -> RunRecord:
    """Run every stage in order in ``run_dir``; a stage's failure is recorded, not raised.

    All stages are constructed before the first one runs, so a bad parameter fails
    the run before anything moves. ``metrics.json`` is rewritten after every stage;
    ``status.json`` is written last (and on failure). KeyboardInterrupt is recorded,
    then re-raised. With ``record`` the stages log through one recorder writing
    ``recording.rrd`` (named ``name``), closed before ``status.json`` whatever happens.
    """
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    metrics: dict[str, Any] = {}
    values: dict[str, dict[str, Any]] = {}
    recorder = _open_recorder(run_dir, record, name)

    def finish(failed: str | None = None, exc: BaseException | None = None) -> RunRecord:
        error = None
        if exc is not None:
            error = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, KeyboardInterrupt):
                error = "KeyboardInterrupt: interrupted by the user"
            log.error("[%s] failed: %s", failed, error)
            trace_log.error("traceback of stage %s", failed, exc_info=exc)
            recorder.clear_time()
            recorder.text("runner", f"[{failed}] failed: {error}", "ERROR")
        _close_recorder(recorder)
        seconds = round(time.perf_counter() - started, 3)
        write_run_files(run_dir, metrics, failed, error, seconds)
        if exc is not None and not isinstance(exc, Exception):
            raise exc
        return RunRecord("failed" if failed else "ok", failed, error, seconds, metrics, values)

    instances: dict[str, Stage] = {}
    for node in graph.nodes:
        try:
            instances[node.name] = instantiate(node)
        except BaseException as exc:  # noqa: BLE001 - recorded in status.json
            return finish(node.name, exc)

    for node in graph.nodes:
        ctx = StageContext(node.name, seed, run_dir / node.name,
                           logging.getLogger(f"choreograph.{node.name}"), recorder=recorder)
        recorder.clear_time()
        log.info("[%s] running", node.name)
        t0 = time.perf_counter()
        try:
            kwargs = {arg: values[s][o] for arg, (s, o) in node.inputs.items()}
            result = instances[node.name].run(ctx, **kwargs)
            if not isinstance(result, StageResult):
                raise TypeError(f"stage {node.name!r} returned {type(result).__name__}, "
                                "not a StageResult")
            missing = set(node.cls.outputs) - set(result.outputs)
            if missing:
                raise TypeError(f"stage {node.name!r} did not return its outputs {sorted(missing)}")
            ctx.metrics.update(result.metrics)
            ctx.metrics.setdefault("time_s", round(time.perf_counter() - t0, 6))
            metrics.update(_check_metrics(node.name, ctx.metrics))
            values[node.name] = result.outputs
            _save_files(ctx.out_dir, result, run_dir)
        except BaseException as exc:  # noqa: BLE001 - recorded in status.json
            try:
                metrics.update(_check_metrics(node.name, ctx.metrics))
            except TypeError:
                pass
            return finish(node.name, exc)
        log.info("[%s] done in %.2f s", node.name, time.perf_counter() - t0)
        atomic_write_json(run_dir / "metrics.json", metrics)
    return finish()


def _open_recorder(run_dir: Path, record: bool, name: str | None) -> Recorder:
    """The run's recorder; a recording that cannot be opened never stops the run (a warning says why)."""
    try:
        return open_recorder(run_dir / RECORDING_FILE, record, name or run_dir.name)
    except Exception as exc:  # noqa: BLE001 - the run goes on without a recording
        log.warning("no %s for this run: %s: %s", RECORDING_FILE, type(exc).__name__, exc)
        return Recorder()


def _close_recorder(recorder: Recorder) -> None:
    try:
        recorder.close()
    except Exception as exc:  # noqa: BLE001 - status.json is written whatever the recording does
        log.warning("%s could not be finished: %s: %s", RECORDING_FILE, type(exc).__name__, exc)


def _save_files(stage_dir: Path, result: StageResult, run_dir: Path) -> None:
    for name, value in result.outputs.items():
        if isinstance(value, Artifact):
            value.save(stage_dir / f"{name}{value.suffix}")
    for filename, artifact in result.files.items():
        artifact.save(stage_dir / filename)
    for filename, artifact in result.run_files.items():
        artifact.save(run_dir / filename)
