"""Small shared builders for the control tests (no run folder, no Hydra)."""

from __future__ import annotations

import math

import numpy as np

from hardware.mecanum.params import DriveParams
from stages.mecanum.paths.bezier import BezierChain
from stages.mecanum.paths.flatten import FlatPath, flatten_chain
from stages.mecanum.paths.limits import PathLimits
from stages.mecanum.paths.precompute import precompute_entry_speeds

DRIVE = DriveParams()
LIMITS = PathLimits.from_drive(DRIVE)
STRAIGHT = [[[-30, 0], [-10, 0], [10, 0], [30, 0]]]
HAIRPIN = [[[-48, -8], [-24, -8], [0, -8], [24, -8]],
           [[24, -8], [34.6667, -8], [34.6667, 8], [24, 8]],
           [[24, 8], [0, 8], [-24, 8], [-48, 8]]]


def table_of(segments, flatness_in: float = 0.05):
    chain = BezierChain.from_control_points(segments)
    return chain, precompute_entry_speeds(flatten_chain(chain, flatness_in), LIMITS)


def polyline_table(points):
    return precompute_entry_speeds(FlatPath.from_points(np.asarray(points, float), 0.05), LIMITS)


def heading_of(table) -> float:
    d = table.directions[0]
    return math.atan2(d[1], d[0])
