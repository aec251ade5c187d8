"""Stage adapters for the path pipeline: BuildPath → Precompute → DrawPath.

They turn plain config values (the runner converts the config) into the domain
objects of ``stages.paths`` and ``hardware.mecanum``, check them at construction
(so a bad path or drive key fails before anything runs), and hand back outputs,
metrics and files. No Hydra here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from hardware.mecanum.params import DriveParams
from stages.artifacts import JsonFile, NpzFile, PngFigure, atomic_write_bytes
from stages.errors import ConfigError
from stages.graph import Stage, StageContext, StageResult
from stages.paths.bezier import BezierChain, Joint
from stages.paths.flatten import MAX_DEPTH, FlatPath, flatten_chain
from stages.paths.limits import PathLimits
from stages.paths.precompute import EntrySpeedTable, benchmark_precompute, precompute_entry_speeds
from stages.paths.profile import forward_profile
from stages.paths.relax import RelaxResult, relax_chain


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

    def entry_speeds(self) -> EntrySpeedTable:
        return precompute_entry_speeds(self.flat, self.limits,
                                       corner_tolerance_in=self.corner_tolerance_in,
                                       end_speed_in_s=self.end_speed_in_s)


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


class Precompute(Stage):
    """The backward pass: the entry-speed table the control loop reads, and its timing."""

    outputs = ("table",)

    def __init__(self, benchmark_sizes: list[int] | tuple[int, ...] = (),
                 benchmark_repeats: int = 5):
        sizes = list(benchmark_sizes or [])
        if any(not isinstance(n, int) or isinstance(n, bool) or n < 1 for n in sizes):
            raise ConfigError(f"precompute.benchmark_sizes must be positive integers; got {sizes}")
        self.sizes, self.repeats = sizes, max(1, int(benchmark_repeats))

    def run(self, ctx: StageContext, path: PathBundle) -> StageResult:
        t0 = time.perf_counter()
        table = path.entry_speeds()
        elapsed = time.perf_counter() - t0
        profile = forward_profile(table)
        metrics = {"time_s": elapsed, "segments": table.segments,
                   "min_entry_speed_in_s": min_entry_speed(path),
                   "stops": int(np.sum(table.corner_speed_in_s[1:-1] <= 1e-6)),
                   "planned_time_s": profile.duration_s,
                   "planned_peak_speed_in_s": float(profile.speed_in_s.max())}
        if self.sizes:
            for n, seconds in benchmark_precompute(self.sizes, path.limits, self.repeats).items():
                metrics[f"bench_{n}_segments_time_s"] = seconds
                ctx.log.info("precompute of %d segments: %.3g ms", n, seconds * 1e3)
        files = {"table.npz": NpzFile(table.as_arrays()),
                 "profile.npz": NpzFile({"s_in": profile.s_in, "speed_in_s": profile.speed_in_s,
                                         "time_s": profile.time_s})}
        return StageResult(outputs={"table": table}, metrics=metrics, files=files)


class DrawPath(Stage):
    """field.png, speed_profile.png and preview.gif (the planned motion, not a simulation)."""

    outputs = ()

    def __init__(self, footprints: int = 8, animate: bool = True, max_frames: int = 48,
                 fps: float = 12.0):
        self.footprints, self.animate = int(footprints), bool(animate)
        self.max_frames, self.fps = int(max_frames), float(fps)

    def run(self, ctx: StageContext, path: PathBundle, table: EntrySpeedTable) -> StageResult:
        from hardware.mecanum import drawing

        profile = forward_profile(table)
        poses = planned_poses(table, profile.s_in)
        pick = np.unique(np.searchsorted(profile.time_s, np.linspace(
            0, profile.duration_s, max(self.footprints, 2))).clip(0, len(poses) - 1))
        footprint = (path.drive.length_in, path.drive.width_in)
        relaxed = path.chain.sample() if path.relax and path.relax.changed else None
        title = f"{path.name}: {table.segments} segments, {table.length_in:.1f} in"
        files: dict[str, Any] = {
            "field.png": PngFigure(drawing.path_figure(
                table.points_in, table.entry_speed_in_s, table.limits.max_speed_in_s,
                original=path.original.sample(), relaxed=relaxed, poses=poses[pick],
                footprint_in=footprint, focus=table.points_in[slowest_turn(table)],
                title=title)),
            "speed_profile.png": PngFigure(drawing.speed_profile_figure(
                profile.s_in, profile.speed_in_s, table.cum_length_in, table.entry_speed_in_s,
                table.corner_speed_in_s, table.limits.max_speed_in_s,
                title=f"{path.name}: planned {profile.duration_s:.2f} s")),
        }
        metrics: dict[str, Any] = {}
        if self.animate:
            frames = drawing.animation_frames(table.points_in, poses, profile.time_s, footprint,
                                              self.max_frames, title=path.name)
            files["preview.gif"] = GifFile(drawing.gif_bytes(frames, self.fps))
            metrics["frames"] = len(frames)
        return StageResult(metrics=metrics, files=files)


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
