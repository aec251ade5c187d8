"""Inverse kinematics of one arm's gripper site: several distinct solutions per pose.

Damped least squares on MuJoCo's site Jacobian (``mj_jacSite``) from seeded restarts,
joint limits enforced by clamping every step. Solutions closer than
``distinct_rad`` to one already found are dropped; the rest come back ordered by
distance from the seed configuration. A restart whose error stops falling (not below
``STALL_RATIO`` of its value ``STALL_WINDOW`` iterations before: stuck at a limit or a
singularity) is given up; running those to the last iteration was most of the time a
crossing's goal configurations took (``crossing.ik_median_time_s`` of ``pipeline=bench_plan``:
0.24 s before, 0.056 s after, on the built-in robot).

A pose is ``[x, y, z, qw, qx, qy, qz]`` in the world frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.errors import PlanningError

STALL_WINDOW = 10     # iterations: a restart must cut its error (m and rad together) ...
STALL_RATIO = 0.9     # ... to this fraction of what it was a window ago, or it is given up


@dataclass(frozen=True)
class IKSolution:
    q: np.ndarray
    position_error_m: float
    rotation_error_rad: float


def pose_array(pose: Sequence[float], where: str = "pose") -> np.ndarray:
    """Check a 7-vector pose, normalise its quaternion."""
    p = np.asarray(pose, dtype=float)
    if p.shape != (7,) or not np.all(np.isfinite(p)):
        raise PlanningError("invalid_goal",
                            f"{where} must be 7 finite numbers [x,y,z,qw,qx,qy,qz], got {pose}")
    n = np.linalg.norm(p[3:])
    if n < 1e-9:
        raise PlanningError("invalid_goal", f"{where} has a zero quaternion")
    p[3:] /= n
    return p


class ArmIK:
    """IK for one site over one arm's joints; other joints are held at ``base_qpos``."""

    def __init__(self, model, joint_names: Sequence[str], site: str, lower: np.ndarray,
                 upper: np.ndarray, base_qpos: np.ndarray | None = None):
        import mujoco

        self.model = model
        self.data = mujoco.MjData(model)
        self.site_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, site)
        jids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j) for j in joint_names]
        self.qpos_adr = np.array([model.jnt_qposadr[j] for j in jids])
        self.dof_adr = np.array([model.jnt_dofadr[j] for j in jids])
        self.lower, self.upper = np.asarray(lower, float), np.asarray(upper, float)
        self.base_qpos = np.array(model.qpos0 if base_qpos is None else base_qpos, dtype=float)

    def forward(self, q: np.ndarray) -> np.ndarray:
        """The site pose [x, y, z, qw, qx, qy, qz] at arm configuration ``q``."""
        import mujoco

        d = self._set(q)
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, d.site_xmat[self.site_id])
        return np.concatenate([d.site_xpos[self.site_id], quat])

    def _set(self, q):
        import mujoco

        d = self.data
        d.qpos[:] = self.base_qpos
        d.qpos[self.qpos_adr] = q
        mujoco.mj_kinematics(self.model, d)
        mujoco.mj_comPos(self.model, d)
        return d

    def _error(self, d, target: np.ndarray) -> np.ndarray:
        import mujoco

        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, d.site_xmat[self.site_id])
        rot = np.empty(3)
        mujoco.mju_subQuat(rot, target[3:], quat)
        # mju_subQuat gives the rotation in the frame of `quat`; express it in the world frame
        rot = d.site_xmat[self.site_id].reshape(3, 3) @ rot
        return np.concatenate([target[:3] - d.site_xpos[self.site_id], rot])

    def solve_once(self, target: np.ndarray, q0: np.ndarray, iterations: int = 150,
                   damping: float = 1e-2, tol_m: float = 1e-4, tol_rad: float = 1e-3) -> IKSolution | None:
        import mujoco

        q = np.clip(np.asarray(q0, float), self.lower, self.upper)
        jacp = np.zeros((3, self.model.nv))
        jacr = np.zeros((3, self.model.nv))
        window_err = np.inf
        for k in range(iterations):
            d = self._set(q)
            err = self._error(d, target)
            if np.linalg.norm(err[:3]) < tol_m and np.linalg.norm(err[3:]) < tol_rad:
                return IKSolution(q, float(np.linalg.norm(err[:3])), float(np.linalg.norm(err[3:])))
            if k % STALL_WINDOW == 0:   # a restart stuck at a limit or a singularity is dropped
                e = float(np.linalg.norm(err))
                if e > STALL_RATIO * window_err:
                    return None
                window_err = e
            mujoco.mj_jacSite(self.model, d, jacp, jacr, self.site_id)
            jac = np.vstack([jacp[:, self.dof_adr], jacr[:, self.dof_adr]])
            dq = jac.T @ np.linalg.solve(jac @ jac.T + damping**2 * np.eye(6), err)
            step = np.max(np.abs(dq))
            if step > 0.5:
                dq *= 0.5 / step
            q = np.clip(q + dq, self.lower, self.upper)
        return None

    def solve(self, pose: Sequence[float], seed_q: np.ndarray, rng: np.random.Generator,
              max_solutions: int = 8, restarts: int = 40, distinct_rad: float = 0.2,
              accept=None, where: str = "pose") -> list[IKSolution]:
        """Up to ``max_solutions`` distinct solutions, nearest to ``seed_q`` first.

        ``accept(q) -> bool`` filters solutions (e.g. collision-free at clearance).
        Raises PlanningError("unreachable") when none is found.
        """
        target = pose_array(pose, where)
        found: list[IKSolution] = []
        rejected = 0
        starts = [np.asarray(seed_q, float)] + [
            rng.uniform(self.lower, self.upper) for _ in range(restarts)]
        for q0 in starts:
            sol = self.solve_once(target, q0)
            if sol is None or any(np.linalg.norm(sol.q - f.q) < distinct_rad for f in found):
                continue
            if accept is not None and not accept(sol.q):
                rejected += 1
                continue
            found.append(sol)
            if len(found) >= max_solutions:
                break
        if not found:
            pose_txt = f"{where} {np.round(target, 4).tolist()}"
            if rejected:
                raise PlanningError("goal_in_collision", f"{pose_txt}: all {rejected} IK solutions "
                                    "are closer than the clearance to something")
            raise PlanningError("unreachable", f"{pose_txt}: no IK solution within joint limits "
                                f"in {len(starts)} tries")
        seed = np.asarray(seed_q, float)
        return sorted(found, key=lambda s: float(np.linalg.norm(s.q - seed)))
