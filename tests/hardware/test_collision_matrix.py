"""The allowed-collision matrix: one reason per disabled pair, the rules' order, the cache."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import ConfigError
from hardware import collision_matrix as cmx
from hardware.collision_matrix import REASONS, CollisionMatrix, compute_collision_matrix, default_cache_dir
from hardware.geometry import collision_geoms, may_touch
from hardware.resources import REPO_ROOT

mujoco = pytest.importorskip("mujoco")


def _arm(p: str, y: float) -> str:
    """A two-link arm on a fixed base with a two-finger gripper whose fingers overlap by 4 mm."""
    return f"""
    <body name="{p}_base" pos="0 {y} 0">
      <geom name="{p}_base_g" type="cylinder" size=".05 .05"/>
      <body name="{p}_link1" pos="0 0 .1">
        <joint name="{p}_j1" axis="0 0 1"/>
        <geom name="{p}_link1_g" type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
        <body name="{p}_link2" pos=".3 0 0">
          <joint name="{p}_j2" axis="0 0 1" range="-2 2"/>
          <geom name="{p}_link2_g" type="capsule" fromto="0 0 0 .2 0 0" size=".025"/>
          <body name="{p}_hand" pos=".2 0 0">
            <geom name="{p}_hand_g" type="box" size=".02 .04 .02"/>
            <body name="{p}_finger1" pos=".05 .01 0">
              <joint name="{p}_f1" type="slide" axis="0 1 0" range="0 .04"/>
              <geom name="{p}_finger1_g" type="box" size=".02 .012 .01"/>
            </body>
            <body name="{p}_finger2" pos=".05 -.01 0">
              <joint name="{p}_f2" type="slide" axis="0 -1 0" range="0 .04"/>
              <geom name="{p}_finger2_g" type="box" size=".02 .012 .01"/>
            </body>
          </body>
        </body>
      </body>
    </body>"""


XML = f"""
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 .1"/>
    <geom name="table" type="box" pos=".5 0 .02" size=".1 .1 .02"/>
    <geom name="shelf" type="box" pos="5 5 1" size=".1 .1 .1"/>
    <geom name="lamp" type="sphere" pos="0 0 2" size=".05" contype="0" conaffinity="0"/>
    {_arm("L", .3)}
    {_arm("R", -.3)}
    <body name="spinner" pos="-1 0 .5">
      <joint name="s1" axis="1 0 0"/>
      <geom name="spinner_ball" type="sphere" size=".1"/>
      <body name="spinner_mid">
        <joint name="s2" axis="0 0 1"/>
        <inertial pos="0 0 0" mass=".1" diaginertia=".001 .001 .001"/>
        <body name="spinner_core">
          <joint name="s3" axis="0 1 0"/>
          <geom name="spinner_core_g" type="sphere" size=".02"/>
        </body>
      </body>
    </body>
    <body name="excl_a" pos="-1 1 .5">
      <joint name="e1" axis="0 0 1"/>
      <geom name="excl_a_g" type="sphere" size=".05"/>
      <geom name="excl_a_g2" type="sphere" pos=".1 0 0" size=".05"/>
      <body name="excl_b" pos=".3 0 0">
        <joint name="e2" axis="0 0 1"/>
        <inertial pos="0 0 0" mass=".1" diaginertia=".001 .001 .001"/>
        <body name="excl_c" pos=".3 0 0">
          <joint name="e3" axis="0 0 1"/>
          <geom name="excl_c_g" type="sphere" size=".05"/>
        </body>
      </body>
    </body>
  </worldbody>
  <contact><exclude body1="excl_a" body2="excl_c"/></contact>
</mujoco>"""

ARM_JOINTS = ["L_j1", "L_j2", "R_j1", "R_j2"]
ALL_PLANNED = ARM_JOINTS + ["s1", "s2", "s3", "e1", "e2", "e3"]
CLEARANCE = 0.01


@pytest.fixture(scope="module")
def model():
    return mujoco.MjModel.from_xml_string(XML)


def gid(model, name: str) -> int:
    return mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, name)


def reason(model, cm: CollisionMatrix, a: str, b: str) -> str | None:
    """The pair's reason, or None when it is checked (and then it must be in cm.checked)."""
    g1, g2 = sorted((gid(model, a), gid(model, b)))
    r = cm.disabled.get((g1, g2))
    assert (r is None) == any((row == (g1, g2)).all() for row in cm.checked), (a, b)
    return r


def matrix(model, joints=ALL_PLANNED, **kw) -> CollisionMatrix:
    return compute_collision_matrix(model, joints, model.qpos0, CLEARANCE, **kw)


def test_rules_each_pair_once(model):
    cm = matrix(model)
    geoms = collision_geoms(model)
    assert gid(model, "lamp") not in geoms
    assert len(cm.disabled) + len(cm.checked) == len(geoms) * (len(geoms) - 1) // 2
    assert set(cm.disabled.values()) <= set(REASONS)
    assert all(a < b for a, b in cm.disabled) and (cm.checked[:, 0] < cm.checked[:, 1]).all()
    assert np.array_equal(cm.checked, np.unique(cm.checked, axis=0))


def test_fingers_of_an_unplanned_gripper_are_rigid(model):
    d = mujoco.MjData(model)
    mujoco.mj_kinematics(model, d)
    assert mujoco.mj_geomDistance(model, d, gid(model, "L_finger1_g"), gid(model, "L_finger2_g"), 1, None) < 0
    cm = matrix(model, ARM_JOINTS)
    assert reason(model, cm, "L_finger1_g", "L_finger2_g") == "rigid"
    assert reason(model, cm, "L_link1_g", "R_finger1_g") is None
    assert reason(model, cm, "L_finger1_g", "R_finger2_g") is None
    assert reason(model, cm, "L_base_g", "spinner_ball") == "rigid"       # no planned joint moves either
    assert reason(model, cm, "table", "spinner_ball") == "adjacent"       # a child of the world
    # planning the fingers too makes them a checked pair (they may open apart)
    assert reason(model, matrix(model, ARM_JOINTS + ["L_f1", "L_f2"]), "L_finger1_g", "L_finger2_g") is None


def test_adjacent_filtered_and_same_body(model):
    cm = matrix(model)
    assert reason(model, cm, "L_base_g", "L_link1_g") == "adjacent"       # a link on a fixed base
    assert reason(model, cm, "L_link1_g", "L_link2_g") == "filtered"      # MuJoCo's parent filter
    assert reason(model, cm, "L_hand_g", "L_finger1_g") == "filtered"     # hand welded to link2
    assert reason(model, cm, "excl_a_g", "excl_c_g") == "filtered"        # <exclude>
    assert reason(model, cm, "excl_a_g", "excl_a_g2") == "filtered"       # one body
    assert reason(model, cm, "table", "L_base_g") == "filtered"           # one weld group (the world)


def test_filtered_or_adjacent_is_exactly_may_touch(model):
    for m in (model, mujoco.MjModel.from_xml_path(str(REPO_ROOT / "hardware/models/twin_panda.xml"))):
        cm = compute_collision_matrix(m, [], m.qpos0, CLEARANCE, samples=0)
        geoms = collision_geoms(m).tolist()
        for i, a in enumerate(geoms):
            for b in geoms[i + 1:]:
                assert may_touch(m, a, b) == (cm.disabled.get((a, b)) in ("filtered", "adjacent")), (a, b)


def test_checked_pairs_within_the_checkers(model):
    """The planner's checker checks a superset: what it checks and the matrix does not is rigid."""
    from stages.arms.planning.checker import ClearanceChecker

    m = mujoco.MjModel.from_xml_path(str(REPO_ROOT / "hardware/models/twin_panda.xml"))
    joints = [m.joint(j).name for j in range(m.njnt) if "finger" not in m.joint(j).name]
    cm = compute_collision_matrix(m, joints, m.qpos0, CLEARANCE, samples=0)
    theirs = {tuple(p) for p in ClearanceChecker(m, joints, CLEARANCE).pairs.tolist()}
    ours = {tuple(p) for p in cm.checked.tolist()}
    assert ours <= theirs and all(cm.disabled[p] == "rigid" for p in theirs - ours)


def test_always_in_contact(model):
    cm = matrix(model)
    assert reason(model, cm, "spinner_ball", "spinner_core_g") == "always"
    assert cm.samples == 200
    assert reason(model, matrix(model, samples=0), "spinner_ball", "spinner_core_g") is None


def test_never_is_opt_in(model):
    assert reason(model, matrix(model), "shelf", "L_link2_g") is None
    cm = matrix(model, never=True)
    assert reason(model, cm, "shelf", "L_link2_g") == "never"
    assert reason(model, cm, "L_link2_g", "R_link2_g") is None            # the arms reach each other
    assert reason(model, cm, "floor", "L_link1_g") == "never"             # 10 cm up, flat: never near
    assert reason(model, cm, "spinner_ball", "spinner_core_g") == "always"


def test_allowed_pairs_by_name_and_glob(model):
    allowed = [["L_link1_g", "floor"], ["L_hand", "R_hand"], ["L_finger*", "table"],
               ["L_finger1_g", "L_finger2_g"], ["spinner*", "spinner_core"]]
    cm = matrix(model, ARM_JOINTS + ["s1", "s2", "s3"], allowed=allowed)
    assert reason(model, cm, "L_link1_g", "floor") == "allowed"           # geom names
    assert reason(model, cm, "L_hand_g", "R_hand_g") == "allowed"         # body names
    assert reason(model, cm, "L_finger1_g", "table") == "allowed"         # glob
    assert reason(model, cm, "L_finger2_g", "table") == "allowed"
    assert reason(model, cm, "L_finger1_g", "L_finger2_g") == "rigid"     # the earlier reason is kept
    assert reason(model, cm, "spinner_ball", "spinner_core_g") == "always"
    assert reason(model, cm, "R_finger1_g", "table") is None
    assert cm.counts()["allowed"] == 4


def test_allowed_pairs_errors(model):
    with pytest.raises(ConfigError, match=r"robot\.allowed_pairs\[0\]: 'nope\*' matches no geom or body; "
                                          r"geoms: floor, table, .*L_link1_g.*; bodies: world, .*L_hand"):
        matrix(model, allowed=[["nope*", "table"]])
    with pytest.raises(ConfigError, match=r"robot\.allowed_pairs\[1\]: 'x' matches"):
        matrix(model, allowed=[["table", "L_hand"], ["table", "x"]])
    with pytest.raises(ConfigError, match=r"robot\.allowed_pairs\[0\]: expected \[a, b\]"):
        matrix(model, allowed=["table"])
    with pytest.raises(ConfigError, match=r"planned joint 'nope' is not in the model; joints: L_j1, "):
        matrix(model, ["nope"])


def test_long_name_lists_are_cut():
    xml = "<mujoco><worldbody>" + "".join(
        f'<body name="b{i}" pos="{i} 0 0"><joint/><geom name="g{i}" size=".1"/></body>' for i in range(40)
    ) + "</worldbody></mujoco>"
    m = mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(ConfigError, match=r"g24, \.\.\. \(15 more\); bodies: world, b0,") as e:
        compute_collision_matrix(m, [], m.qpos0, CLEARANCE, allowed=[["zz", "g0"]])
    assert "g30" not in str(e.value)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.floats(-np.pi, np.pi), min_size=len(ARM_JOINTS), max_size=len(ARM_JOINTS)))
def test_rigid_pairs_keep_their_distance(model, q):
    """The checker never drops a pair the planned joints can move apart."""
    cm = _arm_matrix(model)
    rigid = [p for p, r in cm.disabled.items() if r == "rigid"]
    assert len(rigid) > 5
    d = mujoco.MjData(model)
    mujoco.mj_kinematics(model, d)
    before = [mujoco.mj_geomDistance(model, d, a, b, 10.0, None) for a, b in rigid]
    for j, x in zip(ARM_JOINTS, q, strict=True):
        k = model.joint(j).id
        lo, hi = model.jnt_range[k] if model.jnt_limited[k] else (-np.pi, np.pi)
        d.qpos[model.joint(j).qposadr[0]] = np.clip(x, lo, hi)
    mujoco.mj_kinematics(model, d)
    after = [mujoco.mj_geomDistance(model, d, a, b, 10.0, None) for a, b in rigid]
    np.testing.assert_allclose(after, before, atol=1e-9, rtol=0)


_ARM_CM: dict[int, CollisionMatrix] = {}


def _arm_matrix(model) -> CollisionMatrix:
    return _ARM_CM.setdefault(id(model), matrix(model, ARM_JOINTS))


def test_held_bodies_are_never_rigid(model):
    assert reason(model, matrix(model, ARM_JOINTS), "L_base_g", "spinner_ball") == "rigid"
    cm = matrix(model, ARM_JOINTS, held_bodies=["spinner"])
    assert reason(model, cm, "L_base_g", "spinner_ball") is None
    assert reason(model, cm, "spinner_ball", "spinner_core_g") == "rigid"  # carried together
    cm = matrix(model, ARM_JOINTS + ["s2"], held_bodies=["spinner"])
    assert reason(model, cm, "spinner_ball", "spinner_core_g") is None    # not sampled: its pose is unknown
    assert reason(model, matrix(model, ARM_JOINTS + ["s2"]), "spinner_ball", "spinner_core_g") == "always"


def test_json_round_trip(model):
    cm = matrix(model, never=True, allowed=[["L_link2", "R_link2"]])
    data = json.loads(json.dumps(cm.to_json(model)))
    assert data["samples"] == 200 and data["checked_pairs"] == len(cm.checked)
    assert data["counts"] == cm.counts() and sum(data["counts"].values()) == len(data["disabled"])
    assert {"geom1": "L_finger1_g", "geom2": "L_finger2_g", "body1": "L_finger1", "body2": "L_finger2",
            "reason": "rigid"} in data["disabled"]
    assert {"geom1": "L_link2_g", "geom2": "R_link2_g", "body1": "L_link2", "body2": "R_link2",
            "reason": "allowed"} in data["disabled"]
    assert CollisionMatrix.from_json(data, model) == cm
    data["disabled"][0]["geom1"] = "gone"
    with pytest.raises(ValueError, match="does not fit"):
        CollisionMatrix.from_json(data, model)


def test_json_round_trip_unnamed_geoms():
    m = mujoco.MjModel.from_xml_string(_many_geoms_xml(links=3, per_link=2))
    assert not any(m.geom(g).name for g in collision_geoms(m))
    cm = compute_collision_matrix(m, ["lj0", "lj1", "rj2"], m.qpos0, CLEARANCE, samples=20, never=True)
    assert set(cm.disabled.values()) >= {"filtered", "rigid", "never"}
    assert CollisionMatrix.from_json(json.loads(json.dumps(cm.to_json(m))), m) == cm


def test_cache_hit_does_not_sample(model, tmp_path, monkeypatch):
    first = matrix(model, never=True, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("*.json"))) == 1

    def no_sampling(*a, **k):
        raise AssertionError("sampled on a cache hit")

    monkeypatch.setattr(cmx, "_sample_contacts", no_sampling)
    assert matrix(model, never=True, cache_dir=tmp_path) == first
    for changed in ({"seed": 1}, {"never": False}, {"samples": 100}, {"allowed": [["L_hand", "R_hand"]]}):
        with pytest.raises(AssertionError, match="sampled on a cache hit"):
            matrix(model, cache_dir=tmp_path, **{"never": True, **changed})
    with pytest.raises(AssertionError, match="sampled on a cache hit"):
        matrix(model, ARM_JOINTS, never=True, cache_dir=tmp_path)
    other = mujoco.MjModel.from_xml_string(XML.replace('size=".1"/>', 'size=".11"/>', 1))
    with pytest.raises(AssertionError, match="sampled on a cache hit"):
        compute_collision_matrix(other, ALL_PLANNED, other.qpos0, CLEARANCE, never=True, cache_dir=tmp_path)
    monkeypatch.undo()
    path = next(tmp_path.glob("*.json"))
    path.write_text("{not json")                                           # a broken file is recomputed
    assert matrix(model, never=True, cache_dir=tmp_path) == first
    assert json.loads(path.read_text())["samples"] == 200


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("CHOREOGRAPH_CACHE_DIR", str(tmp_path / "own"))
    assert default_cache_dir() == tmp_path / "own" / "collision_matrix"
    monkeypatch.delenv("CHOREOGRAPH_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "choreograph" / "collision_matrix"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert str(default_cache_dir()).endswith(".cache/choreograph/collision_matrix")


def _many_geoms_xml(links: int = 7, per_link: int = 5) -> str:
    """Two 7-link arms, five capsules a link, two fingers each, a table: ~70 collision geoms."""
    def arm(p, y):
        head = tail = ""
        for k in range(links):
            caps = "".join(f'<geom type="capsule" fromto="0 0 {i * .03} .12 0 {i * .03}" size=".025"/>'
                           for i in range(per_link))
            head += (f'<body name="{p}{k}" pos="{.12 if k else 0} {0 if k else y} {0 if k else .1}" '
                     f'euler="{90 if k % 2 else 0} 0 0"><joint name="{p}j{k}" axis="0 0 1" range="-2.8 2.8"/>'
                     f"{caps}")
            tail += "</body>"
        fingers = "".join(f'<body pos=".14 {s * .01} 0"><joint type="slide" axis="0 {s} 0" range="0 .04"/>'
                          f'<geom type="box" size=".02 .012 .01"/></body>' for s in (1, -1))
        return head + fingers + tail
    return (f'<mujoco><worldbody><geom type="box" pos=".5 0 0" size=".3 .5 .02"/>{arm("l", .25)}'
            f'{arm("r", -.25)}</worldbody></mujoco>')


def test_timing_70_geoms():
    m = mujoco.MjModel.from_xml_string(_many_geoms_xml())
    joints = [f"{p}j{k}" for p in "lr" for k in range(7)]
    n = len(collision_geoms(m))
    assert 60 <= n <= 80
    for never in (False, True):
        t = time.perf_counter()
        cm = compute_collision_matrix(m, joints, m.qpos0, CLEARANCE, samples=200, never=never)
        dt = time.perf_counter() - t
        print(f"\n{n} collision geoms, {n * (n - 1) // 2} pairs, 200 samples, never={never}: {dt:.3f} s; "
              f"{cm.counts()}, {len(cm.checked)} checked")
        assert dt < 5.0
