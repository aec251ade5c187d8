"""What every choreograph launcher does with a job that came back without a result."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from hydra.core.utils import JobReturn, JobStatus
from omegaconf import DictConfig, OmegaConf

from stages.graph import record_lost_run

log = logging.getLogger("choreograph.sweep")


def say(message: str, *args: object) -> None:
    """A line for the person running the sweep (stderr; Hydra's own logging is off in the driver)."""
    print("choreograph: " + message % args, file=sys.stderr, flush=True)
    log.info(message, *args)


def job_dir(sweep_config: DictConfig) -> Path:
    """The folder a job writes (``hydra.sweep.dir`` / ``hydra.sweep.subdir``, resolved)."""
    return Path(str(sweep_config.hydra.sweep.dir)) / str(OmegaConf.select(sweep_config, "hydra.sweep.subdir"))


def lost_job(folder: Path, overrides: Sequence[str], reason: str) -> JobReturn:
    """Record a job whose process ended without a result: its status.json says failed and why
    (a run the runner had recorded keeps its own), the rest of its folder stays. The sweep goes on."""
    if record_lost_run(folder, f"SweepError: the job ended without a result: {reason}"):
        say("job %s lost: %s", folder.name, reason)
    return JobReturn(overrides=list(overrides), status=JobStatus.COMPLETED, _return_value="failed")
