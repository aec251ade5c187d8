"""Bring-up results: a check per criterion, a result per step, and the report (JSON, Markdown)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from stages.arms.execution.bringup_settings import STEP_KEYS, STEP_TITLES

PASS, FAIL, NOT_RUN = "pass", "fail", "not run"


class StepFailed(Exception):
    """Raised inside a step: ``message`` says why; checks measured so far are kept."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def fmt_rad(x: float) -> str:
    """An angle as a report shows it (small ones in scientific notation)."""
    x = float(x)
    return f"{x:.2e} rad" if 0 < abs(x) < 1e-3 else f"{x:.4f} rad"


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Check:
    """One criterion of a step and what was measured against it."""

    criterion: str
    measured: str
    passed: bool
    metrics: dict[str, Any] = field(default_factory=dict)


@dataclass
class StepResult:
    key: str
    status: str = NOT_RUN
    checks: list[Check] = field(default_factory=list)
    message: str = ""
    seconds: float = 0.0

    @property
    def title(self) -> str:
        return STEP_TITLES[self.key]

    @property
    def number(self) -> int:
        return STEP_KEYS.index(self.key) + 1


@dataclass
class BringUpReport:
    steps: list[StepResult]
    driver_kind: str
    arms: tuple[str, ...]
    goals_sent: int = 0

    @property
    def passed(self) -> bool:
        return all(s.status == PASS for s in self.steps)

    @property
    def failed_step(self) -> StepResult | None:
        return next((s for s in self.steps if s.status == FAIL), None)

    def step(self, key: str) -> StepResult:
        return next(s for s in self.steps if s.key == key)

    def metrics(self) -> dict[str, Any]:
        m: dict[str, Any] = {"passed": self.passed,
                             "steps_passed": sum(s.status == PASS for s in self.steps),
                             "failed_step": self.failed_step.key if self.failed_step else "none",
                             "goals_sent": self.goals_sent}
        for s in self.steps:
            m[f"{s.key}_pass"] = s.status == PASS
            m[f"{s.key}_status"] = s.status
            if s.status != NOT_RUN:
                m[f"{s.key}_time_s"] = round(s.seconds, 4)
            for c in s.checks:
                m.update({f"{s.key}_{k}": v for k, v in c.metrics.items()})
        return m

    def summary(self) -> str:
        bad = self.failed_step
        if bad is None:
            return f"bring-up passed: all {len(self.steps)} steps"
        return f"bring-up failed at step {bad.number} ({bad.title}): {bad.message}"

    def to_markdown(self) -> str:
        lines = ["# Bring-up report", "",
                 f"- driver: {self.driver_kind}; arms: {', '.join(self.arms)}",
                 f"- result: **{'PASSED' if self.passed else 'FAILED'}** — {self.summary()}",
                 f"- goals sent: {self.goals_sent}", "",
                 "| # | step | criterion | measured | result |",
                 "|---|---|---|---|---|"]
        for s in self.steps:
            if not s.checks:
                note = s.message if s.status != NOT_RUN else "—"
                lines.append(f"| {s.number} | {s.title} | {_cell(note)} | — | {s.status} |")
                continue
            for i, c in enumerate(s.checks):
                lines.append(f"| {s.number if i == 0 else ''} | {s.title if i == 0 else ''} | "
                             f"{_cell(c.criterion)} | {_cell(c.measured)} | "
                             f"{PASS if c.passed else '**' + FAIL + '**'} |")
            if s.status == FAIL and s.message and all(c.passed for c in s.checks):
                lines.append(f"| | | {_cell(s.message)} | — | **{FAIL}** |")
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "summary": self.summary(), "driver": self.driver_kind,
                "arms": list(self.arms), "goals_sent": self.goals_sent,
                "steps": [{"step": s.number, "key": s.key, "title": s.title, "status": s.status,
                           "message": s.message, "seconds": s.seconds,
                           "checks": [dataclasses.asdict(c) for c in s.checks]} for s in self.steps]}


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
