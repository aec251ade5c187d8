"""Typed artifacts and their atomic save.

Every file choreograph writes goes through :func:`atomic_write_bytes` (temp file in the
same folder, then ``os.replace``), so a crash never leaves half a file behind.

An *artifact* is any object with a ``suffix`` (".json", ".npz", ...) and a
``save(path)`` method that writes itself to ``path`` atomically. Stages return
artifacts; the runner decides where they go.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

_UMASK = os.umask(0)
os.umask(_UMASK)


@runtime_checkable
class Artifact(Protocol):
    suffix: ClassVar[str]

    def save(self, path: Path) -> None: ...


def atomic_write_bytes(path: Path | str, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temp file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def to_jsonable(value: Any) -> Any:
    """NumPy scalars/arrays and tuples → plain JSON types."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, Path):
        return str(value)
    return value


def atomic_write_json(path: Path | str, data: Any) -> Path:
    text = json.dumps(to_jsonable(data), indent=2, allow_nan=True) + "\n"
    return atomic_write_bytes(path, text.encode())


def atomic_write_text(path: Path | str, text: str) -> Path:
    return atomic_write_bytes(path, text.encode())


def atomic_write_npz(path: Path | str, arrays: dict[str, Any]) -> Path:
    buf = io.BytesIO()
    np.savez_compressed(buf, **{k: np.asarray(v) for k, v in arrays.items()})
    return atomic_write_bytes(path, buf.getvalue())


@dataclass
class JsonFile:
    data: Any
    suffix: ClassVar[str] = ".json"

    def save(self, path: Path) -> None:
        atomic_write_json(path, self.data)


@dataclass
class TextFile:
    text: str
    suffix: str = ".txt"

    def save(self, path: Path) -> None:
        atomic_write_text(path, self.text)


@dataclass
class NpzFile:
    arrays: dict[str, Any]
    suffix: ClassVar[str] = ".npz"

    def save(self, path: Path) -> None:
        atomic_write_npz(path, self.arrays)


@dataclass
class PngFigure:
    """A matplotlib figure, saved as PNG and then closed."""

    figure: Any
    dpi: int = 110
    suffix: ClassVar[str] = ".png"

    def save(self, path: Path) -> None:
        import matplotlib.pyplot as plt

        buf = io.BytesIO()
        self.figure.savefig(buf, format="png", dpi=self.dpi, bbox_inches="tight")
        plt.close(self.figure)
        atomic_write_bytes(path, buf.getvalue())


@dataclass
class PngImage:
    """An image array (H×W×3 RGB uint8, or H×W grey)."""

    image: np.ndarray
    suffix: ClassVar[str] = ".png"

    def save(self, path: Path) -> None:
        import cv2

        img = np.asarray(self.image)
        if img.ndim == 3:
            img = cv2.cvtColor(img, cv2.COLOR_RGB2BGR)
        ok, enc = cv2.imencode(".png", img)
        if not ok:
            raise OSError(f"could not encode PNG for {path}")
        atomic_write_bytes(path, enc.tobytes())


@dataclass
class Mp4Video:
    """RGB frames (each H×W×3 uint8) written as an MP4 at ``fps``."""

    frames: list[np.ndarray] = field(default_factory=list)
    fps: float = 30.0
    suffix: ClassVar[str] = ".mp4"

    def save(self, path: Path) -> None:
        import cv2

        if not self.frames:
            raise ValueError("an Mp4Video needs at least one frame")
        h, w = self.frames[0].shape[:2]
        path = Path(path)
        tmp = path.with_name(f".{path.stem}.tmp.mp4")
        writer = cv2.VideoWriter(str(tmp), cv2.VideoWriter_fourcc(*"mp4v"), self.fps, (w, h))
        if not writer.isOpened():
            raise OSError("OpenCV could not open an MP4 writer (codec mp4v)")
        try:
            for frame in self.frames:
                writer.write(cv2.cvtColor(np.asarray(frame, dtype=np.uint8), cv2.COLOR_RGB2BGR))
        finally:
            writer.release()
        os.replace(tmp, path)
