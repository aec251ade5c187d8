import math

import numpy as np
import pytest

from hardware.mecanum.simulator import MecanumSimulator
from stages.mecanum.control.factory import build_follower
from stages.mecanum.control.loop import run_loop
from stages.mecanum.control.metrics import follow_metrics, polyline_distance, track_progress
from stages.mecanum.control.settings import FollowerSettings
from tests.mecanum.control.helpers import DRIVE, table_of

PATH = [[[-40, -20], [-10, -20], [10, 10], [40, 10]]]
SKIDADDLE = FollowerSettings(kind="skidaddle", heading="constant")


def follow(segments, pose, velocity=(0, 0, 0), max_time_s=10.0, cfg=SKIDADDLE):
    chain, table = table_of(segments)
    d = table.directions[0]
    f = build_follower(cfg, drive=DRIVE, table=table, chain=chain,
                       start_heading=math.atan2(d[1], d[0]))
    sim = MecanumSimulator(DRIVE, pose=pose, velocity=velocity)
    log = run_loop(sim, f, max_time_s=max_time_s)
    m = follow_metrics(log["time_s"], log["pose"], log["velocity"], log["traction"],
                       log["saturated"], log["slipping"], table.points_in)
    return log, m, table


@pytest.mark.parametrize("seed", range(4))
def test_converges_onto_the_path_from_random_starts(seed):
    rng = np.random.default_rng(seed)
    start = np.array([-40.0, -20.0, 0.0]) + [rng.uniform(-4, 4), rng.uniform(-12, 12),
                                              rng.uniform(-0.6, 0.6)]
    vel = np.r_[rng.uniform(-25, 25, 2), rng.uniform(-1.5, 1.5)]
    log, m, table = follow(PATH, start, vel)
    dev = polyline_distance(log["pose"], table.points_in)
    s = track_progress(log["pose"], table.points_in)
    assert m["stopped"] and m["end_error_in"] < 0.5
    later = s > 0.5 * table.length_in  # the second half of the path: on it
    assert later.any() and dev[later].max() < 0.5, (start, vel, dev[later].max())
    assert m["peak_traction_fraction"] <= 1.0


def test_end_correction_puts_the_robot_on_the_end_point():
    # a short path started 3 in to the side of it, heading off by 0.4 rad: it must correct
    # the lateral and heading error at the end, not stop a few inches off
    log, m, table = follow([[[0, 0], [5, 0], [10, 0], [15, 0]]], (0.0, 3.0, 0.4))
    assert m["end_error_in"] < 0.5 and m["stopped"]
    assert abs(log["pose"][-1, 2]) < 0.02  # heading back to the target
    assert "end_correction" in "".join(log.active) and log.mode[-1] == "done"


def test_no_follower_holds_the_robot_still_with_the_stop_controller():
    from stages.mecanum.control.loop import SkidaddleFollower
    from stages.mecanum.control.pidf import model_feedforward
    from stages.mecanum.control.scheduler import constant_heading

    f = SkidaddleFollower(None, DRIVE, constant_heading(0.0), model_feedforward(DRIVE))
    sim = MecanumSimulator(DRIVE, velocity=(20.0, -10.0, 1.0))
    log = run_loop(sim, f, max_time_s=2.0)
    assert set(log.active) == {"stop"}
    assert np.hypot(*log["velocity"][-1, :2]) < 0.5 and abs(log["velocity"][-1, 2]) < 0.02
    assert log["time_s"][-1] < 1.5  # a controlled stop, then the loop ends at rest
