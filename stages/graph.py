"""The stage graph: the Stage protocol, building a graph from config, and running it.

A pipeline config names its stages; each has a ``_target_`` (a class inside the
``stages.`` or ``hardware.`` namespace), its parameters, and ``inputs`` mapping the
stage's keyword arguments to earlier outputs (``"<stage>.<output>"``). The runner
checks the whole graph before anything runs, then runs the stages in dependency
order, each with its own folder, and keeps ``metrics.json`` and ``status.json``
up to date (atomically) so a failure loses nothing measured so far.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from core.artifacts import Artifact, atomic_write_json
from core.errors import ChoreographError, ConfigError

ALLOWED_TARGET_PREFIXES = ("stages.", "hardware.")
log = logging.getLogger("choreograph")
trace_log = logging.getLogger("choreograph.trace")  # tracebacks: run.log only


@dataclass
class StageResult:
    """What a stage's ``run`` returns.

    ``outputs`` are passed in memory to later stages (and saved when they are
    artifacts); ``metrics`` are merged into metrics.json as ``<stage>.<key>``;
    ``files`` are saved in the stage folder; ``run_files`` at the run root.
    """

    outputs: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    files: dict[str, Artifact] = field(default_factory=dict)
    run_files: dict[str, Artifact] = field(default_factory=dict)


@dataclass
class StageContext:
    """What the runner hands a stage: its name, seed, logger and progress bars."""

    name: str
    seed: int
    out_dir: Path
    log: logging.Logger
    metrics: dict[str, Any] = field(default_factory=dict)  # partial metrics, kept on failure

    def save(self, filename: str, artifact: Artifact) -> None:
        """Save an artifact into this stage's folder now (e.g. before raising, so nothing is lost)."""
        artifact.save(self.out_dir / filename)

    @property
    def rng(self) -> np.random.Generator:
        return np.random.default_rng(stage_seed(self.seed, self.name))

    def progress(
        self, items: Iterable, total: int | None = None, desc: str | None = None
    ) -> Iterator:
        """Iterate with a tqdm bar on a terminal and progress lines in run.log."""
        from tqdm.auto import tqdm

        total = total if total is not None else (len(items) if hasattr(items, "__len__") else None)
        desc = desc or self.name
        step = max(1, (total or 10) // 10)
        bar = tqdm(items, total=total, desc=desc, leave=False, disable=None)
        for i, item in enumerate(bar, start=1):
            yield item
            if i % step == 0 or i == total:
                self.log.debug("%s: %d/%s", desc, i, total if total is not None else "?")


class Stage:
    """Base class of stages: declare ``outputs`` and implement ``run``."""

    outputs: ClassVar[tuple[str, ...]] = ()

    def run(self, ctx: StageContext, **inputs: Any) -> StageResult:  # pragma: no cover
        raise NotImplementedError


def stage_seed(seed: int, name: str) -> int:
    """A per-stage seed derived from the run seed and the stage name (stable)."""
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


# --------------------------------------------------------------------------- targets
def check_targets(node: Any, where: str = "") -> None:
    """Refuse any ``_target_`` outside the allowlisted namespaces, anywhere in a config."""
    if isinstance(node, Mapping):
        target = node.get("_target_")
        if target is not None and not (
            isinstance(target, str) and target.startswith(ALLOWED_TARGET_PREFIXES)
        ):
            raise ConfigError(
                f"{where or '<root>'}._target_={target!r} is not allowed: targets must live in "
                f"{' or '.join(p + '*' for p in ALLOWED_TARGET_PREFIXES)}"
            )
        for key, value in node.items():
            check_targets(value, f"{where}.{key}" if where else str(key))
    elif isinstance(node, list | tuple):
        for i, value in enumerate(node):
            check_targets(value, f"{where}[{i}]")


def resolve_target(target: str, where: str) -> type:
    check_targets({"_target_": target}, where)
    module_name, _, attr = target.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"{where}._target_={target!r}: cannot import {module_name!r} ({exc})"
        ) from exc
    try:
        return getattr(module, attr)
    except AttributeError:
        public = sorted(n for n in dir(module) if not n.startswith("_") and n[0].isupper())
        raise ConfigError(
            f"{where}._target_={target!r}: {module_name} has no {attr!r}; it has {public}"
        ) from None


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


def _instantiate(node: StageNode) -> Stage:
    try:
        return node.cls(**node.params)
    except ChoreographError:
        raise
    except TypeError as exc:
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


def run_graph(graph: StageGraph, run_dir: Path, seed: int) -> RunRecord:
    """Run every stage in order in ``run_dir``; a stage's failure is recorded, not raised.

    All stages are constructed before the first one runs, so a bad parameter fails
    the run before anything moves. ``metrics.json`` is rewritten after every stage;
    ``status.json`` is written last (and on failure). KeyboardInterrupt is recorded,
    then re-raised.
    """
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    metrics: dict[str, Any] = {}
    values: dict[str, dict[str, Any]] = {}

    def finish(failed: str | None = None, exc: BaseException | None = None) -> RunRecord:
        error = None
        if exc is not None:
            error = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, KeyboardInterrupt):
                error = "KeyboardInterrupt: interrupted by the user"
            log.error("[%s] failed: %s", failed, error)
            trace_log.error("traceback of stage %s", failed, exc_info=exc)
        seconds = round(time.perf_counter() - started, 3)
        write_run_files(run_dir, metrics, failed, error, seconds)
        if exc is not None and not isinstance(exc, Exception):
            raise exc
        return RunRecord("failed" if failed else "ok", failed, error, seconds, metrics, values)

    instances: dict[str, Stage] = {}
    for node in graph.nodes:
        try:
            instances[node.name] = _instantiate(node)
        except BaseException as exc:  # noqa: BLE001 - recorded in status.json
            return finish(node.name, exc)

    for node in graph.nodes:
        ctx = StageContext(node.name, seed, run_dir / node.name,
                           logging.getLogger(f"choreograph.{node.name}"))
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


def _save_files(stage_dir: Path, result: StageResult, run_dir: Path) -> None:
    for name, value in result.outputs.items():
        if isinstance(value, Artifact):
            value.save(stage_dir / f"{name}{value.suffix}")
    for filename, artifact in result.files.items():
        artifact.save(stage_dir / filename)
    for filename, artifact in result.run_files.items():
        artifact.save(run_dir / filename)
