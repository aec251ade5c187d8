"""The peg in physics: it settles when dropped, a parallel gripper holds it by friction (where it
walks in the fingers), and calib_cell's form-fit grip holds it still.

``python -m tests.arms.perception.test_peg_physics`` prints how far the held peg walks in the fingers
per wrist swing at three physics steps, and how far it moves over two swings and 4 s still held
by friction and by the form-fit grip (the README's figures)."""

from __future__ import annotations

import numpy as np
import pytest


def _peg_world(asset_dir, form_fit: bool = False, along_m: float = 0.0, pockets=None):
    """The peg lying on the table along world y (``along_m`` off the hand's line); ``form_fit``:
    with calib_cell's pockets (settings changed by ``pockets``) and studs."""
    import yaml

    from stages.arms.world import build_world
    from tests.conftest import REPO, scene_yaml

    robot = yaml.safe_load((REPO / "conf/robot/twin_panda.yaml").read_text())
    scene = scene_yaml("peg_table")
    if form_fit:
        grip = yaml.safe_load((REPO / "conf/scene/calib_cell.yaml").read_text())["objects"]
        scene["objects"].update({"grip_pockets": {**grip["grip_pockets"], **(pockets or {})},
                                 "pad_studs": grip["pad_studs"]})
    scene["objects"]["peg"]["pos"] = [0.55, 0.2 + along_m, 0.77]     # lying on a long face, along world y
    return build_world(robot, scene, asset_dir=asset_dir)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return _peg_world(tmp_path_factory.mktemp("assets"))


def test_dropped_peg_settles_face_down(world):
    import mujoco

    from stages.arms.perception.sim import drop_body, hold_actuators_at_qpos, random_drop_pose

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


def _pick_the_peg(world, m, d, peg_yaw_deg: float = 0.0):
    """The left hand over the peg (lying along world y, turned by ``peg_yaw_deg``), down, closed:
    returns ``go(z, t, hold)``, which moves the hand (IK) to height ``z`` over ``t`` s and holds."""
    import mujoco
    from scipy.spatial.transform import Rotation

    from stages.arms.perception.sim import free_joint_qpos_adr, hold_actuators_at_qpos, move_joints
    from stages.arms.planning.ik import ArmIK

    d.qpos[:] = world.home_qpos()
    if peg_yaw_deg:
        _, qa, _ = free_joint_qpos_adr(m, "peg")
        lying = Rotation.from_quat(np.roll(d.qpos[qa + 3:qa + 7], -1))     # MuJoCo's w first, scipy's last
        turned = Rotation.from_euler("z", peg_yaw_deg, degrees=True) * lying
        d.qpos[qa + 3:qa + 7] = np.roll(turned.as_quat(), 1)
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

    go(0.9, 1.0, 0.2)
    go(0.775, 1.0, 0.3)
    d.ctrl[finger] = arm.gripper.closed
    for _ in range(int(round(0.8 / m.opt.timestep))):
        mujoco.mj_step(m, d)
    return go


def test_gripper_holds_the_peg_by_friction(world):
    import mujoco

    from stages.arms.perception.sim import free_joint_qpos_adr

    m = world.model
    d = mujoco.MjData(m)
    go = _pick_the_peg(world, m, d)
    _, qa, _ = free_joint_qpos_adr(m, "peg")
    z0 = d.qpos[qa + 2]
    go(0.95, 1.5, 1.0)
    assert d.qpos[qa + 2] - z0 == pytest.approx(0.175, abs=0.01)   # came up with the hand


def _peg_in_hand(m, d) -> np.ndarray:
    """The peg's pose in the left hand's frame (simulation truth)."""
    import mujoco

    from stages.arms.perception.sim import body_pose

    peg, hand = (mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, b) for b in ("peg", "left_hand"))
    return np.linalg.inv(body_pose(d, hand)) @ body_pose(d, peg)


def _held_peg_creep_mm(world, noslip_after_lift: int) -> tuple[float, float]:
    """Pick the peg lying turned 4 deg to the hand, lift it, hold it still 4 s: (how far from
    squared in the hand it was lifted, deg; how far it then crept, mm)."""
    import copy

    import mujoco
    from scipy.spatial.transform import Rotation


    m = copy.deepcopy(world.model)
    d = mujoco.MjData(m)
    go = _pick_the_peg(world, m, d, peg_yaw_deg=4.0)
    go(0.95, 1.5, 0.5)
    m.opt.noslip_iterations = noslip_after_lift
    G0 = _peg_in_hand(m, d)
    squared = np.round(G0[:3, :3])                      # the peg's faces along the hand's axes
    squaring = np.degrees(np.linalg.norm(Rotation.from_matrix(squared.T @ G0[:3, :3]).as_rotvec()))
    for _ in range(2000):   # 4 s standing still
        mujoco.mj_step(m, d)
    return float(squaring), float(np.linalg.norm(_peg_in_hand(m, d)[:3, 3] - G0[:3, 3]) * 1000)


def test_noslip_once_lifted_stops_the_held_peg_creeping_and_the_pads_still_square_it(world):
    # MuJoCo's soft friction lets the held peg creep under its weight; the noslip post-solver,
    # turned on once the peg is lifted (ResetRig hold_noslip_iterations), stops that
    soft_square, soft_creep = _held_peg_creep_mm(world, 0)
    held_square, held_creep = _held_peg_creep_mm(world, 30)
    assert soft_square < 0.2 and held_square < 0.2         # closing squared the peg up either way
    assert soft_creep > 0.1                                 # it creeps with soft friction alone ...
    assert held_creep < 0.2 * soft_creep                    # ... and far less with noslip


def _held_peg_walk_um(world, timestep_s: float) -> float:
    """Pick and lift the peg with noslip on, swing the wrist (joint 6) 0.5 rad in 1.2 s: how far
    the peg moved in the fingers, um."""
    import copy

    import mujoco

    from stages.arms.perception.sim import move_joints

    m = copy.deepcopy(world.model)
    m.opt.timestep = timestep_s
    d = mujoco.MjData(m)
    go = _pick_the_peg(world, m, d)
    go(0.95, 1.5, 0.5)
    m.opt.noslip_iterations = 30
    G0 = _peg_in_hand(m, d)
    acts = list(world.robot.arm("left").joint_actuator_ids)
    goal = d.ctrl[acts].copy()
    goal[5] += 0.5
    move_joints(m, d, acts, d.ctrl[acts].copy(), goal, 1.2, 0.3)
    return float(np.linalg.norm(_peg_in_hand(m, d)[:3, 3] - G0[:3, 3]) * 1e6)


def test_a_finer_step_lets_the_held_peg_walk_less_when_the_wrist_swings(world):
    # MuJoCo's friction holds relative velocity, not place: under the swing's centripetal load the
    # held peg walks toward the fingertips even with noslip, by about as much as the step is long
    # (the pads' contact is as stiff as the step allows: their time constant is 2 steps)
    coarse = _held_peg_walk_um(world, 0.002)
    fine = _held_peg_walk_um(world, 0.0005)
    assert coarse > 40.0                  # the default step: tens of um per swing
    assert fine < 0.4 * coarse            # a quarter of the step: about a quarter of the walk


def _walk_in_form_fit_or_friction_um(world) -> tuple[float, float, int]:
    """Pick and lift the peg, swing the wrist (joint 6, 0.5 rad out and back) until the fingers'
    opening is below calibrate_peg's seat_opening_m (at most 6 swings), then two more swings and
    4 s still: (how far the peg moved in the fingers over those, um; the opening, mm; swings to seat)."""
    import copy

    import mujoco

    from stages.arms.perception.sim import move_joints

    m = copy.deepcopy(world.model)
    d = mujoco.MjData(m)
    go = _pick_the_peg(world, m, d)
    go(0.95, 1.5, 0.5)
    acts = list(world.robot.arm("left").joint_actuator_ids)
    fingers = [m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, f"left_finger{i}_joint")]
               for i in (1, 2)]

    def swing():
        for sign in (1.0, -1.0):
            goal = d.ctrl[acts].copy()
            goal[5] += sign * 0.5
            move_joints(m, d, acts, d.ctrl[acts].copy(), goal, 1.2, 0.3)

    def opening_m():
        return float(sum(d.qpos[i] for i in fingers))

    swings = 0
    while opening_m() >= 0.0415 and swings < 6:
        swing()
        swings += 1
    G0 = _peg_in_hand(m, d)
    swing()
    swing()
    for _ in range(int(round(4.0 / m.opt.timestep))):
        mujoco.mj_step(m, d)
    return float(np.linalg.norm(_peg_in_hand(m, d)[:3, 3] - G0[:3, 3]) * 1e6), opening_m() * 1000, swings


def test_a_form_fit_grip_holds_the_peg_still_where_friction_lets_it_walk(world, tmp_path):
    # calib_cell's grip: the pads' studs in the peg's pockets carry the loads by contact normals
    friction_um, friction_mm, _ = _walk_in_form_fit_or_friction_um(world)
    # the studs land 1.2 mm off a pocket's centre (a stud balanced on a rib's ridge is a knife-edge
    # equilibrium the simulation can hold for a few swings)
    held_um, held_mm, swings = _walk_in_form_fit_or_friction_um(_peg_world(tmp_path, True, 0.0012))
    assert friction_mm < 40.5 and friction_um > 150.0     # pads on the faces; it walks ~0.1 mm a swing
    assert held_mm < 41.5 and swings <= 6                 # the studs sat in the pockets ...
    assert held_um < 0.25 * friction_um and held_um < 100.0  # ... and there it stays put


if __name__ == "__main__":
    import tempfile

    w = _peg_world(tempfile.mkdtemp())
    for step_s in (0.002, 0.001, 0.0005):
        print(f"step {step_s} s: the held peg walks {_held_peg_walk_um(w, step_s):.0f} um in the fingers "
              "per 0.5 rad wrist swing (noslip on)")
    for label, fit in (("friction", False), ("form-fit grip", True)):
        um, mm, n = _walk_in_form_fit_or_friction_um(_peg_world(tempfile.mkdtemp(), fit, 0.0012))
        print(f"{label}: fingers at {mm:.2f} mm after {n} seating swing(s); the peg then moves {um:.0f} um "
              "over two wrist swings and 4 s still")
