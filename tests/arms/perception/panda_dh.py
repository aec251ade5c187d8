"""Franka Panda forward kinematics from its published modified-DH parameters (numpy only).

Independent of MuJoCo: the joint-offset fit is tested on these kinematics, and the MJCF model is
checked against them.
"""

from __future__ import annotations

import numpy as np

A = (0.0, 0.0, 0.0, 0.0825, -0.0825, 0.0, 0.088)
D = (0.333, 0.0, 0.316, 0.0, 0.384, 0.0, 0.0)
ALPHA = (0.0, -np.pi / 2, np.pi / 2, np.pi / 2, -np.pi / 2, np.pi / 2, np.pi / 2)
FLANGE_M = 0.107
BASES = {"left": (0.0, 0.225, 0.8), "right": (0.0, -0.225, 0.8)}


def _rx(a):
    c, s = np.cos(a), np.sin(a)
    T = np.eye(4)
    T[1:3, 1:3] = [[c, -s], [s, c]]
    return T


def _rz(a):
    c, s = np.cos(a), np.sin(a)
    T = np.eye(4)
    T[:2, :2] = [[c, -s], [s, c]]
    return T


def _t(x=0.0, y=0.0, z=0.0):
    T = np.eye(4)
    T[:3, 3] = [x, y, z]
    return T


def flange_pose(q, base=(0.0, 0.0, 0.0)) -> np.ndarray:
    T = _t(*base)
    for i in range(7):
        T = T @ _rx(ALPHA[i]) @ _t(x=A[i]) @ _rz(q[i]) @ _t(z=D[i])
    return T @ _t(z=FLANGE_M)


def make_fk(target_in_flange: np.ndarray | None = None):
    """fk(arm, q) -> world pose of a target rigidly attached to the flange."""
    T_ft = np.eye(4) if target_in_flange is None else np.asarray(target_in_flange)

    def fk(arm: str, q) -> np.ndarray:
        return flange_pose(np.asarray(q, float), BASES[arm]) @ T_ft

    return fk
