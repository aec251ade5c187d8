"""FTC teams' Pedro Pathing files through the pipelines: ``path=<file>.pp`` in, ``path/<name>.pp`` out."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from stages.__main__ import pp_file_arguments
from stages.adapters.mecanum.build_path import BuildPath
from stages.mecanum.paths.pedro import read_pp, to_segments
from tests.conftest import run_cli

DATA = Path(__file__).resolve().parents[2] / "data" / "pedro"
FARSIDE = DATA / "Overture-7421_Hornet-2026-23619_FarSidePaths.pp"   # lines, a quadratic, a cubic


def test_path_equals_a_pp_file_becomes_the_pp_option_with_an_absolute_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert pp_file_arguments(["pipeline=follow", "path=auto.pp", "seed=1"]) == [
        "pipeline=follow", "path=pp", f"path.file={tmp_path / 'auto.pp'}", "seed=1"]
    assert pp_file_arguments(["path=a.pp,b.pp"]) == [   # a sweep over files
        "path=pp", f"path.file={tmp_path / 'a.pp'},{tmp_path / 'b.pp'}"]
    named = ["path=hairpin", "path.flatness_in=0.1"]
    assert pp_file_arguments(named) == named


def test_a_pp_file_gives_the_stage_its_segments_headings_and_name():
    stage = BuildPath({"file": str(FARSIDE), "name": "pp"})
    field = to_segments(read_pp(FARSIDE))
    assert stage.settings.name == FARSIDE.stem
    assert stage.settings.segments == field.segments
    assert len(stage.settings.headings) == len(field.segments)
    assert [h.mode for h in stage.settings.headings][:2] == ["linear", "tangential"]
    bundle = stage.make()
    assert bundle.headings == stage.settings.headings


def test_follow_on_a_teams_pp_file_and_the_path_back_out(tmp_path):
    """The whole CLI on a real file: the robot starts facing the file's start heading, follows
    every line to a stop, and the path stage writes the same geometry back as a .pp."""
    run = tmp_path / "run"
    r = run_cli("pipeline=follow", f"path={FARSIDE}", f"hydra.run.dir={run}", "record=false",
                "pipeline.stages.follow.animate=false", "pipeline.stages.follow.max_time_s=30")
    assert r.returncode == 0, r.stderr
    m = json.loads((run / "metrics.json").read_text())
    assert m["follow.path"] == FARSIDE.stem and m["follow.stopped"] and m["follow.end_error_in"] < 0.5
    assert m["path.pp_round_trip_in"] < 1e-9   # the .pp written, read back
    log = np.genfromtxt(run / "follow/log.csv", delimiter=",", names=True)
    field = to_segments(read_pp(FARSIDE))
    start_error = math.remainder(log["heading_rad"][0] - field.start_heading_rad, math.tau)
    assert start_error == pytest.approx(0, abs=0.01)
    back = to_segments(read_pp(run / "path" / f"{FARSIDE.stem}.pp"))
    assert np.allclose(back.segments, field.segments, atol=1e-9)
    assert [h.mode for h in back.headings] == [h.mode for h in field.headings]


def test_a_bad_pp_file_is_a_typed_error_naming_the_file_and_field(tmp_path):
    bad = tmp_path / "auto.pp"
    bad.write_text(json.dumps({"startPoint": {"x": 1, "y": 2, "heading": "constant", "degrees": 0},
                               "lines": [{"controlPoints": []}]}))
    run = tmp_path / "run"
    r = run_cli("pipeline=follow", f"path={bad}", f"hydra.run.dir={run}", "record=false")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    status = json.loads((run / "status.json").read_text())
    assert status["failed_stage"] == "path"
    assert status["error"] == "PathError: auto.pp: lines[0].endPoint: missing"
