"""Tiny stages that show the Stage API; the runner's tests use them too."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

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
