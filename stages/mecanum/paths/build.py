"""A path from its settings: validate the Bézier chain, relax its turns, flatten it.

    bundle = build_path(from_config(PathSettings, cfg.path, "path"), DriveParams())
    table = bundle.entry_speeds()              # the precompute the control loop reads

:func:`path_metrics` and :func:`path_summary` are what the ``path`` stage reports.
"""

from __future__ import annotations

from typing import Any

from hardware.mecanum.params import DriveParams
from stages.mecanum.paths.bezier import BezierChain
from stages.mecanum.paths.bundle import PathBundle, min_entry_speed
from stages.mecanum.paths.flatten import flatten_chain
from stages.mecanum.paths.limits import PathLimits
from stages.mecanum.paths.relax import relax_chain
from stages.mecanum.paths.settings import PathSettings


def path_limits(settings: PathSettings, drive: DriveParams) -> PathLimits:
    """The planning budget: the settings' shares of the drivetrain's acceleration and speed."""
    return PathLimits.from_drive(drive, settings.accel_fraction, settings.speed_fraction)


def validated_chain(settings: PathSettings, where: str = "path.segments") -> BezierChain:
    """The authored chain (a PathError naming ``where[i]`` if a segment is invalid)."""
    return BezierChain.from_control_points(settings.segments, where)


def build_path(settings: PathSettings, drive: DriveParams,
               chain: BezierChain | None = None) -> PathBundle:
    """Relax (unless ``settings.relax`` is off) and flatten the chain; no run folder needed."""
    original = validated_chain(settings) if chain is None else chain
    limits = path_limits(settings, drive)
    relaxed = None
    curve = original
    if settings.relax:
        relaxed = relax_chain(original, limits, speed_in_s=settings.relax_speed_in_s,
                              tolerance_in=settings.relax_tolerance_in,
                              tangential_in_s2=settings.relax_tangential_in_s2)
        curve = relaxed.chain
    flat = flatten_chain(curve, settings.flatness_in, settings.max_depth)
    headings = tuple(h for i, h in enumerate(settings.headings) if i not in original.dropped)
    return PathBundle(settings.name, original, curve, relaxed,
                      original.joints(settings.g1_tolerance_rad), flat, limits, drive,
                      settings.corner_in, settings.end_speed_in_s, headings)


def path_metrics(bundle: PathBundle, settings: PathSettings) -> dict[str, Any]:
    """The numbers the ``path`` stage reports (``path.length_in``, ``path.relax_shift_in``, ...)."""
    flat, rel, limits = bundle.flat, bundle.relax, bundle.limits
    return {
        "name": bundle.name, "bezier_segments": len(bundle.original),
        "segments": flat.segments, "length_in": flat.length_in,
        "arc_length_in": bundle.chain.arc_length(), "flatness_in": settings.flatness_in,
        "max_chord_error_in": flat.max_chord_error_in, "max_depth": flat.depth,
        "g1_breaks": len([j for j in bundle.joints if not j.g1]),
        "dropped_segments": len(bundle.original.dropped),
        "relax_shift_in": rel.shift_in if rel else 0.0,
        "relax_control_point_shift_in": rel.control_point_shift_in if rel else 0.0,
        "relax_budget_in_s2": limits.accel_at(settings.relax_speed_in_s),
        "relax_demand_before_in_s2": float(rel.demand_before_in_s2.max()) if rel else 0.0,
        "relax_demand_after_in_s2": float(rel.demand_after_in_s2.max()) if rel else 0.0,
        "relax_feasible": rel.feasible if rel else True,
        "min_entry_speed_in_s": min_entry_speed(bundle),
        "max_speed_in_s": limits.max_speed_in_s,
        "accel_budget_in_s2": limits.max_accel_in_s2,
    }


def path_summary(bundle: PathBundle) -> dict[str, Any]:
    """path.json: the authored and relaxed control points, the joints, limits and drive."""
    rel = bundle.relax
    return {
        "name": bundle.name, "original_segments": bundle.original.to_list(),
        "relaxed_segments": bundle.chain.to_list(),
        "relaxed_changed": list(rel.changed) if rel else [],
        "dropped": list(bundle.original.dropped),
        "joints": [vars(j) for j in bundle.joints],
        "limits": vars(bundle.limits), "drive": vars(bundle.drive),
    }
