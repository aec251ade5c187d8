import csv
import json

import pytest
from omegaconf import OmegaConf

from core.errors import ConfigError
from stages.__main__ import run_config
from stages.adapters.mecanum.follow import Follow
from stages.adapters.mecanum.follow_compare import FollowCompare
from stages.adapters.mecanum.teleop import Teleop
from tests.conftest import run_cli
from tests.recordings import assert_recording

NAMED = ["hairpin", "sharp_corner", "s_curve", "straight", "figure_eight"]
METRICS = ("max_deviation_in", "end_error_in", "time_to_stop_s", "overshoot_in",
           "peak_traction_fraction", "saturated_ticks")


def run(compose, tmp_path, overrides, name="run"):
    cfg = compose(overrides, run_dir=tmp_path / name)
    record = run_config(cfg, tmp_path / name)
    assert record.ok, record.error
    return json.loads((tmp_path / name / "metrics.json").read_text()), tmp_path / name


@pytest.mark.parametrize("path", NAMED)
def test_follow_pipeline_on_every_named_path(compose, tmp_path, path):
    animate = "true" if path == "hairpin" else "false"
    m, run_dir = run(compose, tmp_path, ["pipeline=follow", f"path={path}",
                                         f"pipeline.stages.follow.animate={animate}",
                                         "pipeline.stages.follow.max_frames=4"])
    for key in METRICS:
        assert isinstance(m[f"follow.{key}"], (int, float))
    assert m["follow.follower"] == "skidaddle" and m["follow.path"] == path
    assert m["follow.end_error_in"] < 0.5 and m["follow.stopped"]
    assert m["follow.max_deviation_in"] < 1.0
    with open(run_dir / "follow/log.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == m["follow.ticks"] and {"time_s", "x_in", "power_lf", "deviation_in",
                                                "active"} <= set(rows[0])
    if path == "hairpin":   # the recording: the robot every 10 ms tick, requests, motor commands
        c = assert_recording(run_dir, {
            "field/tiles": None, "field/path/original": None, "field/path/flat": None,
            "field/path/vertices": None, "field/robot": "time", "field/robot/footprint": None,
            "field/robot/velocity": "time", "robot/position_in": "time", "robot/velocity_in_s": "time",
            "robot/deviation_in": "time", "control/requests/along_path": "time",
            "control/requests/heading": "time", "motors/power": "time", "motors/volts": "time",
            "motors/feedforward_v": "time", "control/mode": "time", "plan/speed_in_s": "time"})
        assert c.rows["/field/robot"] == c.rows["/motors/power"] == m["follow.ticks"]
    for name in ("field.png", "graphs.png"):
        assert (run_dir / "follow" / name).stat().st_size > 10_000
    assert (run_dir / "follow/follow.gif").exists() == (path == "hairpin")


def test_the_comparison_table_matches_individual_runs(compose, tmp_path):
    cmp, cmp_dir = run(compose, tmp_path, ["pipeline=follow_compare", "path=straight",
                                          "pipeline.stages.compare.follower_files=false"], "cmp")
    table = (cmp_dir / "compare/table.md").read_text()
    c = assert_recording(cmp_dir, {   # every follower on the one field, under its own name
        "field/path/flat": None, **{f"{f}/{e}": "time" for f in ("skidaddle", "roadrunner", "roadrunner_a30")
                                    for e in ("field/robot", "robot/speed_in_s", "motors/power")},
        "skidaddle/control/requests/along_path": "time", "skidaddle/field/trail": None})
    assert (cmp_dir / "compare/field.png").stat().st_size > 10_000
    for follower in ("skidaddle", "roadrunner", "roadrunner_a30"):
        one, _ = run(compose, tmp_path, ["pipeline=follow", "path=straight",
                                         f"follower={follower}",
                                         "pipeline.stages.follow.animate=false"], follower)
        row = next(line for line in table.splitlines() if line.startswith(f"| {follower} |"))
        for key in METRICS:
            assert cmp[f"compare.{follower}.{key}"] == one[f"follow.{key}"], (follower, key)
            assert f"{one[f'follow.{key}']:.2f}" in row or str(one[f"follow.{key}"]) in row
        assert c.rows[f"/{follower}/field/robot"] == one["follow.ticks"]


def test_the_follower_sweep_gathered_by_the_sweep_summary_config(tmp_path):
    sweep = tmp_path / "sweep"
    out = run_cli("-m", "pipeline=follow", "path=straight", "follower=skidaddle,roadrunner",
                  "pipeline.stages.follow.animate=false", "hydra/launcher=joblib",
                  "hydra.launcher.n_jobs=2", f"hydra.sweep.dir={sweep}")
    assert out.returncode == 0, out.stderr[-2000:]
    out = run_cli("pipeline=sweep_summary", f"sweep_dir={sweep}", f"hydra.run.dir={tmp_path / 'summary'}")
    assert out.returncode == 0, out.stderr[-2000:]
    with open(tmp_path / "summary/gather/runs.csv") as f:
        rows = {r["follower"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"skidaddle", "roadrunner"}
    for r in rows.values():
        m = json.loads((sweep / r["job"] / "metrics.json").read_text())
        assert float(r["follow.max_deviation_in"]) == pytest.approx(m["follow.max_deviation_in"])
        assert r["path"] == "straight" and r["status"] == "ok"
    md = (tmp_path / "summary/gather/summary.md").read_text()
    sk = json.loads((sweep / rows["skidaddle"]["job"] / "metrics.json").read_text())
    assert f"| straight | {sk['follow.max_deviation_in']:.2f} / {sk['follow.end_error_in']:.2f} / " in md
    assert (tmp_path / "summary/gather/plots.png").stat().st_size > 10_000


def test_teleop_replans_mid_motion_and_reaches_its_targets(compose, tmp_path):
    m, run_dir = run(compose, tmp_path, ["pipeline=teleop",
                                         "pipeline.stages.teleop.animate=false"])
    assert m["teleop.replans"] >= 5 and m["teleop.interrupted"] >= 1
    assert m["teleop.final_error_in"] < 0.5 and m["teleop.targets_reached"] >= 2
    events = json.loads((run_dir / "teleop/events.json").read_text())
    moving = [e for e in events if e.get("interrupted_previous")]
    assert any(e["start_speed_in_s"] > 10 for e in moving)  # replaced while driving fast
    assert (run_dir / "teleop/field.png").exists() and (run_dir / "teleop/log.csv").exists()
    c = assert_recording(run_dir, {   # each path at its request, the robot every tick
        "field/tiles": None, "field/path/flat": "time", "field/target": "time", "teleop/log": "time",
        "field/robot": "time", "robot/deviation_in": "time", "control/requests/along_path": "time",
        "motors/power": "time", "control/mode": "time"})
    assert c.rows["/field/path/flat"] == m["teleop.replans"]
    assert c.rows["/teleop/log"] == len(events)
    with open(run_dir / "teleop/log.csv") as f:
        assert c.rows["/field/robot"] == c.rows["/motors/power"] == len(list(csv.DictReader(f)))


def test_bad_config_fails_at_construction_naming_the_key():
    with pytest.raises(ConfigError, match=r"follower.kind='bogus': allowed: \['skidaddle'"):
        Follow({"kind": "bogus"})
    with pytest.raises(ConfigError, match=r"follower.gain: not an? .*; allowed: \['kind'"):
        Follow({"kind": "roadrunner", "gain": 3})
    with pytest.raises(ConfigError, match=r"follower.along_path.tau: not an? .*allowed: \['tau_s'"):
        Follow({"kind": "skidaddle", "along_path": {"tau": 0.1}})
    with pytest.raises(ConfigError, match="follower.heading='sideways'"):
        Follow({"kind": "skidaddle", "heading": "sideways"})
    with pytest.raises(ConfigError,
                       match=r"pipeline.stages.follow.max_time: not an? .*allowed: .*'max_time_s'"):
        Follow({"kind": "skidaddle"}, max_time=3)
    with pytest.raises(ConfigError, match="pipeline.stages.follow.start_offset: expected 3"):
        Follow({"kind": "skidaddle"}, start_offset=[0, 1])
    with pytest.raises(ConfigError, match="compare.followers"):
        FollowCompare(followers={})
    with pytest.raises(ConfigError, match=r"teleop.events\[0\].button='z': allowed: a bound"):
        Teleop({"buttons": {"a": [0, 0, 0]}, "events": [{"t_s": 0, "button": "z"}]},
               {"kind": "skidaddle"})
    with pytest.raises(ConfigError, match="follower.kind=skidaddle"):
        Teleop({}, {"kind": "roadrunner"})


def test_pipeline_configs_compose_with_their_groups(compose):
    cfg = compose(["pipeline=follow_compare", "path=s_curve",
                   "pipeline.params.followers.roadrunner.max_profile_accel_in_s2=70"])
    f = OmegaConf.to_container(cfg.pipeline.params.followers, resolve=True)
    assert sorted(f) == ["roadrunner", "roadrunner_a30", "skidaddle"]
    assert f["roadrunner_a30"]["max_profile_accel_in_s2"] == 30.0
    assert f["roadrunner"]["max_profile_accel_in_s2"] == 70.0
    cfg = compose(["pipeline=sweep_summary", "sweep_dir=/tmp"])
    assert cfg.pipeline.stages.gather.sweep_dir == "/tmp"
