"""Stage build_path: a Bézier or Hermite path from config, relaxed and flattened."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.artifacts import JsonFile, NpzFile
from core.errors import ConfigError
from hardware.mecanum.params import DriveParams
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.paths.bezier import BezierChain
from stages.mecanum.paths.bundle import PathBundle, min_entry_speed
from stages.mecanum.paths.flatten import MAX_DEPTH, flatten_chain
from stages.mecanum.paths.limits import PathLimits
from stages.mecanum.paths.relax import relax_chain


def _number(where: str, value: Any, minimum: float = 0.0, strict: bool = True) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value)
    if not ok or value < minimum or (strict and value == minimum):
        rel = ">" if strict else "≥"
        raise ConfigError(f"{where} must be a number {rel} {minimum:g}; got {value!r}")
    return float(value)


class BuildPath(Stage):
    """Validate a Bézier chain, report its G1 breaks, relax its turns, flatten it."""

    outputs = ("path",)

    def __init__(self, segments: list, name: str = "custom", flatness_in: float = 0.05,
                 max_depth: int = MAX_DEPTH, relax: bool = True, relax_tolerance_in: float = 2.0,
                 relax_speed_in_s: float = 30.0, relax_tangential_in_s2: float = 20.0,
                 accel_fraction: float = 0.8, speed_fraction: float = 0.9,
                 corner_tolerance_in: float | None = None, end_speed_in_s: float = 0.0,
                 g1_tolerance_rad: float = 1e-3, drive: dict | None = None):
        self.name = str(name)
        self.chain = BezierChain.from_control_points(segments, "path.segments")
        self.flatness_in = _number("path.flatness_in", flatness_in)
        if not isinstance(max_depth, int) or not 1 <= max_depth <= 40:
            raise ConfigError(f"path.max_depth must be an integer in [1, 40]; got {max_depth!r}")
        self.max_depth, self.relax = max_depth, bool(relax)
        self.relax_tolerance_in = _number("path.relax_tolerance_in", relax_tolerance_in,
                                          strict=False)
        self.relax_speed_in_s = _number("path.relax_speed_in_s", relax_speed_in_s)
        self.relax_tangential_in_s2 = _number("path.relax_tangential_in_s2",
                                              relax_tangential_in_s2, strict=False)
        self.corner_tolerance_in = (self.flatness_in if corner_tolerance_in is None else
                                    _number("path.corner_tolerance_in", corner_tolerance_in))
        self.end_speed_in_s = _number("path.end_speed_in_s", end_speed_in_s, strict=False)
        self.g1_tolerance_rad = _number("path.g1_tolerance_rad", g1_tolerance_rad)
        self.drive = DriveParams.from_dict(drive, "drive")
        self.limits = PathLimits.from_drive(self.drive, accel_fraction, speed_fraction)

    def make(self) -> PathBundle:
        """The domain work, without a run folder (tests and other stages call this)."""
        relaxed = None
        chain = self.chain
        if self.relax:
            relaxed = relax_chain(self.chain, self.limits, speed_in_s=self.relax_speed_in_s,
                                  tolerance_in=self.relax_tolerance_in,
                                  tangential_in_s2=self.relax_tangential_in_s2)
            chain = relaxed.chain
        flat = flatten_chain(chain, self.flatness_in, self.max_depth)
        return PathBundle(self.name, self.chain, chain, relaxed,
                          self.chain.joints(self.g1_tolerance_rad), flat, self.limits,
                          self.drive, self.corner_tolerance_in, self.end_speed_in_s)

    def run(self, ctx: StageContext) -> StageResult:
        bundle = self.make()
        flat, rel = bundle.flat, bundle.relax
        breaks = [j for j in bundle.joints if not j.g1]
        for j in breaks:
            ctx.log.warning("path %s: G1 break between segments %d and %d (%.1f deg) — kept, "
                            "the robot slows for it", self.name, j.index, j.index + 1,
                            np.degrees(j.angle_rad))
        if self.chain.dropped:
            ctx.log.warning("path.segments %s have zero length and were dropped",
                            list(self.chain.dropped))
        metrics = {
            "name": self.name, "bezier_segments": len(self.chain),
            "segments": flat.segments, "length_in": flat.length_in,
            "arc_length_in": bundle.chain.arc_length(), "flatness_in": self.flatness_in,
            "max_chord_error_in": flat.max_chord_error_in, "max_depth": flat.depth,
            "g1_breaks": len(breaks), "dropped_segments": len(self.chain.dropped),
            "relax_shift_in": rel.shift_in if rel else 0.0,
            "relax_control_point_shift_in": rel.control_point_shift_in if rel else 0.0,
            "relax_budget_in_s2": self.limits.accel_at(self.relax_speed_in_s),
            "relax_demand_before_in_s2": float(rel.demand_before_in_s2.max()) if rel else 0.0,
            "relax_demand_after_in_s2": float(rel.demand_after_in_s2.max()) if rel else 0.0,
            "relax_feasible": rel.feasible if rel else True,
            "min_entry_speed_in_s": min_entry_speed(bundle),
            "max_speed_in_s": self.limits.max_speed_in_s,
            "accel_budget_in_s2": self.limits.max_accel_in_s2,
        }
        summary = {
            "name": self.name, "original_segments": self.chain.to_list(),
            "relaxed_segments": bundle.chain.to_list(),
            "relaxed_changed": list(rel.changed) if rel else [],
            "dropped": list(self.chain.dropped),
            "joints": [vars(j) for j in bundle.joints],
            "limits": vars(self.limits), "drive": vars(self.drive),
        }
        files = {"path.json": JsonFile(summary),
                 "flat.npz": NpzFile({"points_in": flat.points, "source_u": flat.source_u})}
        return StageResult(outputs={"path": bundle}, metrics=metrics, files=files)
