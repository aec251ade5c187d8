"""One MuJoCo physics simulation shared by every arm's driver.

The simulation steps in its own thread at the model's timestep (or ``timestep_s``, which
sets the model's: a finer step lets a held object drift less in the fingers), on one of two clocks
(:mod:`hardware.arms.clock`): ``clock="sim"`` — virtual time, stepped as fast as the CPU allows
while a goal or a wait is pending and standing still otherwise, so a run is the same step for step
under any load — or ``clock="wall"``, paced to wall-clock time (``speed`` sim-seconds per
wall-second; 1 = real time) for watching a run. Each arm's joints are
position-controlled by the model's position actuators with velocity and inverse-dynamics feedforward
(``kp·(q* − q) + kv·(q̇* − q̇) + M·q̈* + d·q̇* + k·(q* − q_spring)``, the joints' own damping ``d`` and
spring ``k`` compensated as a robot's joint controller does; within the actuators' force ranges);
grippers by their own actuators. Every access to the shared ``MjData`` — stepping, reading state,
submitting and cancelling goals — goes through one lock, so drivers in many threads never race.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from hardware.arms.clock import SimClock, WallClock
from hardware.arms.protocol import ArmTrajectory, JointState, Outcome

CLOCKS = ("sim", "wall")


@dataclass
class Goal:
    """A trajectory the simulation runs for one arm, and what became of it."""

    arm: str
    trajectory: ArmTrajectory
    start_stamp: float
    started_s: float | None = None
    ended_s: float | None = None
    outcome: Outcome | None = None
    reason: str = ""
    stopped_at: float | None = None   # the clock's stopwatch when a cancel made the arm hold
    done: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class ArmChannel:
    qpos: np.ndarray
    dofs: np.ndarray
    actuators: np.ndarray
    kv_over_kp: np.ndarray
    kp: np.ndarray
    offsets: np.ndarray  # hidden joint zero offsets (rad): physics runs at commanded + offset
    damping: np.ndarray  # the joints' passive damping (N m s/rad) and spring (N m/rad, about spring_ref)
    stiffness: np.ndarray
    spring_ref: np.ndarray

    def spring_ff(self, q: np.ndarray) -> np.ndarray:
        """The torque that cancels the joints' springs at the believed angles ``q``."""
        return self.stiffness * (q + self.offsets - self.spring_ref)


class PhysicsSim:
    """Steps the model; arms are registered by name with their joints and actuators."""

    def __init__(self, model, qpos: np.ndarray | None = None, speed: float = 1.0,
                 record_every: int = 1, timestep_s: float | None = None, clock: str = "sim"):
        import mujoco

        if clock not in CLOCKS:
            raise ValueError(f"clock must be one of {CLOCKS}, got {clock!r}")
        if not speed > 0:
            raise ValueError(f"speed must be > 0 (sim seconds per wall second), got {speed}")
        if timestep_s is not None:
            if not timestep_s > 0:
                raise ValueError(f"timestep_s must be > 0, got {timestep_s}")
            model.opt.timestep = float(timestep_s)
        self.model = model
        self.data = mujoco.MjData(model)
        if qpos is not None:
            self.data.qpos[:] = qpos
        mujoco.mj_forward(model, self.data)
        self.speed = float(speed)
        self.record_every = int(record_every)
        self.lock = threading.RLock()
        self._arms: dict[str, ArmChannel] = {}
        self._goals: dict[str, Goal] = {}
        self._hold: dict[str, np.ndarray] = {}
        self._extra_ctrl: dict[int, float] = {}
        self._times: list[float] = []
        self._qpos: list[np.ndarray] = []
        self._steps = 0
        self.step_hooks: list[Callable[[object, object], None]] = []
        self.error: BaseException | None = None
        self.timing: SimClock | WallClock = (
            SimClock(self.clock, self.step, self.has_goals) if clock == "sim"
            else WallClock(self.clock, self.speed, self.step, float(model.opt.timestep)))
        self.timing.on_error = self._fail_goals

    # ------------------------------------------------------------------ set-up
    def add_arm(self, name: str, joints: Sequence[str],
                joint_offsets_rad: Sequence[float] | None = None) -> None:
        """Register an arm. ``joint_offsets_rad``: hidden joint zero offsets — commanded and
        reported angles are the believed ones, the physical joints sit at believed + offset (the
        arm is moved there now: it stands at its true angles from the start)."""
        import mujoco

        m = self.model
        jids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in joints]
        acts = []
        for j in jids:
            found = [a for a in range(m.nu)
                     if m.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT and m.actuator_trnid[a, 0] == j]
            if not found:
                name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
                raise ValueError(f"joint {name} has no actuator")
            acts.append(found[0])
        acts = np.array(acts)
        offsets = np.zeros(len(jids))
        if joint_offsets_rad is not None:
            offsets = np.asarray(joint_offsets_rad, float)
        if offsets.shape != (len(jids),):
            raise ValueError(f"arm {name!r}: joint_offsets_rad must list {len(jids)} values, "
                             f"got {offsets.shape}")
        qadr, dofs = np.array([m.jnt_qposadr[j] for j in jids]), np.array([m.jnt_dofadr[j] for j in jids])
        ch = ArmChannel(qadr, dofs,
                        acts, -m.actuator_biasprm[acts, 2] / m.actuator_gainprm[acts, 0],
                        m.actuator_gainprm[acts, 0].copy(), offsets, m.dof_damping[dofs].copy(),
                        m.jnt_stiffness[jids].copy(), m.qpos_spring[qadr].copy())
        with self.lock:
            self._arms[name] = ch
            self._hold[name] = self.data.qpos[ch.qpos].copy()   # believed
            if np.any(offsets):
                self.data.qpos[ch.qpos] += offsets
                mujoco.mj_forward(m, self.data)
            self.data.ctrl[acts] = self._hold[name] + offsets + ch.spring_ff(self._hold[name]) / ch.kp

    def set_ctrl(self, actuator: int, value: float) -> None:
        """Hold an extra actuator (e.g. a gripper) at ``value``."""
        with self.lock:
            self._extra_ctrl[int(actuator)] = float(value)
            self.data.ctrl[int(actuator)] = float(value)   # from now on, also for steps taken outside step()

    # ------------------------------------------------------------------ clock and state
    def clock(self) -> float:
        with self.lock:
            return float(self.data.time)

    def read_state(self, arm: str) -> JointState:
        ch = self._arms[arm]
        with self.lock:
            return JointState(float(self.data.time), self.data.qpos[ch.qpos] - ch.offsets,
                              self.data.qvel[ch.dofs].copy())

    def snapshot(self) -> tuple[float, np.ndarray]:
        with self.lock:
            return float(self.data.time), self.data.qpos.copy()

    def has_goals(self) -> bool:
        with self.lock:
            return bool(self._goals)

    def recorded(self) -> tuple[np.ndarray, np.ndarray]:
        with self.lock:
            return np.array(self._times), np.array(self._qpos)

    # ------------------------------------------------------------------ goals
    def submit(self, arm: str, trajectory: ArmTrajectory, start_stamp: float) -> Goal:
        goal = Goal(arm, trajectory, float(start_stamp))
        with self.lock:
            if self.data.time > start_stamp:
                goal.outcome, goal.reason = Outcome.LATE, (
                    f"start stamp {start_stamp:.4f} s already passed (now {self.data.time:.4f} s)")
                goal.done.set()
                return goal
            old = self._goals.get(arm)
            if old is not None and old.outcome is None:
                self._finish(old, Outcome.CANCELLED, "replaced by a new goal")
            self._goals[arm] = goal
        return goal

    def cancel(self, goal: Goal, reason: str = "cancelled") -> None:
        """Stop the arm where it is (it holds that position) and end the goal."""
        with self.lock:
            if goal.outcome is None:
                ch = self._arms[goal.arm]
                self._hold[goal.arm] = self.data.qpos[ch.qpos] - ch.offsets
                goal.stopped_at = self.timing.stopwatch()
                self._finish(goal, Outcome.CANCELLED, reason)

    def _finish(self, goal: Goal, outcome: Outcome, reason: str = "") -> None:
        goal.outcome, goal.reason, goal.ended_s = outcome, reason, float(self.data.time)
        if self._goals.get(goal.arm) is goal:
            del self._goals[goal.arm]
        goal.done.set()

    # ------------------------------------------------------------------ stepping
    def _control(self) -> None:
        import mujoco

        d, t = self.data, float(self.data.time)
        for arm, ch in self._arms.items():
            goal = self._goals.get(arm)
            if goal is not None and t + 1e-12 >= goal.start_stamp:
                tr = goal.trajectory
                tau = max(t - goal.start_stamp, 0.0)   # started within the tolerance: at its first sample
                if goal.started_s is None:
                    goal.started_s = t
                if tau >= tr.times[-1]:
                    self._hold[arm] = tr.positions[-1].copy()
                    self._finish(goal, Outcome.SUCCEEDED)
                else:
                    k = min(int(np.searchsorted(tr.times, tau, side="right")), len(tr.times) - 1)
                    w = (tau - tr.times[k - 1]) / (tr.times[k] - tr.times[k - 1])
                    q = tr.positions[k - 1] + w * (tr.positions[k] - tr.positions[k - 1])
                    qd = tr.velocities[k - 1] + w * (tr.velocities[k] - tr.velocities[k - 1])
                    ff = ch.damping * qd + ch.spring_ff(q)
                    if tr.accelerations is not None:
                        qacc = np.zeros(self.model.nv)
                        qacc[ch.dofs] = tr.accelerations[k - 1]
                        mass_qacc = np.zeros(self.model.nv)
                        mujoco.mj_mulM(self.model, d, mass_qacc, qacc)
                        ff += mass_qacc[ch.dofs]
                    # position actuator force kp·(ctrl − q) − kv·q̇; with ctrl = q* + (kv·q̇* + τ_ff)/kp
                    # it is kp·(q* − q) + kv·(q̇* − q̇) + τ_ff (τ_ff = M·q̈* + d·q̇* + k·(q* − q_spring)),
                    # within its force range
                    d.ctrl[ch.actuators] = q + ch.offsets + ch.kv_over_kp * qd + ff / ch.kp
                    continue
            d.ctrl[ch.actuators] = self._hold[arm] + ch.offsets + ch.spring_ff(self._hold[arm]) / ch.kp
        for a, v in self._extra_ctrl.items():
            d.ctrl[a] = v

    def step(self, n: int = 1) -> None:
        """Advance the physics ``n`` steps (under the lock), recording states."""
        import mujoco

        with self.lock:
            for _ in range(n):
                self._control()
                mujoco.mj_step(self.model, self.data)
                for hook in self.step_hooks:
                    hook(self.model, self.data)
                self._steps += 1
                if self._steps % self.record_every == 0:
                    self._times.append(float(self.data.time))
                    self._qpos.append(self.data.qpos.copy())

    def start(self) -> None:
        """Step in a background thread: on virtual time, or paced to wall-clock time × ``speed``."""
        self.timing.start()

    def stop(self) -> None:
        self.timing.stop()

    def _fail_goals(self, exc: BaseException) -> None:
        self.error = exc
        with self.lock:
            for goal in list(self._goals.values()):
                self._finish(goal, Outcome.FAILED, f"physics stopped: {exc}")

    def run_until_idle(self, timeout_s: float = 60.0) -> None:
        """Wait until no arm has a goal (at most ``timeout_s`` of the clock's stopwatch)."""
        self.timing.wait_for(lambda: not self.has_goals(), timeout_s=timeout_s)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

