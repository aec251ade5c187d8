"""The job folders of a multirun, read back one record each.

    jobs = read_sweep("runs/reset/multirun/<stamp>")
    jobs[0].overrides   # {"seed": "300", "hardware.speed": "4"}  (from .hydra/overrides.yaml)
    jobs[0].status      # "ok" | "failed" | "missing" (no status.json: the job was lost or is running)

A job folder is a numbered subfolder (Hydra's job number) holding ``.hydra/``, ``metrics.json`` or
``status.json``; anything else in the sweep folder (``multirun.yaml``, ``.submitit/``) is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from core.errors import SweepError


@dataclass(frozen=True)
class JobRecord:
    job: str                        # the job folder's name (Hydra's job number)
    overrides: dict[str, str]       # the job's own overrides, as typed on the command line
    status: str                     # ok | failed | missing
    error: str
    seconds: float | None
    metrics: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def job_folders(sweep_dir: Path | str) -> list[Path]:
    """The numbered job folders of ``sweep_dir``, in job order."""
    root = Path(sweep_dir)
    if not root.is_dir():
        raise SweepError(f"{root} is not a folder")
    found = [p for p in root.iterdir() if p.is_dir() and p.name.isdigit()
             and any((p / f).exists() for f in (".hydra", "metrics.json", "status.json"))]
    return sorted(found, key=lambda p: int(p.name))


def parse_overrides(items: Iterable[str]) -> dict[str, str]:
    """``["seed=3", "+a.b=1"]`` as ``{"seed": "3", "a.b": "1"}`` (``+``/``++`` dropped from keys)."""
    out = {}
    for item in items:
        key, _, value = str(item).partition("=")
        out[key.lstrip("+")] = value
    return out


def read_overrides(job_dir: Path) -> dict[str, str] | None:
    """The job's ``.hydra/overrides.yaml`` as a mapping; None when the folder has none."""
    path = job_dir / ".hydra" / "overrides.yaml"
    if not path.exists():
        return None
    return parse_overrides(yaml.safe_load(path.read_text()) or [])


def _json(path: Path) -> dict:
    try:
        return json.loads(path.read_text()) if path.exists() else {}
    except json.JSONDecodeError:  # a job killed while writing (writes are atomic; kept for old folders)
        return {}


def read_job(job_dir: Path) -> JobRecord:
    status = _json(job_dir / "status.json")
    return JobRecord(job=job_dir.name, overrides=read_overrides(job_dir) or {},
                     status=status.get("status", "missing"), error=status.get("error") or "",
                     seconds=status.get("seconds"), metrics=_json(job_dir / "metrics.json"))


def read_sweep(sweep_dir: Path | str,
               progress: Callable[[Iterable], Iterator] = iter) -> list[JobRecord]:
    """Every job of ``sweep_dir``; ``progress`` wraps the loop (a progress bar)."""
    folders = job_folders(sweep_dir)
    if not folders:
        raise SweepError(f"{sweep_dir} holds no job folders (<n>/ with .hydra/, metrics.json or "
                         "status.json): is it a multirun folder (runs/<pipeline>/multirun/<stamp>)?")
    return [read_job(folder) for folder in progress(folders)]


def override_keys(jobs: Iterable[JobRecord]) -> list[str]:
    """Every override key of any job, in first-appearance order."""
    keys: dict[str, None] = {}
    for job in jobs:
        keys.update(dict.fromkeys(job.overrides))
    return list(keys)


def swept_keys(jobs: list[JobRecord], leave_out: Iterable[str] = ("seed",)) -> list[str]:
    """The override keys whose value differs between jobs (``seed`` left out): what a sweep compares."""
    return [k for k in override_keys(jobs) if k not in set(leave_out)
            and len({job.overrides.get(k) for job in jobs}) > 1]
