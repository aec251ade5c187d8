import numpy as np
import pytest

from stages.mecanum.control.metrics import follow_metrics, track_progress

PATH = np.array([[0.0, 0.0], [10.0, 0.0], [20.0, 0.0]])


def run(xy, speed, omega=None):
    n = len(xy)
    t = np.arange(n) * 0.01
    pose = np.c_[xy, np.zeros(n)]
    vel = np.c_[speed, np.zeros(n), np.zeros(n) if omega is None else omega]
    z = np.zeros((n, 4))
    return follow_metrics(t, pose, vel, z + 0.3, np.zeros(n, bool), np.zeros(n, bool), PATH)


def test_the_definitions_on_a_constructed_run():
    x = np.r_[np.linspace(0, 21, 100), np.full(50, 21.0), np.linspace(21, 20.2, 20),
              np.full(30, 20.2)]
    y = np.r_[np.zeros(40), np.full(20, 1.5), np.zeros(140)]
    speed = np.r_[np.full(100, 20.0), np.zeros(50), np.full(20, 2.0), np.zeros(30)]
    m = run(np.c_[x, y], speed)
    assert m["max_deviation_in"] == pytest.approx(1.5)
    assert m["overshoot_in"] == pytest.approx(1.0)  # 21 in along the final tangent
    assert m["end_error_in"] == pytest.approx(0.2)
    # below 1 in/s past 90 %, and stays: from tick 170 (the 2 in/s stretch breaks the first)
    assert m["time_to_stop_s"] == pytest.approx(1.70)
    assert m["stopped"] and m["peak_traction_fraction"] == pytest.approx(0.3)


def test_rotation_counts_and_a_stop_short_of_90_percent_does_not():
    x = np.r_[np.linspace(0, 15, 50), np.full(50, 15.0)]
    m = run(np.c_[x, np.zeros(100)], np.r_[np.full(50, 10.0), np.zeros(50)])
    assert not m["stopped"] and m["time_to_stop_s"] == pytest.approx(0.99)
    x = np.r_[np.linspace(0, 20, 50), np.full(50, 20.0)]
    omega = np.r_[np.zeros(50), np.full(40, 0.1), np.zeros(10)]
    m = run(np.c_[x, np.zeros(100)], np.r_[np.full(50, 10.0), np.zeros(50)], omega)
    assert m["time_to_stop_s"] == pytest.approx(0.90)


def test_progress_follows_a_path_that_crosses_itself():
    loop = np.array([[0, 0], [10, 0], [10, 10], [0, 10], [0, -10], [5, -10]], float)
    pts = np.array([[5, 0], [10, 5], [5, 10], [0, 5], [0.2, 0.1], [0, -5], [5, -10]])
    s = track_progress(pts, loop)
    assert np.all(np.diff(s) > 0) and s[-1] == pytest.approx(55.0)
