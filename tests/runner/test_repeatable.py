"""The same config and seed give the same run, under any load (hardware.clock=sim, the default).

Each pipeline runs once on a quiet machine, then again from its own ``.hydra/`` beside two busy
processes; every metric must be identical, bitwise. The only metrics left out are wall-clock
measurements of how long this machine took to compute something (``WALL_TIME``): they are not
outputs of the simulation and no clock mode can make them repeat.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli

# wall time this machine took: stage times (``<stage>.time_s``, added by the runner), planning,
# retiming, verification and perception compute times, the reset's and the RL loop's wall times, and
# throughputs per wall second (``plan.checks_per_s``)
WALL_TIME = re.compile(r"(^|\.)([a-z_]*time(_mean|_max|_median)?_s|[a-z_]*wall_s|[a-z_]*_us|[a-z_]*_per_s)$")
SIM_TIME = {"drop.time_s", "drop_peg.settle_time_s"}   # simulated seconds: these must repeat

SMALL = {   # each pipeline as small as it still does its job; no video, no recording (not metrics)
    "reset": ["pipeline=reset", "seed=3", "pipeline.stages.reset.video=false"],
    "crossing": ["pipeline=crossing", "pipeline.stages.execute.video=false"],
    "calibrate_peg": ["pipeline=calibrate_peg", "scene.lights.key.castshadow=false",
                      "pipeline.params.views=8", "pipeline.params.grid=[2,2]", "seed=3"],
    "rl_loop": ["pipeline=rl_loop", "seed=2", "pipeline.stages.rl_loop.episodes=1"],
}


def is_wall_time(key: str) -> bool:
    return key not in SIM_TIME and bool(WALL_TIME.search(key))


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def test_wall_time_keys_are_told_from_simulated_ones():
    assert is_wall_time("plan.time_s") and is_wall_time("reset.time_s") and is_wall_time("bench.wall_s")
    assert is_wall_time("plan.checks_per_s") and is_wall_time("rl_loop.reset_time_mean_s")
    assert not is_wall_time("drop.time_s") and not is_wall_time("execute.start_skew_s")
    assert not is_wall_time("landing.true_position_error_m")


@pytest.mark.parametrize("pipeline", list(SMALL))
def test_a_rerun_from_its_own_config_beside_two_busy_processes_is_identical(pipeline, tmp_path):
    first, again = tmp_path / "first", tmp_path / "again"
    done = run_cli(*SMALL[pipeline], "record=false", f"hydra.run.dir={first}")
    assert done.returncode == 0, done.stderr[-2000:]
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        done = run_cli("--config-dir", str(first / ".hydra"), "--config-name", "config",
                       f"hydra.run.dir={again}")
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert done.returncode == 0, done.stderr[-2000:]
    a, b = (json.loads(Path(d, "metrics.json").read_text()) for d in (first, again))
    assert a.keys() == b.keys()
    compared = [k for k in a if not is_wall_time(k)]
    differ = {k: (a[k], b[k]) for k in compared if not same(a[k], b[k])}
    assert not differ, differ
    assert len(compared) >= 10, compared   # the comparison covers the run's figures, not a few keys
