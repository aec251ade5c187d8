"""Settings of the gather stage (``pipeline.stages.gather``): which figures, groups, pivot and plots."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from core.settings import require

Statistic = Literal["count", "sum", "mean", "median", "min", "max", "rate", "tally"]


@dataclass(frozen=True)
class PivotSettings:
    """A table with the values of override ``rows`` down and of ``columns`` across."""

    rows: str
    columns: str
    cells: tuple[str, ...]           # metrics shown in each cell (medians), joined by " / "
    digits: int = 2

    def __post_init__(self):
        require(len(self.cells) > 0, "cells", self.cells, "at least one metric")
        require(0 <= self.digits <= 9, "digits", self.digits, "0..9")


@dataclass(frozen=True)
class GatherSettings:
    sweep_dir: str | None = None     # the multirun folder (runs/<pipeline>/multirun/<stamp>)
    title: str = ""
    # override keys to group the summary by; None: every override that varies between jobs but seed
    group_by: tuple[str, ...] | None = None
    figures: dict[str, tuple[Statistic, ...]] = field(default_factory=dict)   # metric -> statistics
    pivot: PivotSettings | None = None
    plots: tuple[str, ...] = ()      # metrics drawn per group (per pivot row and column if a pivot)
    digits: int = 3

    def __post_init__(self):
        require(bool(self.sweep_dir), "sweep_dir", self.sweep_dir,
                "a multirun folder: choreograph pipeline=gather sweep_dir=runs/<pipeline>/multirun/<stamp>")
