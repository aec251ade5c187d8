"""The peg in physics: it settles when dropped, and a parallel gripper holds it by friction."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    import yaml

    from stages.scene import build_world
    from tests.conftest import REPO

    robot = yaml.safe_load((REPO / "conf/robot/twin_panda.yaml").read_text())
    scene = yaml.safe_load((REPO / "conf/scene/table.yaml").read_text())
    extra = yaml.safe_load((REPO / "conf/scene/peg_table.yaml").read_text())
    scene.update({k: v for k, v in extra.items() if k != "defaults"})
    scene["objects"]["peg"]["pos"] = [0.55, 0.2, 0.77]     # lying on a long face, along world y
    return build_world(robot, scene, asset_dir=tmp_path_factory.mktemp("assets"))


def test_dropped_peg_settles_face_down(world):
    import mujoco

    from stages.perception.sim import drop_body, hold_actuators_at_qpos, random_drop_pose

    m = world.model
    for seed in range(3):
        d = mujoco.MjData(m)
        d.qpos[:] = world.home_qpos()
        mujoco.mj_forward(m, d)
        hold_actuators_at_qpos(m, d)
        pose = random_drop_pose(np.random.default_rng(seed), (0.5, 0.7), (0.0, 0.35), (0.85, 0.9))
        r = drop_body(m, d, "peg", pose)
        assert r.settled and r.sim_time_s < 2.0
        R = r.T_world_body[:3, :3]
        assert np.degrees(np.arccos(min(1.0, np.max(np.abs(R[2, :]))))) < 1.0     # one face down
        half = [0.02, 0.02, 0.07][int(np.argmax(np.abs(R[2, :])))]
        assert r.T_world_body[2, 3] == pytest.approx(0.75 + half, abs=0.002)


def test_gripper_holds_the_peg_by_friction(world):
    import mujoco
    from scipy.spatial.transform import Rotation

    from stages.perception.sim import free_joint_qpos_adr, hold_actuators_at_qpos, move_joints
    from stages.planning.ik import ArmIK

    m = world.model
    d = mujoco.MjData(m)
    d.qpos[:] = world.home_qpos()
    mujoco.mj_forward(m, d)
    hold_actuators_at_qpos(m, d)
    arm = world.robot.arm("left")
    finger = arm.gripper.actuator_ids[0]
    d.ctrl[finger] = arm.gripper.open
    ik = ArmIK(m, arm.joints, arm.ee_site, np.array(arm.lower), np.array(arm.upper), world.home_qpos())
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, ik.forward(np.array(arm.home))[3:])
    R = Rotation.from_euler("z", 90, degrees=True).as_matrix() @ R.reshape(3, 3)  # close across the peg
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, R.ravel())
    acts = list(arm.joint_actuator_ids)

    def go(z, t, hold):
        sol = ik.solve_once(np.concatenate([[0.55, 0.2, z], quat]), d.qpos[list(arm.qpos_indices)].copy())
        move_joints(m, d, acts, d.ctrl[acts].copy(), sol.q, t, hold)

    _, qa, _ = free_joint_qpos_adr(m, "peg")
    go(0.9, 1.0, 0.2)
    go(0.775, 1.0, 0.3)
    d.ctrl[finger] = arm.gripper.closed
    for _ in range(400):
        mujoco.mj_step(m, d)
    z0 = d.qpos[qa + 2]
    go(0.95, 1.5, 1.0)
    assert d.qpos[qa + 2] - z0 == pytest.approx(0.175, abs=0.01)   # came up with the hand
