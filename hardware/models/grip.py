"""A form-fit grip for carrying the tagged peg still: pockets in the peg, studs on the finger pads.

MuJoCo's friction constrains a contact's relative velocity, not its place, so a peg held by
friction alone walks in the fingers under the arm's swings and creeps under its weight
(``tests/arms/perception/test_peg_physics.py``). A calibration artifact can be gripped by form
instead: here the middle of each long face of the peg carries a grid of square pockets between
ribs (``add_peg_pockets``: collision geometry only, hidden from the camera — the tagged box stays
the visual surface and carries the mass) and each finger pad four studs (``add_pad_studs``)
spaced at a multiple of the pockets' pitch. The ribs are square bars turned 45° with their ridge
in the face, so no stud can rest on one: a stud slides down a rib's flank into a pocket, where it
bears on the four ribs round it. The peg's weight and the swings' loads are then carried by
contact normals, which hold a place: the peg stays put in the fingers (within tens of µm, the
contacts' softness). Where the fingers land on the peg does not matter — there is a pocket under
every stud wherever they close; the studs drop in as the fingers close or at the first moves
(the fingers' opening then falls to its seated width, which ``stages.arms.calibration.peg``
waits for, swinging the wrist). Both are scene-object builders::

    grip_pockets:
      kind: hardware.models.grip:add_peg_pockets
      body: peg               # the tagged peg (its box geom <body>_geom)
      pitch_m: 0.005          # pocket pitch, along the peg and across each face
      rib_m: 0.002            # the ribs between pockets: square bars of this side, turned 45 deg
      depth_m: 0.002          # pocket floor below the face
      half_length_m: 0.03     # the pocketed middle of the peg: |along| < this
    pad_studs:
      kind: hardware.models.grip:add_pad_studs
      fingers: [left_finger1, left_finger2, right_finger1, right_finger2]
      radius_m: 0.0025
      protrusion_m: 0.002     # beyond the pad's face
      pad_y_m: 0.0            # the pad face in the finger's frame (it faces -y)
      xs_m: [-0.005, 0.005]   # stud centres on the pad (finger frame): a multiple of the pitch apart
      zs_m: [0.04, 0.05]
      friction: 0.1           # low, and theirs in every contact (priority 2): the studs slide down the
                              # ribs into the pockets; the pockets hold, not friction
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np

from core.errors import ConfigError
from hardware.models.peg import _check, _vec

POCKET_KEYS = ("body", "pitch_m", "rib_m", "depth_m", "half_length_m")
STUD_KEYS = ("fingers", "radius_m", "protrusion_m", "pad_y_m", "xs_m", "zs_m", "friction")


def _positive(cfg: Mapping[str, Any], key: str, where: str, default: float) -> float:
    value = cfg.get(key, default)
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}.{key} must be a number, got {value!r}") from None
    if not value > 0:
        raise ConfigError(f"{where}.{key} must be > 0, got {value}")
    return value


def _numbers(x: Any, where: str) -> list[float]:
    if isinstance(x, str | bytes) or not hasattr(x, "__len__") or not len(x):
        raise ConfigError(f"{where}: expected a list of numbers, got {x!r}")
    return _vec(x, len(x), where)


def add_peg_pockets(spec, name: str, params: Mapping[str, Any], context) -> None:
    """``kind: hardware.models.grip:add_peg_pockets`` — the peg's collision box replaced by a core,
    two end blocks and ribs standing round square pockets in the middle of its long faces."""
    import mujoco

    where = f"scene.objects.{name}"
    cfg = dict(params)
    _check(cfg, POCKET_KEYS, where)
    body_name = str(cfg.get("body", "peg"))
    body, peg = spec.body(body_name), spec.geom(f"{body_name}_geom")
    if body is None or peg is None:
        raise ConfigError(f"{where}.body={body_name!r}: no tagged peg of that name in the scene "
                          "(add it first: hardware.models.peg:add_tagged_peg)")
    pitch, rib = _positive(cfg, "pitch_m", where, 0.005), _positive(cfg, "rib_m", where, 0.002)
    depth, half_len = _positive(cfg, "depth_m", where, 0.002), _positive(cfg, "half_length_m", where, 0.03)
    hx, hy, hz = (float(v) for v in peg.size)
    if rib >= pitch or not rib / np.sqrt(2) < depth < min(hx, hy) / 2 or half_len >= hz:
        raise ConfigError(f"{where}: need rib_m < pitch_m, rib_m/sqrt(2) < depth_m < a quarter of the peg's "
                          f"width and half_length_m < its half-length {hz}; got rib {rib}, pitch {pitch}, "
                          f"depth {depth}, half_length {half_len}")
    peg.contype, peg.conaffinity = 0, 0          # the tagged box: the visual surface and the mass
    friction, condim = list(peg.friction), int(peg.condim)
    count = itertools.count()

    def box(half, pos, turn=None):
        quat = [1.0, 0.0, 0.0, 0.0]
        if turn is not None:                     # 45 deg about this axis: a square bar, ridge up
            quat = [np.cos(np.pi / 8), 0.0, 0.0, 0.0]
            quat[1 + turn] = np.sin(np.pi / 8)
        body.add_geom(name=f"{body_name}_grip{next(count)}", type=mujoco.mjtGeom.mjGEOM_BOX,
                      size=list(half), pos=list(pos), quat=quat, density=0, contype=1, conaffinity=1,
                      group=3, friction=friction, condim=condim)

    box((hx - depth, hy - depth, half_len), (0, 0, 0))                   # the core under the pockets
    end = (hz - half_len) / 2
    for s in (1, -1):
        box((hx, hy, end), (0, 0, s * (half_len + end)))                  # the plain ends
    a = rib / 2                                  # the ribs: square bars of side rib_m turned 45 deg,
    sink = rib / np.sqrt(2)                      # their ridge in the face, so nothing rests on them
    for axis, (h_face, h_across) in enumerate(((hx, hy), (hy, hx))):     # faces normal to x, then y
        for s in (1, -1):
            c = s * (h_face - sink)
            edge = h_across - sink                                        # ribs along the peg, one
            inner = np.arange(-np.floor(h_across / pitch), np.floor(h_across / pitch) + 1) * pitch
            for u in [-edge, *inner[np.abs(inner) < edge - rib], edge]:   # at each edge: no open pocket
                box((a, a, half_len), (c, u, 0) if axis == 0 else (u, c, 0), turn=2)
            for z in np.arange(-np.floor(half_len / pitch), np.floor(half_len / pitch) + 1) * pitch:
                if abs(z) < half_len - sink:                              # ribs across
                    box((a, h_across, a) if axis == 0 else (h_across, a, a),
                        (c, 0, z) if axis == 0 else (0, c, z), turn=1 if axis == 0 else 0)


def add_pad_studs(spec, name: str, params: Mapping[str, Any], context) -> None:
    """``kind: hardware.models.grip:add_pad_studs`` — spherical studs on the finger pads."""
    import mujoco

    where = f"scene.objects.{name}"
    cfg = dict(params)
    _check(cfg, STUD_KEYS, where)
    radius = _positive(cfg, "radius_m", where, 0.0025)
    protrusion = _positive(cfg, "protrusion_m", where, 0.002)
    if protrusion > radius:
        raise ConfigError(f"{where}: protrusion_m {protrusion} must not exceed radius_m {radius}")
    mu = _positive(cfg, "friction", where, 0.1)
    pad_y = float(cfg.get("pad_y_m", 0.0))
    xs = _numbers(cfg.get("xs_m", [-0.005, 0.005]), f"{where}.xs_m")
    zs = _numbers(cfg.get("zs_m", [0.04, 0.05]), f"{where}.zs_m")
    fingers = list(cfg.get("fingers") or [])
    if not fingers:
        raise ConfigError(f"{where}.fingers must list the finger bodies that carry studs")
    for finger in fingers:
        body = spec.body(str(finger))
        if body is None:
            raise ConfigError(f"{where}.fingers: {finger!r} is not a body of the scene")
        for k, (x, z) in enumerate((x, z) for x in xs for z in zs):
            body.add_geom(name=f"{finger}_stud{k}", type=mujoco.mjtGeom.mjGEOM_SPHERE,
                          size=[radius, 0, 0], pos=[x, pad_y + radius - protrusion, z], density=0,
                          contype=1, conaffinity=1, group=3, condim=3, friction=[mu, 0.005, 0.0001],
                          priority=2, solref=[0.0001, 1], solimp=[0.95, 0.99, 0.001, 0.5, 2])
