"""A made path as later stages read it (:class:`PathBundle`), and helpers over it.

:func:`stages.mecanum.paths.build.build_path` makes one from the ``path`` settings; the
precompute, the control loop and the drawings read it. ``GifFile`` is the animations'
artifact.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from core.artifacts import atomic_write_bytes
from hardware.mecanum.params import DriveParams
from stages.mecanum.paths.bezier import BezierChain, Joint
from stages.mecanum.paths.flatten import FlatPath
from stages.mecanum.paths.heading import SegmentHeading
from stages.mecanum.paths.limits import PathLimits
from stages.mecanum.paths.precompute import EntrySpeedTable, precompute_entry_speeds
from stages.mecanum.paths.relax import RelaxResult


@dataclass
class GifFile:
    """Encoded GIF bytes, saved atomically."""

    data: bytes
    suffix: ClassVar[str] = ".gif"

    def save(self, path: Path) -> None:
        atomic_write_bytes(path, self.data)


@dataclass(frozen=True, eq=False)
class PathBundle:
    """A made path: what later stages (precompute, control loop, drawing) read."""

    name: str
    original: BezierChain
    chain: BezierChain  # the curve that was flattened (relaxed, or the original)
    relax: RelaxResult | None
    joints: tuple[Joint, ...]
    flat: FlatPath
    limits: PathLimits
    drive: DriveParams
    corner_tolerance_in: float
    end_speed_in_s: float
    headings: tuple[SegmentHeading, ...] = ()   # the path's own, one per segment of ``chain``

    def entry_speeds(self) -> EntrySpeedTable:
        return precompute_entry_speeds(self.flat, self.limits,
                                       corner_tolerance_in=self.corner_tolerance_in,
                                       end_speed_in_s=self.end_speed_in_s)


def min_entry_speed(bundle: PathBundle) -> float:
    """The slowest entry speed the path's turns force (the final stop left out: the
    backward pass is run with the end speed free); max speed if nothing slows it."""
    free = precompute_entry_speeds(bundle.flat, bundle.limits,
                                   corner_tolerance_in=bundle.corner_tolerance_in,
                                   end_speed_in_s=bundle.limits.max_speed_in_s)
    return float(free.entry_speed_in_s[:-1].min())


def slowest_turn(table: EntrySpeedTable) -> int:
    """Index of the interior vertex with the lowest turn cap (the middle one if none turns)."""
    caps = table.corner_speed_in_s[1:-1]
    return 1 + int(np.argmin(caps)) if len(caps) else table.segments // 2


def planned_poses(table: EntrySpeedTable, s_in: np.ndarray) -> np.ndarray:
    """(x, y, heading) along the path, facing along it (a preview for the figures)."""
    xy = table.point_at(s_in)
    d = table.directions[table.segment_at(s_in)]
    heading = np.unwrap(np.arctan2(d[:, 1], d[:, 0]))
    return np.c_[xy, heading]
