"""The reset stage: drop the peg anywhere (physics), then reset it automatically."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from core.errors import ConfigError
from stages.arms.reset.plan import ResetSettings

DROP_KEYS = ("x_range", "y_range", "z_range", "settle_s", "max_s")


def reset_settings(cfg: Mapping[str, Any] | None) -> ResetSettings:
    cfg = dict(cfg or {})
    allowed = [f.name for f in dataclasses.fields(ResetSettings)]
    unknown = sorted(set(cfg) - set(allowed))
    if unknown:
        raise ConfigError(f"reset.{unknown[0]} is not a reset setting; allowed: {allowed}")
    return ResetSettings(**cfg)


def build_rig(world, scene: Mapping[str, Any], hardware, camera_cfg, calibration, seed,
              hold_noslip_iterations: int = 0):
    from core.tag_layouts import layout_from_config
    from stages.arms.perception.camera import ImageEffects
    from stages.arms.reset.rig import ResetRig

    peg_cfg = (scene.get("objects") or {}).get("peg")
    if peg_cfg is None:
        raise ConfigError("the reset needs a tagged peg: scene.objects.peg (use scene=reset_cell)")
    layout = layout_from_config(peg_cfg, "peg")
    effects = ImageEffects.from_config((camera_cfg or {}).get("effects"), "camera.effects")
    rig = ResetRig(world, layout, hardware, (camera_cfg or {}).get("name", "scene_camera"), effects,
                   calibration, seed=seed, hold_noslip_iterations=hold_noslip_iterations)
    return rig, np.asarray(peg_cfg.get("size", [0.04, 0.04, 0.14]), float) / 2


def drop_peg(rig, rng, drop: Mapping[str, Any]):
    """Release the peg at a random pose above the workspace and let physics settle it."""
    from stages.arms.perception.sim import drop_body, random_drop_pose

    unknown = sorted(set(drop) - set(DROP_KEYS))
    if unknown:
        raise ConfigError(f"drop.{unknown[0]} is not a drop setting; allowed: {list(DROP_KEYS)}")
    pose = random_drop_pose(rng, drop.get("x_range", (0.4, 0.65)), drop.get("y_range", (-0.25, 0.25)),
                            drop.get("z_range", (0.85, 0.95)))
    with rig.sim.lock:
        return drop_body(rig.model, rig.sim.data, "peg", pose, float(drop.get("settle_s", 0.3)),
                         float(drop.get("max_s", 4.0)))
