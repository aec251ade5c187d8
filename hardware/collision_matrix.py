"""The allowed-collision matrix: which pairs of collision geoms a planning group need not check, and why.

Computed the way MoveIt's setup assistant builds its matrix, per *planning group* (the planned
joints): over every pair of collision geoms (``contype`` or ``conaffinity`` non-zero), the first
rule that applies disables the pair with that reason:

1. ``filtered``: MuJoCo's own filters never test it: ``contype``/``conaffinity`` incompatible,
   the same weld group, MuJoCo's parent filter on weld groups, or ``<contact><exclude>``;
2. ``adjacent``: parent and child bodies, also where the parent is welded to the world (a link on
   a fixed base). Rules 1 and 2 together are :func:`hardware.geometry.may_touch`;
3. ``rigid``: no planned joint lies on either body's path up to their common ancestor, so no
   configuration of the group changes the pair's distance (two fingers of an unplanned gripper,
   an arm's base and the table, two parts of a torso);
4. ``always``: closer than ``clearance_m`` (true distance, ``mj_geomDistance``) in every one of
   ``samples`` random configurations (planned joints uniform in their ranges, unlimited hinges in
   [-pi, pi], every other joint at ``base_qpos``; seeded);
5. ``never`` (only with ``never=True``): never closer than ``clearance_m`` over the samples.
   **Unsafe in general**: a few hundred samples miss narrow configurations (a wrist folding onto
   the base), and the planner then passes straight through that pair. A speed option only;
6. ``allowed``: the user's pairs (``allowed``: ``[a, b]`` entries, each side a geom or body name
   or an ``fnmatch`` glob over both), e.g. a grasped object and its fingers;
7. ``srdf``: a link pair an SRDF disables (``srdf``: :class:`SrdfPairs`, one per URDF part) that no
   rule above disables. Where the SRDF and rules 1-6 disagree is reported per part
   (``CollisionMatrix.srdf``, in ``collision_matrix.json``): the SRDF's pairs rules 1-6 also disable
   (by reason), those they would check, and the reverse: link pairs of that URDF rules 1-6 disable
   and the SRDF checks.

Every other pair is ``checked``. ``held_bodies`` (bodies the planner moves by other means, such as
an object carried by a gripper) count as moved by a planned joint of their own: they are ``rigid``
only with what they carry, and their pairs are not sampled (their pose while sampling would be
wrong). Rules 1-2 still apply to them: a free body is a child of the world, so it is ``adjacent``
to the world's own geoms (the table), as in :func:`hardware.geometry.may_touch`.

Results can be cached as JSON, named by a hash of the model's geometry, body tree, joints, names,
options, the MuJoCo version and every argument (:func:`default_cache_dir`).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.errors import ConfigError
from hardware.geometry import collision_geoms, excluded_body_pairs, geom_name

REASONS = ("filtered", "adjacent", "rigid", "always", "never", "allowed", "srdf")
DISTMAX_PAD_M = 1e-3
"""Distances are measured up to ``clearance_m`` plus this (farther pairs read as that)."""
_FORMAT = 2   # bump when the rules or the JSON change: old cache files are then never read
_HASHED = ("geom_type", "geom_contype", "geom_conaffinity", "geom_bodyid", "geom_dataid", "geom_size",
           "geom_pos", "geom_quat", "body_parentid", "body_weldid", "body_pos", "body_quat", "body_jntadr",
           "body_jntnum", "body_mocapid", "jnt_type", "jnt_bodyid", "jnt_qposadr", "jnt_limited",
           "jnt_range", "jnt_pos", "jnt_axis", "exclude_signature", "mesh_vert", "mesh_vertadr",
           "mesh_vertnum", "mesh_face", "mesh_faceadr", "mesh_facenum", "hfield_size", "hfield_nrow",
           "hfield_ncol", "hfield_data")


@dataclass(frozen=True)
class SrdfPairs:
    """One URDF part's SRDF pairs in the compiled model's body names: ``pairs`` (body1, body2, the
    SRDF's reason) and ``bodies``, every body of that URDF (for the reverse comparison)."""

    label: str   # e.g. the config key of the SRDF
    pairs: tuple[tuple[str, str, str], ...]
    bodies: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class CollisionMatrix:
    """``disabled``: (g1 < g2) geom ids -> reason (one of :data:`REASONS`); ``checked``: the (P, 2)
    sorted pairs still checked; ``samples``: configurations sampled for ``always``/``never``;
    ``srdf``: per SRDF, how it compares with rules 1-6 (plain JSON data; empty without one)."""

    disabled: dict[tuple[int, int], str]
    checked: np.ndarray
    samples: int
    srdf: dict | None = None

    def __eq__(self, other) -> bool:
        return (isinstance(other, CollisionMatrix) and self.disabled == other.disabled
                and self.samples == other.samples and np.array_equal(self.checked, other.checked)
                and (self.srdf or {}) == (other.srdf or {}))

    def counts(self) -> dict[str, int]:
        return {r: sum(1 for v in self.disabled.values() if v == r) for r in REASONS}

    def to_json(self, model) -> dict:
        bodies = _names(model, "body", model.nbody)
        body = [bodies[b] or f"body{b}" for b in model.geom_bodyid]
        return {"samples": self.samples, "counts": self.counts(), "checked_pairs": len(self.checked),
                "disabled": [{"geom1": geom_name(model, a), "geom2": geom_name(model, b), "body1": body[a],
                              "body2": body[b], "reason": r} for (a, b), r in sorted(self.disabled.items())],
                **({"srdf": self.srdf} if self.srdf else {})}

    @classmethod
    def from_json(cls, data: dict, model) -> CollisionMatrix:
        """Names back to ids (``ValueError`` when an entry does not fit the model)."""
        geoms = collision_geoms(model)
        ids = {geom_name(model, g): int(g) for g in geoms}
        disabled = {}
        for e in data["disabled"]:
            if e["geom1"] not in ids or e["geom2"] not in ids or e["reason"] not in REASONS:
                raise ValueError(f"collision matrix entry {e} does not fit the model")
            disabled[tuple(sorted((ids[e["geom1"]], ids[e["geom2"]])))] = e["reason"]
        checked = _all_pairs(geoms)
        checked = checked[np.array([tuple(p) not in disabled for p in checked.tolist()], bool)]
        if len(checked) != data["checked_pairs"]:
            raise ValueError(f"collision matrix lists {data['checked_pairs']} checked pairs; "
                             f"the model leaves {len(checked)}")
        return cls(disabled, checked.reshape(-1, 2), int(data["samples"]), data.get("srdf"))


def default_cache_dir() -> Path:
    """``$CHOREOGRAPH_CACHE_DIR/collision_matrix``, else ``$XDG_CACHE_HOME/choreograph/collision_matrix``
    (default ``~/.cache/choreograph/...``)."""
    if os.environ.get("CHOREOGRAPH_CACHE_DIR"):
        return Path(os.environ["CHOREOGRAPH_CACHE_DIR"]) / "collision_matrix"
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "choreograph" / "collision_matrix"


def compute_collision_matrix(model, planned_joints: Sequence[str], base_qpos: np.ndarray, clearance_m: float,
                             samples: int = 200, never: bool = False, allowed: Sequence[Sequence[str]] = (),
                             seed: int = 0, cache_dir: Path | None = None,
                             held_bodies: Sequence[str] = (),
                             srdf: Sequence[SrdfPairs] = ()) -> CollisionMatrix:
    """The matrix for the group ``planned_joints`` (the rules are in the module docstring)."""
    base_qpos = np.asarray(base_qpos, dtype=float)
    if base_qpos.shape != (model.nq,):
        raise ValueError(f"base_qpos must have shape ({model.nq},), got {base_qpos.shape}")
    if not clearance_m >= 0 or samples < 0:
        raise ValueError(f"need clearance_m >= 0 and samples >= 0, got {clearance_m}, {samples}")
    for i, e in enumerate(allowed):
        if isinstance(e, str) or not isinstance(e, Sequence) or len(e) != 2 \
                or not all(isinstance(x, str) for x in e):
            raise ConfigError(f"robot.allowed_pairs[{i}]: expected [a, b] (geom/body names or globs), "
                              f"got {e!r}")
    params = {"joints": list(planned_joints), "base_qpos": base_qpos.tolist(), "seed": int(seed),
              "clearance_m": float(clearance_m), "samples": int(samples), "never": bool(never),
              "allowed": [[a, b] for a, b in allowed], "held": list(held_bodies),
              "srdf": [[s.label, [list(p) for p in s.pairs], list(s.bodies)] for s in srdf]}
    path = Path(cache_dir) / f"{_cache_key(model, params)}.json" if cache_dir is not None else None
    if path is not None and path.is_file():
        try:
            return CollisionMatrix.from_json(json.loads(path.read_text()), model)
        except (OSError, ValueError, KeyError, TypeError):
            pass   # unreadable or stale: compute it again
    jids = [_lookup(model, "joint", model.njnt, j, "planned joint") for j in planned_joints]
    held = [_lookup(model, "body", model.nbody, b, "held body") for b in held_bodies]
    geoms = collision_geoms(model)
    pairs = _all_pairs(geoms)
    code = _static_rules(model, geoms, [int(model.jnt_bodyid[j]) for j in jids] + held)
    code = code[np.triu_indices(len(geoms), 1)]
    todo = np.flatnonzero((code == 0) & ~_below(model, held)[model.geom_bodyid[pairs]].any(axis=1))
    if samples and len(todo):
        lo, hi, adr = _joint_ranges(model, jids)
        always, far = _sample_contacts(model, pairs[todo], adr, lo, hi, base_qpos, float(clearance_m),
                                       int(samples), int(seed), bool(never))
        code[todo[always]] = 1 + REASONS.index("always")
        code[todo[far & ~always]] = 1 + REASONS.index("never")
    user = _allowed_pairs(model, geoms, params["allowed"])
    mine = np.array([tuple(p) in user for p in pairs.tolist()], bool)
    code[(code == 0) & mine] = 1 + REASONS.index("allowed")
    compared = {s.label: _apply_srdf(model, pairs, code, s) for s in srdf}
    disabled = {(a, b): REASONS[c - 1] for (a, b), c in zip(pairs.tolist(), code.tolist(), strict=True) if c}
    result = CollisionMatrix(disabled, pairs[code == 0].reshape(-1, 2), int(samples), compared or None)
    if path is not None:
        try:   # write then rename: a concurrent reader sees the old file or the whole new one
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.{id(result)}.tmp")
            tmp.write_text(json.dumps(result.to_json(model), indent=1))
            os.replace(tmp, path)
        except OSError as e:   # the cache only saves time
            warnings.warn(f"collision matrix not cached in {path.parent}: {e}", stacklevel=2)
    return result


def _static_rules(model, geoms: np.ndarray, mover_bodies: list[int]) -> np.ndarray:
    """(n, n) codes over ``geoms``: 1 + index in REASONS for rules 1-3, 0 where none applies."""
    import mujoco

    b = model.geom_bodyid[geoms]
    ct, ca = model.geom_contype[geoms], model.geom_conaffinity[geoms]
    parent, weld = model.body_parentid, model.body_weldid
    w = weld[b]
    pw = weld[parent[w]]
    filtered = (((ct[:, None] & ca[None, :]) | (ct[None, :] & ca[:, None])) == 0) | (w[:, None] == w[None, :])
    if not model.opt.disableflags & int(mujoco.mjtDisableBit.mjDSBL_FILTERPARENT):
        nz = w != 0
        filtered |= nz[:, None] & nz[None, :] & ((pw[:, None] == w[None, :]) | (w[:, None] == pw[None, :]))
    excluded = np.zeros((model.nbody, model.nbody), bool)
    for pair in excluded_body_pairs(model):
        excluded[min(pair), max(pair)] = excluded[max(pair), min(pair)] = True
    filtered |= excluded[b[:, None], b[None, :]]
    adjacent = (parent[b][:, None] == b[None, :]) | (b[:, None] == parent[b][None, :])
    # above[x, k]: mover k is on body x's chain. A mover on exactly one of the two chains lies below
    # the common ancestor and changes the pair; one on both moves them together.
    above = np.stack([_below(model, [m]) for m in mover_bodies] or [np.zeros(model.nbody, bool)], axis=1)
    rigid = ~(above[:, None, :] ^ above[None, :, :]).any(axis=-1)[b[:, None], b[None, :]]
    return np.select([filtered, adjacent, rigid], [1, 2, 3], 0).astype(np.int8)


def _below(model, roots: list[int]) -> np.ndarray:
    """(nbody,) bool: the body is one of ``roots`` or below one."""
    out = np.zeros(model.nbody, bool)
    out[list(roots)] = True
    for x in range(1, model.nbody):   # MuJoCo numbers parents before their children
        out[x] |= out[model.body_parentid[x]]
    return out


def _joint_ranges(model, jids: list[int]):
    import mujoco

    lo, hi = np.empty(len(jids)), np.empty(len(jids))
    for k, j in enumerate(jids):
        name, t = model.joint(j).name, int(model.jnt_type[j])
        if t not in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
            raise ConfigError(f"planned joint {name!r} must be a hinge or a slide to be sampled")
        if model.jnt_limited[j]:
            lo[k], hi[k] = model.jnt_range[j]
        elif t == mujoco.mjtJoint.mjJNT_HINGE:
            lo[k], hi[k] = -np.pi, np.pi
        else:
            raise ConfigError(f"planned joint {name!r} is an unlimited slide; give it a range to sample")
    return lo, hi, model.jnt_qposadr[jids]


def _sample_contacts(model, pairs, qpos_adr, lo, hi, base_qpos, clearance_m, samples, seed, never):
    """Per pair: (closer than clearance_m at every sample, never closer at any (only if ``never``)).

    Bounding spheres (``geom_rbound``; planes unbounded) settle most pairs without a distance call,
    and a pair leaves the loop once neither answer can still be yes.
    """
    import mujoco

    d = mujoco.MjData(model)
    d.qpos[:] = base_qpos
    qs = np.random.default_rng(seed).uniform(lo, hi, size=(samples, len(lo)))
    rb = np.where(model.geom_type == mujoco.mjtGeom.mjGEOM_PLANE, np.inf, model.geom_rbound)
    g1, g2 = pairs[:, 0], pairs[:, 1]
    always, far = np.ones(len(pairs), bool), np.full(len(pairs), bool(never))
    distmax = clearance_m + DISTMAX_PAD_M
    for q in qs:
        idx = np.flatnonzero(always | far)
        if not idx.size:
            break
        d.qpos[qpos_adr] = q
        mujoco.mj_kinematics(model, d)   # fills geom_xpos/geom_xmat, all that mj_geomDistance reads
        x = d.geom_xpos
        near = ~(np.linalg.norm(x[g1[idx]] - x[g2[idx]], axis=1) - rb[g1[idx]] - rb[g2[idx]] >= clearance_m)
        always[idx[~near]] = False     # (a NaN gap, plane against plane, counts as near)
        for k in idx[near].tolist():
            if mujoco.mj_geomDistance(model, d, int(g1[k]), int(g2[k]), distmax, None) < clearance_m:
                far[k] = False
            else:
                always[k] = False
    return always, far


def _apply_srdf(model, pairs: np.ndarray, code: np.ndarray, srdf: SrdfPairs) -> dict:
    """Disable (reason ``srdf``) the SRDF's link pairs rules 1-6 left checked; compare the two.

    A link pair counts as disabled when every geom pair between the two links is; links without
    collision geometry have no pairs to compare."""
    bodies = {n: b for b, n in enumerate(_names(model, "body", model.nbody)) if n}
    pb = np.sort(model.geom_bodyid[pairs], axis=1) if len(pairs) else np.zeros((0, 2), int)
    ours_before = code.copy()
    listed, also, kept, missing, bare = set(), {}, [], [], 0
    for b1, b2, why in srdf.pairs:
        if b1 not in bodies or b2 not in bodies:
            missing.append([b1, b2])
            continue
        key = tuple(sorted((bodies[b1], bodies[b2])))
        listed.add(key)
        rows = np.flatnonzero((pb[:, 0] == key[0]) & (pb[:, 1] == key[1]))
        if not len(rows):
            bare += 1
        elif (code[rows] != 0).all():
            r = REASONS[int(np.bincount(code[rows]).argmax()) - 1]
            also[r] = also.get(r, 0) + 1
        else:
            kept.append([b1, b2, why])
            code[rows[code[rows] == 0]] = 1 + REASONS.index("srdf")
    mine = np.array(sorted(bodies[b] for b in srdf.bodies if b in bodies), int)
    ours_only = []
    inside = np.isin(pb, mine).all(axis=1) & (pb[:, 0] != pb[:, 1])
    for key in sorted({tuple(p) for p in pb[inside].tolist()} - listed):
        rows = np.flatnonzero((pb[:, 0] == key[0]) & (pb[:, 1] == key[1]))
        if (ours_before[rows] != 0).all():
            r = REASONS[int(np.bincount(ours_before[rows]).argmax()) - 1]
            ours_only.append([model.body(key[0]).name, model.body(key[1]).name, r])
    return {"srdf_pairs": len(srdf.pairs), "without_geometry": bare, "not_in_model": missing,
            "also_disabled_by_us": also, "checked_by_us": len(kept), "checked_by_us_pairs": kept,
            "disabled_by_us_not_srdf": len(ours_only), "disabled_by_us_not_srdf_pairs": ours_only}


def _allowed_pairs(model, geoms: np.ndarray, allowed) -> set[tuple[int, int]]:
    gnames, bnames = _names(model, "geom", model.ngeom), _names(model, "body", model.nbody)
    out = set()
    for i, entry in enumerate(allowed):
        sides = []
        for pat in entry:
            hit_g = {g for g, n in enumerate(gnames) if n and (n == pat or fnmatch.fnmatchcase(n, pat))}
            hit_b = {b for b, n in enumerate(bnames) if n and (n == pat or fnmatch.fnmatchcase(n, pat))}
            if not hit_g and not hit_b:
                raise ConfigError(f"robot.allowed_pairs[{i}]: {pat!r} matches no geom or body; geoms: "
                                  f"{_listing([gnames[g] for g in geoms])}; bodies: {_listing(bnames)}")
            sides.append({int(g) for g in geoms if g in hit_g or model.geom_bodyid[g] in hit_b})
        out |= {(min(a, b), max(a, b)) for a in sides[0] for b in sides[1] if a != b}
    return out


def _listing(names: list[str], limit: int = 25) -> str:
    names = [n for n in names if n]
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return (", ".join(names[:limit]) + more) if names else "(none named)"


def _names(model, kind: str, count: int) -> list[str]:
    return [getattr(model, kind)(k).name for k in range(count)]


def _lookup(model, kind: str, count: int, name: str, what: str) -> int:
    names = _names(model, kind, count)
    if name not in names:
        raise ConfigError(f"{what} {name!r} is not in the model; {kind}s: {_listing(names)}")
    return names.index(name)


def _all_pairs(geoms: np.ndarray) -> np.ndarray:
    i, j = np.triu_indices(len(geoms), 1)
    return np.stack([geoms[i], geoms[j]], axis=1).reshape(-1, 2)


def _cache_key(model, params: dict) -> str:
    """sha256 over the geometry-relevant model arrays, the names, the options and ``params``."""
    import mujoco

    opt = model.opt
    opts = [int(opt.disableflags), int(opt.enableflags), int(opt.ccd_iterations), float(opt.ccd_tolerance)]
    h = hashlib.sha256(json.dumps({**params, "format": _FORMAT, "mujoco": mujoco.__version__, "opt": opts},
                                  sort_keys=True).encode())
    for name in _HASHED:
        a = np.ascontiguousarray(getattr(model, name))
        h.update(f"{name}:{a.dtype}:{a.shape}".encode() + a.tobytes())
    for kind, count in (("geom", model.ngeom), ("body", model.nbody), ("joint", model.njnt)):
        h.update("\0".join(_names(model, kind, count)).encode() + b"\1")
    return h.hexdigest()
