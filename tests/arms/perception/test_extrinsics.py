"""The joint fit of camera pose and joint zero offsets, on synthetic Panda kinematics."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import ConfigError, PerceptionError
from core.se3 import invert, rotation_angle_deg, rotvec_to_matrix
from core.tag_layouts import plate_layout
from stages.arms.perception.extrinsics import fit_extrinsics, observability
from stages.arms.perception.extrinsics_model import Observation, grasp_transform
from tests.arms.perception.panda_dh import _rz, _t, flange_pose, make_fk

HOME = np.array([0.0, 0.1, 0.0, -2.3, 0.0, 2.4, 0.7854])
K = np.array([[1029.0, 0, 639.5], [0, 1029.0, 479.5], [0, 0, 1]])
PLATE = plate_layout({"ids": [20, 21], "grid": [1, 2], "size_m": 0.04}, "plate", 0.0)
T_FLANGE_PLATE = _rz(-np.pi / 4) @ _t(0.03, 0.0, 0.04) @ np.array(
    [[0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1.0]])
FK = make_fk(T_FLANGE_PLATE)


def camera_pose() -> np.ndarray:
    import mujoco

    from hardware.models.scene import look_at_quat

    pos = [1.3, 0.0, 1.45]
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, look_at_quat(pos, [0.55, 0.0, 0.75]))
    T = np.eye(4)
    T[:3, :3] = R.reshape(3, 3) @ np.diag([1.0, -1.0, -1.0])
    T[:3, 3] = pos
    return T


def synthetic(arms, n, rng, offsets, spread=0.6, pose_noise=(2e-4, 0.05), px_noise=0.1,
              vary=None):
    """Spots around home; observations from the true kinematics (q + offsets) plus noise."""
    import cv2

    T_wc = camera_pose()
    T_cw = invert(T_wc)
    obj = PLATE.corners().reshape(-1, 3)
    out = []
    for arm in arms:
        for k in range(n):
            dq = rng.uniform(-spread, spread, 7)
            if vary is not None:
                dq = np.where(np.isin(np.arange(7), vary), dq, 0.0)
            q = HOME + dq
            T = T_cw @ FK(arm, q + offsets[arm])
            rvec = cv2.Rodrigues(T[:3, :3])[0]
            uv = cv2.projectPoints(obj, rvec, T[:3, 3], K, np.zeros(5))[0].reshape(-1, 2)
            uv += rng.normal(0, px_noise, uv.shape)
            noisy = T.copy()
            noisy[:3, :3] = T[:3, :3] @ rotvec_to_matrix(rng.normal(0, np.radians(pose_noise[1]), 3))
            noisy[:3, 3] += rng.normal(0, pose_noise[0], 3)
            out.append(Observation(arm, q, noisy, 1.0, f"{arm}{k}", obj, uv))
    return out, T_wc


@pytest.fixture
def offsets():
    rng = np.random.default_rng(11)
    return {a: np.radians(rng.uniform(-1.0, 1.0, 7)) for a in ("left", "right")}


@pytest.mark.parametrize("residual", ["corners", "pose"])
def test_two_arm_fit_recovers_injected_offsets(offsets, residual):
    rng = np.random.default_rng(1)
    obs, T_wc = synthetic(["left", "right"], 16, rng, offsets)
    fit = fit_extrinsics(obs, FK, {"left": 7, "right": 7}, residual=residual, camera_matrix=K)
    err = max(np.degrees(np.abs(fit.joint_offsets_rad[a] - offsets[a])).max() for a in offsets)
    assert err < (0.05 if residual == "corners" else 0.1), f"worst joint {err:.3f} deg"
    assert np.linalg.norm(fit.T_world_cam[:3, 3] - T_wc[:3, 3]) < 0.002
    assert rotation_angle_deg(fit.T_world_cam[:3, :3], T_wc[:3, :3]) < 0.2
    assert fit.unobservable == [] and fit.condition_number < 1e3
    assert fit.residual_rms_m < 0.002 and fit.success
    if residual == "corners":
        assert fit.residual_rms_px == pytest.approx(0.1, rel=0.4)


def test_no_offsets_no_noise_is_exact(offsets):
    zero = {a: np.zeros(7) for a in offsets}
    obs, T_wc = synthetic(["left", "right"], 8, np.random.default_rng(2), zero, pose_noise=(0, 0),
                          px_noise=0.0)
    fit = fit_extrinsics(obs, FK, {"left": 7, "right": 7}, camera_matrix=K)
    assert max(np.abs(v).max() for v in fit.joint_offsets_rad.values()) < 1e-6
    assert np.allclose(fit.T_world_cam, T_wc, atol=1e-7)


def test_one_arm_cannot_see_joint_1(offsets):
    """Joint 1 turns the arm about the vertical through its base: the camera absorbs it."""
    obs, _ = synthetic(["left"], 16, np.random.default_rng(3), offsets)
    fit = fit_extrinsics(obs, FK, {"left": 7}, camera_matrix=K)
    assert fit.unobservable == [("left", 0)]
    assert fit.observability["left"][0] < 1e-3
    assert any("unobservable" in w and "left joint 1" in w for w in fit.warnings)
    assert fit.joint_offsets_rad["left"][0] == 0.0
    # the others are still recovered
    assert np.degrees(np.abs(fit.joint_offsets_rad["left"][1:] - offsets["left"][1:])).max() < 0.1


def test_degenerate_grid_is_reported(offsets):
    """Spots that only move the wrist joints leave the shoulder and elbow unobservable."""
    obs, _ = synthetic(["left", "right"], 10, np.random.default_rng(4), offsets, vary=[4, 5, 6])
    fit = fit_extrinsics(obs, FK, {"left": 7, "right": 7}, camera_matrix=K)
    assert fit.unobservable, fit.warnings
    assert all(i < 4 for _, i in fit.unobservable)
    assert fit.condition_number > 1e4
    assert fit.warnings


def test_too_few_spots_and_unknown_arms_fail(offsets):
    obs, _ = synthetic(["left"], 2, np.random.default_rng(5), offsets)
    with pytest.raises(PerceptionError, match="2 spots give 12 equations for 13 unknowns"):
        fit_extrinsics(obs, FK, {"left": 7}, camera_matrix=K)
    with pytest.raises(PerceptionError, match="not in the fit"):
        fit_extrinsics(obs * 5, FK, {"right": 7}, camera_matrix=K)
    with pytest.raises(PerceptionError, match="no spot observed for arm 'right'"):
        fit_extrinsics(obs * 5, FK, {"left": 7, "right": 7}, camera_matrix=K)


def test_observability_measure():
    rng = np.random.default_rng(0)
    J = rng.normal(size=(30, 4))
    J[:, 3] = J[:, 0] - 2 * J[:, 1]        # column 3 is a combination of 0 and 1
    obs, cond = observability(J)
    assert obs[2] > 0.5
    assert max(obs[0], obs[1], obs[3]) < 1e-9   # each of 0, 1, 3 is made by the other two
    assert not np.isfinite(cond) or cond > 1e12


def test_mujoco_model_matches_the_published_kinematics():
    """The twin_panda MJCF's flange equals Franka's DH at random configurations (both arms)."""
    import mujoco
    import yaml

    from stages.arms.world import build_world
    from tests.arms.perception.panda_dh import BASES
    from tests.conftest import REPO

    robot = yaml.safe_load((REPO / "conf/robot/twin_panda.yaml").read_text())
    world = build_world(robot, {"cameras": {"scene_camera": {"pos": [1, 0, 1], "lookat": [0, 0, 0]}},
                                "table": None, "floor": None, "skybox": None})
    m = world.model
    d = mujoco.MjData(m)
    rng = np.random.default_rng(0)
    for arm in ("left", "right"):
        spec = world.robot.arm(arm)
        sid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, f"{arm}_flange_site")
        for _ in range(5):
            q = rng.uniform(np.asarray(spec.lower), np.asarray(spec.upper))
            d.qpos[:] = world.home_qpos()
            d.qpos[list(spec.qpos_indices)] = q
            mujoco.mj_kinematics(m, d)
            T = flange_pose(q, BASES[arm])
            assert np.allclose(d.site_xpos[sid], T[:3, 3], atol=1e-5)
            assert np.allclose(d.site_xmat[sid].reshape(3, 3), T[:3, :3], atol=1e-5)


def held_peg(arms, n, rng, offsets, true_grasp, px_noise=0.1, creep=None, spot_s=4.0):
    """Spots with a target held in the hand at ``true_grasp`` (T_hand_target), seen by the camera;
    ``creep``: rates of (tx, tz, ry) per s, the target creeping in the hand from the first spot."""
    import cv2

    fk_hand = make_fk(np.eye(4))
    T_cw = invert(camera_pose())
    obj = PLATE.corners().reshape(-1, 3)
    out = []
    for arm in arms:
        for k in range(n):
            q = HOME + rng.uniform(-0.6, 0.6, 7)
            t = k * spot_s
            G = np.eye(4) if creep is None else grasp_transform(("tx", "tz", "ry"), t * np.asarray(creep))
            T = T_cw @ fk_hand(arm, q + offsets[arm]) @ G @ true_grasp
            uv = cv2.projectPoints(obj, cv2.Rodrigues(T[:3, :3])[0], T[:3, 3], K, np.zeros(5))[0]
            uv = uv.reshape(-1, 2) + rng.normal(0, px_noise, (len(obj), 2))
            out.append(Observation(arm, q, T, 1.0, f"{arm}{k}", obj, uv, time_s=1000.0 * arms.index(arm) + t))
    return out, fk_hand


def test_held_peg_grasp_unknowns_fitted_with_the_offsets(offsets):
    rng = np.random.default_rng(3)
    nominal = T_FLANGE_PLATE
    true = grasp_transform(("tx", "tz", "ry"), [0.004, -0.003, np.radians(2.0)]) @ nominal
    obs, fk_hand = held_peg(["left", "right"], 16, rng, offsets, true)
    fit = fit_extrinsics(obs, fk_hand, {"left": 7, "right": 7}, camera_matrix=K,
                         grasps={"left": nominal, "right": nominal})
    err = max(np.degrees(np.abs(fit.joint_offsets_rad[a] - offsets[a])).max() for a in offsets)
    assert err < 0.05, f"worst joint {err:.3f} deg"
    assert fit.unobservable == []
    for a in ("left", "right"):
        assert fit.grasp_params[a]["tx"] == pytest.approx(0.004, abs=5e-4)
        assert fit.grasp_params[a]["ry"] == pytest.approx(np.radians(2.0), abs=np.radians(0.1))
        assert np.abs(fit.grasps[a] - true).max() < 1e-3
    # ignoring the grasp error (a rigid, known target) the same data fits far worse
    rigid = fit_extrinsics(obs, make_fk(nominal), {"left": 7, "right": 7}, camera_matrix=K)
    assert rigid.residual_rms_px > 5 * fit.residual_rms_px


def test_grasp_creep_rates_fitted_with_the_offsets(offsets):
    """A target creeping in the hand at a steady rate (MuJoCo's soft friction under a steady
    load): the creep rates are fitted; a constant grasp misreads the creep as offsets."""
    rng = np.random.default_rng(5)
    creep = [0.05e-3, 0.08e-3, np.radians(0.03)]   # per s: 0.05 mm, 0.08 mm, 0.03 deg
    obs, fk_hand = held_peg(["left", "right"], 16, rng, offsets, T_FLANGE_PLATE, creep=creep)
    grasps = {"left": T_FLANGE_PLATE, "right": T_FLANGE_PLATE}

    def worst(fit):
        return max(np.degrees(np.abs(fit.joint_offsets_rad[a] - offsets[a])).max() for a in offsets)

    fit = fit_extrinsics(obs, fk_hand, {"left": 7, "right": 7}, camera_matrix=K, grasps=grasps,
                         grasp_creep=True)
    assert worst(fit) < 0.05, f"worst joint {worst(fit):.3f} deg"
    for a in ("left", "right"):
        assert fit.grasp_params[a]["tz_per_s"] == pytest.approx(creep[1], abs=0.01e-3)
        assert fit.grasp_params[a]["ry_per_s"] == pytest.approx(creep[2], abs=np.radians(0.005))
    constant = fit_extrinsics(obs, fk_hand, {"left": 7, "right": 7}, camera_matrix=K, grasps=grasps)
    assert worst(constant) > 3 * worst(fit)


def test_fully_free_grasp_hides_the_last_joint(offsets):
    rng = np.random.default_rng(4)
    obs, fk_hand = held_peg(["left", "right"], 12, rng, offsets, T_FLANGE_PLATE)
    fit = fit_extrinsics(obs, fk_hand, {"left": 7, "right": 7}, camera_matrix=K,
                         grasps={"left": T_FLANGE_PLATE, "right": T_FLANGE_PLATE},
                         grasp_free=("tx", "ty", "tz", "rx", "ry", "rz"))
    assert ("left", 6) in fit.unobservable and ("right", 6) in fit.unobservable
    assert any("unobservable" in w for w in fit.warnings)


def test_grasp_knots_follow_a_drift_that_is_not_steady(offsets):
    """The target's place in the hand drifts unevenly (fast, then slower; a step at one move).
    Revisits of the arm's first spot (same joints: only the grasp can change there) anchor a
    piecewise-linear grasp with a knot at each; one steady rate misreads the drift as offsets."""
    import cv2

    def drift(t):   # tx, tz, ry in the hand frame
        return [0.3e-3 * np.sin(t / 10) + (0.1e-3 if t > 21 else 0.0), 3e-3 * (1 - np.exp(-t / 15)),
                np.radians(1.0) * (1 - np.exp(-t / 20))]

    rng = np.random.default_rng(7)
    fk_hand = make_fk(np.eye(4))
    T_cw = invert(camera_pose())
    obj = PLATE.corners().reshape(-1, 3)
    obs, knots = [], {}
    for arm in ("left", "right"):
        q_ref = HOME + rng.uniform(-0.6, 0.6, 7)
        t0 = 1000.0 * len(knots)
        knots[arm] = []
        for k in range(10):
            for name, q, t in ((f"{arm}{k}", HOME + rng.uniform(-0.6, 0.6, 7), 4.0 * k + 2.0),
                               (f"{arm}ref{k}", q_ref, 4.0 * k)):
                G = grasp_transform(("tx", "tz", "ry"), drift(t))
                T = T_cw @ fk_hand(arm, q + offsets[arm]) @ G @ T_FLANGE_PLATE
                uv = cv2.projectPoints(obj, cv2.Rodrigues(T[:3, :3])[0], T[:3, 3], K, np.zeros(5))[0]
                uv = uv.reshape(-1, 2) + rng.normal(0, 0.1, (len(obj), 2))
                obs.append(Observation(arm, q, T, 1.0, name, obj, uv, time_s=t0 + t))
            knots[arm].append(t0 + 4.0 * k)
        knots[arm].append(t0 + 4.0 * 9 + 2.0)
    obs.sort(key=lambda o: o.time_s)
    grasps = {"left": T_FLANGE_PLATE, "right": T_FLANGE_PLATE}

    def worst(fit):
        return max(np.degrees(np.abs(fit.joint_offsets_rad[a] - offsets[a])).max() for a in offsets)

    fit = fit_extrinsics(obs, fk_hand, {"left": 7, "right": 7}, camera_matrix=K, grasps=grasps,
                         grasp_knots=knots)
    steady = fit_extrinsics(obs, fk_hand, {"left": 7, "right": 7}, camera_matrix=K, grasps=grasps,
                            grasp_creep=True)
    assert worst(fit) < 0.08, f"worst joint {worst(fit):.3f} deg"   # 0.048 (one steady rate: 0.27)
    assert worst(steady) > 3 * worst(fit), (worst(steady), worst(fit))
    assert len(fit.grasp_params["left"]["tz_at_knots"]) == 11
    with pytest.raises(ConfigError, match="grasp_knots"):
        fit_extrinsics(obs, fk_hand, {"left": 7, "right": 7}, camera_matrix=K,
                       grasps={"left": T_FLANGE_PLATE}, grasp_knots=knots)
