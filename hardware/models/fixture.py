"""The peg-insertion fixture: a block with a square hole, built from four walls and a floor.

Config (``scene.objects.<name>``, ``kind: hardware.models.fixture:add_hole_fixture``)::

    pos: [x, y, z_table]      # centre of the hole, on the table surface
    hole_m: 0.048             # side of the square hole (the peg is 0.04)
    wall_m: 0.025             # wall thickness
    depth_m: 0.05             # hole depth (= block height)
    yaw_rad: 0.0
    rgba: [...]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from stages.errors import ConfigError

KEYS = ("kind", "pos", "hole_m", "wall_m", "depth_m", "yaw_rad", "rgba")


def add_hole_fixture(spec, name: str, params: Mapping[str, Any], context=None) -> None:
    import mujoco

    unknown = sorted(set(params) - set(KEYS))
    if unknown:
        raise ConfigError(f"scene.objects.{name}.{unknown[0]} is not a fixture key; allowed: {list(KEYS)}")
    pos = [float(v) for v in params.get("pos", [0.45, -0.25, 0.75])]
    hole, wall = float(params.get("hole_m", 0.048)), float(params.get("wall_m", 0.025))
    depth, yaw = float(params.get("depth_m", 0.05)), float(params.get("yaw_rad", 0.0))
    if min(hole, wall, depth) <= 0:
        raise ConfigError(f"scene.objects.{name}: hole_m, wall_m and depth_m must be > 0")
    rgba = [float(v) for v in params.get("rgba", [0.35, 0.45, 0.6, 1.0])]
    body = spec.worldbody.add_body(name=name, pos=pos, quat=[np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)])
    outer = hole / 2 + wall
    half_h = depth / 2
    walls = {  # (centre, half sizes) in the fixture frame
        "px": ([hole / 2 + wall / 2, 0, half_h], [wall / 2, outer, half_h]),
        "nx": ([-(hole / 2 + wall / 2), 0, half_h], [wall / 2, outer, half_h]),
        "py": ([0, hole / 2 + wall / 2, half_h], [hole / 2, wall / 2, half_h]),
        "ny": ([0, -(hole / 2 + wall / 2), half_h], [hole / 2, wall / 2, half_h]),
    }
    for key, (centre, size) in walls.items():
        body.add_geom(name=f"{name}_wall_{key}", type=mujoco.mjtGeom.mjGEOM_BOX, pos=centre, size=size,
                      rgba=rgba, friction=[0.6, 0.005, 0.0001])
    body.add_site(name=f"{name}_hole", pos=[0, 0, 0], size=[0.005, 0.005, 0.005])
