"""Where the robot faces along a path, segment by segment, as Pedro Pathing's lines say it.

A path may carry one :class:`SegmentHeading` per Bézier segment (``path.headings``; a ``.pp``
file always does): ``tangential`` faces along the path (``reverse``: backwards along it),
``constant`` holds ``start_rad``, ``linear`` turns from ``start_rad`` to ``end_rad`` the short way
round as the segment's parameter runs from 0 to 1 (Pedro interpolates by the parameter of the
closest point, not by arc length). Without headings the follower's own ``heading`` mode applies.

:func:`headings_at` evaluates them at chain parameters ``u`` (segment index + t); both followers
sample it along their own arc length (SKIDADDLE on the flattened path's vertices, Road Runner's
profile on its dense samples), so both turn the same way on the same path.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from core.settings import require

SegmentHeadingMode = Literal["linear", "constant", "tangential"]
SEGMENT_HEADING_MODES: tuple[str, ...] = ("linear", "constant", "tangential")


@dataclass(frozen=True)
class SegmentHeading:
    """``path.headings[i]``: how the robot faces along Bézier segment i."""

    mode: SegmentHeadingMode = "tangential"
    start_rad: float = 0.0   # linear: at the segment's start; constant: held throughout
    end_rad: float = 0.0     # linear: at its end
    reverse: bool = False    # tangential: face backwards along the path

    def __post_init__(self) -> None:
        require(self.mode in SEGMENT_HEADING_MODES, "mode", self.mode,
                f"one of {list(SEGMENT_HEADING_MODES)}")
        for name in ("start_rad", "end_rad"):
            require(math.isfinite(getattr(self, name)), name, getattr(self, name), "a finite number (rad)")


def short_turn(from_rad: float, to_rad: float) -> float:
    """The turn from one heading to another the short way round, in (-π, π]."""
    d = math.remainder(to_rad - from_rad, math.tau)
    return math.pi if d == -math.pi else d


def headings_at(headings: Sequence[SegmentHeading], u: np.ndarray, tangent_rad: np.ndarray) -> np.ndarray:
    """The heading at chain parameters ``u`` (segment index + t) where the path's direction is
    ``tangent_rad``; unwrapped along ``u`` (sorted)."""
    u = np.asarray(u, float)
    k = np.clip(np.floor(u).astype(int), 0, len(headings) - 1)
    t = np.clip(u - k, 0.0, 1.0)
    out = np.empty_like(u)
    for i, h in enumerate(headings):
        at = k == i
        if h.mode == "tangential":
            out[at] = np.asarray(tangent_rad, float)[at] + (math.pi if h.reverse else 0.0)
        elif h.mode == "constant":
            out[at] = h.start_rad
        else:
            out[at] = h.start_rad + short_turn(h.start_rad, h.end_rad) * t[at]
    return np.unwrap(out)


def start_heading(headings: Sequence[SegmentHeading], tangent_rad: float) -> float:
    """Where the robot faces at the path's start: the first segment's heading there (``tangent_rad``:
    the path's direction at its start), or along the path without headings."""
    if not headings:
        return float(tangent_rad)
    return float(headings_at(headings, np.zeros(1), np.array([tangent_rad]))[0])


def heading_profile(headings: Sequence[SegmentHeading], s_in: np.ndarray, u: np.ndarray,
                    tangent_rad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Heading and its rate along the path (rad, rad/in) at arc lengths ``s_in`` where the
    chain parameter is ``u`` and the direction ``tangent_rad``."""
    h = headings_at(headings, u, tangent_rad)
    dh = np.gradient(h, s_in) if len(s_in) > 1 else np.zeros_like(h)
    return h, np.where(np.isfinite(dh), dh, 0.0)
