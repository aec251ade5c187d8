"""Sweeps beyond one process: Ray (a real head on 127.0.0.1), submitit, SLURM's submission, a lost
job, resume, and the gatherer over any multirun folder."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from core.errors import ConfigError, SweepError
from stages.graph import build_graph, run_graph
from stages.sweeps.jobs import read_sweep
from tests.conftest import run_cli

KILL_ONCE = '+pipeline.stages.kill={_target_: stages.examples.KillOnce, token: "%s/kill-${seed}"}'


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def _complete(job: Path) -> bool:
    return (_json(job / "status.json")["status"] == "ok" and (job / ".hydra" / "config.yaml").exists()
            and "total.total" in _json(job / "metrics.json") and (job / "run.log").exists())


# --------------------------------------------------------------------------- Ray
RAY = str(Path(sys.executable).parent / "ray")
RAY_ENV = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_USAGE_STATS_ENABLED")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray(*args: str) -> None:
    res = subprocess.run([RAY, *args], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]


@pytest.fixture(scope="module")
def ray_head():
    """A real Ray head on 127.0.0.1 with token authentication (Ray's default), a fresh token in the
    environment of the head, its nodes and the CLI; stopped, with any node that joined, after."""
    saved = {k: os.environ.get(k) for k in RAY_ENV}
    os.environ.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
                       "RAY_USAGE_STATS_ENABLED": "0"})
    port = _free_port()
    # a short folder: Ray's unix sockets live under it, and their paths may not exceed 107 bytes
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    _ray("start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2",
         "--include-dashboard=false", "--object-store-memory=200000000", f"--temp-dir={temp}")
    try:
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([RAY, "stop", "--force"], capture_output=True, timeout=120)
        shutil.rmtree(temp, ignore_errors=True)
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


def test_a_ray_sweep_on_a_running_head_writes_every_run_folder(ray_head, tmp_path):
    sweep = tmp_path / "sweep"
    res = run_cli("-m", "pipeline=demo", "seed=1,2,3,4", "hydra/launcher=ray",
                  f"hydra.launcher.ray.init.address={ray_head}", f"hydra.sweep.dir={sweep}")
    assert res.returncode == 0, res.stderr[-2000:]
    assert "sweep: 4 of 4 jobs ok" in res.stderr and "Traceback" not in res.stderr
    assert all(_complete(sweep / str(n)) for n in range(4))
    assert "seed=1,2,3,4" in (sweep / "multirun.yaml").read_text()
    draws = {_json(sweep / str(n) / "metrics.json")["a.draw"] for n in range(4)}
    assert len(draws) == 4   # each job its own seed


def test_ray_jobs_on_another_node_come_back_and_a_killed_one_is_recorded(ray_head, tmp_path):
    """A second node joins the head; every job is sent there (it alone has the resource 'away'),
    runs in a scratch folder of that node and its run folder comes back in the job's result. One
    job's process is killed: its folder says so, the others finish, the exit names it."""
    _ray("start", f"--address={ray_head}", "--num-cpus=2", '--resources={"away": 2}')
    sweep = tmp_path / "sweep"
    (tmp_path / "kill-2").touch()
    res = run_cli("-m", "pipeline=demo", "seed=1,2,3", KILL_ONCE % tmp_path, "hydra/launcher=ray",
                  f"hydra.launcher.ray.init.address={ray_head}",
                  "+hydra.launcher.ray.remote.resources={away: 1}", f"hydra.sweep.dir={sweep}")
    assert res.returncode == 1, res.stderr[-2000:]
    assert "sweep: 1 of 3 jobs failed" in res.stderr and "Traceback" not in res.stderr
    for n in (0, 2):
        assert _complete(sweep / str(n))
        saved = (sweep / str(n) / ".hydra" / "hydra.yaml").read_text()
        assert "choreograph-job-" in saved   # it ran in the other node's scratch folder
    lost = _json(sweep / "1" / "status.json")
    assert lost["status"] == "failed" and "WorkerCrashedError" in lost["error"], lost


# --------------------------------------------------------------------------- submitit
def test_a_killed_job_is_recorded_the_others_finish_and_resume_runs_only_it(tmp_path):
    sweep = tmp_path / "sweep"
    (tmp_path / "kill-2").touch()
    args = ("-m", "pipeline=demo", "seed=1,2,3", KILL_ONCE % tmp_path, "hydra/launcher=submitit_local",
            f"hydra.sweep.dir={sweep}")
    res = run_cli(*args)
    assert res.returncode == 1 and "sweep: 1 of 3 jobs failed" in res.stderr, res.stderr[-2000:]
    assert "hydra.sweeper.resume=true" in res.stderr and "Traceback" not in res.stderr
    assert _complete(sweep / "0") and _complete(sweep / "2")
    lost = _json(sweep / "1" / "status.json")
    assert lost["status"] == "failed" and "without a result" in lost["error"]
    assert "a.draw" in _json(sweep / "1" / "metrics.json")   # what it measured before it died stays
    kept = (sweep / "0" / "status.json").stat().st_mtime_ns

    res = run_cli(*args, "hydra.sweeper.resume=true")
    assert res.returncode == 0, res.stderr[-2000:]
    assert "resume: 2 of 3 jobs already ok" in res.stderr and "sweep: 3 of 3 jobs ok" in res.stderr
    assert _complete(sweep / "1") and (sweep / "0" / "status.json").stat().st_mtime_ns == kept

    res = run_cli("-m", "pipeline=demo", "seed=1,2,4", KILL_ONCE % tmp_path, "hydra/launcher=submitit_local",
                  f"hydra.sweep.dir={sweep}", "hydra.sweeper.resume=true")
    assert res.returncode == 1 and "holds a run of" in res.stderr and "seed=3" in res.stderr


def test_the_slurm_submission_is_rendered_from_config_without_submitting(tmp_path):
    sweep = tmp_path / "sweep"
    res = run_cli("-m", "pipeline=demo", "seed=range(5)", "hydra/launcher=slurm",
                  "hydra.launcher.dry_run=true", "hydra.launcher.partition=gpu",
                  "hydra.launcher.timeout_min=90", "hydra.launcher.cpus_per_task=4",
                  "hydra.launcher.mem_gb=16", "hydra.launcher.array_parallelism=3",
                  f"hydra.sweep.dir={sweep}")
    assert res.returncode == 0, res.stderr[-2000:]
    script = (sweep / "submission.sbatch").read_text()
    for line in ("#SBATCH --partition=gpu", "#SBATCH --time=90", "#SBATCH --cpus-per-task=4",
                 "#SBATCH --mem=16GB", "#SBATCH --array=0-4%3", "export MUJOCO_GL=egl"):
        assert line in script, (line, script)
    assert not list(sweep.glob("[0-9]*")) and "nothing was submitted" in res.stderr


# --------------------------------------------------------------------------- gather
def _job(root: Path, n: int, overrides: list[str], metrics: dict, status: str = "ok", error=None):
    d = root / str(n)
    (d / ".hydra").mkdir(parents=True)
    (d / ".hydra" / "overrides.yaml").write_text("".join(f"- {o}\n" for o in overrides))
    (d / "metrics.json").write_text(json.dumps(metrics))
    (d / "status.json").write_text(json.dumps({"status": status, "error": error, "seconds": 1.5}))


def _gather(sweep: Path, out: Path, **params):
    graph = build_graph({"gather": {"_target_": "stages.adapters.sweeps.gather.Gather",
                                    "sweep_dir": str(sweep), **params}})
    return run_graph(graph, out, seed=0)


def test_gather_reads_any_multirun_into_runs_summary_pivot_and_plots(tmp_path):
    sweep = tmp_path / "sweep"
    cells = [("hairpin", "skidaddle", 0.14, 0), ("hairpin", "roadrunner", 1.88, 102),
             ("straight", "skidaddle", 0.07, 0), ("straight", "roadrunner", 0.02, 3)]
    for n, (path, follower, dev, sat) in enumerate(cells):
        _job(sweep, n, [f"path={path}", f"follower={follower}", "seed=1"],
             {"follow.max_deviation_in": dev, "follow.saturated_ticks": sat,
              "reset.failure_causes": "planning,standing" if n == 1 else ""},
             status="ok" if n != 3 else "failed", error=None if n != 3 else "ExecutionError: slipped\nmore")
    (sweep / "4").mkdir()                        # a job folder with nothing in it yet: not a job
    (sweep / "multirun.yaml").write_text("{}")
    record = _gather(sweep, tmp_path / "out",
                     figures={"follow.max_deviation_in": ["median", "max"], "follow.saturated_ticks": ["sum"],
                              "reset.failure_causes": ["tally"]},
                     pivot={"rows": "path", "columns": "follower",
                            "cells": ["follow.max_deviation_in", "follow.saturated_ticks"]},
                     plots=["follow.max_deviation_in"])
    assert record.ok, record.error
    assert record.metrics["gather.jobs"] == 4 and record.metrics["gather.failed"] == 1
    out = tmp_path / "out" / "gather"
    runs = (out / "runs.csv").read_text().splitlines()
    assert runs[0].startswith("job,path,follower,seed,status,error,seconds,follow.max_deviation_in")
    assert runs[4].startswith("3,straight,roadrunner,1,failed,ExecutionError: slipped,1.5,0.02")
    md = (out / "summary.md").read_text()
    assert "| hairpin | 0.14 / 0 | 1.88 / 102 |" in md and "| straight | 0.07 / 0 | 0.02 / 3 |" in md
    assert "| hairpin | roadrunner | 1 | 1 | 0 | 1.880 | 1.880 | 102 | planning: 1, standing: 1 |" in md
    assert "- job 3 (path=straight follower=roadrunner seed=1): failed — ExecutionError: slipped" in md
    assert (out / "plots.png").stat().st_size > 5_000


def test_gather_over_seeds_gives_one_row_of_figures_and_names_a_mistyped_metric(tmp_path):
    sweep = tmp_path / "sweep"
    for n in range(3):
        _job(sweep, n, [f"seed={n}", "hardware.speed=4"], {"reset.success": n != 1, "reset.time_s": 2.0 + n})
    record = _gather(sweep, tmp_path / "a", figures={"reset.success": ["sum", "count", "rate"],
                                                     "reset.time_s": ["median", "max"]})
    assert record.ok, record.error
    assert record.metrics["gather.reset.success.sum"] == 2
    assert record.metrics["gather.reset.time_s.max"] == 4.0
    assert record.metrics["gather.reset.success.rate"] == pytest.approx(2 / 3)
    assert "| reset.time_s.median | 3.000 |" in (tmp_path / "a/gather/summary.md").read_text()
    record = _gather(sweep, tmp_path / "b", figures={"reset.sucess": ["sum"]})
    assert not record.ok and "no job has metric 'reset.sucess'; close: ['reset.success'" in record.error
    assert (tmp_path / "b/gather/runs.csv").exists()    # read before the mistake was found
    with pytest.raises(ConfigError, match="statistic|allowed"):
        build_graph_and_construct(sweep, figures={"reset.time_s": ["average"]})
    with pytest.raises(SweepError, match="no job folders"):
        read_sweep(tmp_path / "a")


def build_graph_and_construct(sweep: Path, **params):
    from stages.graph import instantiate

    graph = build_graph({"gather": {"_target_": "stages.adapters.sweeps.gather.Gather",
                                    "sweep_dir": str(sweep), **params}})
    return instantiate(graph.nodes[0])


def test_gather_from_the_command_line(tmp_path):
    sweep = tmp_path / "sweep"
    assert run_cli("-m", "pipeline=demo", "seed=1,2", f"hydra.sweep.dir={sweep}").returncode == 0
    res = run_cli("pipeline=gather", f"sweep_dir={sweep}", f"hydra.run.dir={tmp_path / 'g'}",
                  "+pipeline.stages.gather.figures={total.total: [median]}")
    assert res.returncode == 0, res.stderr[-2000:]
    assert _json(tmp_path / "g" / "metrics.json")["gather.total.total.median"] == 5
    res = run_cli("pipeline=gather", f"sweep_dir={tmp_path / 'nope'}", f"hydra.run.dir={tmp_path / 'h'}")
    assert res.returncode == 1 and "is not a folder" in res.stderr
