"""A compiled MjModel's geometry for a recording: every geom as a primitive or a mesh in its body's
frame, and the bodies' world poses over a sequence of joint configurations.

Entity layout (under a ``root`` such as ``world/scene`` or ``world/planned``)::

    <root>/<body>                        the body's pose in the world (static, or over ``time``)
    <root>/<body>/visual/<geom>          its visual geoms   (contype = conaffinity = 0)
    <root>/<body>/collision/<geom>       its collision geoms (what clearance is measured between)

Each geom entity carries its pose in the body frame (static) and its shape.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from core.recording import Mesh, Primitive, Recorder, Shape

# mjtGeom: plane, hfield, sphere, capsule, ellipsoid, cylinder, box, mesh
_PRIMITIVES = {2: "sphere", 3: "capsule", 4: "ellipsoid", 5: "cylinder", 6: "box"}
_PLANE, _MESH = 0, 7
PLANE_HALF_SIZE_M = 1.5   # an infinite plane (size 0) is drawn this big


@dataclass(frozen=True, eq=False)
class GeomShape:
    geom_id: int
    name: str
    body_id: int
    collision: bool
    pos_m: np.ndarray         # in the body frame
    quat_wxyz: np.ndarray
    shape: Shape


def entity_part(name: str) -> str:
    """A MuJoCo name as one entity path part (letters, digits, ``_-.`` kept)."""
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name) or "_"


def _name(model, kind, i: int, prefix: str) -> str:
    import mujoco

    return mujoco.mj_id2name(model, kind, i) or f"{prefix}{i}"


def body_name(model, body_id: int) -> str:
    import mujoco

    return entity_part(_name(model, mujoco.mjtObj.mjOBJ_BODY, body_id, "body"))


COLLISION_ALPHA = 0.35   # collision geoms of a body that also has visual ones: drawn see-through


def _color(model, g: int, see_through: bool) -> tuple[float, ...]:
    mat = int(model.geom_matid[g])
    rgba = model.mat_rgba[mat] if mat >= 0 else model.geom_rgba[g]
    r, gr, b, a = (round(float(x), 4) for x in rgba)
    return (r, gr, b, min(a, COLLISION_ALPHA)) if see_through else (r, gr, b, a)


def _is_collision(model, g: int) -> bool:
    return bool(model.geom_contype[g] or model.geom_conaffinity[g])


def _mesh(model, g: int, color) -> Mesh:
    m = int(model.geom_dataid[g])
    v0, nv = int(model.mesh_vertadr[m]), int(model.mesh_vertnum[m])
    f0, nf = int(model.mesh_faceadr[m]), int(model.mesh_facenum[m])
    return Mesh(np.array(model.mesh_vert[v0:v0 + nv]), np.array(model.mesh_face[f0:f0 + nf]), None, color)


def geom_shapes(model, geoms: Iterable[int] | None = None) -> list[GeomShape]:
    """The shapes of ``geoms`` (default all) that can be drawn (height fields and SDFs are skipped)."""
    import mujoco

    out = []
    with_visuals = {int(model.geom_bodyid[g]) for g in range(model.ngeom) if not _is_collision(model, g)}
    for g in range(model.ngeom) if geoms is None else geoms:
        kind = int(model.geom_type[g])
        collision = _is_collision(model, g)
        color = _color(model, g, collision and int(model.geom_bodyid[g]) in with_visuals)
        size = tuple(float(x) for x in model.geom_size[g])
        if kind in _PRIMITIVES:
            n = {"sphere": 1, "capsule": 2, "cylinder": 2}.get(_PRIMITIVES[kind], 3)
            shape: Shape = Primitive(_PRIMITIVES[kind], size[:n], color)
        elif kind == _PLANE:
            half = [s if s > 0 else PLANE_HALF_SIZE_M for s in size[:2]]
            shape = Primitive("box", (half[0], half[1], 0.0005), color)
        elif kind == _MESH:
            shape = _mesh(model, g, color)
        else:
            continue
        out.append(GeomShape(g, entity_part(_name(model, mujoco.mjtObj.mjOBJ_GEOM, g, "geom")),
                             int(model.geom_bodyid[g]), collision, np.array(model.geom_pos[g]),
                             np.array(model.geom_quat[g]), shape))
    return out


def moving_bodies(model) -> list[int]:
    """Bodies not welded to the world (they move with some joint)."""
    return [b for b in range(1, model.nbody) if int(model.body_weldid[b]) != 0]


def static_bodies(model) -> list[int]:
    """Bodies welded to the world (the scene; the world body itself is left out)."""
    return [b for b in range(1, model.nbody) if int(model.body_weldid[b]) == 0]


def body_poses(model, qpos_rows: np.ndarray, bodies: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """World positions (T×B×3) and quaternions (T×B×4, w first) of ``bodies`` at each full qpos row."""
    import mujoco

    data = mujoco.MjData(model)
    rows = np.asarray(qpos_rows, dtype=float).reshape(-1, model.nq)
    idx = np.asarray(bodies, dtype=int)
    pos = np.empty((len(rows), len(idx), 3))
    quat = np.empty((len(rows), len(idx), 4))
    for t, q in enumerate(rows):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        pos[t], quat[t] = data.xpos[idx], data.xquat[idx]
    return pos, quat


def record_geometry(recorder: Recorder, model, root: str, bodies: Sequence[int], *,
                    collision: bool = True, visual: bool = True) -> list[str]:
    """Log the geoms of ``bodies`` once (static) under ``root``; returns the body entity paths."""
    if not recorder.enabled:
        return []
    wanted = set(bodies)
    shapes = [s for s in geom_shapes(model, (g for g in range(model.ngeom)
                                              if int(model.geom_bodyid[g]) in wanted))
              if (s.collision and collision) or (not s.collision and visual)]
    for s in shapes:
        entity = f"{root}/{body_name(model, s.body_id)}/{'collision' if s.collision else 'visual'}/{s.name}"
        recorder.transform(entity, s.pos_m, s.quat_wxyz, static=True)
        recorder.shape(entity, s.shape, static=True)
    return [f"{root}/{body_name(model, b)}" for b in bodies]


def record_body_poses(recorder: Recorder, model, root: str, times_s: np.ndarray, qpos_rows: np.ndarray,
                      bodies: Sequence[int]) -> None:
    """Each body's world pose at each of ``times_s`` (one columnar call per body)."""
    if not recorder.enabled or not len(bodies):
        return
    pos, quat = body_poses(model, qpos_rows, bodies)
    for k, b in enumerate(bodies):
        recorder.transforms(f"{root}/{body_name(model, b)}", times_s, pos[:, k], quat[:, k])


def record_static_poses(recorder: Recorder, model, root: str, qpos: np.ndarray,
                        bodies: Sequence[int]) -> None:
    """Each body's world pose at one configuration, for all time."""
    if not recorder.enabled or not len(bodies):
        return
    pos, quat = body_poses(model, qpos, bodies)
    for k, b in enumerate(bodies):
        recorder.transform(f"{root}/{body_name(model, b)}", pos[0, k], quat[0, k], static=True)
