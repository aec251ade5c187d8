"""The saved calibration: one OpenCV FileStorage YAML file that later pipelines load.

Written by the ``intrinsics`` stage (camera matrix and distortion only) and the ``extrinsics``
stage (plus the camera's pose and each arm's joint zero offsets); loaded with
:func:`load_calibration` — for a run, ``calibration=<file>`` (the top-level ``calibration`` key).
Readable from C++ or Python OpenCV (``cv::FileStorage``) as well. Keys::

    image_width, image_height          int
    camera_matrix                      3x3 (opencv-matrix)
    distortion_coefficients            1xN (k1 k2 p1 p2 k3 ...)
    T_world_camera                     4x4, optional: the camera pose in the world (= torso /
                                       arm-base) frame, OpenCV camera axes (+z forward, +y down)
    arms                               sequence of arm names, optional
    joint_names_<arm>                  sequence of joint names
    joint_offsets_rad_<arm>            1x7: true joint angle = reading with nominal zeros + offset
    date                               ISO-8601 UTC
    source_run                         the run folder that produced it
    camera_name, method                strings
    <metric>                           scalars (rms_px, residual_rms_m, condition_number, ...)
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.artifacts import atomic_write_text
from core.errors import ConfigError

_RESERVED = {"image_width", "image_height", "camera_matrix", "distortion_coefficients",
             "T_world_camera", "arms", "date", "source_run", "camera_name", "method"}


@dataclass(frozen=True)
class Calibration:
    camera_matrix: np.ndarray
    distortion: np.ndarray
    image_size: tuple[int, int]
    T_world_cam: np.ndarray | None = None  # noqa: N815
    joint_offsets_rad: dict[str, np.ndarray] = field(default_factory=dict)
    joint_names: dict[str, list[str]] = field(default_factory=dict)
    date: str = ""
    source_run: str = ""
    camera_name: str = "scene_camera"
    method: str = ""
    metrics: dict[str, float] = field(default_factory=dict)

    def joint_offsets(self, arm: str) -> np.ndarray:
        if arm not in self.joint_offsets_rad:
            raise ConfigError(f"the calibration has no joint offsets for arm {arm!r}; it has "
                              f"{sorted(self.joint_offsets_rad) or 'none'}")
        return self.joint_offsets_rad[arm]


def now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()


def calibration_text(cal: Calibration) -> str:
    """The FileStorage YAML text of a calibration."""
    import cv2

    fs = cv2.FileStorage("calibration.yaml", cv2.FILE_STORAGE_WRITE | cv2.FILE_STORAGE_MEMORY)
    fs.write("image_width", int(cal.image_size[0]))
    fs.write("image_height", int(cal.image_size[1]))
    fs.write("camera_matrix", np.asarray(cal.camera_matrix, float))
    fs.write("distortion_coefficients", np.asarray(cal.distortion, float).reshape(1, -1))
    if cal.T_world_cam is not None:
        fs.write("T_world_camera", np.asarray(cal.T_world_cam, float))
    if cal.joint_offsets_rad:
        fs.startWriteStruct("arms", cv2.FileNode_SEQ)
        for arm in cal.joint_offsets_rad:
            fs.write("", str(arm))
        fs.endWriteStruct()
        for arm, offsets in cal.joint_offsets_rad.items():
            names = cal.joint_names.get(arm, [])
            fs.startWriteStruct(f"joint_names_{arm}", cv2.FileNode_SEQ)
            for n in names:
                fs.write("", str(n))
            fs.endWriteStruct()
            fs.write(f"joint_offsets_rad_{arm}", np.asarray(offsets, float).reshape(1, -1))
    fs.write("date", cal.date or now_iso())
    fs.write("source_run", str(cal.source_run))
    fs.write("camera_name", str(cal.camera_name))
    fs.write("method", str(cal.method))
    for key, value in cal.metrics.items():
        if key in _RESERVED or key.startswith(("joint_", "arms")):
            raise ValueError(f"calibration metric name {key!r} is reserved")
        fs.write(str(key), float(value))
    return fs.releaseAndGetString()


@dataclass
class CalibrationFile:
    """An artifact: a :class:`Calibration` saved as FileStorage YAML (atomically)."""

    calibration: Calibration
    suffix: str = ".yaml"

    def save(self, path: Path) -> None:

        atomic_write_text(path, calibration_text(self.calibration))


def save_calibration(path: str | Path, cal: Calibration) -> Path:
    CalibrationFile(cal).save(Path(path))
    return Path(path)


def load_calibration(path: str | Path) -> Calibration:
    """Read a calibration file written by :func:`save_calibration` (or by OpenCV with those keys)."""
    import cv2

    p = Path(str(path)).expanduser()
    if not p.is_file():
        raise ConfigError(f"calibration={str(path)!r}: no such file (give the path of a "
                          "calibration.yaml written by pipeline=calibrate)")
    try:
        fs = cv2.FileStorage(str(p), cv2.FILE_STORAGE_READ)
    except (cv2.error, SystemError) as e:
        raise ConfigError(f"calibration={str(p)!r} is not an OpenCV FileStorage file ({e})") from None
    if not fs.isOpened():
        raise ConfigError(f"calibration={str(p)!r} is not an OpenCV FileStorage file")
    try:
        K = fs.getNode("camera_matrix").mat()
        if K is None or K.shape != (3, 3):
            raise ConfigError(f"calibration {p}: camera_matrix is missing or not 3x3")
        dist = fs.getNode("distortion_coefficients").mat()
        w, h = int(fs.getNode("image_width").real()), int(fs.getNode("image_height").real())
        if w <= 0 or h <= 0:
            raise ConfigError(f"calibration {p}: image_width/image_height missing")
        T = fs.getNode("T_world_camera").mat()
        offsets: dict[str, np.ndarray] = {}
        names: dict[str, list[str]] = {}
        arms = fs.getNode("arms")
        if not arms.empty():
            for i in range(arms.size()):
                arm = arms.at(i).string()
                offsets[arm] = fs.getNode(f"joint_offsets_rad_{arm}").mat().ravel()
                jn = fs.getNode(f"joint_names_{arm}")
                names[arm] = [jn.at(k).string() for k in range(jn.size())] if not jn.empty() else []
        metrics = {}
        for key in fs.root().keys():
            if key in _RESERVED or key.startswith(("joint_names_", "joint_offsets_rad_")):
                continue
            node = fs.getNode(key)
            if node.isReal() or node.isInt():
                metrics[key] = float(node.real())
        return Calibration(np.asarray(K, float),
                           np.zeros(5) if dist is None else np.asarray(dist, float).ravel(),
                           (w, h), None if T is None else np.asarray(T, float), offsets, names,
                           fs.getNode("date").string(), fs.getNode("source_run").string(),
                           fs.getNode("camera_name").string() or "scene_camera",
                           fs.getNode("method").string(), metrics)
    finally:
        fs.release()


def offsets_by_joint(cal: Calibration) -> Mapping[str, float]:
    """{joint name: offset (rad)} over every arm that has names."""
    out = {}
    for arm, offs in cal.joint_offsets_rad.items():
        for n, o in zip(cal.joint_names.get(arm, []), offs, strict=False):
            out[n] = float(o)
    return out
