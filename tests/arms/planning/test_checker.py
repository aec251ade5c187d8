import threading

import mujoco
import numpy as np
import pytest

from stages.arms.planning.checker import ClearanceChecker
from tests.arms.planning.two_link_arms import JOINTS, two_arm_xml


@pytest.fixture(scope="module")
def model():
    return mujoco.MjModel.from_xml_string(two_arm_xml())


def brute_force_min(model, q):
    """Smallest true distance over every pair the checker should check, independently computed."""
    d = mujoco.MjData(model)
    for j, v in zip(JOINTS, q, strict=True):
        d.qpos[model.jnt_qposadr[model.joint(j).id]] = v
    mujoco.mj_kinematics(model, d)
    best = np.inf
    for g1 in range(model.ngeom):
        for g2 in range(g1 + 1, model.ngeom):
            b1, b2 = model.geom_bodyid[g1], model.geom_bodyid[g2]
            parent = model.body_parentid
            if b1 == b2 or parent[b1] == b2 or parent[b2] == b1:
                continue  # same body or adjacent links
            if model.body_weldid[b1] == 0 and model.body_weldid[b2] == 0:
                continue  # both static
            best = min(best, mujoco.mj_geomDistance(model, d, g1, g2, 10.0, None))
    return best


def test_checked_pairs_are_the_non_adjacent_ones(model):
    checker = ClearanceChecker(model, JOINTS, 0.005)
    names = {frozenset(checker.geom_name(g) for g in p) for p in checker.pairs}
    assert frozenset({"left_link2_geom", "right_link2_geom"}) in names
    assert frozenset({"left_link1_geom", "left_link2_geom"}) not in names  # adjacent
    assert frozenset({"left_base_geom", "left_link1_geom"}) not in names  # adjacent
    assert frozenset({"left_base_geom", "left_link2_geom"}) in names  # self, non-adjacent
    assert frozenset({"floor", "post"}) not in names  # both static


def test_matches_true_distance_on_random_states(model):
    checker = ClearanceChecker(model, JOINTS, 0.005)
    rng = np.random.default_rng(0)
    n_invalid = 0
    for _ in range(300):
        q = rng.uniform(-2.8, 2.8, 4)
        truth = brute_force_min(model, q)
        prox = checker.proximity(q)
        assert prox.distance_m == pytest.approx(min(truth, 1.0), abs=1e-9)
        assert checker.is_valid(q) == (truth >= 0.005)
        n_invalid += truth < 0.005
    assert 0 < n_invalid < 300  # both outcomes were exercised


def test_margins_are_not_doubled(model):
    """Two link tips pointing at each other: valid at a 7 mm gap, invalid at 4 mm."""
    checker = ClearanceChecker(model, JOINTS, 0.005)
    # straight arms along x meet in the middle: left tip cap at x=-0.5+0.75+0.035
    reach = 0.4 + 0.35 + 0.035

    def gap_state(gap):
        # the right arm mirrors the left; move both tips toward the middle by bending nothing:
        # use separation so that gap = sep - 2*reach
        m = mujoco.MjModel.from_xml_string(two_arm_xml(2 * reach + gap))
        return ClearanceChecker(m, JOINTS, 0.005), np.zeros(4)

    for gap, valid in ((0.007, True), (0.004, False), (0.0051, True), (0.0049, False)):
        c, q = gap_state(gap)
        assert c.is_valid(q) is valid, gap
        assert c.proximity(q).distance_m == pytest.approx(gap, abs=1e-6)
    assert checker.clearance_m == 0.005


def test_disabled_bodies_are_ignored(model):
    q = np.array([0.0, 0.0, 0.0, 0.0])  # arms overlap when the bases are 1 m apart and straight
    assert not ClearanceChecker(model, JOINTS, 0.005).is_valid(q)
    alone = ClearanceChecker(model, JOINTS, 0.005,
                             disabled_bodies=["right_base", "right_link1", "right_link2"])
    assert alone.is_valid(q)


def test_threads_give_the_same_answers(model):
    checker = ClearanceChecker(model, JOINTS, 0.005)
    qs = np.random.default_rng(1).uniform(-2.8, 2.8, (400, 4))
    expected = [checker.is_valid(q) for q in qs]
    results = {}

    def work(k):
        results[k] = [checker.is_valid(q) for q in qs]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == expected for r in results.values())
    assert checker.checks == 5 * 400


def test_twin_panda_checker_matches_brute_force_over_every_pair():
    """On the real robot: the fast test agrees with mj_geomDistance over all pairs that may not touch."""
    from omegaconf import OmegaConf

    from hardware.geometry import collision_pairs
    from stages.arms.world import build_world
    from tests.conftest import CONF

    world = build_world(OmegaConf.to_container(OmegaConf.load(CONF / "robot/twin_panda.yaml")),
                        OmegaConf.to_container(OmegaConf.load(CONF / "scene/table.yaml")))
    names = world.robot.joint_names()
    checker = ClearanceChecker(world.model, names, 0.005, base_qpos=world.home_qpos())
    pairs = collision_pairs(world.model)
    assert len(checker.pairs) == len(pairs) > 500
    rng = np.random.default_rng(4)
    lower, upper = world.robot.lower(), world.robot.upper()
    home = world.robot.home()
    outcomes = set()
    for _ in range(150):
        q = np.clip(home + rng.normal(0, 0.6, home.size), lower, upper)
        truth = checker.pair_distances(q, pairs).min()
        assert checker.is_valid(q) == (truth >= 0.005)
        assert checker.proximity(q).distance_m == pytest.approx(min(truth, 1.0), abs=1e-9)
        outcomes.add(bool(truth >= 0.005))
    assert outcomes == {True, False}
