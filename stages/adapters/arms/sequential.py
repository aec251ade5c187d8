"""Stage sequential: the baseline that sends each arm its trajectory one after another."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.artifacts import NpzFile
from stages.api import Stage, StageContext, StageResult
from stages.arms.execution.rig import hardware_settings
from stages.arms.execution.sequential import run_sequential
from stages.arms.recording import record_sequential


class Sequential(Stage):
    """The old execution layer's way: one arm after the other; checks every ``check_every``-th state."""

    outputs = ()

    def __init__(self, hardware: Mapping[str, Any] | None = None, check_every: int = 4):
        self.hw = hardware_settings(hardware)
        self.check_every = int(check_every)

    def run(self, ctx: StageContext, world, trajectory) -> StageResult:
        run = run_sequential(world, trajectory, self.hw, ctx.seed, self.check_every)
        colliding = run.checked_colliding
        record_sequential(ctx.recorder, run, self.check_every)
        ctx.log.info("sequential replay: %d of %d checked states touch", colliding.sum(), len(colliding))
        return StageResult(
            metrics={"states": int(len(run.times)), "checked_states": int(len(colliding)),
                     "colliding_states": int(colliding.sum()), "duration_s": run.duration_s,
                     **{f"{a}_outcome": o for a, o in run.outcomes.items()}},
            files={"states.npz": NpzFile({"times": run.times, "qpos": run.qpos,
                                          "joint_names": run.joint_names, "checked_colliding": colliding})},
        )
