"""The measurement model of the extrinsics fit: what a spot observed, and the residuals of a guess.

Data: observations, each a pair of (the joint angles an arm *believed* it had — its encoder
readings with nominal zeros — and the pose of a target rigidly carried by that arm as the camera
measured it, in the camera frame). Model: the true joint angles are ``q_believed + offset``; the
target's world pose is ``fk(arm, q_believed + offset)``; the camera sees it at
``inv(T_world_cam) @ fk(...)``. Unknowns: the camera's pose in the world (= arm-base / torso)
frame (6) and every fitted arm's joint offsets (7 each). ``fk`` is any callable, so the fit is
tested on synthetic kinematics and run on MuJoCo's.

Residuals per observation, ``residual="pose"``: position difference (m, camera
frame; the depth component times ``depth_weight``, since a camera measures depth several times
less precisely than the lateral position) and rotation difference (rotation vector, rad, times
``rotation_weight_m``, so 1 mrad counts as ``rotation_weight_m`` mm). ``residual="corners"``
(the default) compares the same observed pose in the camera's own terms: the detected tag
corners behind it against the target's corners projected through the model (pixels, needs the
camera matrix) — a bundle adjustment that weights each direction by what the image really
measures (a camera measures depth and out-of-plane tilt of a small plate far less precisely
than its lateral position). On the calibrate pipeline's spots it recovered the hidden offsets
5x more accurately than the pose residual (0.017 vs 0.090 deg worst joint, seed 1).

**A target held in the hand** (``grasps``): a peg picked up is not bolted to the hand; where the
fingers hold it is known only roughly. ``grasps[arm]`` is the nominal ``T_hand_target`` and
``fk`` then returns the hand's pose; the fit adds, per arm, the grasp's free directions
(``grasp_free``; default ``("tx", "tz", "ry")``: along the peg and the approach, and the pivot
about the fingers' closing axis ``y`` — a parallel gripper's pads fix the rest). The true target
is ``fk(arm, q + offset) @ G(params) @ T_hand_target`` with ``G`` those translations (m) and
rotations (rad) in the hand frame. ``grasp_creep=True`` adds, per arm, a rate for each of them
(``G(params + (t - t0) rates)``, ``t`` an observation's ``time_s``, ``t0`` the arm's first): a
friction grasp under a steady load creeps at a near-constant rate (MuJoCo's soft friction: the
calibrate_peg fits find ~0.06 mm/s along the approach and ~0.03 deg/s pivot). ``grasp_knots``
(per arm, times in s) makes them piecewise linear in time instead, one value per knot, held
beyond the first and last: the drift is not steady (it slows, and jumps at some moves), and the
calibrate_peg procedure puts a knot at every revisit of an arm's reference spot, where the joints
are the same and only the grasp can have changed. A fully free grasp (6) would
swallow the last joint's offset (a constant turn in the hand frame); with the pads' constraints
it stays observable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from core.se3 import invert, matrix_to_rotvec, rotvec_to_matrix

ForwardKinematics = Callable[[str, np.ndarray], np.ndarray]
"""``fk(arm, q) -> T_world_target`` (4x4) at true joint angles ``q``."""

GRASP_DIRECTIONS = ("tx", "ty", "tz", "rx", "ry", "rz")


@dataclass(frozen=True)
class Observation:
    """One spot: what the arm believed, what the camera saw.

    ``object_points`` (N, 3, target frame) and ``image_points`` (N, 2) are the detected tag
    corners behind ``T_cam_target``; only ``residual="corners"`` uses them.
    """

    arm: str
    q_believed: np.ndarray
    T_cam_target: np.ndarray  # noqa: N815
    weight: float = 1.0
    name: str = ""
    object_points: np.ndarray | None = None
    image_points: np.ndarray | None = None
    time_s: float = 0.0   # when it was taken (s; a held target's creep in the hand is a rate)


def grasp_transform(free: Sequence[str], params: np.ndarray) -> np.ndarray:
    """``G``: the grasp's free translations (m) and rotations (rad), in the hand frame."""
    T = np.eye(4)
    w = np.zeros(3)
    for name, v in zip(free, params, strict=True):
        if name[0] == "t":
            T["xyz".index(name[1]), 3] = v
        else:
            w["xyz".index(name[1])] = v
    T[:3, :3] = rotvec_to_matrix(w)
    return T


def grasp_param_counts(arms, n_free: int, creep: bool,
                       knots: Mapping[str, Sequence[float]]) -> dict[str, int]:
    """Unknowns per arm holding a target: its free values (at each knot), or values and rates."""
    return {a: n_free * (len(knots[a]) if a in knots else 2 if creep else 1) for a in arms}


class ExtrinsicsProblem:
    """The unknowns (camera pose change from ``T0``, joint offsets, grasp values) as one vector,
    the residuals they leave on the observations, and their Jacobian (central differences).
    ``free_mask`` marks the unknowns fitted; the others stay at zero."""

    def __init__(self, observations, fk, dofs, T0, rotation_weight_m, free_mask, depth_weight=1.0,  # noqa: N803
                 residual="pose", camera_matrix=None, distortion=None, grasps=None, grasp_free=(),
                 grasp_creep=False, grasp_knots=None):
        self.obs = observations
        self.fk = fk
        self.arms = list(dofs)
        self.dofs = dict(dofs)
        self.T0 = T0
        self.rw = rotation_weight_m
        self.dw = depth_weight
        self.grasps = dict(grasps or {})
        self.grasp_free = tuple(grasp_free) if self.grasps else ()
        self.knots = dict(grasp_knots or {})   # arm -> sorted knot times (checked by fit_extrinsics)
        self.per_grasp = grasp_param_counts(self.grasps, len(self.grasp_free), grasp_creep, self.knots)
        self.n_all = 6 + sum(self.dofs.values()) + sum(self.per_grasp.values())
        t0 = {}
        for o in observations:
            t0.setdefault(o.arm, o.time_s)
        self.dt = [o.time_s - t0[o.arm] for o in observations]   # since the arm's first spot
        self.free = np.asarray(free_mask, bool)
        self.sqrt_w = np.sqrt([o.weight for o in observations])
        self.residual = residual
        self.K = None if camera_matrix is None else np.asarray(camera_matrix, float)
        self.dist = np.zeros(5) if distortion is None else np.asarray(distortion, float).ravel()

    def unpack(self, x_all):
        dT = np.eye(4)
        dT[:3, :3] = rotvec_to_matrix(x_all[:3])
        dT[:3, 3] = x_all[3:6]
        T_world_cam = self.T0 @ dT
        offsets, k = {}, 6
        for arm in self.arms:
            offsets[arm] = x_all[k:k + self.dofs[arm]]
            k += self.dofs[arm]
        return T_world_cam, offsets

    def grasp_params(self, x_all) -> dict[str, np.ndarray]:
        """Per arm: the grasp's free values at the arm's first spot, then (creep) their rates per s
        or (knots) their values at the later knots."""
        k, out = 6 + sum(self.dofs.values()), {}
        for arm in self.grasps:
            out[arm] = x_all[k:k + self.per_grasp[arm]]
            k += self.per_grasp[arm]
        return out

    def grasp_values(self, arm: str, p: np.ndarray, t_s: float, dt: float) -> np.ndarray:
        """The grasp's free values at time ``t_s`` (``dt`` after the arm's first spot)."""
        n = len(self.grasp_free)
        if arm in self.knots:   # piecewise linear between the knots, held beyond them
            v = p.reshape(-1, n)
            return np.array([np.interp(t_s, self.knots[arm], v[:, j]) for j in range(n)])
        return p[:n] + dt * p[n:] if len(p) > n else p

    def targets(self, x_all) -> list[np.ndarray]:
        """Every observation's predicted world pose of the target."""
        _, offsets = self.unpack(x_all)
        params, out = self.grasp_params(x_all), []
        for o, dt in zip(self.obs, self.dt, strict=True):
            T = self.fk(o.arm, np.asarray(o.q_believed, float) + offsets[o.arm])
            if o.arm in self.grasps:
                g = self.grasp_values(o.arm, params[o.arm], o.time_s, dt)
                T = T @ grasp_transform(self.grasp_free, g) @ self.grasps[o.arm]
            out.append(T)
        return out

    def full(self, x_free):
        x = np.zeros(self.n_all)
        x[self.free] = x_free
        return x

    def raw_residuals(self, x_all) -> np.ndarray:
        T_cam_world = invert(self.unpack(x_all)[0])
        out = np.empty((len(self.obs), 6))
        for i, (o, T) in enumerate(zip(self.obs, self.targets(x_all), strict=True)):
            pred = T_cam_world @ T
            out[i, :3] = pred[:3, 3] - o.T_cam_target[:3, 3]
            out[i, 3:] = matrix_to_rotvec(o.T_cam_target[:3, :3].T @ pred[:3, :3])
        return out

    def corner_residuals(self, x_all) -> np.ndarray:
        import cv2

        T_cam_world = invert(self.unpack(x_all)[0])
        out = []
        for i, (o, T) in enumerate(zip(self.obs, self.targets(x_all), strict=True)):
            pred = T_cam_world @ T
            rvec = cv2.Rodrigues(pred[:3, :3])[0]
            uv, _ = cv2.projectPoints(np.asarray(o.object_points, float), rvec, pred[:3, 3],
                                      self.K, self.dist)
            out.append((uv.reshape(-1, 2) - o.image_points).ravel() * self.sqrt_w[i])
        return np.concatenate(out)

    def weighted(self, x_all) -> np.ndarray:
        if self.residual == "corners":
            return self.corner_residuals(x_all)
        r = self.raw_residuals(x_all)
        r[:, 2] *= self.dw
        r[:, 3:] *= self.rw
        return (r * self.sqrt_w[:, None]).ravel()

    def jacobian(self, x_all, step: float = 1e-6) -> np.ndarray:
        m = len(self.weighted(x_all))
        J = np.empty((m, self.n_all))
        for j in range(self.n_all):
            e = np.zeros(self.n_all)
            e[j] = step
            J[:, j] = (self.weighted(x_all + e) - self.weighted(x_all - e)) / (2 * step)
        return J
