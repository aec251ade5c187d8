"""A ready follower from its settings (:class:`~stages.mecanum.control.settings.FollowerSettings`).

``kind: skidaddle`` builds :class:`~stages.mecanum.control.loop.SkidaddleFollower` (its
controllers' budgets left out come from the path's limits); ``kind: roadrunner`` the
Road Runner-style baseline. ``heading: constant | tangent`` holds the start heading or
faces along the path.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hardware.mecanum.params import DriveParams
from stages.mecanum.control.loop import SkidaddleFollower
from stages.mecanum.control.pidf import feedforward_for
from stages.mecanum.control.roadrunner import RoadRunnerFollower
from stages.mecanum.control.scheduler import HeadingFn, constant_heading, segment_heading, tangent_heading
from stages.mecanum.control.settings import FollowerSettings
from stages.mecanum.paths.bezier import BezierChain
from stages.mecanum.paths.heading import SegmentHeading, start_heading
from stages.mecanum.paths.precompute import EntrySpeedTable


def heading_function(mode: str, table: EntrySpeedTable, start_heading: float) -> HeadingFn:
    return tangent_heading(table) if mode == "tangent" else constant_heading(start_heading)


def build_follower(settings: FollowerSettings, *, drive: DriveParams, table: EntrySpeedTable,
                   chain: BezierChain, start_heading: float, dt_s: float = 0.01,
                   headings: Sequence[SegmentHeading] = (), source_u: np.ndarray | None = None):
    """A ready follower for one path (SKIDADDLE's budgets default to the path's limits). The
    path's own ``headings`` (one per segment of ``chain``; ``source_u``: the flattened vertices'
    chain parameters) override ``settings.heading``."""
    ff = feedforward_for(settings.feedforward, drive)
    name = settings.name or settings.kind
    if settings.kind == "roadrunner":
        return RoadRunnerFollower(chain, drive, ff, settings.roadrunner(),
                                  heading=settings.heading, start_heading=start_heading,
                                  headings=headings, dt_s=dt_s, name=name)
    heading = (segment_heading(table, source_u, headings) if headings
               else heading_function(settings.heading, table, start_heading))
    follower = SkidaddleFollower(table, drive, heading, ff, settings.skidaddle(), dt_s=dt_s)
    follower.name = name
    return follower


def start_pose_of(table: EntrySpeedTable, offset=(0.0, 0.0, 0.0),
                  headings: Sequence[SegmentHeading] = ()) -> np.ndarray:
    """The path's start point, facing along its first segment (or as the path's own
    ``headings`` say at its start), plus an offset."""
    d = table.directions[0]
    facing = start_heading(headings, math.atan2(d[1], d[0]))
    return np.r_[table.points_in[0], facing] + np.asarray(offset, dtype=float)
