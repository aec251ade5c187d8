"""Simulation helpers for perception runs: drop a free body with real physics, hold the arms,
hand the physics state from one stage to the next.

``drop_body`` puts a free body at a start pose *once* (the experiment's initial condition,
before any physics), releases it with zero velocity and steps ``mj_step`` until it has been at
rest for ``settle_s`` (or ``max_s`` passes). Nothing is moved by hand after the release: the
resting pose is whatever the contact dynamics produced.

The arms hold still under their own position actuators (``ctrl`` = the configuration they are
at), as the robot would while the camera looks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.errors import ChoreographError, ConfigError, ExecutionError
from stages.arms.perception.scoring import resting_face


@dataclass(frozen=True)
class DropResult:
    settled: bool
    sim_time_s: float
    steps: int
    start_pose: np.ndarray   # [x, y, z, qw, qx, qy, qz]
    rest_pose: np.ndarray
    T_world_body: np.ndarray  # noqa: N815


@dataclass
class SimState:
    """A physics state handed from one stage to the next (not a file); ``truth``: what the
    simulator knows and a perception stage scores against (e.g. ``T_world_peg``)."""

    qpos: np.ndarray
    qvel: np.ndarray
    ctrl: np.ndarray
    time: float
    truth: dict = field(default_factory=dict)

    def apply(self, model):
        """A fresh ``MjData`` of ``model`` in this state (after ``mj_forward``)."""
        import mujoco

        data = mujoco.MjData(model)
        data.qpos[:], data.qvel[:], data.ctrl[:] = self.qpos, self.qvel, self.ctrl
        data.time = self.time
        mujoco.mj_forward(model, data)
        return data


def free_joint_qpos_adr(model, body: str) -> tuple[int, int, int]:
    """(body id, qpos address, dof address) of a body's free joint."""
    import mujoco

    bid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body)
    if bid < 0:
        raise ConfigError(f"body {body!r} is not in the scene")
    for j in range(model.njnt):
        if model.jnt_bodyid[j] == bid and model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            return bid, int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
    raise ConfigError(f"body {body!r} has no free joint (it cannot be dropped)")


def body_pose(data, bid: int) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = data.xmat[bid].reshape(3, 3)
    T[:3, 3] = data.xpos[bid]
    return T


def hold_actuators_at_qpos(model, data) -> None:
    """Set every joint position actuator's ctrl to its joint's current position."""
    import mujoco

    for a in range(model.nu):
        if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT:
            j = model.actuator_trnid[a, 0]
            data.ctrl[a] = data.qpos[model.jnt_qposadr[j]]


def random_drop_pose(rng: np.random.Generator, x_range, y_range, z_range) -> np.ndarray:
    """A uniformly random position in the box and a uniformly random orientation."""
    pos = [rng.uniform(*x_range), rng.uniform(*y_range), rng.uniform(*z_range)]
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    return np.concatenate([pos, q if q[0] >= 0 else -q])


def drop_body(model, data, body: str, pose, settle_s: float = 0.3, max_s: float = 4.0,
              lin_tol: float = 2e-3, ang_tol: float = 2e-2) -> DropResult:
    """Release ``body`` at ``pose`` (7-vector) with zero velocity and step until it rests."""
    import mujoco

    bid, qadr, vadr = free_joint_qpos_adr(model, body)
    pose = np.asarray(pose, float)
    data.qpos[qadr:qadr + 7] = pose
    data.qvel[vadr:vadr + 6] = 0.0
    mujoco.mj_forward(model, data)
    dt = float(model.opt.timestep)
    still_needed = max(1, int(round(settle_s / dt)))
    still = steps = 0
    while steps * dt < max_s:
        mujoco.mj_step(model, data)
        steps += 1
        v = data.qvel[vadr:vadr + 6]
        if not np.all(np.isfinite(data.qpos)):
            raise ChoreographError(f"the simulation diverged while dropping {body!r}")
        still = still + 1 if (np.linalg.norm(v[:3]) < lin_tol and np.linalg.norm(v[3:]) < ang_tol) else 0
        if still >= still_needed:
            break
    mujoco.mj_forward(model, data)
    return DropResult(still >= still_needed, steps * dt, steps, pose,
                      data.qpos[qadr:qadr + 7].copy(), body_pose(data, bid))


def drop_peg_from_home(model, home_qpos, peg: str, pose, settle_s: float = 0.3,
                       max_s: float = 4.0) -> tuple[DropResult, SimState]:
    """The arms at ``home_qpos``, held there by their actuators; the body ``peg`` dropped from ``pose``.

    Returns the drop and the state it left, whose ``truth`` records where the peg rests
    (``T_world_peg``, its ``pose``, the ``start_pose``, the ``resting_face``) and whether
    it ``settled`` within ``max_s`` (``sim_time_s``).
    """
    import mujoco

    data = mujoco.MjData(model)
    data.qpos[:] = home_qpos
    mujoco.mj_forward(model, data)
    hold_actuators_at_qpos(model, data)
    r = drop_body(model, data, peg, pose, settle_s, max_s)
    truth = {"T_world_peg": r.T_world_body.tolist(), "pose": r.rest_pose.tolist(),
             "start_pose": r.start_pose.tolist(), "resting_face": resting_face(r.T_world_body[:3, :3]),
             "settled": r.settled, "sim_time_s": r.sim_time_s}
    return r, SimState(data.qpos.copy(), data.qvel.copy(), data.ctrl.copy(), float(data.time), truth)


# ---------------------------------------------------------------------- arms
def subtree_bodies(model, root: int) -> set[int]:
    out = {int(root)}
    for b in range(model.nbody):
        p = b
        while p > 0:
            if p == root:
                out.add(b)
                break
            p = int(model.body_parentid[p])
    return out


def arm_body_ids(model, arm) -> set[int]:
    """Bodies moved by an arm (``hardware.robot.ArmSpec``): its first joint's subtree."""
    return subtree_bodies(model, int(model.jnt_bodyid[arm.joint_ids[0]]))


class MujocoTargetFK:
    """``fk(arm, q) -> T_world_body`` of a body carried by the arm (e.g. a tag plate), from the
    MuJoCo model's kinematics at arm joint angles ``q`` (other joints at ``base_qpos``); with
    ``frames[arm]`` (4x4, in the body's frame), of that frame on the body instead."""

    def __init__(self, model, robot, targets: dict[str, str], base_qpos=None,
                 frames: dict[str, np.ndarray] | None = None):
        import mujoco

        self.model = model
        self.frames = {a: np.asarray(T, float) for a, T in (frames or {}).items()}
        self.data = mujoco.MjData(model)
        self.base = np.array(model.qpos0 if base_qpos is None else base_qpos, float)
        self.arms = {a: robot.arm(a) for a in targets}
        self.bodies = {}
        for arm, body in targets.items():
            bid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body)
            if bid < 0:
                raise ConfigError(f"calibration target body {body!r} (arm {arm}) is not in the "
                                  "scene; add a tag plate object (hardware.models.peg:add_tag_plate)")
            if bid not in arm_body_ids(model, self.arms[arm]):
                raise ConfigError(f"calibration target body {body!r} is not carried by arm {arm!r}")
            self.bodies[arm] = bid

    def __call__(self, arm: str, q) -> np.ndarray:
        import mujoco

        d = self.data
        d.qpos[:] = self.base
        d.qpos[list(self.arms[arm].qpos_indices)] = np.asarray(q, float)
        mujoco.mj_kinematics(self.model, d)
        T = body_pose(d, self.bodies[arm])
        return T @ self.frames[arm] if arm in self.frames else T


def contacts_with(model, data, bodies: set[int]) -> list[tuple[str, str]]:
    """Contacts between a geom of ``bodies`` and a geom outside them (names)."""
    import mujoco

    out = []
    for c in data.contact[:data.ncon]:
        b1, b2 = int(model.geom_bodyid[c.geom1]), int(model.geom_bodyid[c.geom2])
        if (b1 in bodies) != (b2 in bodies):
            out.append((mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, c.geom1) or str(c.geom1),
                        mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, c.geom2) or str(c.geom2)))
    return out


def move_joints(model, data, actuators, start_ctrl, goal_ctrl, duration_s: float,
                hold_s: float = 0.5, watch: set[int] | None = None) -> int:
    """Drive position actuators from ``start_ctrl`` to ``goal_ctrl`` on a smooth (quintic) ramp
    over ``duration_s``, then hold for ``hold_s``, stepping the physics (``mj_step``).

    ``watch``: bodies that must touch nothing outside themselves (raises ExecutionError).
    Returns the number of steps.
    """
    import mujoco

    actuators = list(actuators)
    a, b = np.asarray(start_ctrl, float), np.asarray(goal_ctrl, float)
    dt = float(model.opt.timestep)
    n_move = max(1, int(round(duration_s / dt)))
    n_total = n_move + int(round(hold_s / dt))
    for k in range(1, n_total + 1):
        s = min(1.0, k / n_move)
        s = s ** 3 * (10 - 15 * s + 6 * s * s)
        data.ctrl[actuators] = a + (b - a) * s
        mujoco.mj_step(model, data)
        if watch is not None and data.ncon:
            touching = contacts_with(model, data, watch)
            if touching:
                raise ExecutionError(f"the arm touched the scene while moving: {touching[:3]} "
                                     f"(t = {k * dt:.2f} s of the move)")
    if not np.all(np.isfinite(data.qpos)):
        raise ChoreographError("the simulation diverged while moving the arm")
    return n_total
