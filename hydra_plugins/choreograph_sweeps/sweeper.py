"""``hydra/sweeper=choreograph``: Hydra's basic sweeper, plus resume and a report at the end.

* ``hydra.sweeper.resume=true hydra.sweep.dir=<a sweep folder>``: jobs whose folder already says
  ``ok`` (with the same overrides) are kept; only the missing or failed ones run again, in their
  own numbered folders, on any launcher. A folder that holds a run of other overrides stops the
  sweep before anything runs.
* After the jobs: one line of how many finished ok; if any failed or were lost, a
  :class:`SweepFailed` naming them (``choreograph`` exits 1 with that message and no traceback).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.utils import JobReturn, JobStatus
from hydra.errors import CompactHydraException
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf

from core.errors import SweepError
from hydra_plugins.choreograph_sweeps.jobs import say
from stages.sweeps.jobs import JobRecord, parse_overrides, read_job, read_overrides

DRY_RUN = "dry run: not submitted"
JOB_SUBDIR = "${hydra.job.num}"


class SweepFailed(SweepError, CompactHydraException):
    """Some jobs of a sweep failed or were lost (each folder's status.json says why)."""


class ChoreographSweeper(BasicSweeper):
    def __init__(self, max_batch_size: int | None = None, params: dict[str, str] | None = None,
                 resume: bool = False) -> None:
        super().__init__(max_batch_size=max_batch_size, params=params)
        self.resume = resume

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction,
              config: DictConfig) -> None:
        super().setup(hydra_context=hydra_context, task_function=task_function, config=config)
        if self.resume:
            if not _folders_named_by_job(config):
                raise SweepFailed(f"hydra.sweeper.resume needs hydra.sweep.subdir={JOB_SUBDIR} "
                                  "(job folders named by job number)")
            self.launcher = ResumingLauncher(self.launcher, Path(str(config.hydra.sweep.dir)))

    def sweep(self, arguments: list[str]) -> Any:
        returns = super().sweep(arguments)
        values = [r._return_value for batch in returns for r in batch]
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        if values and all(v == DRY_RUN for v in values):
            say("dry run: nothing was submitted (see %s)", sweep_dir)
            return returns
        if _folders_named_by_job(self.config):
            report([read_job(sweep_dir / str(n)) for n in range(len(values))], sweep_dir)
        elif "failed" in values:  # folders named otherwise: the task's own answers
            raise SweepFailed(f"sweep: {values.count('failed')} of {len(values)} jobs failed in {sweep_dir}")
        return returns


def _folders_named_by_job(config: DictConfig) -> bool:
    """``hydra.sweep.subdir`` as written (not resolved) is the job number."""
    return OmegaConf.to_container(config.hydra.sweep, resolve=False).get("subdir") == JOB_SUBDIR


def report(jobs: list[JobRecord], sweep_dir: Path) -> None:
    """Count the sweep's jobs by their status.json; raise :class:`SweepFailed` naming the failed."""
    n_jobs = len(jobs)
    bad = [j for j in jobs if not j.ok]
    say("sweep: %d of %d jobs ok in %s", n_jobs - len(bad), n_jobs, sweep_dir)
    if bad:
        lines = [f"  job {j.job}: {j.status}" + (f" — {j.error.splitlines()[0][:200]}" if j.error else "")
                 for j in bad[:10]]
        raise SweepFailed(
            f"sweep: {len(bad)} of {n_jobs} jobs failed (each folder's status.json says why); "
            f"the others are in {sweep_dir}:\n" + "\n".join(lines + ["  ..."] * (len(bad) > 10))
            + f"\nre-run only those: the same command with hydra.sweep.dir={sweep_dir} "
            "hydra.sweeper.resume=true")


class ResumingLauncher(Launcher):
    """Wraps the configured launcher: jobs already ok are kept, the others run in their own folders."""

    def __init__(self, inner: Launcher, sweep_dir: Path):
        self.inner, self.sweep_dir = inner, sweep_dir

    def setup(self, **kwargs: Any) -> None:
        self.inner.setup(**kwargs)

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        kept: dict[int, JobReturn] = {}
        todo: list[list[str]] = []
        for n, overrides in enumerate(job_overrides, start=initial_job_idx):
            folder = self.sweep_dir / str(n)
            recorded = read_overrides(folder)
            if recorded is not None and recorded != parse_overrides(overrides):
                raise SweepFailed(
                    f"hydra.sweeper.resume: {folder} holds a run of {_plain(recorded)}, but job {n} of "
                    f"this sweep is {_plain(parse_overrides(overrides))}: resume with the overrides "
                    "the sweep was started with")
            if read_job(folder).ok:
                kept[n] = JobReturn(overrides=list(overrides), status=JobStatus.COMPLETED, _return_value="ok")
            else:  # the job keeps its number: its folder is named by it
                todo.append([*overrides, f"hydra.sweep.subdir={n}"])
        say("resume: %d of %d jobs already ok in %s; running %d", len(kept), len(job_overrides),
                 self.sweep_dir, len(todo))
        ran = iter(self.inner.launch(todo, initial_job_idx) if todo else [])
        return [kept[n] if n in kept else next(ran)
                for n in range(initial_job_idx, initial_job_idx + len(job_overrides))]


def _plain(overrides: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in overrides.items())
