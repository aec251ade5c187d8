"""A geometric joint path: the planner's output, the retimer's input.

``JointPath`` is a polyline in joint space: ``N`` waypoints over ``D`` named joints. The
straight edges between consecutive waypoints are what the planner collision-checked, so
anything downstream that bends the path (the retimer's corner blends) must stay close to
those edges.

It is an artifact (``suffix`` + ``save``): the runner saves it as ``plan/path.npz`` with the
arrays ``joint_names`` (D, unicode) and ``waypoints`` (N×D, float64).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from core.artifacts import atomic_write_npz


@dataclass(frozen=True, eq=False)
class JointPath:
    """``waypoints[i, j]`` is joint ``joint_names[j]`` at waypoint ``i`` (radians or metres).

    Construction converts ``waypoints`` to a read-only float64 array and checks only the
    structure (2-D, one column per joint name, names unique); a ``ValueError`` there is a
    programming error. Numeric checks (finite values, at least one waypoint) belong to the
    consumers, e.g. :func:`stages.arms.retiming.retime` raises ``RetimingError``.
    """

    joint_names: tuple[str, ...]
    waypoints: np.ndarray

    suffix: ClassVar[str] = ".npz"

    def __post_init__(self) -> None:
        names = tuple(str(n) for n in self.joint_names)
        if len(set(names)) != len(names):
            raise ValueError(f"joint names must be unique, got {names}")
        wp = np.array(self.waypoints, dtype=float, copy=True)
        if wp.ndim == 1 and wp.size == 0:
            wp = wp.reshape(0, len(names))
        if wp.ndim != 2 or wp.shape[1] != len(names):
            raise ValueError(
                f"waypoints must be N×D with D = {len(names)} joints, got shape {wp.shape}"
            )
        wp.setflags(write=False)
        object.__setattr__(self, "joint_names", names)
        object.__setattr__(self, "waypoints", wp)

    @property
    def dof(self) -> int:
        return len(self.joint_names)

    @property
    def num_waypoints(self) -> int:
        return int(self.waypoints.shape[0])

    @property
    def length_rad(self) -> float:
        """Euclidean joint-space length of the polyline."""
        if self.num_waypoints < 2:
            return 0.0
        return float(np.linalg.norm(np.diff(self.waypoints, axis=0), axis=1).sum())

    def save(self, path: Path | str) -> None:
        atomic_write_npz(
            path,
            {"joint_names": np.array(self.joint_names, dtype=str), "waypoints": self.waypoints},
        )

    @classmethod
    def load(cls, path: Path | str) -> JointPath:
        with np.load(Path(path), allow_pickle=False) as data:
            missing = {"joint_names", "waypoints"} - set(data.files)
            if missing:
                raise ValueError(f"{path}: not a JointPath file, missing arrays {sorted(missing)}")
            names = tuple(str(n) for n in data["joint_names"].reshape(-1))
            return cls(joint_names=names, waypoints=data["waypoints"])
