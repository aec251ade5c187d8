"""Batched checking, the compiled edge walk and shortcutting: the same verdicts as MuJoCo alone one state
at a time, on any thread count, with or without the pre-test; shortcutting that only keeps valid chords
and stops."""

import numpy as np
import pytest

from core.errors import ConfigError
from core.settings import from_config
from stages.arms.planning.batch import BatchChecker
from stages.arms.planning.checker import ClearanceChecker
from stages.arms.planning.edges import EdgeChecker, joint_radii
from stages.arms.planning.rrt import path_length
from stages.arms.planning.settings import PlannerSettings
from stages.arms.planning.smoothing import shortcut
from tests.arms.planning.test_fast_checks import random_states, world  # noqa: F401 - the fixture


@pytest.fixture(scope="module")
def checker(world):  # noqa: F811
    return ClearanceChecker(world.model, world.robot.joint_names(), 0.007, base_qpos=world.home_qpos())


@pytest.fixture(scope="module")
def mujoco_checker(world):  # noqa: F811
    """MuJoCo's collision pass on every state: the reference the pre-test must agree with."""
    return ClearanceChecker(world.model, world.robot.joint_names(), 0.007, base_qpos=world.home_qpos(),
                            pretest=False)


@pytest.mark.parametrize("threads, pretest", [(1, False), (2, False), (1, True), (2, True)])
def test_a_batch_is_invalid_exactly_when_one_of_its_states_is(world, checker, mujoco_checker, threads,  # noqa: F811
                                                              pretest):
    batch = BatchChecker(checker if pretest else mujoco_checker, threads)
    rng = np.random.default_rng(5)
    verdicts = []
    try:
        for _ in range(40):
            states = random_states(world, rng, 24, 0.25)
            truth = [mujoco_checker.is_valid(q) for q in states]
            k = batch.first_invalid(states)
            assert (k < 0) == all(truth)
            if k >= 0:
                assert not truth[k]
            verdicts.append(k < 0)
    finally:
        batch.close()
    assert 0 < sum(verdicts) < len(verdicts)
    assert (batch.proven > 0) == pretest


def test_batched_and_compiled_edges_answer_as_the_plain_edge_check(world, checker, mujoco_checker):  # noqa: F811
    """Every state at the resolution through MuJoCo alone is the truth; batches over two threads and the
    compiled walk (its bubbles proven by the bounds) must give the same verdict on every edge."""
    radii = joint_radii(world.model, world.robot.joint_names())
    batch = BatchChecker(mujoco_checker, 2)
    batched = EdgeChecker(mujoco_checker, radii, 0.005, batch=batch)
    compiled = EdgeChecker(checker, radii, 0.005)
    plain = EdgeChecker(mujoco_checker, radii, 0.005, bubbles=False)
    assert batched.weights is None and compiled.compiled and not plain.compiled
    states = [q for q in random_states(world, np.random.default_rng(6), 200, 0.3) if checker.is_valid(q)]
    truth = [plain.motion_valid(a, b) for a, b in zip(states[:-1], states[1:], strict=True)]
    assert [batched.motion_valid(a, b) for a, b in zip(states[:-1], states[1:], strict=True)] == truth
    assert [compiled.motion_valid(a, b) for a, b in zip(states[:-1], states[1:], strict=True)] == truth
    assert 0 < sum(truth) < len(truth)
    batch.close()


@pytest.mark.parametrize("pretest", [False, True])
def test_shortcutting_keeps_only_valid_chords_and_stops_when_no_longer_shorter(world, checker, mujoco_checker,  # noqa: F811
                                                                              pretest):
    """With the compiled walk, or MuJoCo's states in batches."""
    radii = joint_radii(world.model, world.robot.joint_names())
    checker = checker if pretest else mujoco_checker
    batch = BatchChecker(checker, 1)
    edges = EdgeChecker(checker, radii, 0.005, batch=None if pretest else batch)
    rng = np.random.default_rng(7)
    home = world.robot.home()
    # a valid zig-zag: small random detours around the straight line home -> a nearby goal
    goal = home + np.r_[0.5, 0.2, 0, -0.3, 0, 0.3, 0, -0.5, 0.2, 0, -0.3, 0, 0.3, 0]
    path = [home + (goal - home) * t + (rng.normal(0, 0.08, home.size) if 0 < t < 1 else 0)
            for t in np.linspace(0, 1, 9)]
    assert all(checker.is_valid(q) for q in path)
    assert all(edges.motion_valid(a, b) for a, b in zip(path[:-1], path[1:], strict=True))
    short, rounds = shortcut(path, edges, batch, np.random.default_rng(8), deadline=np.inf,
                             candidates=8, rounds=200, patience=3)
    assert np.allclose(short[0], path[0]) and np.allclose(short[-1], path[-1])
    assert path_length(short) < 0.97 * path_length(path)
    assert all(edges.motion_valid(a, b) for a, b in zip(short[:-1], short[1:], strict=True))
    assert all(checker.is_valid(q) for q in short)
    assert rounds < 200            # it stopped by itself: three rounds without a 0.2 % gain
    again, _ = shortcut(path, edges, batch, np.random.default_rng(8), deadline=np.inf, candidates=8,
                        rounds=200, patience=3)
    assert np.array_equal(np.array(short), np.array(again))   # a seed gives the same path
    two = BatchChecker(checker, 2)            # chords two at a time on two threads: the same path
    paired, _ = shortcut(path, edges, two, np.random.default_rng(8), deadline=np.inf, candidates=8,
                         rounds=200, patience=3)
    two.close()
    assert np.array_equal(np.array(short), np.array(paired))


def test_thread_count_is_checked_at_compose_time():
    with pytest.raises(ConfigError, match=r"planner\.threads=0.*1 to 64"):
        from_config(PlannerSettings, {"threads": 0}, "planner")
