"""Followers from plain config (what the stages adapt), checked key by key.

A follower config is a mapping with ``kind: skidaddle | roadrunner``, a ``name`` and
``heading: constant | tangent`` (hold the start heading, or face along the path), plus
the kind's own keys (``conf/follower/*.yaml`` documents every one). Unknown keys are a
:class:`~core.errors.ConfigError` listing the allowed ones.
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

import numpy as np

from core.errors import ConfigError
from hardware.mecanum.params import DriveParams
from stages.mecanum.control.controllers import AlongPath, BackOntoPath, EndCorrection, Heading, Stop
from stages.mecanum.control.loop import SkidaddleFollower
from stages.mecanum.control.pidf import PidGains, feedforward_from_config
from stages.mecanum.control.roadrunner import HEADINGS, RoadRunnerFollower, RoadRunnerParams
from stages.mecanum.control.scheduler import HeadingFn, constant_heading, tangent_heading
from stages.mecanum.paths.bezier import BezierChain
from stages.mecanum.paths.precompute import EntrySpeedTable

KINDS = ("skidaddle", "roadrunner")
COMMON = ("name", "kind", "heading", "feedforward")
SKIDADDLE_GROUPS = {
    "along_path": AlongPath, "back_onto_path": BackOntoPath, "heading_control": Heading,
    "end_correction": EndCorrection, "stop": Stop,
}
SCHEDULER_KEYS = ("lookahead_min_in", "lookahead_max_in", "lookahead_gain", "window_in",
                  "end_zone_in", "end_tolerance_in", "rest_speed_in_s")
ALLOCATOR_KEYS = ("voltage_reserve", "traction_fraction", "cruise_voltage_fraction")


def _check(where: str, data: Any, allowed) -> dict:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a mapping; got {data!r}")
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise ConfigError(f"{where} has unknown key(s) {unknown}; allowed: {sorted(allowed)}")
    for k, v in data.items():
        if k != "name" and (isinstance(v, bool) or not isinstance(v, (int, float))
                            or not math.isfinite(v) or v < 0):
            raise ConfigError(f"{where}.{k} must be a number ≥ 0; got {v!r}")
    return dict(data)


def check_follower_config(cfg: Any, where: str = "follower") -> dict:
    """Validate the common keys and the kind; returns a plain dict copy."""
    if not isinstance(cfg, dict):
        raise ConfigError(f"{where} must be a mapping with kind: {list(KINDS)}; got {cfg!r}")
    cfg = dict(cfg)
    kind = cfg.get("kind")
    if kind not in KINDS:
        raise ConfigError(f"{where}.kind={kind!r}; allowed: {list(KINDS)}")
    heading = cfg.get("heading", "constant")
    if heading not in HEADINGS:
        raise ConfigError(f"{where}.heading={heading!r}; allowed: {list(HEADINGS)}")
    if kind == "skidaddle":
        allowed = set(COMMON) | set(SKIDADDLE_GROUPS) | {"scheduler", "allocator", "pidf"}
    else:
        allowed = set(COMMON) | {f.name for f in fields(RoadRunnerParams)}
    unknown = sorted(set(cfg) - allowed)
    if unknown:
        raise ConfigError(f"{where} ({kind}) has unknown key(s) {unknown}; "
                          f"allowed: {sorted(allowed)}")
    if kind == "skidaddle":
        for group, cls in SKIDADDLE_GROUPS.items():
            _check(f"{where}.{group}", cfg.get(group), {f.name for f in fields(cls)} - {"name"})
        _check(f"{where}.scheduler", cfg.get("scheduler"), SCHEDULER_KEYS)
        _check(f"{where}.allocator", cfg.get("allocator"), ALLOCATOR_KEYS)
        _check(f"{where}.pidf", cfg.get("pidf"), {f.name for f in fields(PidGains)})
        for group in ("along_path", "back_onto_path", "heading_control", "end_correction",
                      "stop"):
            prio = (cfg.get(group) or {}).get("priority")
            if prio is not None and (not isinstance(prio, int) or isinstance(prio, bool)):
                raise ConfigError(f"{where}.{group}.priority must be an integer ≥ 0; got {prio!r}")
    else:
        RoadRunnerParams(**{k: v for k, v in cfg.items() if k not in COMMON})
    feedforward_from_config(cfg.get("feedforward", "model"), DriveParams(),
                            f"{where}.feedforward")
    cfg.setdefault("name", kind)
    cfg.setdefault("heading", heading)
    return cfg


def heading_function(mode: str, table: EntrySpeedTable, start_heading: float) -> HeadingFn:
    return tangent_heading(table) if mode == "tangent" else constant_heading(start_heading)


def _controller(cls, data: dict | None, defaults: dict):
    kw = {**defaults, **(data or {})}
    if "priority" in kw:
        kw["priority"] = int(kw["priority"])
    return cls(**kw)


def build_follower(cfg: dict, *, drive: DriveParams, table: EntrySpeedTable,
                   chain: BezierChain, start_heading: float, dt_s: float = 0.01,
                   where: str = "follower"):
    """A ready follower for one path (SKIDADDLE's budgets default to the path's limits)."""
    cfg = check_follower_config(cfg, where)
    ff = feedforward_from_config(cfg.get("feedforward", "model"), drive, f"{where}.feedforward")
    if cfg["kind"] == "roadrunner":
        params = RoadRunnerParams(**{k: v for k, v in cfg.items() if k not in COMMON})
        return RoadRunnerFollower(chain, drive, ff, params, heading=cfg["heading"],
                                  start_heading=start_heading, dt_s=dt_s, name=cfg["name"])
    lim = table.limits
    budget = {"max_accel_in_s2": lim.max_accel_in_s2}
    ctl = {
        "along": _controller(AlongPath, cfg.get("along_path"),
                             {**budget, "max_brake_in_s2": lim.brake_accel_in_s2}),
        "back": _controller(BackOntoPath, cfg.get("back_onto_path"),
                            {"max_accel_in_s2": drive.traction_accel_in_s2}),
        "turn": _controller(Heading, cfg.get("heading_control"), {}),
        "end": _controller(EndCorrection, cfg.get("end_correction"),
                           {**budget, "max_speed_in_s": lim.max_speed_in_s}),
        "stop": _controller(Stop, cfg.get("stop"), budget),
    }
    follower = SkidaddleFollower(
        table, drive, heading_function(cfg["heading"], table, start_heading), ff,
        PidGains(**(cfg.get("pidf") or {})), scheduler_kw={**ctl, **(cfg.get("scheduler") or {})},
        dt_s=dt_s, **(cfg.get("allocator") or {}))
    follower.name = cfg["name"]
    return follower


def start_pose_of(table: EntrySpeedTable, offset=(0.0, 0.0, 0.0)) -> np.ndarray:
    """The path's start point, facing along its first segment, plus an offset."""
    d = table.directions[0]
    return np.r_[table.points_in[0], math.atan2(d[1], d[0])] + np.asarray(offset, dtype=float)
