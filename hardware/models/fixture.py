"""The insertion fixture: a slot the peg is inserted into lying down, with a finger notch.

The slot is ``slot_m`` = [width, length] on the table surface, ``depth_m`` deep; walls
``wall_m`` thick enclose it. In the middle of each long wall a notch ``notch_m`` long is
left open so a parallel gripper can reach down around the peg (to insert it, and for
the reset to take it out again).

Config (``scene.objects.<name>``, ``kind: hardware.models.fixture:add_slot_fixture``)::

    pos: [x, y, z_table]   # centre of the slot floor (the table top)
    yaw_rad: 0.0           # slot length along the fixture's x axis
    slot_m: [0.048, 0.16]  # width (across) and length (along) of the slot
    notch_m: 0.04          # open gap in each long wall, centred
    wall_m: 0.02
    depth_m: 0.03
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from core.errors import ConfigError

KEYS = ("kind", "pos", "yaw_rad", "slot_m", "notch_m", "wall_m", "depth_m", "rgba")


def add_slot_fixture(spec, name: str, params: Mapping[str, Any], context=None) -> None:
    import mujoco

    unknown = sorted(set(params) - set(KEYS))
    if unknown:
        raise ConfigError(f"scene.objects.{name}.{unknown[0]} is not a fixture key; allowed: {list(KEYS)}")
    pos = [float(v) for v in params.get("pos", [0.42, -0.35, 0.75])]
    width, length = (float(v) for v in params.get("slot_m", [0.048, 0.16]))
    notch, wall = float(params.get("notch_m", 0.04)), float(params.get("wall_m", 0.02))
    depth, yaw = float(params.get("depth_m", 0.03)), float(params.get("yaw_rad", 0.0))
    if min(width, length, wall, depth) <= 0 or not 0 <= notch < length:
        raise ConfigError(f"scene.objects.{name}: sizes must be > 0 and notch_m < the slot's length")
    rgba = [float(v) for v in params.get("rgba", [0.35, 0.45, 0.6, 1.0])]
    body = spec.worldbody.add_body(name=name, pos=pos, quat=[np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)])
    h = depth / 2
    boxes = {  # name: (centre, half sizes) in the fixture frame (x along the slot)
        "end_px": ([length / 2 + wall / 2, 0, h], [wall / 2, width / 2 + wall, h]),
        "end_nx": ([-(length / 2 + wall / 2), 0, h], [wall / 2, width / 2 + wall, h]),
    }
    seg = (length - notch) / 2
    for side, sy in (("py", 1), ("ny", -1)):
        for part, sx in (("a", 1), ("b", -1)):
            boxes[f"{side}{part}"] = ([sx * (notch / 2 + seg / 2), sy * (width / 2 + wall / 2), h],
                                      [seg / 2, wall / 2, h])
    for key, (centre, size) in boxes.items():
        body.add_geom(name=f"{name}_{key}", type=mujoco.mjtGeom.mjGEOM_BOX, pos=centre, size=size,
                      rgba=rgba, friction=[0.6, 0.005, 0.0001])
    body.add_site(name=f"{name}_slot", pos=[0, 0, 0], size=[0.005, 0.005, 0.005])
