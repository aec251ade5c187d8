"""Settings of the path stages: the ``path`` config group and the precompute/draw parameters.

Frozen dataclasses, units in the field names, read with :func:`core.settings.from_config`
(``from_config(PathSettings, cfg.path, "path")``), which checks keys and types and names
the full key in every error; the ranges are checked here. No Hydra import.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.settings import require
from stages.mecanum.paths.flatten import MAX_DEPTH
from stages.mecanum.paths.heading import SegmentHeading

# a path: cubic Bézier segments, each four [x_in, y_in] control points
Segments = tuple[tuple[tuple[float, float], ...], ...]


def _positive(name: str, value: float) -> None:
    require(math.isfinite(value) and value > 0, name, value, "a finite number > 0")


def _non_negative(name: str, value: float) -> None:
    require(math.isfinite(value) and value >= 0, name, value, "a finite number ≥ 0")


def _fraction(name: str, value: float) -> None:
    require(0 < value <= 1, name, value, "in (0, 1]")


@dataclass(frozen=True)
class PathSettings:
    """The ``path`` config group (``conf/path/*.yaml``): the curve and how it is planned."""

    segments: Segments = ()  # control-point quadruples [[x, y]] * 4, inches
    name: str = "custom"
    file: str | None = None  # a Pedro Pathing .pp file: its lines become segments and headings
    headings: tuple[SegmentHeading, ...] = ()  # one per segment (none: the follower's heading mode)
    flatness_in: float = 0.05  # chord error bound of the flattening
    max_depth: int = MAX_DEPTH  # flattening: most halvings per cubic
    relax: bool = True  # move handles where a turn needs more than the budget
    relax_tolerance_in: float = 2.0  # how far relaxation may move a control point
    relax_speed_in_s: float = 30.0  # the design speed turns must fit the budget at
    relax_tangential_in_s2: float = 20.0  # acceleration kept for speed changes in a turn
    accel_fraction: float = 0.8  # share of the drivetrain's acceleration the plan uses
    speed_fraction: float = 0.9  # share of its worst-direction free speed
    corner_tolerance_in: float | None = None  # corner arcs of the precompute (None: flatness_in)
    end_speed_in_s: float = 0.0  # speed at the end (0: stop)
    g1_tolerance_rad: float = 1e-3  # a joint turning more than this is a G1 break

    def __post_init__(self) -> None:
        require(bool(self.segments) or bool(self.file), "segments", [],
                "a list of cubic segments [[x, y]] * 4, or path.file (a Pedro Pathing .pp file)")
        require(not self.headings or len(self.headings) == len(self.segments), "headings",
                f"{len(self.headings)} headings", f"one per segment ({len(self.segments)}), or none")
        _positive("flatness_in", self.flatness_in)
        require(1 <= self.max_depth <= 40, "max_depth", self.max_depth, "an integer in [1, 40]")
        _non_negative("relax_tolerance_in", self.relax_tolerance_in)
        _positive("relax_speed_in_s", self.relax_speed_in_s)
        _non_negative("relax_tangential_in_s2", self.relax_tangential_in_s2)
        _fraction("accel_fraction", self.accel_fraction)
        _fraction("speed_fraction", self.speed_fraction)
        if self.corner_tolerance_in is not None:
            _positive("corner_tolerance_in", self.corner_tolerance_in)
        _non_negative("end_speed_in_s", self.end_speed_in_s)
        _positive("g1_tolerance_rad", self.g1_tolerance_rad)

    @property
    def corner_in(self) -> float:
        """The precompute's corner tolerance (the flatness unless set)."""
        return self.flatness_in if self.corner_tolerance_in is None else self.corner_tolerance_in


@dataclass(frozen=True)
class PrecomputeSettings:
    """``pipeline.stages.precompute``: the backward pass and its optional timing benchmark."""

    benchmark_sizes: tuple[int, ...] = ()  # time the pass on synthetic paths of these sizes
    benchmark_repeats: int = 5

    def __post_init__(self) -> None:
        for i, n in enumerate(self.benchmark_sizes):
            require(n >= 1, f"benchmark_sizes[{i}]", n, "a positive integer")
        require(self.benchmark_repeats >= 1, "benchmark_repeats", self.benchmark_repeats, "≥ 1")


@dataclass(frozen=True)
class DrawSettings:
    """``pipeline.stages.draw``: the path's pictures and preview animation."""

    footprints: int = 8  # robot outlines along the planned motion
    animate: bool = True
    max_frames: int = 48
    fps: float = 12.0

    def __post_init__(self) -> None:
        require(self.footprints >= 0, "footprints", self.footprints, "≥ 0")
        require(self.max_frames >= 1, "max_frames", self.max_frames, "≥ 1")
        _positive("fps", self.fps)
