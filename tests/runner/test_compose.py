"""Every pipeline config composes and its graph checks; the scene pipeline runs end to end."""

import json

import pytest

from stages.__main__ import run_config
from stages.graph import build_graph
from tests.conftest import CONF

PIPELINES = sorted(p.stem for p in (CONF / "pipeline").glob("*.yaml"))


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_every_pipeline_composes_and_its_graph_checks(compose, pipeline):
    from omegaconf import OmegaConf

    cfg = compose([f"pipeline={pipeline}"])
    plain = OmegaConf.to_container(cfg, resolve=True)
    assert plain["pipeline"]["name"] == pipeline
    graph = build_graph(plain["pipeline"]["stages"])
    assert graph.names


def test_scene_pipeline_writes_a_complete_run_folder(compose, tmp_path):
    import mujoco

    run = tmp_path / "scene_run"
    cfg = compose(["pipeline=scene"], run_dir=run)
    record = run_config(cfg, run)
    assert record.ok, record.error
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["scene.arms"] == 2 and metrics["scene.dof"] == 14
    assert metrics["scene.home_min_clearance_m"] >= 0.005
    model = mujoco.MjModel.from_xml_path(str(run / "scene.xml"))
    assert model.ngeom == metrics["scene.geoms"]
    summary = json.loads((run / "scene" / "robot.json").read_text())
    assert set(summary["arms"]) == {"left", "right"}
    for arm in ("left", "right"):   # the built-in grippers, measured on the model: 0 to 80 mm pad to pad
        g = summary["grippers"][arm]
        assert g["parallel_jaw"] and g["opening_closed_m"] < 1e-3 and abs(g["opening_open_m"] - 0.08) < 1e-3
        assert metrics[f"scene.{arm}_gripper_opening_m"] == g["opening_open_m"]
    for cam in ("scene_camera", "overview"):
        assert (run / "scene" / f"{cam}.png").stat().st_size > 10_000


def test_wrong_joint_name_is_a_config_error_listing_real_names(compose, tmp_path):
    run = tmp_path / "bad"
    cfg = compose(["pipeline=scene", "robot.arms.left.joints.0=left_jiont1"], run_dir=run)
    record = run_config(cfg, run)
    assert not record.ok and record.error.startswith("ConfigError")
    assert "left_jiont1" in record.error and "left_joint1" in record.error


def test_the_peg_cells_compose_with_and_without_the_built_in_robots_hand_plates(compose, tmp_path):
    objects = {name: list(compose(["pipeline=scene", f"scene={name}"], run_dir=tmp_path / name).scene.objects)
               for name in ("peg_objects", "peg_table", "reset_cell", "reset_cell_fetch")}
    assert objects["peg_objects"] == ["board", "peg"]
    assert objects["peg_table"] == ["board", "peg", "left_hand_tags", "right_hand_tags"]
    # the built-in reset cell keeps its objects' order (the compiled scene is the same as before)
    assert objects["reset_cell"] == ["board", "peg", "left_hand_tags", "right_hand_tags", "fixture"]
    assert objects["reset_cell_fetch"] == ["board", "peg", "fixture"]
