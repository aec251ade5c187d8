"""Mecanum kinematics in the FTC convention.

Robot frame: x forward, y left, ω counter-clockwise. Wheel order
``leftFront, leftBack, rightBack, rightFront``; rollers in the usual X pattern
seen from above. Wheel *surface* speeds (in/s, positive = rolling the robot
forward) from the robot velocity, with ``k = (track width + wheelbase) / 2``:

    lf = vx − vy − ω·k    lb = vx + vy − ω·k    rb = vx − vy + ω·k    rf = vx + vy + ω·k

That is ``s = J · [vx, vy, ω]`` (inverse kinematics). ``JᵀJ = diag(4, 4, 4k²)``, so
forward kinematics (least squares from four wheels to three body velocities) is
``(JᵀJ)⁻¹ Jᵀ s``; by virtual work the same ``Jᵀ`` maps wheel forces to body force
and torque.
"""

from __future__ import annotations

import numpy as np

WHEEL_ORDER = ("leftFront", "leftBack", "rightBack", "rightFront")


def wheel_matrix(k_in: float) -> np.ndarray:
    """J (4×3): wheel surface speeds = J @ [vx, vy, ω] in the robot frame."""
    return np.array([[1.0, -1.0, -k_in],
                     [1.0, 1.0, -k_in],
                     [1.0, -1.0, k_in],
                     [1.0, 1.0, k_in]])


def inverse_kinematics(robot_velocity: np.ndarray, k_in: float) -> np.ndarray:
    """Robot-frame [vx, vy, ω] → wheel surface speeds (in/s), order WHEEL_ORDER."""
    return np.asarray(robot_velocity, dtype=float) @ wheel_matrix(k_in).T


def forward_kinematics(wheel_speeds_in_s: np.ndarray, k_in: float) -> np.ndarray:
    """Wheel surface speeds → robot-frame [vx, vy, ω] (least squares if inconsistent)."""
    s = np.asarray(wheel_speeds_in_s, dtype=float)
    return (s @ wheel_matrix(k_in)) / np.array([4.0, 4.0, 4.0 * k_in * k_in])


def rotation(heading_rad: float) -> np.ndarray:
    c, s = np.cos(heading_rad), np.sin(heading_rad)
    return np.array([[c, -s], [s, c]])


def field_to_robot(velocity: np.ndarray, heading_rad: float) -> np.ndarray:
    """Field-frame [vx, vy, ω] → robot frame (ω is the same in both)."""
    v = np.asarray(velocity, dtype=float)
    return np.r_[rotation(heading_rad).T @ v[:2], v[2]]


def robot_to_field(velocity: np.ndarray, heading_rad: float) -> np.ndarray:
    v = np.asarray(velocity, dtype=float)
    return np.r_[rotation(heading_rad) @ v[:2], v[2]]


def footprint_corners(pose: np.ndarray, length_in: float, width_in: float) -> np.ndarray:
    """The 4 corners (field frame) of the robot's rectangle at pose (x, y, heading)."""
    x, y, h = np.asarray(pose, dtype=float)
    half = np.array([[1, 1], [-1, 1], [-1, -1], [1, -1]]) * [length_in / 2, width_in / 2]
    return half @ rotation(h).T + [x, y]
