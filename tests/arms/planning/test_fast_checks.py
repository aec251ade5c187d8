"""The fast paths keep the guarantees: true distances near the boundary, sound clearance bubbles,
threads agreeing with one thread, and a pinned number of checks for a fixed problem."""

import threading

import mujoco
import numpy as np
import pytest
from omegaconf import OmegaConf

from stages.arms.planning.checker import ClearanceChecker
from stages.arms.planning.edges import EdgeChecker, joint_radii
from stages.arms.planning.group import ArmGroup, ArmLimits
from stages.arms.planning.settings import PlannerSettings
from tests.arms.planning.two_link_arms import two_arm_xml
from tests.conftest import CONF


@pytest.fixture(scope="module")
def world():
    from stages.arms.world import build_world

    return build_world(OmegaConf.to_container(OmegaConf.load(CONF / "robot/twin_panda.yaml")),
                       OmegaConf.to_container(OmegaConf.load(CONF / "scene/table.yaml")))


def random_states(world, rng, n, spread=0.5):
    home, lower, upper = world.robot.home(), world.robot.lower(), world.robot.upper()
    return np.clip(home + rng.normal(0, spread, (n, home.size)), lower, upper)


def boundary_states(checker, world, rng, n):
    """States within a hair of the clearance: bisect between a valid and an invalid state."""
    def truth(q):
        return checker.pair_distances(q, checker.pairs).min()

    out = []
    while len(out) < n:
        a, b = random_states(world, rng, 2, 0.6)
        ta, tb = truth(a), truth(b)
        if (ta >= checker.clearance_m) == (tb >= checker.clearance_m):
            continue
        lo, hi = (a, b) if ta >= checker.clearance_m else (b, a)
        for _ in range(20):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if truth(mid) >= checker.clearance_m else (lo, mid)
        out += [lo + (hi - lo) * t for t in (-1.0, 0.0, 1.0, 2.0)]
    return out


def test_fast_test_matches_true_distance_right_at_the_boundary(world):
    """Regression: MuJoCo's broad phase reads body_margin (stale after changing geom margins) and
    box-box contacts misread separated boxes; both let pairs closer than the clearance pass."""
    checker = ClearanceChecker(world.model, world.robot.joint_names(), 0.005, base_qpos=world.home_qpos())
    rng = np.random.default_rng(11)
    states = boundary_states(checker, world, rng, 160)
    outcomes = set()
    for q in states:
        truth = checker.pair_distances(q, checker.pairs).min() >= 0.005
        assert checker.is_valid(q) == truth
        outcomes.add(truth)
    assert outcomes == {True, False}


@pytest.mark.parametrize("clearance, horizon", [(0.007, None), (0.005, 0.03), (0.0, 0.1)])
def test_clearance_query_bounds_every_pair_from_below(world, clearance, horizon):
    checker = ClearanceChecker(world.model, world.robot.joint_names(), clearance,
                               base_qpos=world.home_qpos(), horizon_m=horizon)
    h = checker.horizon_m
    rng = np.random.default_rng(2)
    for q in list(random_states(world, rng, 120)) + boundary_states(checker, world, rng, 20):
        true = checker.pair_distances(q, checker.pairs)
        valid, pid, bound = checker.clearance_query(q)
        assert valid == checker.is_valid(q) == bool(true.min() >= clearance)
        lower = np.full(len(true), h)
        np.minimum.at(lower, pid[pid >= 0], bound[pid >= 0])
        assert np.all(lower <= np.minimum(true, h) + 1e-9)
        assert np.all(np.isinf(bound[pid < 0]))


def test_two_threads_answer_as_one(world):
    checker = ClearanceChecker(world.model, world.robot.joint_names(), 0.007, base_qpos=world.home_qpos())
    states = random_states(world, np.random.default_rng(3), 600)
    single = [checker.is_valid(q) for q in states]
    single_q = [checker.clearance_query(q) for q in states]
    results = {}

    def work(k):
        results[k] = ([checker.is_valid(q) for q in states[k::2]],
                      [checker.clearance_query(q) for q in states[k::2]])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert 0 < sum(single) < len(single)
    for k in range(2):
        valid, queries = results[k]
        assert valid == single[k::2]
        for got, want in zip(queries, single_q[k::2], strict=True):
            assert got[0] == want[0]
            assert np.array_equal(got[1], want[1]) and np.array_equal(got[2], want[2])
    assert checker.checks == 4 * len(states)


def test_bubbles_answer_exactly_as_the_plain_edge_check(world):
    """Same verdict on every edge: a bubble only ever skips states it proved valid."""
    names = world.robot.joint_names()
    checker = ClearanceChecker(world.model, names, 0.007, base_qpos=world.home_qpos())
    radii = joint_radii(world.model, names)
    fast, plain = EdgeChecker(checker, radii, 0.005), EdgeChecker(checker, radii, 0.005, bubbles=False)
    assert fast.weights is not None and plain.weights is None
    rng = np.random.default_rng(4)
    states = [q for q in random_states(world, rng, 300, 0.3) if checker.is_valid(q)]
    verdicts, fast_checks, plain_checks = [], 0, 0
    for a, b in zip(states[:-1], states[1:], strict=True):
        c0 = checker.checks
        v_fast = fast.motion_valid(a, b)
        c1 = checker.checks
        v_plain = plain.motion_valid(a, b)
        fast_checks, plain_checks = fast_checks + c1 - c0, plain_checks + checker.checks - c1
        assert v_fast == v_plain
        verdicts.append(v_fast)
        if v_fast:   # with the ends' answers as well
            assert fast.motion_valid(a, b, checker.clearance_query(a), checker.clearance_query(b))
    assert 0 < sum(verdicts) < len(verdicts)
    assert fast_checks < plain_checks


def test_pair_weights_leave_out_joints_that_move_both_geoms(world):
    names = world.robot.joint_names()
    checker = ClearanceChecker(world.model, names, 0.005, base_qpos=world.home_qpos())
    edges = EdgeChecker(checker, joint_radii(world.model, names), 0.005)
    pairs = [tuple(checker.geom_name(g) for g in p) for p in checker.pairs]
    w = dict(zip(pairs, edges.weights, strict=True))
    # two links of the left arm: joints above both (1..3) do not change their distance
    row = w[("left_link3_c1", "left_link5_c0")]
    assert np.all(row[:3] == 0) and row[3] > 0 and np.all(row[7:] == 0)
    # left hand against the table: every left joint counts, no right joint
    row = next(v for k, v in w.items() if set(k) == {"left_hand_c0", "table_top"})
    assert np.all(row[:7] > 0) and np.all(row[7:] == 0)


def two_arm_group(bubbles=True):
    m = mujoco.MjModel.from_xml_string(two_arm_xml(0.9))
    lim = np.array([2.8, 2.8])
    arms = {n: ArmLimits((f"{n}_j1", f"{n}_j2"), f"{n}_tip", -lim, lim) for n in ("left", "right")}
    return ArmGroup(m, arms, 0.005, PlannerSettings(time_budget_s=10, bubbles=bubbles))


def test_number_of_checks_for_a_fixed_seed_does_not_silently_grow():
    """The two-link arms trade places (seed 0). 987 checks when pinned with the compiled pre-test's
    bubbles (2122 with MuJoCo's clearance queries, 13665 without bubbles); a change of planner, checker
    or edge logic that costs more must update this on purpose."""
    start = np.array([1.2, 0.3, -1.2, -0.3])
    goal = {"left": [-1.2, -0.3], "right": [1.2, 0.3]}
    result = two_arm_group().plan_to_joints(goal, start, np.random.default_rng(0))
    assert 800 < result.checks <= 1100
    # bubbles change how many states are checked, never the answer: the same path without them
    plain = two_arm_group(bubbles=False).plan_to_joints(goal, start, np.random.default_rng(0))
    assert np.array_equal(plain.path.waypoints, result.path.waypoints)
    assert plain.checks > 3 * result.checks
