"""Perception and calibration stages: drop, perceive, intrinsics.

* :class:`DropPeg` (``drop``) — release the tagged peg at a seeded random pose above the table and
  let MuJoCo physics settle it (no pose is set after the release).
* :class:`Perceive` (``perception``) — render the scene camera (with image effects), estimate the
  peg's pose, compare with the simulator's truth; overlay image saved every time.
* :class:`Intrinsics` (``intrinsics``) — ChArUco views (simulated, or ``images=<folder>``) →
  camera matrix and distortion, saved as ``intrinsics/intrinsics.yaml``.
The extrinsics stages live beside: :mod:`stages.arms.calibration.plate` (a tag plate on each
hand, ``pipeline=calibrate``) and :mod:`stages.arms.calibration.peg` (the tagged peg carried
by each arm, ``pipeline=calibrate_peg``).

Every stage reads the scene config (``scene: ${scene}``) for the objects it uses and fails at
construction, naming the key, when one is missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.errors import ConfigError


def scene_object(scene: Mapping[str, Any], name: str, what: str, kinds: Sequence[str]) -> dict:
    objects = dict((scene or {}).get("objects") or {})
    if name not in objects:
        raise ConfigError(f"scene has no object {name!r} ({what}); objects: "
                          f"{sorted(objects) or 'none'}. Use scene=peg_table, or add one of kind "
                          f"{' / '.join(kinds)}")
    obj = dict(objects[name])
    if not any(str(obj.get("kind", "")).endswith(k) for k in kinds):
        raise ConfigError(f"scene.objects.{name}.kind={obj.get('kind')!r}; {what} must be of "
                          f"kind {' / '.join(kinds)}")
    return obj


def table_height(scene: Mapping[str, Any]) -> float:
    table = (scene or {}).get("table")
    if not table:
        raise ConfigError("the resting prior needs scene.table (its height)")
    return float(table.get("height", 0.75))


@dataclass
class SimState:
    """A physics state handed from one stage to the next (not a file)."""

    qpos: np.ndarray
    qvel: np.ndarray
    ctrl: np.ndarray
    time: float
    truth: dict = field(default_factory=dict)

    def apply(self, model):
        import mujoco

        data = mujoco.MjData(model)
        data.qpos[:], data.qvel[:], data.ctrl[:] = self.qpos, self.qvel, self.ctrl
        data.time = self.time
        mujoco.mj_forward(model, data)
        return data


def resting_face(R: np.ndarray) -> str:
    """The peg-frame face pointing down (world -z)."""
    down = R.T @ np.array([0.0, 0.0, -1.0])
    k = int(np.argmax(np.abs(down)))
    return ("+" if down[k] > 0 else "-") + "xyz"[k]
