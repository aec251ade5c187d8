"""Rigid transforms and rotations, once: 4×4 homogeneous transforms, rotation vectors, quaternions.

Quaternions are MuJoCo's order, ``[w, x, y, z]``; poses as seven numbers are ``[x, y, z, qw, qx, qy, qz]``.
"""

from __future__ import annotations

import numpy as np


def invert(T: np.ndarray) -> np.ndarray:
    """Inverse of a rigid 4×4 transform."""
    T = np.asarray(T, float)
    out = np.eye(4)
    out[:3, :3] = T[:3, :3].T
    out[:3, 3] = -T[:3, :3].T @ T[:3, 3]
    return out


def transform(R: np.ndarray, t: np.ndarray) -> np.ndarray:  # noqa: N803
    """The 4×4 transform of rotation ``R`` and translation ``t``."""
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, t
    return T


def skew(w: np.ndarray) -> np.ndarray:
    """The cross-product matrix of a 3-vector: ``skew(w) @ v == cross(w, v)``."""
    return np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


def rotvec_to_matrix(w: np.ndarray) -> np.ndarray:
    """Rodrigues: the rotation of angle ``|w|`` (rad) about ``w``."""
    th = float(np.linalg.norm(w))
    if th < 1e-12:
        return np.eye(3) + skew(w)
    k = skew(np.asarray(w) / th)
    return np.eye(3) + np.sin(th) * k + (1 - np.cos(th)) * k @ k


def matrix_to_rotvec(R: np.ndarray) -> np.ndarray:  # noqa: N803
    """The rotation vector (axis × angle, rad, angle ≤ π) of a rotation matrix."""
    from scipy.spatial.transform import Rotation

    return Rotation.from_matrix(R).as_rotvec()


def axis_rotation(axis: str, deg: float) -> np.ndarray:
    """The rotation matrix of ``deg`` degrees about ``axis`` ("x", "y" or "z")."""
    from scipy.spatial.transform import Rotation

    return Rotation.from_euler(axis, deg, degrees=True).as_matrix()


def rotation_angle_deg(R1: np.ndarray, R2: np.ndarray) -> float:  # noqa: N803
    """Angle of the rotation taking R1 to R2, degrees."""
    c = (np.trace(np.asarray(R1).T @ np.asarray(R2)) - 1.0) / 2.0
    return float(np.degrees(np.arccos(np.clip(c, -1.0, 1.0))))


def matrix_to_quat(R: np.ndarray) -> np.ndarray:  # noqa: N803
    """The unit quaternion ``[w, x, y, z]`` of a rotation matrix (MuJoCo's conversion)."""
    import mujoco

    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(R, dtype=float).ravel())
    return q / np.linalg.norm(q)


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """The rotation matrix of a quaternion ``[w, x, y, z]`` (normalized first)."""
    import mujoco

    q = np.asarray(q, float)
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, q / np.linalg.norm(q))
    return R.reshape(3, 3)


def quat_angle(q0: np.ndarray, q1: np.ndarray) -> float:
    """Angle between two unit quaternions' rotations, rad (q and -q are the same rotation)."""
    return float(2 * np.arccos(np.clip(abs(float(q0 @ q1)), 0, 1)))


def pose7(T: np.ndarray) -> list[float]:
    """4×4 → ``[x, y, z, qw, qx, qy, qz]``."""
    return [*map(float, np.asarray(T)[:3, 3]), *map(float, matrix_to_quat(np.asarray(T)[:3, :3]))]


def rigid_align(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The rigid T minimising Σ |T src_i − dst_i|² (Kabsch), 4×4."""
    src, dst = np.asarray(src, float), np.asarray(dst, float)
    cs, cd = src.mean(axis=0), dst.mean(axis=0)
    U, _, Vt = np.linalg.svd((src - cs).T @ (dst - cd))
    D = np.diag([1.0, 1.0, np.sign(np.linalg.det(Vt.T @ U.T))])
    R = Vt.T @ D @ U.T
    return transform(R, cd - R @ cs)
