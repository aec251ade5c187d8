"""A form-fit grip for carrying the tagged peg still: pockets in the peg, studs on the finger pads.

MuJoCo's friction constrains a contact's relative velocity, not its place, so a peg held by
friction alone walks in the fingers under the arm's swings and creeps under its weight
(``tests/arms/perception/test_peg_physics.py``). A calibration artifact can be gripped by form
instead: here the middle of each long face of the peg carries a grid of square pockets between
ribs (``add_peg_pockets``: collision geometry only, hidden from the camera — the tagged box stays
the visual surface and carries the mass) and each finger pad four studs (``add_pad_studs``)
spaced at a multiple of the pockets' pitch. The ribs are square bars turned 45° with their ridge
in the face: a stud slides down a rib's flank into a pocket, where it bears on the four ribs round
it. The peg's weight and the swings' loads are then carried by contact normals, which hold a place:
the peg stays put in the fingers (within tens of µm, the contacts' softness). The pockets are
centred on the face's middle and a multiple of the pitch from it, so a grasp at the middle puts
every stud over a pocket's centre, half a pitch from any rib (with the ribs' crossings there
instead, a stud could perch on one: one pick in a few stood 1.4 mm wide and no swing seated it); the
studs drop in as the fingers close or at the first moves (the fingers' opening then falls to its
seated width, which ``stages.arms.calibration.peg_motions`` waits for, swinging the wrist). Both are
scene-object builders::

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
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.errors import ConfigError
from core.settings import from_config, require
from hardware.gripper import geom_box_corners


@dataclass(frozen=True)
class PegPocketsSettings:
    """``kind: hardware.models.grip:add_peg_pockets`` (module docstring)."""

    body: str = "peg"             # the tagged peg (its box geom <body>_geom)
    pitch_m: float = 0.005        # pocket pitch, along the peg and across each face
    rib_m: float = 0.002          # the ribs between pockets: square bars of this side, turned 45 deg
    depth_m: float = 0.002        # pocket floor below the face
    half_length_m: float = 0.03   # the pocketed middle of the peg: |along| < this

    def __post_init__(self):
        for name in ("pitch_m", "rib_m", "depth_m", "half_length_m"):
            require(getattr(self, name) > 0, name, getattr(self, name), "> 0")


@dataclass(frozen=True)
class PadStudsSettings:
    """``kind: hardware.models.grip:add_pad_studs`` (module docstring)."""

    fingers: tuple[str, ...] = ()     # the finger bodies that carry studs (measured: in pairs, one gripper's)
    radius_m: float = 0.0025
    protrusion_m: float = 0.002       # beyond the pad's face
    pad_y_m: float | None = 0.0       # the pad face in the finger's frame (it faces -y); null: measured
    xs_m: tuple[float, ...] = (-0.005, 0.005)   # stud centres on the pad (finger frame; measured: x from
    zs_m: tuple[float, ...] = (0.04, 0.05)      # the pad's middle, z back from the fingertip)
    friction: float = 0.1             # low, and theirs in every contact (priority 2)

    def __post_init__(self):
        for name in ("radius_m", "protrusion_m", "friction"):
            require(getattr(self, name) > 0, name, getattr(self, name), "> 0")
        require(self.protrusion_m <= self.radius_m, "protrusion_m", self.protrusion_m,
                f"not more than radius_m ({self.radius_m})")
        require(len(self.fingers) > 0, "fingers", list(self.fingers), "the finger bodies that carry studs")
        for name in ("xs_m", "zs_m"):
            values = getattr(self, name)
            require(len(values) > 0, name, list(values), "a non-empty list of numbers")
        require(self.pad_y_m is not None or len(self.fingers) % 2 == 0, "fingers", list(self.fingers),
                "pairs of finger bodies, each gripper's two in turn (pad_y_m: null measures each pad "
                "facing the other finger of its pair)")


def add_peg_pockets(spec, name: str, params: Mapping[str, Any] | PegPocketsSettings, context) -> None:
    """``kind: hardware.models.grip:add_peg_pockets`` — the peg's collision box replaced by a core,
    two end blocks and ribs standing round square pockets in the middle of its long faces."""
    import mujoco

    where = f"scene.objects.{name}"
    cfg = from_config(PegPocketsSettings, params, where)
    body_name = cfg.body
    body, peg = spec.body(body_name), spec.geom(f"{body_name}_geom")
    if body is None or peg is None:
        raise ConfigError(f"{where}.body={body_name!r}: no tagged peg of that name in the scene "
                          "(add it first: hardware.models.peg:add_tagged_peg)")
    pitch, rib, depth, half_len = cfg.pitch_m, cfg.rib_m, cfg.depth_m, cfg.half_length_m
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
            inner = _rib_lines(h_across, pitch)
            for u in [-edge, *inner[np.abs(inner) < edge - rib], edge]:   # at each edge: no open pocket
                box((a, a, half_len), (c, u, 0) if axis == 0 else (u, c, 0), turn=2)
            for z in _rib_lines(half_len, pitch):
                if abs(z) < half_len - sink:                              # ribs across
                    box((a, h_across, a) if axis == 0 else (h_across, a, a),
                        (c, 0, z) if axis == 0 else (0, c, z), turn=1 if axis == 0 else 0)


def _rib_lines(half_m: float, pitch_m: float) -> np.ndarray:
    """Rib centre lines half a pitch off the face's middle, within ±``half_m``: a pocket is centred
    on the middle and on every multiple of the pitch from it, where a centred grasp puts the studs."""
    n = np.ceil(half_m / pitch_m)
    return (np.arange(-n, n) + 0.5) * pitch_m


def add_pad_studs(spec, name: str, params: Mapping[str, Any] | PadStudsSettings, context) -> None:
    """``kind: hardware.models.grip:add_pad_studs`` — spherical studs on the finger pads."""
    import mujoco

    where = f"scene.objects.{name}"
    cfg = from_config(PadStudsSettings, params, where)
    radius, protrusion, mu = cfg.radius_m, cfg.protrusion_m, cfg.friction
    for finger in cfg.fingers:
        if spec.body(finger) is None:
            raise ConfigError(f"{where}.fingers: {finger!r} is not a body of the scene")
    # per finger: which way its pad faces along y, the face's y, the origin of xs_m and zs_m on it, and
    # which way zs_m count along z (given: from the frame's origin; measured: back from the fingertip)
    pads = ({f: (-1.0, cfg.pad_y_m, 0.0, 0.0, 1.0) for f in cfg.fingers} if cfg.pad_y_m is not None
            else measure_pads(spec, cfg.fingers, where))
    for finger, (facing, face_y, x0, z0, z_sign) in pads.items():
        body = spec.body(finger)
        y = face_y - facing * (radius - protrusion)   # the stud's centre behind the face
        for k, (x, z) in enumerate((x, z) for x in cfg.xs_m for z in cfg.zs_m):
            body.add_geom(name=f"{finger}_stud{k}", type=mujoco.mjtGeom.mjGEOM_SPHERE,
                          size=[radius, 0, 0], pos=[x0 + x, y, z0 + z_sign * z], density=0,
                          contype=1, conaffinity=1, group=3, condim=3, friction=[mu, 0.005, 0.0001],
                          priority=2, solref=[0.0001, 1], solimp=[0.95, 0.99, 0.001, 0.5, 2],
                          margin=0.0, gap=0.0)   # not the finger class's (the Franka's: 1 mm)


def measure_pads(spec, fingers: tuple[str, ...], where: str) -> dict[str, tuple[float, ...]]:
    """Each finger's pad on the compiled robot, in the finger's frame: which way along y it faces
    (toward the other finger of its pair), the face's y (the collision geoms' innermost point), the
    middle x of the collision geoms' extent and the fingertip's z (the fingers run along +z: studs
    count back from it). ``fingers`` in pairs, one gripper's two."""
    import mujoco

    model = spec.copy().compile()
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)

    def points(body: int) -> np.ndarray:   # its collision geoms' bounding-box corners, in its frame
        R, p = data.xmat[body].reshape(3, 3), data.xpos[body]
        out = [(geom_box_corners(model, data, g) - p) @ R
               for g in range(model.ngeom)
               if model.geom_bodyid[g] == body and (model.geom_contype[g] or model.geom_conaffinity[g])]
        if not out:
            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, body)
            raise ConfigError(f"{where}.fingers: body {name!r} has no collision geom to place studs on")
        return np.concatenate(out)

    pads = {}
    for pair in zip(fingers[::2], fingers[1::2], strict=True):
        ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, f) for f in pair]
        local = [points(i) for i in ids]
        middle = [data.xpos[i] + local_pts.mean(axis=0) @ data.xmat[i].reshape(3, 3).T
                  for i, local_pts in zip(ids, local, strict=True)]
        for k, (f, i) in enumerate(zip(pair, ids, strict=True)):
            toward = (middle[1 - k] - middle[k]) @ data.xmat[i].reshape(3, 3)   # in its frame
            toward /= np.linalg.norm(toward)
            if abs(toward[1]) < 0.9:
                raise ConfigError(f"{where}.fingers: the pad of {f!r} does not face the other finger along "
                                  f"its y axis (toward it: {np.round(toward, 2).tolist()} in its frame); "
                                  "give pad_y_m, xs_m and zs_m in its frame instead")
            facing, mine = float(np.sign(toward[1])), local[k]
            pads[f] = (facing, float(facing * (facing * mine[:, 1]).max()),
                       float(mine[:, 0].min() + mine[:, 0].max()) / 2, float(mine[:, 2].max()), -1.0)
    return pads


@dataclass(frozen=True)
class CoupledFingersSettings:
    """``kind: hardware.models.grip:couple_fingers`` (see :func:`couple_fingers`)."""

    joints: tuple[tuple[str, str], ...] = ()   # each gripper's two finger joints, moving as one

    def __post_init__(self):
        require(len(self.joints) > 0 and all(len(pair) == 2 for pair in self.joints), "joints",
                [list(p) for p in self.joints], "pairs of finger joints, [[joint1, joint2], ...]")


def couple_fingers(spec, name: str, params: Mapping[str, Any] | CoupledFingersSettings, context) -> None:
    """``kind: hardware.models.grip:couple_fingers`` — each pair of finger joints tied to equal
    travel by a joint-equality constraint, as a parallel gripper's mechanism ties them (the Franka
    Hand's fingers share one drive): with a servo per finger and no tie, a seated peg is centred
    only by the two servos' stiffness and shifts between the fingers as the hand tilts::

        coupled_fingers:
          kind: hardware.models.grip:couple_fingers
          joints: [[left/finger_joint1, left/finger_joint2], ...]
    """
    import mujoco

    where = f"scene.objects.{name}"
    cfg = from_config(CoupledFingersSettings, params, where)
    for k, (a, b) in enumerate(cfg.joints):
        for joint in (a, b):
            if spec.joint(joint) is None:
                raise ConfigError(f"{where}.joints: {joint!r} is not a joint of the scene")
        spec.add_equality(name=f"{name}{k}", type=mujoco.mjtEq.mjEQ_JOINT, name1=a, name2=b,
                          data=[0, 1] + [0] * 10)   # polycoef: joint1 = joint2
