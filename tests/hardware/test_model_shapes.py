"""A compiled model's geoms as recording shapes, and its bodies' poses (tiny inline MJCF)."""

from __future__ import annotations

import numpy as np
import pytest

from core.recording import Mesh, Primitive
from core.recording_read import read_recording
from core.rerun_recorder import RerunRecorder
from hardware.model_shapes import (
    body_poses,
    geom_shapes,
    moving_bodies,
    record_body_poses,
    record_geometry,
    static_bodies,
)

MJCF = """
<mujoco>
  <asset>
    <mesh name="tet" vertex="0 0 0  0.1 0 0  0 0.1 0  0 0 0.1"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 0.1"/>
    <body name="table" pos="0.5 0 0.4">
      <geom name="top" type="box" size="0.3 0.2 0.02" rgba="0.8 0.6 0.4 1"/>
    </body>
    <body name="arm" pos="0 0 0.5">
      <joint name="hinge" axis="0 0 1"/>
      <geom name="link" type="capsule" fromto="0 0 0 0.3 0 0" size="0.04" contype="1" conaffinity="1"/>
      <geom name="look" type="cylinder" size="0.03 0.1" contype="0" conaffinity="0" group="2"/>
      <body name="tip" pos="0.3 0 0">
        <geom name="ball" type="sphere" size="0.02" contype="0" conaffinity="0"/>
        <geom name="egg" type="ellipsoid" size="0.02 0.03 0.04" contype="0" conaffinity="0"/>
        <geom name="tet" type="mesh" mesh="tet" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.fixture(scope="module")
def model():
    mujoco = pytest.importorskip("mujoco")
    return mujoco.MjModel.from_xml_string(MJCF)


def test_every_geom_type_becomes_a_shape(model):
    shapes = {s.name: s for s in geom_shapes(model)}
    assert shapes["top"].shape == Primitive("box", (0.3, 0.2, 0.02), (0.8, 0.6, 0.4, 1.0))
    assert shapes["link"].shape.kind == "capsule" and shapes["link"].collision
    assert shapes["link"].shape.size_m == pytest.approx((0.04, 0.15))
    assert shapes["link"].shape.color[3] <= 0.35          # collision geometry beside visual: see-through
    assert shapes["look"].shape.kind == "cylinder" and not shapes["look"].collision
    assert shapes["ball"].shape.size_m == pytest.approx((0.02,))
    assert shapes["egg"].shape.kind == "ellipsoid"
    assert shapes["floor"].shape.kind == "box"            # an infinite plane, drawn finite
    tet = shapes["tet"].shape
    assert isinstance(tet, Mesh) and tet.vertices_m.shape == (4, 3) and tet.triangles.shape[1] == 3


def test_bodies_split_into_static_and_moving_and_their_poses_follow_qpos(model):
    import mujoco

    names = lambda ids: [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in ids]  # noqa: E731
    assert names(static_bodies(model)) == ["table"] and names(moving_bodies(model)) == ["arm", "tip"]
    pos, quat = body_poses(model, np.array([[0.0], [np.pi / 2]]), moving_bodies(model))
    assert pos[0, 1] == pytest.approx([0.3, 0.0, 0.5]) and pos[1, 1] == pytest.approx([0.0, 0.3, 0.5])
    assert quat[1, 0] == pytest.approx([np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)])


def test_recorded_geometry_and_poses_read_back(model, tmp_path):
    rec = RerunRecorder(tmp_path / "m.rrd")
    bodies = moving_bodies(model)
    paths = record_geometry(rec, model, "world/robot", bodies)
    record_body_poses(rec, model, "world/robot", np.arange(5) * 0.008, np.linspace(0, 1, 5)[:, None], bodies)
    rec.close()
    c = read_recording(tmp_path / "m.rrd")
    assert paths == ["world/robot/arm", "world/robot/tip"]
    for e in ("/world/robot/arm/collision/link", "/world/robot/arm/visual/look",
              "/world/robot/tip/visual/tet"):
        assert e in c.static, e
    assert c.rows["/world/robot/tip"] == 5 and c.timelines["/world/robot/tip"] == ("time",)
