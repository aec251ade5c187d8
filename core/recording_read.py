"""Read a run's ``recording.rrd`` back with Rerun's own reader: what entities and timelines it holds."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

from core.errors import RecordingError


@dataclass(frozen=True)
class RecordingContents:
    """Entity paths (``/world/scene/table``...), each entity's timelines and row count."""

    path: Path
    timelines: dict[str, tuple[str, ...]]   # entity path -> its timelines ("time", "log_time")
    rows: dict[str, int]                      # entity path -> rows logged on a timeline (not static)
    static: frozenset[str]                    # entity paths logged static

    @property
    def entity_paths(self) -> tuple[str, ...]:
        return tuple(sorted(self.rows))

    def under(self, prefix: str) -> tuple[str, ...]:
        """Entity paths at or below ``prefix`` (with or without the leading slash)."""
        p = "/" + prefix.strip("/")
        return tuple(e for e in self.entity_paths if e == p or e.startswith(p + "/"))


def read_recording(path: Path | str) -> RecordingContents:
    """Every chunk of the first recording in ``path``; :class:`RecordingError` if there is none."""
    path = Path(path)
    if not path.is_file():
        raise RecordingError(f"no recording at {path}")
    from rerun.chunk import RrdReader

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # "no footer": a run killed mid-way; readable all the same
            chunks = RrdReader(path).stream().to_chunks()
    except Exception as exc:  # noqa: BLE001 - Rerun's reader errors are not typed
        raise RecordingError(f"{path} is not a readable Rerun recording: {exc}") from exc
    timelines: dict[str, set[str]] = {}
    rows: dict[str, int] = {}
    static: set[str] = set()
    for chunk in chunks:
        e = chunk.entity_path
        timelines.setdefault(e, set()).update(chunk.timeline_names)
        rows.setdefault(e, 0)
        if chunk.is_static:
            static.add(e)
        else:
            rows[e] += chunk.num_rows
    return RecordingContents(path, {e: tuple(sorted(t)) for e, t in timelines.items()}, rows,
                             frozenset(static))
