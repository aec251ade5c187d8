"""A robot's joints in its compiled model: names resolved, arm chains checked, the others held.

* :func:`lookup` resolves a config name (joint, site, actuator, keyframe) to its id, or raises a
  :class:`~core.errors.ConfigError` listing the names the model has.
* :func:`check_chain`: an arm's joints, in config order, are one kinematic chain (base to gripper).
* :func:`held_joints`: where the joints outside every arm stay (fingers, a torso lift, a head, a
  mobile base): ``robot.fixed_joints``, else ``robot.keyframe``, else the middle of their range
  where ``qpos0`` is outside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.errors import ConfigError


def object_names(model, objtype, count: int) -> list[str]:
    """The names of the model's ``count`` objects of ``objtype`` (``<unnamed i>`` where none)."""
    import mujoco

    return [mujoco.mj_id2name(model, objtype, i) or f"<unnamed {i}>" for i in range(count)]


def lookup(model, objtype, name: str, count: int, what: str, key: str, where: str) -> int:
    """The id of the ``what`` called ``name`` (config key ``key``) in ``where`` (the robot file)."""
    import mujoco

    if not isinstance(name, str):
        raise ConfigError(f"{key}: expected a {what} name (string), got {name!r}")
    i = mujoco.mj_name2id(model, objtype, name)
    if i < 0:
        real = [n for n in object_names(model, objtype, count) if not n.startswith("<unnamed")]
        raise ConfigError(f"{key}: {what} {name!r} is not in {where}; {what}s in the model: "
                          f"{', '.join(real) if real else '(none)'}")
    return int(i)


def check_chain(model, joints: Sequence[str], joint_ids: Sequence[int], key: str) -> None:
    """An arm's joints, in order, must be one kinematic chain: each joint's body at or below the last's."""
    def ancestors(body: int) -> set[int]:
        out = {body}
        while body:
            body = int(model.body_parentid[body])
            out.add(body)
        return out

    for k in range(1, len(joint_ids)):
        j0, j1, i0, i1 = joints[k - 1], joints[k], joint_ids[k - 1], joint_ids[k]
        if int(model.jnt_bodyid[i0]) not in ancestors(int(model.jnt_bodyid[i1])):
            raise ConfigError(f"{key}.joints are not one kinematic chain: {j1!r} is not below {j0!r} "
                              "(list an arm's joints from its base to its gripper)")


def held_joints(model, fixed: Mapping[str, float], keyframe: str | None, arm_joints: Mapping[str, str],
                where: str) -> tuple[tuple[int, float], ...]:
    """``(qpos address, value)`` of every hinge or slide joint outside the arms that is held.

    ``fixed`` (``robot.fixed_joints``) first; every other joint outside ``arm_joints`` (joint ->
    arm) at ``keyframe`` (``robot.keyframe``) when given, else at the middle of its range where
    ``qpos0`` is outside it (elsewhere it stays at ``qpos0`` and is not listed).
    """
    import mujoco

    key_q = None
    if keyframe is not None:
        k = lookup(model, mujoco.mjtObj.mjOBJ_KEY, keyframe, model.nkey, "keyframe", "robot.keyframe", where)
        key_q = model.key_qpos[k]
    hinge, slide = int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)
    held: dict[int, float] = {}
    for name, value in fixed.items():
        jid = lookup(model, mujoco.mjtObj.mjOBJ_JOINT, str(name), model.njnt, "joint",
                     "robot.fixed_joints", where)
        if name in arm_joints:
            raise ConfigError(f"robot.fixed_joints.{name}: the joint belongs to arm {arm_joints[name]!r}; "
                              "fixed joints are the ones outside every arm")
        if int(model.jnt_type[jid]) not in (hinge, slide):
            raise ConfigError(f"robot.fixed_joints.{name}: only hinge or slide joints can be held")
        v = float(value)
        if model.jnt_limited[jid] and not model.jnt_range[jid, 0] <= v <= model.jnt_range[jid, 1]:
            raise ConfigError(f"robot.fixed_joints.{name}={v} is outside its range "
                              f"{model.jnt_range[jid].tolist()}")
        held[int(model.jnt_qposadr[jid])] = v
    for jid in range(model.njnt):
        adr = int(model.jnt_qposadr[jid])
        jname = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, jid)
        if adr in held or jname in arm_joints or int(model.jnt_type[jid]) not in (hinge, slide):
            continue
        if key_q is not None:
            held[adr] = float(key_q[adr])
        elif model.jnt_limited[jid] and not (model.jnt_range[jid, 0] <= model.qpos0[adr]
                                             <= model.jnt_range[jid, 1]):
            held[adr] = float(model.jnt_range[jid].mean())
    return tuple(sorted(held.items()))
