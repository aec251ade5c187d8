import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from omegaconf import OmegaConf

from core.errors import ConfigError
from core.settings import from_config, schema
from stages.adapters.mecanum.build_path import BuildPath
from stages.adapters.mecanum.draw_path import DrawPath
from stages.adapters.mecanum.precompute import Precompute
from stages.graph import build_graph, run_graph
from stages.mecanum.paths.settings import PathSettings
from tests.mecanum.paths.test_relax import HAIRPIN

NAMED = ["hairpin", "sharp_corner", "s_curve", "straight", "figure_eight"]
CONF = Path(__file__).resolve().parents[3] / "conf"


@pytest.mark.parametrize("path, drive, named", [
    ({"segments": HAIRPIN}, {"mass_lb": 30}, ("drive.mass_lb: not a", "allowed: ['name', 'mass_kg'")),
    ({"segments": [[[0, 0], [float("nan"), 0], [1, 1], [2, 2]]]}, None, "path.segments[0][1]"),
    ({"segments": [[[0, 0], [1, "x"], [1, 1], [2, 2]]]}, None,
     "path.segments[0][1][1]='x': expected a number"),
    ({"segments": HAIRPIN, "flatness_in": 0}, None, "path.flatness_in=0.0: allowed: a finite"),
    ({"segments": HAIRPIN, "accel_fraction": 1.5}, None,
     "path.accel_fraction=1.5: allowed: in (0, 1]"),
    ({"segments": HAIRPIN, "max_depth": 0}, None, "path.max_depth=0: allowed: an integer in"),
    ({"segments": HAIRPIN, "flatnes_in": 0.1}, None, ("path.flatnes_in: not a",
                                                     "allowed: ['segments', 'name'")),
    ({"name": "x"}, None, ("path", "segments")),
])
def test_build_path_validates_at_construction(path, drive, named):
    with pytest.raises(ConfigError) as info:
        BuildPath(path, drive)
    for part in (named,) if isinstance(named, str) else named:
        assert part in str(info.value)


def test_precompute_and_draw_check_their_parameters():
    with pytest.raises(ConfigError, match=r"pipeline.stages.precompute.benchmark_sizes\[0\]=0"):
        Precompute(benchmark_sizes=[0])
    with pytest.raises(ConfigError, match=r"pipeline.stages.draw.frames: not an? .*allowed: \['footprints'"):
        DrawPath(frames=3)
    assert Precompute(benchmark_sizes=[10, 100]).settings.benchmark_sizes == (10, 100)


@pytest.mark.parametrize("name", NAMED)
def test_every_path_group_file_converts(name):
    data = yaml.safe_load((CONF / "path" / f"{name}.yaml").read_text())
    settings = from_config(PathSettings, data, "path")
    assert settings.name == name and settings.corner_in == settings.flatness_in == 0.05
    # what Hydra sees once the schema is registered: the whole file merges into it
    merged = OmegaConf.merge(OmegaConf.structured(schema(PathSettings)), data)
    assert from_config(PathSettings, merged, "path") == settings


def test_build_path_makes_a_bundle_without_a_run_folder():
    bundle = BuildPath({"segments": HAIRPIN, "relax_tolerance_in": 2.0}).make()
    table = bundle.entry_speeds()
    assert bundle.flat.max_chord_error_in <= 0.05
    assert bundle.relax.demand_after_in_s2.max() < bundle.relax.demand_before_in_s2.max()
    assert table.segments == bundle.flat.segments
    assert table.entry_speed_in_s[-1] == 0.0


@pytest.mark.parametrize("name", NAMED)
def test_every_named_path_composes_and_builds(compose, name):
    cfg = compose(["pipeline=path", f"path={name}"])
    stages = OmegaConf.to_container(cfg.pipeline.stages, resolve=True)
    params = {k: v for k, v in stages["path"].items() if k not in ("_target_", "inputs")}
    bundle = BuildPath(**params).make()
    assert bundle.name == name and bundle.flat.segments >= 1


def test_a_segments_override_is_the_path(compose):
    cfg = compose(["pipeline=path", "path.segments=[[[0,0],[10,0],[20,0],[30,0]]]"])
    stages = OmegaConf.to_container(cfg.pipeline.stages, resolve=True)
    params = {k: v for k, v in stages["path"].items() if k not in ("_target_", "inputs")}
    assert BuildPath(**params).make().flat.length_in == pytest.approx(30.0)


def test_pipeline_runs_end_to_end(tmp_path):
    graph = build_graph({
        "path": {"_target_": "stages.adapters.mecanum.build_path.BuildPath",
                 "path": {"name": "hairpin", "segments": HAIRPIN}},
        "precompute": {"_target_": "stages.adapters.mecanum.precompute.Precompute",
                       "inputs": {"path": "path.path"}, "benchmark_sizes": [10]},
        "draw": {"_target_": "stages.adapters.mecanum.draw_path.DrawPath", "animate": True, "max_frames": 3,
                 "inputs": {"path": "path.path", "table": "precompute.table"}},
    })
    record = run_graph(graph, tmp_path, seed=0)
    assert record.ok, record.error
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    for key in ("path.segments", "path.length_in", "path.max_chord_error_in",
                "path.relax_shift_in", "path.min_entry_speed_in_s", "precompute.time_s",
                "precompute.bench_10_segments_time_s"):
        assert key in metrics
    assert metrics["path.max_chord_error_in"] <= 0.05
    for f in ("draw/field.png", "draw/speed_profile.png", "draw/preview.gif",
              "precompute/table.npz", "path/path.json"):
        assert (tmp_path / f).stat().st_size > 0
    table = np.load(tmp_path / "precompute/table.npz")
    assert table["entry_speed_in_s"][-1] == 0.0


def test_a_bad_path_fails_the_run_with_the_entry_named(tmp_path):
    graph = build_graph({"path": {"_target_": "stages.adapters.mecanum.build_path.BuildPath",
                                  "path": {"segments": [[[0, 0], [1, 1], [2, 2]]]}}})
    record = run_graph(graph, tmp_path, seed=0)
    assert not record.ok and "PathError: path.segments[0]" in record.error
