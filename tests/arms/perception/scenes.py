"""Small MuJoCo scenes for perception tests, built with the real object builders."""

from __future__ import annotations

import numpy as np

PEG = {
    "size": [0.04, 0.04, 0.14], "mass": 0.1,
    "tags": {"dictionary": "DICT_APRILTAG_36h11", "ids": list(range(10)), "size_m": 0.03,
             "long_face_offset_m": 0.035, "quiet_zone_cells": 1, "texture_px_per_cell": 16},
}
BOARD = {"squares": [8, 6], "square_m": 0.04, "marker_m": 0.03, "dictionary": "DICT_5X5_100",
         "margin_m": 0.01, "thickness_m": 0.003, "px_per_square": 60, "mocap": True}
TABLE_Z = 0.0


def build(tmp_path, *, peg=True, board=False, plate_ids=None, camera_pos=(0.45, 0.0, 0.45),
          lookat=(0.0, 0.0, 0.0), fovy=50.0, size=(640, 480), table=True):
    """A table top at z = 0 (a box), lights without shadows, one camera ``cam``, and objects.

    Returns (model, data). The peg starts at the origin resting on its +x face... callers pose it.
    """
    import mujoco

    from hardware.models.charuco import add_charuco_board
    from hardware.models.peg import add_tag_plate, add_tagged_peg
    from hardware.models.scene import BuildContext, look_at_quat

    spec = mujoco.MjSpec()
    spec.visual.global_.offwidth, spec.visual.global_.offheight = size
    spec.visual.headlight.diffuse = [0.3, 0.3, 0.3]
    spec.visual.headlight.ambient = [0.2, 0.2, 0.2]
    light = spec.worldbody.add_light(name="key", pos=[0.3, -0.3, 1.5], dir=[-0.2, 0.2, -1.0])
    light.diffuse = [0.6, 0.6, 0.6]
    light.castshadow = False
    if table:
        spec.worldbody.add_geom(name="table_top", type=mujoco.mjtGeom.mjGEOM_BOX,
                                size=[0.5, 0.5, 0.02], pos=[0, 0, TABLE_Z - 0.02],
                                rgba=[0.62, 0.52, 0.4, 1])
    cam = spec.worldbody.add_camera(name="cam", pos=list(camera_pos),
                                    quat=look_at_quat(camera_pos, lookat).tolist(), fovy=fovy)
    cam.resolution = list(size)
    ctx = BuildContext(asset_dir=tmp_path, repo_root=tmp_path)
    if peg:
        add_tagged_peg(spec, "peg", {**PEG, "pos": [0, 0, 0.02], "quat": [0.7071068, 0, 0.7071068, 0]},
                       ctx)
    if board:
        add_charuco_board(spec, "board", {**BOARD, "pos": [0.0, -0.3, TABLE_Z + 0.003]}, ctx)
    if plate_ids:
        holder = spec.worldbody.add_body(name="holder", pos=[0.0, 0.12, 0.05], mocap=True)
        holder.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.001], contype=0, conaffinity=0)
        add_tag_plate(spec, "plate", {"parent": "holder", "tags": {
            "ids": list(plate_ids), "grid": [1, len(plate_ids)], "size_m": 0.03}}, ctx)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return model, data


def set_free_pose(model, data, body: str, T: np.ndarray) -> None:
    """Pose a free body kinematically (test set-up of a still scene; no physics is run)."""
    import mujoco

    from stages.arms.perception.sim import free_joint_qpos_adr

    _, qadr, _ = free_joint_qpos_adr(model, body)
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(T[:3, :3]).ravel())
    data.qpos[qadr:qadr + 3] = T[:3, 3]
    data.qpos[qadr + 3:qadr + 7] = q
    mujoco.mj_kinematics(model, data)


def pose(R: np.ndarray, p) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def rot(axis: str, deg: float) -> np.ndarray:
    from scipy.spatial.transform import Rotation

    return Rotation.from_euler(axis, deg, degrees=True).as_matrix()
