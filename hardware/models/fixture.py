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
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.settings import from_config, require


@dataclass(frozen=True)
class SlotFixtureSettings:
    pos: tuple[float, float, float] = (0.42, -0.35, 0.75)   # centre of the slot floor (the table top)
    yaw_rad: float = 0.0                                     # slot length along the fixture's x axis
    slot_m: tuple[float, float] = (0.048, 0.16)             # width (across) and length (along)
    notch_m: float = 0.04                                    # open gap in each long wall, centred
    wall_m: float = 0.02
    depth_m: float = 0.03
    rgba: tuple[float, float, float, float] = (0.35, 0.45, 0.6, 1.0)

    def __post_init__(self):
        width, length = self.slot_m
        require(min(width, length, self.wall_m, self.depth_m) > 0 and 0 <= self.notch_m < length, "slot_m",
                {"slot_m": list(self.slot_m), "wall_m": self.wall_m, "depth_m": self.depth_m,
                 "notch_m": self.notch_m}, "sizes > 0 and notch_m < the slot's length")


def add_slot_fixture(spec, name: str, params: Mapping[str, Any] | SlotFixtureSettings, context=None) -> None:
    import mujoco

    if isinstance(params, Mapping):
        params = {k: v for k, v in params.items() if k != "kind"}
    cfg = from_config(SlotFixtureSettings, params, f"scene.objects.{name}")
    pos, rgba, yaw = list(cfg.pos), list(cfg.rgba), cfg.yaw_rad
    (width, length), notch, wall, depth = cfg.slot_m, cfg.notch_m, cfg.wall_m, cfg.depth_m
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
