"""Simulation helpers for perception runs: drop a free body with real physics, hold the arms.

``drop_body`` puts a free body at a start pose *once* (the experiment's initial condition,
before any physics), releases it with zero velocity and steps ``mj_step`` until it has been at
rest for ``settle_s`` (or ``max_s`` passes). Nothing is moved by hand after the release: the
resting pose is whatever the contact dynamics produced.

The arms hold still under their own position actuators (``ctrl`` = the configuration they are
at), as the robot would while the camera looks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stages.errors import ChoreographError, ConfigError


@dataclass(frozen=True)
class DropResult:
    settled: bool
    sim_time_s: float
    steps: int
    start_pose: np.ndarray   # [x, y, z, qw, qx, qy, qz]
    rest_pose: np.ndarray
    T_world_body: np.ndarray  # noqa: N815


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
