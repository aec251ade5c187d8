"""Edge checking with a guaranteed resolution.

Moving joint j by Δq_j moves any point of the geometry below it by at most
r_j·|Δq_j|, where r_j bounds the distance from joint j's axis to that geometry
(chord ≤ arc; slide joints move points by |Δq_j|). By the triangle inequality a
straight joint-space edge moves no point of any geometry by more than
Σ_j r_j·|Δq_j|. Checking states spaced so that this sum is at most ``step_m``
means no geometry moves more than ``step_m`` between two checked states: with
``step_m`` at most the clearance, nothing can pass through anything between checks.

``r_j`` is bounded from the kinematic tree alone (sum of body offsets down to each
geom, plus the geom's bounding radius), so the bound holds in every configuration.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def joint_radii(model, joint_names: Sequence[str]) -> np.ndarray:
    """Per joint, an upper bound on how far (m) any geometry moved by it is from its axis."""
    import mujoco

    radii = []
    for name in joint_names:
        j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_SLIDE:
            radii.append(1.0)
            continue
        body = model.jnt_bodyid[j]
        anchor = float(np.linalg.norm(model.jnt_pos[j]))
        best = 0.0
        for g in range(model.ngeom):
            b = model.geom_bodyid[g]
            reach = float(np.linalg.norm(model.geom_pos[g])) + float(model.geom_rbound[g])
            while b != body and b != 0:
                reach += float(np.linalg.norm(model.body_pos[b]))
                b = model.body_parentid[b]
            if b == body:
                best = max(best, reach + anchor)
        radii.append(best)
    return np.array(radii)


def van_der_corput(n: int) -> np.ndarray:
    """Order 1..n-1 so that early checks are spread out (bisection order)."""
    idx = np.arange(1, n)
    rev = np.zeros(n - 1)
    base, scale = idx.copy(), 0.5
    while base.any():
        rev += (base & 1) * scale
        base >>= 1
        scale /= 2
    return idx[np.argsort(rev, kind="stable")]


class EdgeChecker:
    """``motion_valid(a, b)``: every state along the straight edge, at a spacing of
    ``step_m`` of geometry motion, passes ``checker.is_valid``."""

    def __init__(self, checker, radii: np.ndarray, step_m: float):
        if step_m <= 0:
            raise ValueError("step_m must be positive")
        self.checker = checker
        self.radii = np.asarray(radii, float)
        self.step_m = float(step_m)

    def motion_m(self, a: np.ndarray, b: np.ndarray) -> float:
        """Upper bound on how far any geometry moves along the edge a → b."""
        return float(self.radii @ np.abs(np.asarray(b) - np.asarray(a)))

    def steps(self, a: np.ndarray, b: np.ndarray) -> int:
        return max(1, int(np.ceil(self.motion_m(a, b) / self.step_m)))

    def motion_valid(self, a: np.ndarray, b: np.ndarray) -> bool:
        """Both ends are assumed checked already; the interior states are checked here."""
        n = self.steps(a, b)
        if n == 1:
            return True
        a, b = np.asarray(a, float), np.asarray(b, float)
        for i in van_der_corput(n):
            if not self.checker.is_valid(a + (b - a) * (i / n)):
                return False
        return True
