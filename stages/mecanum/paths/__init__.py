"""Mobile paths: Bézier and Hermite curves, adaptive flattening, relaxation, precompute.

The flat public API (the stage adapters live in ``stages.adapters.mecanum``)::

    settings = from_config(PathSettings, cfg.path, "path")    # the ``path`` config group
    bundle = build_path(settings, DriveParams())               # relaxed and flattened
    chain = BezierChain.from_control_points(segments)          # validated, G1 checked
    limits = PathLimits.from_drive(DriveParams())              # one acceleration circle
    relaxed = relax_chain(chain, limits, speed_in_s=30, tolerance_in=2).chain
    flat = flatten_chain(relaxed, tolerance_in=0.05)           # chord error ≤ 0.05 in
    table = precompute_entry_speeds(flat, limits)              # what the control loop reads
    table.speed_limit_at(s_in), table.entry_speed_in_s, table.segment_at(s_in)
"""

from stages.mecanum.paths.bezier import BezierChain, CubicBezier, Joint, PathError
from stages.mecanum.paths.build import build_path
from stages.mecanum.paths.flatten import FlatPath, flatness, flatten_chain, flatten_cubic
from stages.mecanum.paths.hermite import CubicHermite, HermitePath, hermite_path
from stages.mecanum.paths.limits import PathLimits
from stages.mecanum.paths.precompute import (
    EntrySpeedTable,
    benchmark_precompute,
    brake_v2,
    precompute_entry_speeds,
)
from stages.mecanum.paths.profile import SpeedProfile, forward_profile
from stages.mecanum.paths.relax import RelaxResult, relax_chain, required_accel
from stages.mecanum.paths.settings import PathSettings

__all__ = [
    "BezierChain", "CubicBezier", "CubicHermite", "EntrySpeedTable", "FlatPath", "HermitePath",
    "Joint", "PathError", "PathLimits", "PathSettings", "RelaxResult", "SpeedProfile", "benchmark_precompute",
    "brake_v2", "build_path", "flatness", "flatten_chain", "flatten_cubic", "forward_profile", "hermite_path",
    "precompute_entry_speeds", "relax_chain", "required_accel",
]
