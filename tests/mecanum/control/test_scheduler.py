import numpy as np
import pytest

from stages.mecanum.control.scheduler import Scheduler, constant_heading
from stages.mecanum.control.settings import SchedulerSettings
from tests.mecanum.control.helpers import HAIRPIN, STRAIGHT, polyline_table, table_of


def test_projection_and_frame_on_a_polyline():
    table = polyline_table([[0, 0], [10, 0], [10, 10]])
    sch = Scheduler(table, constant_heading(0.0), SchedulerSettings(lookahead_min_in=1.0))
    g = sch.guidance(np.array([4.0, 1.5, 0.0]), np.array([10.0, 0.0, 0.0]))
    assert g.segment == 0 and g.s_in == pytest.approx(4.0)
    assert g.cross_track_in == pytest.approx(1.5) and np.allclose(g.tangent, [1, 0])
    # speed limit read from the precompute: it falls toward the corner (an almost-stop)
    assert g.speed_limit_in_s <= table.limits.max_speed_in_s
    # past the corner, on the second segment, the sign says which side
    g = sch.guidance(np.array([9.0, 6.0, 0.0]), np.zeros(3))
    assert g.segment == 1 and g.cross_track_in == pytest.approx(1.0)


def test_lookahead_is_the_braking_distance():
    _, table = table_of(STRAIGHT)
    sch = Scheduler(table, constant_heading(0.0),
                    SchedulerSettings(lookahead_min_in=1.5, lookahead_max_in=50))
    b = min(table.limits.brake_accel_in_s2, table.limits.max_accel_in_s2)
    for v in (0.0, 10.0, 30.0):
        g = sch.guidance(np.array([-20.0, 0.0, 0.0]), np.array([v, 0.0, 0.0]))
        assert g.lookahead_in == pytest.approx(max(1.5, v * v / (2 * b)))


def test_goal_segment_switches_when_the_braking_distance_reaches_the_vertex():
    _, table = table_of(HAIRPIN)
    sch = Scheduler(table, constant_heading(0.0), SchedulerSettings(lookahead_max_in=50))
    first_end = table.cum_length_in[1]  # where the first straight ends
    x = -48 + first_end - 6.0  # 6 in before that vertex
    slow = sch.tick(np.array([x, -8.0, 0.0]), np.array([20.0, 0, 0]))  # brakes in 2.4 in
    sch2 = Scheduler(table, constant_heading(0.0), SchedulerSettings(lookahead_max_in=50))
    fast = sch2.tick(np.array([x, -8.0, 0.0]), np.array([40.0, 0, 0]))  # brakes in 9.4 in
    assert slow.goal_segment == 0 and fast.goal_segment >= 1


def test_modes_and_the_default_stop_controller():
    _, table = table_of(STRAIGHT)
    sch = Scheduler(table, constant_heading(0.0),
                    SchedulerSettings(end_zone_in=2.0, end_tolerance_in=0.2))
    t = sch.tick(np.array([0.0, 0.0, 0.0]), np.array([20.0, 0.0, 0.0]))
    assert t.mode == "path" and t.active == ("back_onto_path", "heading", "along_path")
    t = sch.tick(np.array([29.0, 0.3, 0.0]), np.array([5.0, 0.0, 0.0]))
    assert t.mode == "end" and t.active == ("end_correction", "heading")
    t = sch.tick(np.array([29.95, 0.05, 0.0]), np.array([0.1, 0.0, 0.0]))
    assert t.mode == "done" and t.active == ("stop",)
    t = sch.tick(np.array([29.0, 0.0, 0.0]), np.array([0.0, 0.0, 0.0]))  # drifted off: back
    assert t.mode == "end"
