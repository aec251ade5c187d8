"""The real command line: failures, bad overrides, multirun, re-running a saved run."""

import json

import pytest

from tests.conftest import run_cli


def _json(path):
    return json.loads(path.read_text())


def test_failing_stage_exits_nonzero_with_one_line_and_no_traceback(tmp_path):
    run = tmp_path / "run"
    res = run_cli("pipeline=demo", "+pipeline.stages.boom._target_=stages.examples.Fail",
                  f"hydra.run.dir={run}")
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
    assert "failed at boom: ChoreographError: failed on purpose" in res.stderr
    assert _json(run / "status.json")["failed_stage"] == "boom"
    assert _json(run / "metrics.json")["total.total"] == 5
    assert "Traceback" in (run / "run.log").read_text()


@pytest.mark.parametrize("override, key", [
    ("robot.clearance_m=abc", "robot.clearance_m"),
    ("seed=x", "seed"),
    ("no_such_key=1", "no_such_key"),
    ("runner.log_level=LOUD", "runner.log_level"),
])
def test_bad_override_fails_at_compose_naming_the_key(tmp_path, override, key):
    res = run_cli("pipeline=demo", override, f"hydra.run.dir={tmp_path / 'r'}")
    assert res.returncode != 0
    assert key in res.stderr
    assert not (tmp_path / "r" / "a").exists()


def test_target_outside_allowlist_is_refused(tmp_path):
    run = tmp_path / "r"
    res = run_cli("pipeline=demo", "pipeline.stages.a._target_=builtins.eval", f"hydra.run.dir={run}")
    assert res.returncode != 0
    assert "is not allowed" in _json(run / "status.json")["error"]


def test_multirun_with_joblib_writes_one_complete_folder_per_job(tmp_path):
    sweep = tmp_path / "sweep"
    res = run_cli("-m", "pipeline=demo", "seed=1,2", "hydra/launcher=joblib",
                  f"hydra.sweep.dir={sweep}")
    assert res.returncode == 0, res.stderr
    for job in ("0", "1"):
        assert _json(sweep / job / "status.json")["status"] == "ok"
        assert (sweep / job / ".hydra" / "config.yaml").exists()
    assert _json(sweep / "0" / "metrics.json")["a.draw"] != _json(sweep / "1" / "metrics.json")["a.draw"]


def test_rerun_from_saved_hydra_folder_gives_identical_metrics(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    assert run_cli("pipeline=demo", "seed=5", f"hydra.run.dir={first}").returncode == 0
    res = run_cli("--config-dir", str(first / ".hydra"), "--config-name", "config",
                  f"hydra.run.dir={second}")
    assert res.returncode == 0, res.stderr

    def untimed(path):
        return {k: v for k, v in _json(path).items() if not k.endswith(("time_s", "seconds"))}

    assert untimed(first / "metrics.json") == untimed(second / "metrics.json")
    assert (second / "run.log").exists()
