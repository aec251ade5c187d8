"""The online RL loop, for the recording: every episode as a span with its verdict, the resets
between them (attempts as spans), the robot and the peg posed by the physics states.

Entity paths (time: simulated seconds from the cell's start, the drop included)::

    rl/episode                            a state lane: "episode n" from the policy's attempt to
                                          the end of the reset after it
    rl/inserted                           at each verdict: the camera's (detected) and the truth (1/0)
    rl/insertion_depth_m                  at each verdict: the camera's and the simulator's depth
    rl/log                                each episode's attempt, verdict and reset
    reset/attempt, reset/log              each reset's attempts (stages.arms.recording.reset)
    world/executed/<body>/...             the robot and the peg, states thinned to 30 Hz
"""

from __future__ import annotations

import math

import numpy as np

from core.recording import Recorder
from stages.arms.recording.motion import record_robot_motion, thin
from stages.arms.recording.reset import record_attempts

STATE_RATE_HZ = 30.0   # a loop runs minutes of simulated time: half the reset's 60 Hz


def record_rl_loop(rec: Recorder, world, run) -> None:
    """Everything of one loop (a :class:`~stages.arms.rl.loop.RLRun`)."""
    if not rec.enabled:
        return
    times = np.asarray(run.times_s)
    if len(times):
        keep = thin(times, STATE_RATE_HZ)
        record_robot_motion(rec, world, "world/executed", times[keep], np.asarray(run.qpos)[keep],
                            collision=False)
    last_t = float(times[-1]) if len(times) else 0.0
    for outcome in run.resets:
        record_attempts(rec, outcome, last_t)
    records = run.records
    if records:
        verdict_s = np.array([r["sim_verdict_s"] for r in records])
        rec.series("rl/inserted", verdict_s, [[float(r["detected"]), float(r["truth"])] for r in records],
                   names=["detected", "truth"])
        rec.series("rl/insertion_depth_m", verdict_s,
                   [[_or_nan(r["depth_m"]), _or_nan(r["true_depth_m"])] for r in records],
                   names=["detected_m", "true_m"])
    for r in records:
        rec.set_time_s(r["sim_start_s"])
        rec.state("rl/episode", f"episode {r['episode']}")
        rec.set_time_s(r["sim_verdict_s"])
        agree = r["detected"] == r["truth"]
        rec.text("rl/log", f"episode {r['episode']}: attempt {r['attempt']}; inserted: camera "
                           f"{r['detected']}, truth {r['truth']}", "INFO" if agree else "WARN")
        rec.set_time_s(r["sim_end_s"])
        rec.state("rl/episode", None)
        rec.text("rl/log", f"episode {r['episode']}: reset {'ok' if r['reset_success'] else 'FAILED'} "
                           f"after {r['reset_attempts']} attempt(s)"
                           + (f" ({', '.join(r['reset_failures'])})" if r["reset_failures"] else ""),
                 "INFO" if r["reset_success"] else "WARN")


def _or_nan(value) -> float:
    return math.nan if value is None else float(value)
