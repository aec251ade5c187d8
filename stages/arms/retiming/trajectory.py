"""A time-parameterized joint trajectory, saved like a ROS ``trajectory_msgs/JointTrajectory``.

JSON layout (``retime/trajectory.json``)::

    {"joint_names": [...],
     "points": [{"time_from_start": s, "positions": [...], "velocities": [...],
                 "accelerations": [...]}, ...]}

``time_from_start`` is in seconds (a float, not ROS's sec/nanosec pair). Floats are written
with ``repr`` precision, so a save/load round trip is exact.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from core.artifacts import atomic_write_json, atomic_write_npz


def _frozen_array(value: Any, name: str, shape: tuple[int, ...]) -> np.ndarray:
    arr = np.array(value, dtype=float, copy=True)
    if arr.size == 0 and 0 in shape:
        arr = arr.reshape(shape)
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Trajectory:
    """``T`` samples of ``D`` joints: ``times`` (T,) in s; the rest T×D (rad, rad/s, rad/s²).

    Structural problems (shapes that disagree) raise ``ValueError`` at construction.
    """

    joint_names: tuple[str, ...]
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray

    suffix: ClassVar[str] = ".json"

    def __post_init__(self) -> None:
        names = tuple(str(n) for n in self.joint_names)
        times = np.array(self.times, dtype=float, copy=True).reshape(-1)
        times.setflags(write=False)
        shape = (times.shape[0], len(names))
        object.__setattr__(self, "joint_names", names)
        object.__setattr__(self, "times", times)
        for name in ("positions", "velocities", "accelerations"):
            object.__setattr__(self, name, _frozen_array(getattr(self, name), name, shape))

    @property
    def dof(self) -> int:
        return len(self.joint_names)

    @property
    def num_samples(self) -> int:
        return int(self.times.shape[0])

    @property
    def duration_s(self) -> float:
        return float(self.times[-1] - self.times[0]) if self.num_samples else 0.0

    def to_ros_dict(self) -> dict[str, Any]:
        pos, vel, acc = self.positions.tolist(), self.velocities.tolist(), self.accelerations.tolist()
        points = [
            {"time_from_start": t, "positions": p, "velocities": v, "accelerations": a}
            for t, p, v, a in zip(self.times.tolist(), pos, vel, acc, strict=True)
        ]
        return {"joint_names": list(self.joint_names), "points": points}

    @classmethod
    def from_ros_dict(cls, data: dict[str, Any]) -> Trajectory:
        try:
            names = tuple(data["joint_names"])
            points = data["points"]
            d = len(names)
            times = [float(p["time_from_start"]) for p in points]
            arrays = {
                key: np.array([p[key] for p in points], dtype=float).reshape(len(points), d)
                for key in ("positions", "velocities", "accelerations")
            }
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a JointTrajectory-shaped dict: {exc}") from exc
        return cls(joint_names=names, times=np.array(times), **arrays)

    def to_npz_arrays(self) -> dict[str, np.ndarray]:
        return {
            "joint_names": np.array(self.joint_names, dtype=str),
            "times": self.times,
            "positions": self.positions,
            "velocities": self.velocities,
            "accelerations": self.accelerations,
        }

    def save(self, path: Path | str) -> None:
        """Write the ROS-shaped JSON (``.npz`` if ``path`` ends so)."""
        if Path(path).suffix == ".npz":
            atomic_write_npz(path, self.to_npz_arrays())
        else:
            atomic_write_json(path, self.to_ros_dict())

    @classmethod
    def load(cls, path: Path | str) -> Trajectory:
        """Read a file written by :meth:`save` (JSON, or ``.npz`` from :meth:`to_npz_arrays`)."""
        path = Path(path)
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as data:
                return cls(
                    joint_names=tuple(str(n) for n in data["joint_names"].reshape(-1)),
                    times=data["times"],
                    positions=data["positions"],
                    velocities=data["velocities"],
                    accelerations=data["accelerations"],
                )
        return cls.from_ros_dict(json.loads(path.read_text()))
