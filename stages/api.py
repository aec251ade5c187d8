"""What a stage is: the ``Stage`` base, the context the runner hands it, the result it returns."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from core.artifacts import Artifact
from core.recording import NULL_RECORDER, Recorder


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
    """What the runner hands a stage: its name, seed, logger, progress bars and the run's recorder
    (``recording.rrd``; a no-op one when ``record: false``)."""

    name: str
    seed: int
    out_dir: Path
    log: logging.Logger
    metrics: dict[str, Any] = field(default_factory=dict)  # partial metrics, kept on failure
    recorder: Recorder = NULL_RECORDER

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
