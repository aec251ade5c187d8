"""Robots from URDF + SRDF (hardware.urdf, hardware.srdf, hardware.semantics): a tiny inline URDF for
the rules and the bad input, example-robot-data's Panda and UR5 for the shipped robots."""

from __future__ import annotations

import json

import pytest
from omegaconf import OmegaConf

from core.errors import ConfigError
from hardware.assembly import assemble
from hardware.resources import resolve_resource
from hardware.srdf import read_srdf
from hardware.urdf import read_urdf, urdf_spec
from stages.arms.world import build_world
from tests.conftest import CONF

mujoco = pytest.importorskip("mujoco")


def _installed(uri: str) -> bool:
    try:
        return resolve_resource(uri, "k").is_dir()
    except ConfigError:
        return False


needs_erd = pytest.mark.skipif(not _installed("pkg://cmeel.prefix/share/example-robot-data/robots"),
                               reason='example-robot-data: pip install -e ".[robots]"')

TETRA_OBJ = "v 0 0 0\nv 0.05 0 0\nv 0 0.05 0\nv 0 0 0.05\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"

# base -> j1 -> l1 -> j2 -> l2 (-> fixed tool), and a branch base -> jb -> lb
URDF = """<robot name="tiny">
  <link name="base">
    <collision><geometry><mesh filename="package://tinypkg/meshes/MESH"/></geometry></collision>
    <visual><geometry><mesh filename="package://tinypkg/meshes/base.dae"/></geometry></visual></link>
  <link name="l1">INERTIAL
    <collision><origin xyz="0 0 0.15"/><geometry><box size="0.04 0.04 0.2"/></geometry></collision></link>
  <link name="l2">INERTIAL
    <collision><origin xyz="0 0 0.1"/><geometry><cylinder radius="0.02" length="0.2"/></geometry>
    </collision></link>
  <link name="tool"/>
  <link name="lb">INERTIAL</link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="20" velocity="1.5"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.3"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="2"/></joint>
  <joint name="tool_joint" type="fixed"><parent link="l2"/><child link="tool"/><origin xyz="0 0 0.2"/></joint>
  <joint name="jb" type="revolute"><parent link="base"/><child link="lb"/><origin xyz="0.1 0 0"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="5" velocity="1"/></joint>
</robot>""".replace("INERTIAL", '<inertial><mass value="1"/>'
                   '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>')

SRDF = """<robot name="tiny">
  <group name="arm"><chain base_link="base" tip_link="tool"/></group>
  <group name="wide"><joint name="j1"/><joint name="jb"/></group>
  <group_state name="up" group="arm">
    <joint name="j1" value="0.5"/><joint name="j2" value="VALUE"/>
  </group_state>
  <disable_collisions link1="LINK" link2="l1" reason="Adjacent"/>
  <disable_collisions link1="base" link2="l2" reason="Never"/>
</robot>"""


def _tiny(tmp_path, mesh="base.obj", link="base", value="0.25") -> tuple:
    pkg = tmp_path / "share" / "tinypkg"
    (pkg / "meshes").mkdir(parents=True)
    (pkg / "urdf").mkdir()
    (pkg / "srdf").mkdir()
    (pkg / "meshes" / "base.obj").write_text(TETRA_OBJ)
    (pkg / "urdf" / "tiny.urdf").write_text(URDF.replace("MESH", mesh))
    (pkg / "srdf" / "tiny.srdf").write_text(SRDF.replace("LINK", link).replace("VALUE", value))
    return pkg / "urdf" / "tiny.urdf", pkg / "srdf" / "tiny.srdf"


def _tiny_robot(urdf, srdf) -> dict:
    return {"name": "tiny", "build": {
        "integrator": "implicitfast",
        "arms": {"a": {"urdf": str(urdf), "srdf": str(srdf), "mount": {"pos": [0, 0, 0.8]},
                       "position_actuators": {"joints": ["j1", "j2"], "kp": 100, "kv": 10}}}},
            "clearance_m": 0.0, "arms": {"a": {"joints": ["a/j1", "a/j2"], "ee_site": "a/tool"}},
            "fixed_joints": {"a/jb": 0.0}, "collision_matrix": {"cache": False, "samples": 20}}


# ---------------------------------------------------------------------- the rules, on a tiny URDF
def test_a_urdf_loads_with_package_meshes_visuals_dropped_a_site_per_link_and_its_velocity_limits(tmp_path):
    urdf, _ = _tiny(tmp_path)
    model = urdf_spec(urdf, "k").compile()
    names = {model.body(i).name for i in range(model.nbody)}
    assert {"base", "l1", "l2", "tool", "lb"} <= names          # the fixed-joint link stays a body
    assert model.nmesh == 1 and model.ngeom == 3                 # the .dae visual is gone
    assert model.site("tool").bodyid == model.body("tool").id
    assert model.numeric("j2_max_velocity").data.tolist() == [2.0]
    assert model.jnt_actfrcrange[model.joint("j1").id].tolist() == [-20.0, 20.0]   # the URDF's effort


def test_the_srdf_gives_groups_chains_named_states_and_pairs(tmp_path):
    urdf, srdf = _tiny(tmp_path)
    s = read_srdf(srdf, read_urdf(urdf, "k"), "k")
    assert s.chain("arm", "k") == ("j1", "j2")
    assert s.state("up").values == {"j1": 0.5, "j2": 0.25}
    assert [(p.link1, p.link2, p.reason) for p in s.disabled] == [("base", "l1", "Adjacent"),
                                                                  ("base", "l2", "Never")]


def test_srdf_pairs_enter_the_collision_matrix_with_reason_srdf_and_the_comparison_is_written(tmp_path):
    world = build_world(_tiny_robot(*_tiny(tmp_path)),
                        OmegaConf.to_container(OmegaConf.load(CONF / "scene/table.yaml")))
    acm = world.collision_matrix.to_json(world.model)
    reasons = {frozenset((d["body1"], d["body2"])): d["reason"] for d in acm["disabled"]}
    assert reasons[frozenset(("a/base", "a/l2"))] == "srdf"     # only the SRDF lets these touch
    assert reasons[frozenset(("a/base", "a/l1"))] == "adjacent"  # ours too (parent and child)
    cmp = acm["srdf"]["robot.build.arms.a.srdf"]
    assert cmp["also_disabled_by_us"] == {"adjacent": 1} and cmp["checked_by_us"] == 1
    assert cmp["checked_by_us_pairs"] == [["a/base", "a/l2", "Never"]]
    assert world.named_goal("up") == {"a": [0.5, 0.25]}
    with pytest.raises(ConfigError, match=r"goal.named='down'.*\['up'\]"):
        world.named_goal("down")


def test_an_srdf_group_gives_an_arm_its_joints_and_a_wrong_one_names_the_key(tmp_path):
    from hardware.robot_settings import robot_settings

    robot = _tiny_robot(*_tiny(tmp_path))
    robot["arms"]["a"] = {"group": "arm", "ee_site": "a/tool"}
    assert robot_settings(robot).arms["a"].joints == ("a/j1", "a/j2")   # the chain, base to tip
    robot["arms"]["a"]["group"] = "legs"
    with pytest.raises(ConfigError, match=r"robot.arms.a.group: group 'legs' is not in .*tiny.srdf; groups"):
        robot_settings(robot)
    del robot["build"]["arms"]["a"]["srdf"]
    with pytest.raises(ConfigError, match=r"robot.arms.a.group='legs': a planning group needs the arm's"):
        robot_settings(robot)


# ---------------------------------------------------------------------- bad input
def test_a_mesh_that_does_not_resolve_names_the_file_the_link_and_the_uri(tmp_path):
    urdf, srdf = _tiny(tmp_path, mesh="nope.stl")
    with pytest.raises(ConfigError) as e:
        assemble(_tiny_robot(urdf, srdf)["build"])
    assert "robot.build.arms.a.urdf" in str(e.value) and str(urdf) in str(e.value)
    assert "<link name='base'>" in str(e.value) and "package://tinypkg/meshes/nope.stl" in str(e.value)


def test_an_srdf_naming_a_link_the_urdf_lacks_names_the_file_and_element(tmp_path):
    urdf, srdf = _tiny(tmp_path, link="elbow")
    with pytest.raises(ConfigError) as e:
        assemble(_tiny_robot(urdf, srdf)["build"])
    msg = str(e.value)
    assert "robot.build.arms.a.srdf" in msg and str(srdf) in msg
    assert "<disable_collisions link1='elbow'" in msg and "link1 'elbow' is not a link" in msg


def test_a_group_that_is_not_one_chain_is_refused(tmp_path):
    urdf, srdf = _tiny(tmp_path)
    s = read_srdf(srdf, read_urdf(urdf, "k"), "robot.build.arms.a.srdf")
    with pytest.raises(ConfigError, match=r"<group name='wide'> is not one kinematic chain"):
        s.chain("wide", "robot.build.arms.a.srdf")


def test_a_named_state_outside_the_joint_limits_is_refused(tmp_path):
    urdf, srdf = _tiny(tmp_path, value="1.5")
    with pytest.raises(ConfigError) as e:
        read_srdf(srdf, read_urdf(urdf, "k"), "robot.build.arms.a.srdf")
    assert str(srdf) in str(e.value) and "<group_state name='up'> <joint name='j2'" in str(e.value)
    assert "outside the joint's limits [-1.0, 1.0]" in str(e.value)


def test_srdf_without_urdf_and_two_sources_are_refused():
    with pytest.raises(ConfigError, match="srdf"):
        assemble({"arms": {"a": {"file": "x.xml", "srdf": "x.srdf"}}})
    with pytest.raises(ConfigError, match="exactly one of file"):
        assemble({"arms": {"a": {"file": "x.xml", "urdf": "x.urdf"}}})


# ---------------------------------------------------------------------- the shipped robots
def _world(robot: str):
    return build_world(OmegaConf.to_container(OmegaConf.load(CONF / f"robot/{robot}.yaml")),
                       OmegaConf.to_container(OmegaConf.load(CONF / "scene/table.yaml")))


@needs_erd
def test_pkg_reaches_a_cmeel_share_folder():
    p = resolve_resource("pkg://cmeel.prefix/share/example-robot-data/robots/panda_description/srdf/panda.srdf",
                         "k")
    assert p.is_file() and p.name == "panda.srdf"


@needs_erd
@pytest.mark.parametrize("robot, srdf_pairs, named", [("twin_panda_urdf", 35, {"default"}),
                                                      ("twin_ur5", 10, set())])
def test_the_urdf_robots_load_with_their_srdf_pairs_and_named_states(robot, srdf_pairs, named):
    from stages.arms.world import home_proximity

    world = _world(robot)
    assert home_proximity(world).distance_m >= world.clearance_m
    acm = world.collision_matrix.to_json(world.model)
    assert acm["counts"]["srdf"] > 0
    for arm in ("left", "right"):
        cmp = acm["srdf"][f"robot.build.arms.{arm}.srdf"]
        assert cmp["srdf_pairs"] == srdf_pairs and not cmp["not_in_model"]
        assert sum(cmp["also_disabled_by_us"].values()) + cmp["checked_by_us"] + cmp["without_geometry"] \
            == srdf_pairs
    assert set(world.named_states) == named
    assert world.robot.arm("left").velocity_limits[0] in (2.175, 3.15)   # the URDF's


@needs_erd
@pytest.mark.parametrize("overrides", [["robot=twin_panda_urdf"], ["robot=twin_ur5"]])
def test_a_urdf_robot_crosses_and_executes_clear(compose, tmp_path, overrides):
    from stages.__main__ import run_config

    run = tmp_path / "run"
    cfg = compose(["pipeline=crossing", *overrides, "pipeline.stages.execute.video=false"], run_dir=run)
    record = run_config(cfg, run)
    assert record.ok, record.error
    m = json.loads((run / "metrics.json").read_text())
    assert m["verify.violations"] == 0 and m["group.min_clearance_m"] >= 0.005
    assert m["execute.colliding_states"] == 0 and m["scene.disabled_pairs_srdf"] > 0
    acm = json.loads((run / "scene" / "collision_matrix.json").read_text())
    assert "srdf" in acm and any(d["reason"] == "srdf" for d in acm["disabled"])


@needs_erd
def test_a_named_state_is_a_joint_goal(compose, tmp_path):
    from stages.__main__ import run_config

    run = tmp_path / "run"
    cfg = compose(["pipeline=plan", "robot=twin_panda_urdf", "goal.named=default",
                   "pipeline.stages.execute.video=false"], run_dir=run)
    assert run_config(cfg, run).ok
    plan = json.loads((run / "plan" / "plan.json").read_text())
    assert plan["goal_kind"] == "named" and plan["goals"]["left"][3] == pytest.approx(-2.35619)
