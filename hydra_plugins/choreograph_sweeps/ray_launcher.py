"""``hydra/launcher=ray``: Hydra's Ray launcher plugin (hydra-ray-launcher), made for long sweeps.

What it adds to the plugin's launcher:

* **a lost job loses nothing**: a job whose worker dies (killed, out of memory, a node gone) is
  recorded in its folder's status.json as failed; the other jobs finish (the plugin's launcher
  stops at the first lost job). ``remote.max_retries: 0`` by default, so a killed job is not
  silently run twice;
* **run folders come back from other nodes**: a job that lands on another node than the one that
  submitted it runs in a scratch folder there; its complete run folder travels back in the job's
  result (a tar.gz through Ray's object store) and is written into ``hydra.sweep.dir`` on the
  submitting machine, so no shared file system is needed (with one, the copy is redundant but
  harmless). Its saved config names the scratch folder as its output folder;
* ``hydra.sweep.dir`` is made absolute before the jobs leave (workers start in other folders);
* the object store size is set only when Ray is started here (a running cluster has its own);
* a progress bar over the jobs as they finish.
"""

from __future__ import annotations

import io
import logging
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus, filter_overrides, run_job, setup_globals
from hydra_plugins.hydra_ray_launcher.ray_launcher import RayLauncher
from omegaconf import DictConfig, OmegaConf, open_dict

from hydra_plugins.choreograph_sweeps.jobs import job_dir, lost_job, say

log = logging.getLogger("choreograph.sweep")
# ray.init() arguments that only size a Ray started here; joining a running cluster refuses them
NEW_CLUSTER_ONLY = ("num_cpus", "num_gpus", "resources", "object_store_memory", "include_dashboard",
                    "dashboard_host", "dashboard_port")


class ChoreographRayLauncher(RayLauncher):
    def launch(self, job_overrides, initial_job_idx: int) -> list[JobReturn]:
        import ray
        from tqdm.auto import tqdm

        setup_globals()
        sweep_dir = Path(str(self.config.hydra.sweep.dir)).resolve()
        sweep_dir.mkdir(parents=True, exist_ok=True)
        _start_ray(OmegaConf.to_container(self.ray_cfg.init, resolve=True) or {})
        here = ray.get_runtime_context().get_node_id()
        remote = ray.remote(**(OmegaConf.to_container(self.ray_cfg.remote, resolve=True) or {}))(_ray_job)
        say("Ray: %d jobs into %s", len(job_overrides), sweep_dir)
        jobs: dict[Any, tuple[int, Path, list[str]]] = {}
        for idx, overrides in enumerate(job_overrides, start=initial_job_idx):
            log.info("\t#%d : %s", idx, " ".join(filter_overrides(overrides)))
            cfg = self.hydra_context.config_loader.load_sweep_config(self.config, list(overrides))
            with open_dict(cfg):
                cfg.hydra.job.id = f"job_id_for_{idx}"
                cfg.hydra.job.num = idx
                cfg.hydra.sweep.dir = str(sweep_dir)
            ref = remote.remote(self.hydra_context, cfg, self.task_function, Singleton.get_state(), here)
            jobs[ref] = (idx, job_dir(cfg), list(overrides))
        results: dict[int, JobReturn] = {}
        pending = list(jobs)
        with tqdm(total=len(pending), desc="sweep (ray)", disable=None) as bar:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                idx, folder, overrides = jobs[done[0]]
                results[idx] = _collect(done[0], folder, overrides, sweep_dir)
                bar.update()
        return [results[i] for i in sorted(results)]


def _start_ray(init: dict) -> None:
    import ray

    if ray.is_initialized():
        return
    if init.get("address"):  # a running cluster: sized by its own `ray start`
        for key in NEW_CLUSTER_ONLY:
            init.pop(key, None)
    ray.init(**init)


def _collect(ref, folder: Path, overrides: list[str], sweep_dir: Path) -> JobReturn:
    import ray

    try:
        ret, packed = ray.get(ref)
    except Exception as exc:  # noqa: BLE001 - the worker died or the task raised: recorded
        return lost_job(folder, overrides, f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
    if packed is not None:
        with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as tar:
            tar.extractall(sweep_dir, filter="data")
    if ret.status is not JobStatus.COMPLETED:
        return lost_job(folder, overrides, f"{type(ret._return_value).__name__}: {ret._return_value}")
    return ret


def _ray_job(hydra_context, sweep_config: DictConfig, task_function, singleton_state: dict,
             submitted_from: str) -> tuple[JobReturn, bytes | None]:
    """One job on a Ray worker. On another node than ``submitted_from``, it runs in a scratch folder
    and its run folder is returned packed; on that node it writes ``hydra.sweep.dir`` directly."""
    import ray

    setup_globals()
    Singleton.set_state(singleton_state)
    scratch = None
    if ray.get_runtime_context().get_node_id() != submitted_from:
        scratch = Path(tempfile.mkdtemp(prefix="choreograph-job-"))
        with open_dict(sweep_config):
            sweep_config.hydra.sweep.dir = str(scratch)
    HydraConfig.instance().set_config(sweep_config)
    try:
        ret = run_job(hydra_context=hydra_context, task_function=task_function, config=sweep_config,
                      job_dir_key="hydra.sweep.dir", job_subdir_key="hydra.sweep.subdir")
    except BaseException as exc:  # noqa: BLE001 - e.g. SystemExit: the folder still goes back
        ret = JobReturn(status=JobStatus.FAILED, _return_value=RuntimeError(f"{type(exc).__name__}: {exc}"))
    if isinstance(ret._return_value, BaseException):  # exceptions may not unpickle on the driver
        ret._return_value = RuntimeError(f"{type(ret._return_value).__name__}: {ret._return_value}")
    if scratch is None:
        return ret, None
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for item in sorted(scratch.iterdir()):
            tar.add(item, arcname=item.name)
    shutil.rmtree(scratch, ignore_errors=True)
    return ret, buf.getvalue()
