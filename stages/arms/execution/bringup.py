"""The hardware-in-the-loop bring-up protocol: an ordered checklist run against any arm driver.

Steps, in order (each has explicit pass/fail criteria; the first failing step stops the
protocol and every later step is recorded as "not run"):

1. ``connection``   — every arm answers a state read in time; its joint names are the robot
   config's; positions and velocities are finite and within the joint limits; the clock runs.
2. ``joint_zeros``  — the state read at a known pose (``known_pose``, default ``robot.home``)
   matches what the calibration says it should read there: ``known_pose + offset`` with the
   calibration's joint zero offsets (``reading − true angle``), or ``known_pose`` itself
   without a calibration. Tolerance ``joint_zeros.tolerance_rad``.
3. ``each_arm``     — each arm alone, at ``speed_fraction`` of its velocity and acceleration
   limits, makes a small collision-checked joint motion (``known_pose + delta`` and back); its
   goal must succeed, its send must be quicker than ``max_send_latency_s``, and the tracking
   error (recorded states against the trajectory) and final error must stay within limits.
4. ``synchronized`` — both arms together on one shared start stamp at reduced speed: the same
   limits plus the start skew between the arms and no touching arms in the recorded states.
5. ``cancel``       — both arms move; a cancel is raised mid-motion; every arm must stop
   (cancel latency: from the cancel to the last arm commanded to hold), come to rest within
   ``max_stop_time_s`` and then hold (drift over ``hold_check_s``).
6. ``full_speed``   — as step 4 at ``full_speed.speed_fraction`` (1.0) of the limits.

Steps 1–2 only read. Steps 3–6 move the robot: on a driver marked real (``is_real``), each of
them refuses to move (and fails, saying so) unless confirmed — ``confirm`` for every step or
``<step>.confirm`` for one.

Everything here is plain Python: :class:`BringUpProtocol` takes drivers (the
:class:`hardware.arms.protocol.ArmDriver` protocol), the robot's limits and an optional motion
validator; the stage in :mod:`stages.adapters.arms.bringup` adapts config to it. This module runs
the steps in order (confirmation, timing, stop at the first failure); the rest is split by job:

- :mod:`~stages.arms.execution.bringup_settings` — the steps and their criteria (settings);
- :mod:`~stages.arms.execution.bringup_steps` — what each step measures and checks;
- :mod:`~stages.arms.execution.bringup_motion` — planning and running a test motion;
- :mod:`~stages.arms.execution.bringup_drivers` — driver wrappers, the state recorder, timed reads;
- :mod:`~stages.arms.execution.bringup_report` — checks, step results and the report.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping

from core.errors import ExecutionError
from hardware.arms.protocol import ArmDriver
from stages.arms.execution.bringup_drivers import MarkedReal, StateRecorder
from stages.arms.execution.bringup_motion import ArmLimitsSpec, BringUpMotions, MotionValidator
from stages.arms.execution.bringup_report import FAIL, PASS, BringUpReport, StepFailed, StepResult
from stages.arms.execution.bringup_settings import (
    CONFIG_PREFIX,
    MOVING_STEPS,
    STEP_KEYS,
    BringUpSettings,
    load_joint_offsets,
)
from stages.arms.execution.bringup_steps import BringUpSteps, StateChecker

__all__ = ["ArmLimitsSpec", "BringUpProtocol", "MarkedReal", "MotionValidator", "StateChecker",
           "StateRecorder", "StepFailed"]


class BringUpProtocol:
    """Runs the checklist against ``drivers`` (one per arm, all sharing one clock).

    ``config_prefix`` is where the settings live in the config, named by messages that tell the
    operator what to set (``<prefix>.confirm=true``, ``<prefix>.deltas_rad``).
    """

    def __init__(self, drivers: Mapping[str, ArmDriver], arms: Mapping[str, ArmLimitsSpec],
                 settings: BringUpSettings | None = None, validate: MotionValidator | None = None,
                 count_touching: StateChecker | None = None, log: logging.Logger | None = None,
                 config_prefix: str = CONFIG_PREFIX):
        missing = sorted(set(arms) - set(drivers))
        if missing:
            raise ExecutionError(f"no driver for arm(s) {missing}; drivers: {sorted(drivers)}")
        self.arms = {a: arms[a] for a in arms}
        self.drivers = {a: drivers[a] for a in self.arms}
        self.settings = settings or BringUpSettings()
        self.log = log or logging.getLogger("choreograph.bringup")
        self.report: BringUpReport | None = None   # filled in as the steps run (kept on Ctrl-C)
        self.config_prefix = config_prefix   # how messages name the settings
        self.motions = BringUpMotions(self.drivers, self.arms, self.settings, validate, config_prefix)
        offsets = load_joint_offsets(self.settings.calibration,
                                     {a: len(sp.joints) for a, sp in self.arms.items()})
        self.steps = BringUpSteps(self.motions, self.settings, offsets, count_touching)

    @property
    def goals_sent(self) -> int:
        return self.motions.goals_sent

    @property
    def is_real(self) -> bool:
        return any(bool(getattr(d, "is_real", False)) for d in self.drivers.values())

    @property
    def clock(self) -> Callable[[], float]:
        return self.motions.clock

    def run(self) -> BringUpReport:
        kind = "real" if self.is_real else "simulated"
        report = self.report = BringUpReport([StepResult(k) for k in STEP_KEYS], kind, tuple(self.arms))
        for step in report.steps:
            t0 = time.perf_counter()
            self.log.info("bring-up step %d (%s)", step.number, step.title)
            try:
                self._refuse_unconfirmed(step.key)
                getattr(self.steps, step.key)(step)
                bad = [c for c in step.checks if not c.passed]
                if bad:
                    raise StepFailed("; ".join(f"{c.criterion}: measured {c.measured}" for c in bad))
                step.status = PASS
            except StepFailed as exc:
                step.status, step.message = FAIL, exc.message
            except KeyboardInterrupt:
                step.status, step.message = FAIL, "interrupted by the operator (SIGINT); arms cancelled"
                raise
            finally:
                step.seconds = time.perf_counter() - t0
                report.goals_sent = self.goals_sent
            if step.status == FAIL:
                self.log.error("bring-up step %d (%s) failed: %s", step.number, step.title, step.message)
                break
            self.log.info("bring-up step %d (%s) passed", step.number, step.title)
        return report

    def _refuse_unconfirmed(self, key: str) -> None:
        """A moving step on a real driver needs the operator's confirmation."""
        if key in MOVING_STEPS and self.is_real and not self.settings.step_confirmed(key):
            p = self.config_prefix
            real = [a for a, d in self.drivers.items() if getattr(d, "is_real", False)]
            raise StepFailed(
                f"arm(s) {real} are a real robot: refusing to move without operator confirmation; "
                f"check that the workspace is clear and re-run with {p}.confirm=true (every step) "
                f"or {p}.{key}.confirm=true (this step)")
