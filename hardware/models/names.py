"""Names in a scene built on someone else's robot file never clash.

A lab's robot file may carry its own ``table`` body, a ``floor`` geom or a ``key`` light, the
names the scene adds too. MuJoCo refuses the model (``repeated name 'table' in body``), so
:func:`yield_clashing_names` renames the *robot file's* element to ``<prefix><name>`` and every
reference to it in the spec (contact excludes and pairs, equalities, actuators, sensors, camera
and light targets, geom meshes and materials, material textures). The scene's names are kept:
they are what the pipelines address (``table``, ``peg``, ``scene_camera``).
"""

from __future__ import annotations

from collections.abc import Iterable

KINDS = ("body", "geom", "site", "joint", "camera", "light", "mesh", "material", "texture")


def elements(spec) -> dict[str, list]:
    """The spec's named elements of every kind the scene may also add (handles, not names)."""
    lists = {"body": spec.bodies, "geom": spec.geoms, "site": spec.sites, "joint": spec.joints,
             "camera": spec.cameras, "light": spec.lights, "mesh": spec.meshes,
             "material": spec.materials, "texture": spec.textures}
    return {kind: [e for e in lists[kind] if e.name and not (kind == "body" and e.name == "world")]
            for kind in KINDS}


def yield_clashing_names(spec, scene: dict[str, list], prefix: str) -> dict[str, str]:
    """Rename each element of the robot's ``spec`` whose name the scene's elements (:func:`elements` of
    the scene built alone) use too; returns ``{"<kind> <old>": "<new>"}``."""
    robot = elements(spec)
    renamed: dict[str, str] = {}
    for kind in KINDS:
        taken = {e.name for e in scene[kind]}
        used = taken | {e.name for e in robot[kind]}
        for e in robot[kind]:
            if e.name in taken:
                old = e.name
                e.name = new = _free_name(prefix + old, used)
                used.add(new)
                _retarget(spec, kind, old, new)
                renamed[f"{kind} {old}"] = new
    return renamed


def _free_name(name: str, used: Iterable[str]) -> str:
    used, k, out = set(used), 1, name
    while out in used:
        k, out = k + 1, f"{name}_{k}"
    return out


def _retarget(spec, kind: str, old: str, new: str) -> None:
    """Point every reference to the ``kind`` element ``old`` at ``new``."""
    import mujoco

    obj = {"body": (mujoco.mjtObj.mjOBJ_BODY, mujoco.mjtObj.mjOBJ_XBODY), "geom": (mujoco.mjtObj.mjOBJ_GEOM,),
           "site": (mujoco.mjtObj.mjOBJ_SITE,), "joint": (mujoco.mjtObj.mjOBJ_JOINT,),
           "camera": (mujoco.mjtObj.mjOBJ_CAMERA,)}.get(kind, ())

    def swap(element, attr: str) -> None:
        if getattr(element, attr, None) == old:
            setattr(element, attr, new)

    for s in spec.sensors:
        if s.objtype in obj:
            swap(s, "objname")
        if s.reftype in obj:
            swap(s, "refname")
    for eq in spec.equalities:
        if eq.objtype in obj:
            swap(eq, "name1")
            swap(eq, "name2")
    if kind == "body":
        for ex in spec.excludes:
            swap(ex, "bodyname1")
            swap(ex, "bodyname2")
        for c in (*spec.cameras, *spec.lights):
            swap(c, "targetbody")
    elif kind == "geom":
        for p in spec.pairs:
            swap(p, "geomname1")
            swap(p, "geomname2")
    elif kind in ("site", "joint"):
        trn = ((mujoco.mjtTrn.mjTRN_SITE,) if kind == "site"
               else (mujoco.mjtTrn.mjTRN_JOINT, mujoco.mjtTrn.mjTRN_JOINTINPARENT))
        for a in spec.actuators:
            if a.trntype in trn:
                swap(a, "target")
            if kind == "site":
                swap(a, "refsite")
                swap(a, "slidersite")
    elif kind == "mesh":
        for g in spec.geoms:
            swap(g, "meshname")
    elif kind == "material":
        for e in (*spec.geoms, *spec.sites):
            swap(e, "material")
    elif kind == "texture":
        for m in spec.materials:
            m.textures = [new if t == old else t for t in m.textures]
