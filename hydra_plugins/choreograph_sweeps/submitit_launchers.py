"""``hydra/launcher=submitit_local`` and ``hydra/launcher=slurm``: the submitit plugin's launchers,
made to survive a lost job, and able to show a SLURM submission without submitting it.

* a job that ends without a result (killed, pre-empted past its retries, out of memory, timed out)
  is recorded in its folder's status.json as failed; the others finish (the plugin's launchers stop
  at the first such job);
* ``dry_run: true`` (SLURM): the sbatch script submitit would submit for this sweep is written to
  ``<hydra.sweep.dir>/submission.sbatch`` and printed; nothing is submitted.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus, filter_overrides
from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import LocalLauncher, SlurmLauncher
from omegaconf import OmegaConf, open_dict

from core.artifacts import atomic_write_text
from hydra_plugins.choreograph_sweeps.jobs import job_dir, lost_job, say
from hydra_plugins.choreograph_sweeps.sweeper import DRY_RUN

log = logging.getLogger("choreograph.sweep")


class _SurvivingLostJobs:
    """launch(): every job submitted as one array; each one's result collected on its own."""

    _EXECUTOR: str
    params: dict[str, Any]

    def executor(self):
        """The submitit executor with this launcher's parameters (as the plugin sets them)."""
        import submitit

        init_keys = {"submitit_folder", "max_num_timeout"}
        executor = submitit.AutoExecutor(
            cluster=self._EXECUTOR, folder=self.params["submitit_folder"],
            **{f"{self._EXECUTOR}_max_num_timeout": self.params["max_num_timeout"]}
            if "max_num_timeout" in self.params else {})
        common = set(OmegaConf.structured(BaseQueueConf).keys())
        executor.update_parameters(**{k if k in common else f"{self._EXECUTOR}_{k}": v
                                      for k, v in self.params.items() if k not in init_keys})
        return executor

    def launch(self, job_overrides, initial_job_idx: int) -> list[JobReturn]:
        from tqdm.auto import tqdm

        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        args = []
        for idx, overrides in enumerate(job_overrides, start=initial_job_idx):
            log.info("\t#%d : %s", idx, " ".join(filter_overrides(overrides)))
            args.append((list(overrides), "hydra.sweep.dir", idx, f"job_id_for_{idx}", Singleton.get_state()))
        jobs = self.executor().map_array(self, *zip(*args, strict=True))
        say("submitit (%s): %d jobs into %s", self._EXECUTOR, len(jobs), sweep_dir)
        results = []
        for (overrides, _, idx, _, _), job in zip(tqdm(args, desc=f"sweep ({self._EXECUTOR})",
                                                       disable=None), jobs, strict=True):
            try:
                ret = job.results()[0]
                if ret.status is JobStatus.COMPLETED:
                    results.append(ret)
                    continue
                exc = ret._return_value   # the task raised: recorded like a lost job, the sweep goes on
            except Exception as lost:  # noqa: BLE001 - killed, timed out, crashed: recorded
                exc = lost
            cfg = self.hydra_context.config_loader.load_sweep_config(self.config, overrides)
            with open_dict(cfg):
                cfg.hydra.job.num = idx
            first = " ".join(str(exc).split("Error stream")[0].split())[:300]  # not the job's log
            results.append(lost_job(job_dir(cfg), overrides,
                                    f"{type(exc).__name__} (submitit job {job.job_id}): {first}"))
        return results


class ChoreographLocalLauncher(_SurvivingLostJobs, LocalLauncher):
    """Jobs as local processes through submitit (``hydra/launcher=submitit_local``)."""


class ChoreographSlurmLauncher(_SurvivingLostJobs, SlurmLauncher):
    """A SLURM job array through submitit (``hydra/launcher=slurm``)."""

    def __init__(self, dry_run: bool = False, **params: Any) -> None:
        super().__init__(**params)
        self.dry_run = dry_run

    def sbatch_script(self, n_jobs: int) -> str:
        """The sbatch script submitit writes for an array of ``n_jobs`` jobs with these parameters
        (on any machine: submitit's check for ``srun`` is skipped, as nothing is submitted)."""
        from unittest import mock

        from submitit.slurm.slurm import SlurmExecutor

        with mock.patch.object(SlurmExecutor, "affinity", return_value=1):
            slurm = self.executor()._executor
        slurm.parameters["map_count"] = n_jobs
        return slurm._make_submission_file_text(slurm._submitit_command_str, "dry-run")

    def launch(self, job_overrides, initial_job_idx: int) -> list[JobReturn]:
        if not self.dry_run:
            return super().launch(job_overrides, initial_job_idx)
        path = Path(str(self.config.hydra.sweep.dir)) / "submission.sbatch"
        atomic_write_text(path, self.sbatch_script(len(job_overrides)))
        say("dry run: the submission for %d jobs is %s:\n%s", len(job_overrides), path, path.read_text())
        return [JobReturn(overrides=list(o), status=JobStatus.COMPLETED, _return_value=DRY_RUN)
                for o in job_overrides]
