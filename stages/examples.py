"""Tiny stages that show the Stage API; the runner's tests use them too."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import numpy as np

from core.artifacts import JsonFile
from core.errors import ChoreographError
from stages.api import Stage, StageContext, StageResult


class Constant(Stage):
    """Outputs a fixed value (and a random draw from its seeded generator)."""

    outputs = ("value", "draw")

    def __init__(self, value: Any = 0):
        self.value = value

    def run(self, ctx: StageContext) -> StageResult:
        draw = float(ctx.rng.random())
        return StageResult(outputs={"value": self.value, "draw": draw},
                           metrics={"value": self.value, "draw": draw},
                           files={"value.json": JsonFile({"value": self.value})})


class Sum(Stage):
    """Adds its inputs."""

    outputs = ("total",)

    def run(self, ctx: StageContext, **values: Any) -> StageResult:
        total = sum(ctx.progress(values.values(), desc="sum"))
        return StageResult(outputs={"total": total}, metrics={"total": total})


class Trace(Stage):
    """Records a sine wave on the ``time`` timeline through the run's recorder (``recording.rrd``)."""

    outputs = ()

    def __init__(self, samples: int = 50, rate_hz: float = 125.0):
        self.samples, self.rate_hz = int(samples), float(rate_hz)

    def run(self, ctx: StageContext, **_: Any) -> StageResult:
        times = np.arange(self.samples) / self.rate_hz
        ctx.recorder.series(f"{ctx.name}/sine", times, np.sin(2 * np.pi * times), names=["sine"])
        ctx.recorder.set_time_s(float(times[-1]))
        ctx.recorder.text(f"{ctx.name}/log", f"{self.samples} samples at {self.rate_hz:g} Hz")
        return StageResult(metrics={"samples": self.samples})


class Fail(Stage):
    """Measures something, then fails on purpose."""

    outputs = ()

    def __init__(self, message: str = "failed on purpose"):
        self.message = message

    def run(self, ctx: StageContext, **_: Any) -> StageResult:
        ctx.metrics["measured_before_failing"] = 1.0
        raise ChoreographError(self.message)


class KillOnce(Stage):
    """Ends its own process at once (SIGKILL, nothing recorded) if the file ``token`` exists,
    removing it first: a job lost mid-sweep, as the OOM killer or a pre-empted node ends one, once.
    The sweep tests use it (``token: /tmp/x/kill-${seed}``)."""

    outputs = ()

    def __init__(self, token: str):
        self.token = token

    def run(self, ctx: StageContext, **_: Any) -> StageResult:
        token = Path(self.token)
        if token.exists():
            token.unlink()
            os.kill(os.getpid(), signal.SIGKILL)
        return StageResult()
