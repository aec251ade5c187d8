"""Every pipeline config composes and its graph checks; the scene pipeline runs end to end."""

import json

import pytest

from stages.__main__ import run_config
from stages.graph import build_graph
from tests.conftest import CONF, compose_config

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
               for name in ("peg_objects", "peg_table", "reset_cell")}
    assert objects["peg_objects"] == ["board", "peg"]
    assert objects["peg_table"] == ["board", "peg", "left_hand_tags", "right_hand_tags"]
    # the built-in reset cell keeps its objects' order (the compiled scene is the same as before)
    assert objects["reset_cell"] == ["board", "peg", "left_hand_tags", "right_hand_tags", "fixture"]


@pytest.mark.parametrize("pipeline", ["reset", "rl_loop"])
def test_the_cell_pipelines_place_the_cell_for_the_robot(compose, tmp_path, pipeline):
    """conf/cell/<robot>.yaml goes over reset_cell: the fixture, the task's start pose and the drops move
    with it; the built-in robot's cell is reset_cell as it stands; other pipelines get no cell."""
    def composed(*overrides):
        folder = "_".join(o.replace("=", "-") for o in overrides) or "x"
        return compose([f"pipeline={pipeline}", *overrides], run_dir=tmp_path / folder)

    built_in, fetch = composed(), composed("robot=fetch")
    stage = fetch.pipeline.stages[pipeline]
    assert list(built_in.scene.objects.fixture.pos) == list(built_in.scene.cell.fixture_pos)
    assert list(built_in.scene.cell.fixture_pos) == [0.37, -0.08, 0.75]
    assert list(fetch.scene.objects.fixture.pos) == [0.25, -0.16, 0.75]
    assert list(fetch.task.start_xy) == list(fetch.scene.cell.start_xy) == [0.28, 0.05]
    assert list(stage.drop.x_range) == [0.22, 0.36] and list(stage.reset.push_toward_xy) == [0.3, 0.1]
    assert fetch.scene.objects.left_hand_tags is None   # the built-in robot's plates are left out
    franka = composed("robot=twin_franka")
    assert franka.scene.table.height == franka.scene.cell.surface_z
    assert franka.pipeline.stages[pipeline].surface_z == franka.scene.cell.surface_z
    assert composed("robot=fetch", "cell=twin_panda").scene.cell.start_xy == built_in.scene.cell.start_xy
    assert compose(["pipeline=crossing", "robot=fetch"], run_dir=tmp_path / "c").scene.cell is None


def test_a_cell_that_does_not_exist_fails_at_compose_naming_the_cells(tmp_path):
    """As a robot without conf/cell/<robot>.yaml does in pipeline=reset: Hydra lists the cells there are."""
    from hydra.errors import MissingConfigException

    with pytest.raises(MissingConfigException, match=r"cell/nowhere(.|\n)*fetch(.|\n)*twin_franka"):
        compose_config(["pipeline=reset", "cell=nowhere"], tmp_path / "run")
