"""A parallel-jaw gripper as grasping sees it: its two fingers, their pads, its axes and its
openings, described per arm in the robot config and measured on the compiled model.

``robot.arms.<arm>.gripper`` names the actuators (always) and may name the rest; what the robot
file holds is derived from it:

- **finger joints**: the joints the actuators move — directly, through a tendon, or coupled to
  those by an equality constraint (``finger_joints`` overrides);
- **fingers and pads**: the bodies of the finger joints (and below), grouped by finger joint; the
  pads are their collision geoms (``pads`` overrides with geom names);
- **openings**: the distance between the two fingers' pads with the actuators at ``open`` and at
  ``closed``, measured by running the physics with the arm held still (``opening_m: [closed, open]``
  in the config is checked against that, within ``OPENING_TOLERANCE_M``);
- **axes** (config, in the ee site's frame): ``closing_axis`` (default y), ``approach_axis``
  (default z), and ``grasp_depth_m``, how far below a grasped object's top face the ee site goes;
- **fingertip reach**: how far the pads reach past the ee site along the approach axis, measured on
  the model at the open opening; a grasp never takes the site so deep that the tips come nearer the
  support than a margin (:meth:`ParallelGripper.depth_for`).

A gripper the grasp code cannot use — three fingers (the Jaco hand), fingers that do not move
apart, a pad name that is not in the model — is a :class:`~core.errors.ConfigError` naming the key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

from core.errors import ConfigError

OPENING_TOLERANCE_M = 0.002   # a configured opening may differ this much from the measured one
SETTLE_S = 1.0                # simulated time the fingers get at most to reach a control value
SETTLED_RAD_S = 1e-4          # ... they have when no finger joint moves faster than this (rad/s, m/s)


@dataclass(frozen=True)
class ParallelGripper:
    arm: str
    finger_joints: tuple[str, ...]
    finger_qpos: tuple[int, ...]                  # qpos addresses of the finger joints
    pads: tuple[tuple[int, ...], tuple[int, ...]]  # collision geom ids of each finger
    closing_axis: tuple[float, float, float]      # unit, in the ee site's frame
    approach_axis: tuple[float, float, float]     # unit, in the ee site's frame
    grasp_depth_m: float
    opening_open_m: float                         # pad to pad, measured with the actuators at open
    opening_closed_m: float                       # likewise at closed (<= 0: the pads touch)
    tip_past_site_m: float = 0.0                  # the pads' farthest point past the site, along approach
    joints_past_pads_m: float = 0.0               # the finger joints' sum minus the pads' distance

    def opening_m(self, qpos: np.ndarray) -> float:
        """Pad to pad (m) at ``qpos``, from the finger joints (slide fingers: their sum less a constant
        of the geometry, :func:`joints_past_pads`)."""
        return float(sum(qpos[i] for i in self.finger_qpos)) - self.joints_past_pads_m

    def depth_for(self, height_m: float, margin_m: float = 0.008) -> float:
        """How far below the top face of an object ``height_m`` tall the site goes: ``grasp_depth_m``,
        or less where the fingertips would come within ``margin_m`` of the support it stands on."""
        return min(self.grasp_depth_m, height_m - self.tip_past_site_m - margin_m)

    def check_fits(self, width_m: float, key: str, margin_m: float = 0.005) -> None:
        """ConfigError unless an object ``width_m`` wide fits between the open pads with ``margin_m``
        to spare on each side, and the closed pads would squeeze it."""
        wide = f"{key}: the object is {width_m * 1000:.1f} mm wide; the gripper of arm {self.arm!r}"
        if width_m + 2 * margin_m > self.opening_open_m:
            raise ConfigError(f"{wide} opens to {self.opening_open_m * 1000:.1f} mm (measured), which "
                              f"leaves less than {margin_m * 1000:.0f} mm on each side: allowed: width <= "
                              f"{(self.opening_open_m - 2 * margin_m) * 1000:.1f} mm")
        if width_m <= self.opening_closed_m:
            raise ConfigError(f"{wide} closes only to {self.opening_closed_m * 1000:.1f} mm: it would not "
                              "hold it")

    @property
    def site_axes(self) -> np.ndarray:
        """3×3, columns (closing × approach, closing, approach) in the ee site's frame (the identity
        for the default axes: closing y, approach z)."""
        c, a = np.asarray(self.closing_axis), np.asarray(self.approach_axis)
        return np.column_stack([np.cross(c, a), c, a])


def _unit(v: Sequence[float], key: str) -> np.ndarray:
    a = np.asarray(v, float)
    if a.shape != (3,) or not np.all(np.isfinite(a)) or np.linalg.norm(a) < 1e-9:
        raise ConfigError(f"{key}={list(v)}: allowed: a nonzero 3-vector in the ee site's frame")
    return a / np.linalg.norm(a)


def _moved_joints(model, actuator: int) -> set[int]:
    """The joints actuator ``actuator`` moves: its joint, or its (fixed) tendon's joints."""
    trn, obj = int(model.actuator_trntype[actuator]), int(model.actuator_trnid[actuator, 0])
    if trn == mujoco.mjtTrn.mjTRN_JOINT:
        return {obj}
    if trn == mujoco.mjtTrn.mjTRN_TENDON:
        start, num = int(model.tendon_adr[obj]), int(model.tendon_num[obj])
        return {int(model.wrap_objid[w]) for w in range(start, start + num)
                if model.wrap_type[w] == mujoco.mjtWrap.mjWRAP_JOINT}
    return set()


def _coupled(model, joints: set[int]) -> set[int]:
    """``joints`` and every joint an active joint-equality constraint ties to them."""
    out = set(joints)
    for e in range(model.neq):
        if model.eq_type[e] == mujoco.mjtEq.mjEQ_JOINT and model.eq_active0[e]:
            a, b = int(model.eq_obj1id[e]), int(model.eq_obj2id[e])
            if a in out and b >= 0:
                out.add(b)
            if b in out:
                out.add(a)
    return out


def _subtree(model, root: int) -> list[int]:
    return [b for b in range(model.nbody) if _below(model, b, root)]


def _below(model, body: int, root: int) -> bool:
    while body > 0:
        if body == root:
            return True
        body = int(model.body_parentid[body])
    return root == 0


def _collision_geoms(model, bodies: Sequence[int]) -> tuple[int, ...]:
    return tuple(g for g in range(model.ngeom) if int(model.geom_bodyid[g]) in bodies
                 and (model.geom_contype[g] or model.geom_conaffinity[g]))


def _name(model, objtype, i: int) -> str:
    return mujoco.mj_id2name(model, objtype, i) or f"<unnamed {i}>"


def describe_gripper(model, arm, qpos: np.ndarray, key: str) -> ParallelGripper:
    """The parallel-jaw gripper of ``arm`` (a :class:`hardware.robot.ArmSpec`) at ``qpos``."""
    g = arm.gripper
    if g is None:
        raise ConfigError(f"{key}: arm {arm.name!r} has no gripper section; grasping needs one, e.g. "
                          "gripper: {actuators: [<name>], open: 0.04, closed: 0.0}")
    settings = g.settings
    J = mujoco.mjtObj.mjOBJ_JOINT
    if settings.finger_joints:
        ids = []
        for j in settings.finger_joints:
            i = mujoco.mj_name2id(model, J, j)
            if i < 0:
                raise ConfigError(f"{key}.finger_joints: joint {j!r} is not in the robot file")
            ids.append(i)
        joints = set(ids)
    else:
        joints = _coupled(model, set().union(*(_moved_joints(model, a) for a in g.actuator_ids)))
    joints -= set(arm.joint_ids)
    # one finger per joint body that is not below another finger joint's body
    bodies = {int(model.jnt_bodyid[j]) for j in joints}
    fingers = sorted(b for b in bodies if not any(o != b and _below(model, b, o) for o in bodies))
    names = sorted(_name(model, J, j) for j in joints)
    if len(fingers) != 2:
        raise ConfigError(f"{key}: grasping needs a parallel-jaw gripper (two fingers); the actuators of arm "
                          f"{arm.name!r}, {list(g.actuators)}, move {len(fingers)} finger bod"
                          f"{'y' if len(fingers) == 1 else 'ies'} (joints {names})"
                          + ("; name them with finger_joints" if not fingers else ""))
    if settings.pads:
        pad_ids = []
        for p in settings.pads:
            i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, p)
            if i < 0:
                raise ConfigError(f"{key}.pads: geom {p!r} is not in the robot file")
            pad_ids.append(i)
        pads = tuple(tuple(i for i in pad_ids if _below(model, int(model.geom_bodyid[i]), f))
                     for f in fingers)
    else:
        pads = tuple(_collision_geoms(model, _subtree(model, f)) for f in fingers)
    if not all(pads):
        bodies_named = [_name(model, mujoco.mjtObj.mjOBJ_BODY, f) for f in fingers]
        raise ConfigError(f"{key}: finger bodies {bodies_named} need a collision geom each (or pads: "
                          "[geom names], one on each finger)")
    closing, approach = _unit(settings.closing_axis, f"{key}.closing_axis"), _unit(
        settings.approach_axis, f"{key}.approach_axis")
    if abs(closing @ approach) > 1e-6:
        raise ConfigError(f"{key}: closing_axis {list(settings.closing_axis)} and approach_axis "
                          f"{list(settings.approach_axis)} must be perpendicular")
    finger_ids = [mujoco.mj_name2id(model, J, n) for n in names]
    dofs = [int(model.jnt_dofadr[i]) for i in finger_ids]
    gripper = ParallelGripper(
        arm.name, tuple(names),
        tuple(int(model.jnt_qposadr[i]) for i in finger_ids), pads,
        tuple(closing), tuple(approach), float(settings.grasp_depth_m),
        measure_opening(model, qpos, g.actuator_ids, g.open, pads, dofs),
        measure_opening(model, qpos, g.actuator_ids, g.closed, pads, dofs),
        tip_past_site(model, qpos, arm.ee_site_id, approach, [i for finger in pads for i in finger]),
        joints_past_pads(model, qpos, finger_ids, pads))
    if not np.isfinite([gripper.opening_open_m, gripper.opening_closed_m]).all():
        raise ConfigError(f"{key}: the fingers' physics diverged while measuring the openings (their "
                          "actuators' gains against the fingers' masses and the model's timestep)")
    if gripper.opening_open_m <= gripper.opening_closed_m + 1e-3:
        raise ConfigError(f"{key}: the fingers do not open: {gripper.opening_closed_m * 1000:.1f} mm apart "
                          f"at closed={g.closed}, {gripper.opening_open_m * 1000:.1f} mm at open={g.open}")
    if settings.opening_m is not None:
        for label, want, got in zip(("closed", "open"), settings.opening_m,
                                    (gripper.opening_closed_m, gripper.opening_open_m), strict=True):
            if abs(want - got) > OPENING_TOLERANCE_M:
                raise ConfigError(f"{key}.opening_m: the {label} opening is {want * 1000:.1f} mm in the "
                                  f"config but {got * 1000:.1f} mm measured on the model (pad to pad); "
                                  f"allowed: within {OPENING_TOLERANCE_M * 1000:.0f} mm of it, or leave it "
                                  "out")
    return gripper


def measure_opening(model, qpos: np.ndarray, actuators: Sequence[int], ctrl: float,
                    pads: tuple[tuple[int, ...], tuple[int, ...]], finger_dofs: Sequence[int]) -> float:
    """Pad-to-pad distance (m) once the gripper's actuators holding ``ctrl`` have brought the
    fingers (``finger_dofs``) to rest, within ``SETTLE_S``; every other joint actuator holds its
    joint where it is (real physics: any transmission)."""
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_forward(model, data)
    for a in range(model.nu):
        if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT:
            data.ctrl[a] = data.qpos[model.jnt_qposadr[model.actuator_trnid[a, 0]]]
    data.ctrl[list(actuators)] = ctrl
    for k in range(int(round(SETTLE_S / model.opt.timestep))):
        mujoco.mj_step(model, data)
        if k >= 10 and np.abs(data.qvel[list(finger_dofs)]).max() < SETTLED_RAD_S:
            break
    mujoco.mj_forward(model, data)
    return pad_distance(model, data, pads)


def pad_distance(model, data, pads: tuple[tuple[int, ...], tuple[int, ...]]) -> float:
    """The smallest true distance between the two fingers' pads (m) in ``data``'s state."""
    fromto = np.zeros(6)
    return float(min(mujoco.mj_geomDistance(model, data, a, b, 0.5, fromto)
                     for a in pads[0] for b in pads[1]))


def joints_past_pads(model, qpos: np.ndarray, finger_joints: Sequence[int],
                     pads: tuple[tuple[int, ...], tuple[int, ...]]) -> float:
    """The finger joints' sum minus the pad-to-pad distance, with the fingers wide open (the upper
    end of each finger joint's range): 0 where the joints measure the opening itself; studs on the
    pads or pads set back from the joints' zero make it differ."""
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    adr = [int(model.jnt_qposadr[j]) for j in finger_joints]
    for j, a in zip(finger_joints, adr, strict=True):
        if model.jnt_limited[j]:
            data.qpos[a] = model.jnt_range[j, 1]
    mujoco.mj_kinematics(model, data)
    return float(data.qpos[adr].sum() - pad_distance(model, data, pads))


def tip_past_site(model, qpos: np.ndarray, site: int, approach: np.ndarray, geoms: Sequence[int]) -> float:
    """How far the ``geoms`` reach past the ``site`` along its ``approach`` axis (m; their bounding
    boxes' corners, at ``qpos``)."""
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_kinematics(model, data)
    axis = data.site_xmat[site].reshape(3, 3) @ approach
    return max(float(((geom_box_corners(model, data, g) - data.site_xpos[site]) @ axis).max()) for g in geoms)


_CORNERS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)


def geom_box_corners(model, data, geom: int) -> np.ndarray:
    """The 8 corners of ``geom``'s bounding box in the world (8×3), in ``data``'s state."""
    center, half = model.geom_aabb[geom, :3], model.geom_aabb[geom, 3:]
    return data.geom_xpos[geom] + (center + _CORNERS * half) @ data.geom_xmat[geom].reshape(3, 3).T


def parallel_grippers(model, robot, qpos: np.ndarray) -> dict[str, ParallelGripper]:
    """Every arm's gripper of ``robot`` (a :class:`hardware.robot.RobotSpec`), described and measured;
    ConfigError when no arm has one or one the grasp code cannot use."""
    hands = {a.name: describe_gripper(model, a, qpos, f"robot.arms.{a.name}.gripper")
             for a in robot.arms if a.gripper is not None}
    if not hands:
        raise ConfigError(f"robot {robot.name!r} has no gripper on any arm; grasping needs one: "
                          "robot.arms.<arm>.gripper: {actuators: [<name>], open: 0.04, closed: 0.0}")
    return hands


def gripper_report(model, robot, qpos: np.ndarray) -> dict[str, dict]:
    """Per arm with a gripper: what grasping would use (fingers, pads, measured openings), or why it
    cannot (the ConfigError's message) — for ``scene/robot.json``, where a user looks first."""
    out: dict[str, dict] = {}
    for arm in robot.arms:
        if arm.gripper is None:
            continue
        try:
            g = describe_gripper(model, arm, qpos, f"robot.arms.{arm.name}.gripper")
        except ConfigError as exc:
            out[arm.name] = {"parallel_jaw": False, "reason": str(exc)}
            continue
        out[arm.name] = {
            "parallel_jaw": True, "finger_joints": list(g.finger_joints),
            "pads": [[_name(model, mujoco.mjtObj.mjOBJ_GEOM, i) for i in finger] for finger in g.pads],
            "opening_closed_m": g.opening_closed_m, "opening_open_m": g.opening_open_m,
            "closing_axis": list(g.closing_axis), "approach_axis": list(g.approach_axis),
            "grasp_depth_m": g.grasp_depth_m, "tip_past_site_m": g.tip_past_site_m}
    return out
