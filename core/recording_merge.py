"""Several runs' recordings as one, side by side: each run's entities moved under its own name
(``job0/world/...``, ``job1/world/...``) and a layout with one column per run (its main scene
above its first plot), so a sweep's jobs play on one ``time`` timeline together."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from core.errors import RecordingError
from core.recording import View
from core.rerun_recorder import APPLICATION_ID, rerun_view


def merge_side_by_side(recordings: Mapping[str, Path], out: Path, views: Sequence[View],
                       name: str = "side by side") -> Path:
    """Write ``out``: every recording of ``recordings`` (name -> .rrd) under its name, laid out with
    the first of ``views`` whose subject each one logged (one spatial view and one other view)."""
    import rerun as rr
    import rerun.blueprint as bp
    from rerun.chunk import RrdReader

    columns, chunks = [], []
    for job, path in recordings.items():
        try:
            job_chunks = [c for c in RrdReader(path).stream().to_chunks()
                          if not c.entity_path.startswith("/__")]
        except Exception as exc:  # noqa: BLE001 - Rerun's reader errors are not typed
            raise RecordingError(f"{path} is not a readable Rerun recording: {exc}") from exc
        entities = {c.entity_path for c in job_chunks}
        chunks += [c.with_entity_path(f"/{job}{c.entity_path}") for c in job_chunks]
        shown = [v for v in views if v.shows_any(entities)]
        picks = [next((v for v in shown if v.spatial), None), next((v for v in shown if not v.spatial), None)]
        column = [rerun_view(v.under(job, f"{job}: {v.name}")) for v in picks if v is not None]
        if column:
            columns.append(bp.Vertical(*column, row_shares=[3, 2][:len(column)]))
    stream = rr.RecordingStream(APPLICATION_ID, recording_id=uuid.uuid4())
    stream.save(out, default_blueprint=bp.Blueprint(bp.Grid(*columns), collapse_panels=False) if columns
                else None)
    stream.send_recording_name(name)
    rr.send_chunks(chunks, recording=stream)
    stream.flush()
    stream.disconnect()
    return out
