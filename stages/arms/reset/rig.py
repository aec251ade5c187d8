"""The simulated cell the reset runs in: physics, drivers, grippers and the scene camera.

The peg is dropped and later carried by real MuJoCo physics (finger friction only);
the camera renders what the simulation shows and the peg is found from the image.
"""

from __future__ import annotations

import numpy as np

from core.errors import ExecutionError, PerceptionError
from hardware.arms.faults import FaultyDriver
from hardware.arms.mujoco_driver import MujocoArmDriver
from hardware.arms.mujoco_sim import PhysicsSim
from hardware.gripper import parallel_grippers
from stages.arms.execution.executor import SynchronizedExecutor, split_trajectory
from stages.arms.execution.rig import joint_offsets_rad
from stages.arms.execution.settings import HardwareSettings
from stages.arms.perception.camera import CameraModel, SceneCamera
from stages.arms.perception.peg_pose import PoseEstimator


class ResetRig:
    def __init__(self, world, layout, hardware: HardwareSettings, camera: str = "scene_camera", effects=None,
                 calibration=None, peg_body: str = "peg", seed: int = 0, hold_noslip_iterations: int = 0):
        import mujoco

        self.world, self.model, self.layout = world, world.model, layout
        self.speed = hardware.speed
        self.sim = PhysicsSim(world.model, world.home_qpos(), speed=self.speed,
                              timestep_s=hardware.timestep_s, clock=hardware.clock)
        self.drivers = {}
        for k, a in enumerate(world.robot.arms):
            driver = MujocoArmDriver(self.sim, a.name, a.joints, joint_offsets_rad(hardware, a))
            faults = hardware.faults_of(a.name)
            self.drivers[a.name] = FaultyDriver(driver, seed=seed + k, **faults) if faults else driver
        self.executor = SynchronizedExecutor.from_hardware(self.drivers, hardware)
        self.stamp_retries = 0   # start stamps that passed before every arm had its goal, sent again
        self.moves: list[tuple[float, dict]] = []   # (start stamp, each arm's trajectory) of every move
        self.grippers = {a.name: a.gripper for a in world.robot.arms if a.gripper is not None}
        for g in self.grippers.values():
            for act in g.actuator_ids:
                self.sim.set_ctrl(act, g.open)
        # the parallel-jaw description (robot.arms.<arm>.gripper), measured on the model: the finger joints
        self.hands = parallel_grippers(world.model, world.robot, world.home_qpos())
        self.peg_id = mujoco.mj_name2id(world.model, mujoco.mjtObj.mjOBJ_BODY, peg_body)
        self.peg_adr = int(world.model.jnt_qposadr[world.model.body_jntadr[self.peg_id]])
        self.camera = SceneCamera(world.model, camera, effects)
        self._render_data = mujoco.MjData(world.model)
        self._render_data.qpos[:] = self.sim.data.qpos
        mujoco.mj_forward(world.model, self._render_data)
        cam_model = (CameraModel.from_calibration(calibration) if calibration
                     else self.camera.model_at(self._render_data))
        self.estimator = PoseEstimator(layout, cam_model)
        self.seed = seed
        self.hold_noslip_iterations = int(hold_noslip_iterations)
        self._noslip_free = int(world.model.opt.noslip_iterations)
        self._holding: set[str] = set()

    # ------------------------------------------------------------------ state
    def sim_time_s(self) -> float:
        """The simulation's clock (s)."""
        return float(self.sim.snapshot()[0])

    def true_peg_pose(self) -> np.ndarray:
        import mujoco

        _, qpos = self.sim.snapshot()
        T = np.eye(4)
        T[:3, 3] = qpos[self.peg_adr:self.peg_adr + 3]
        R = np.empty(9)
        mujoco.mju_quat2Mat(R, qpos[self.peg_adr + 3:self.peg_adr + 7])
        T[:3, :3] = R.reshape(3, 3)
        return T

    def finger_opening_m(self, arm: str) -> float:
        """Pad to pad now (m; studs on the pads included)."""
        _, qpos = self.sim.snapshot()
        return self.hands[arm].opening_m(qpos)

    def believed_qpos(self, T_world_peg: np.ndarray) -> np.ndarray:
        """The current state with the peg where the camera saw it (what the planner plans in)."""
        import mujoco

        _, qpos = self.sim.snapshot()
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, np.asarray(T_world_peg)[:3, :3].reshape(-1))
        qpos[self.peg_adr:self.peg_adr + 3] = T_world_peg[:3, 3]
        qpos[self.peg_adr + 3:self.peg_adr + 7] = quat
        return qpos

    # ------------------------------------------------------------------ sensing
    def perceive(self, rng: np.random.Generator):
        """The peg's pose from one rendered image (PerceptionError when it is not seen)."""
        image = self.render(rng)
        return self.estimator.estimate(image), image

    def render(self, rng: np.random.Generator, frames: int = 1) -> np.ndarray:
        """The scene camera's image of the simulation now (``frames``: a burst's mean)."""
        import mujoco

        _, qpos = self.sim.snapshot()
        self._render_data.qpos[:] = qpos
        mujoco.mj_forward(self.model, self._render_data)
        return self.camera.render(self._render_data, rng, frames=frames)

    # ------------------------------------------------------------------ acting
    def wait_sim(self, seconds: float) -> None:
        """Let ``seconds`` of simulated time pass (the physics steps them; on the wall clock, paced)."""
        self.sim.timing.wait_for(until=self.sim.clock() + seconds)

    def gripper(self, arm: str, command: str, settle_s: float = 0.5) -> None:
        g = self.grippers[arm]
        if command == "open":
            self.set_holding(arm, False)
        for act in g.actuator_ids:
            self.sim.set_ctrl(act, g.open if command == "open" else g.closed)
        self.wait_sim(settle_s)

    def set_holding(self, arm: str, holding: bool) -> None:
        """With ``hold_noslip_iterations``, MuJoCo's noslip post-solver runs while a hand holds the
        peg lifted: the soft friction model lets a held object creep under its weight (a numerical
        artifact; real pads at a few percent of their friction cone do not), and noslip removes
        that. It starts only after the lift: on the table, it would keep the pads from squaring
        the peg up as they close and lift it (tests/arms/perception/test_peg_physics.py)."""
        (self._holding.add if holding else self._holding.discard)(arm)
        if self.hold_noslip_iterations:
            with self.sim.lock:
                self.model.opt.noslip_iterations = (self.hold_noslip_iterations if self._holding
                                                    else self._noslip_free)

    def move(self, trajectory, name: str) -> None:
        arms = {a.name: a.joints for a in self.world.robot.arms}
        per_arm = split_trajectory(trajectory, arms)
        report = self.executor.run(per_arm)
        self.moves.append((report.start_stamp, per_arm))
        self.stamp_retries += report.stamp_retries
        if not report.ok:
            raise ExecutionError(f"segment {name!r}: {report.failure()}")

    def execute(self, plan, rng, lift_check_m: float = 0.04, width_m: float = 0.04, log=None) -> None:
        """Run every segment; a missed or slipped grasp raises ExecutionError (after opening)."""
        z_before = None
        for seg in plan.segments:
            if log:
                log.info("reset: %s", seg.name)
            if seg.kind == "gripper":
                arm, command = seg.gripper
                self.gripper(arm, command)
                if command == "closed":
                    opening = self.finger_opening_m(arm)
                    if opening < 0.5 * width_m:
                        self.gripper(arm, "open")
                        raise ExecutionError(f"missed grasp: the fingers closed to {opening * 1000:.1f} mm "
                                             f"(the peg is {width_m * 1000:.0f} mm wide)")
                    z_before = self.true_peg_height_seen(rng)
                continue
            self.move(seg.trajectory, seg.name)
            if seg.name == "lift":
                # re-perceive: the peg must have come up with the hand (if the hand hides it,
                # the fingers must still be held apart by it)
                z_after = self.true_peg_height_seen(rng)
                opening = self.finger_opening_m(plan.arm)
                slipped = (z_after is not None and z_before is not None
                           and z_after - z_before < lift_check_m) or opening < 0.5 * width_m
                if slipped:
                    self.gripper(plan.arm, "open")
                    raise ExecutionError("slipped grasp: after the lift " + (
                        f"the fingers are at {opening * 1000:.1f} mm" if opening < 0.5 * width_m else
                        f"the camera sees the peg only {1000 * (z_after - z_before):.0f} mm higher"))
                self.set_holding(plan.arm, True)

    def true_peg_height_seen(self, rng) -> float | None:
        """The peg's height as the camera sees it (None when not seen: e.g. hidden by the hand)."""
        try:
            est, _ = self.perceive(rng)
        except PerceptionError:
            return None
        return float(est.T_world_obj[2, 3])

    def close(self) -> None:
        self.model.opt.noslip_iterations = self._noslip_free
        self.camera.close()
