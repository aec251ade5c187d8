"""OMPL back-end for ArmGroup: any OMPL geometric planner on choreograph's own checks.

``planner=ompl`` (``backend: ompl``, ``name: RRTConnect|RRTstar|BITstar|PRM|...``) plans
the same ArmGroup goals with an OMPL planner from the ``ompl`` PyPI package
(``pip install "choreograph[ompl]"``). OMPL only searches; everything that decides what
is safe stays ours, so the guarantees are identical to the built-in planner's:

- state validity: the group's :class:`~stages.arms.planning.checker.ClearanceChecker`
  (clearance + padding, the true distance);
- motion validity: the group's :class:`~stages.arms.planning.edges.EdgeChecker` (no geometry
  moves more than ``edge_step_m`` between checked states), installed as OMPL's
  ``MotionValidator``. OMPL's contract is that ``checkMotion(s1, s2)`` assumes ``s1``
  valid and checks ``s2`` (RRTConnect's start tree never calls ``isValid`` on a new
  state), so ``s2`` is checked first (with its clearance bubble), then the edge's
  interior. What OMPL's interface cannot carry is the clearance of ``s1``: a tree node
  checked in an earlier call. The built-in planner keeps it with each node
  (:func:`stages.arms.planning.rrt.rrt_connect`'s ``query``), which is one difference between
  the two that the benchmark measures.

The search runs in the moving arms' joints only (arms not named hold still, as with the
built-in planner), seeded through ``ompl.util.RNG.setSeed`` before the planner and its
samplers are created, and stops at the first exact solution or the time budget
(optimizing planners get a path-length objective that any solution satisfies, so they
report their first solution too). The raw path then goes through our shortcutting, and
on to retiming and verification like any other plan.

``ompl.util.RNG.setSeed`` re-seeds OMPL's seed generator even after sampling started
(OMPL logs an error saying it may not be deterministic; objects created afterwards do
draw their seeds from the new seed, so a fresh setup per plan is reproducible). That
message is silenced here.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from core.errors import ConfigError, PlanningError

INSTALL_HINT = 'pip install "choreograph[ompl]" (or pip install ompl)'
# Geometric planners constructed as og.<Name>(space_information); others may work too.
KNOWN_PLANNERS = ("RRTConnect", "RRT", "RRTstar", "InformedRRTstar", "SORRTstar", "BITstar",
                  "AORRTC", "PRM", "PRMstar", "KPIECE1", "BKPIECE1", "LBKPIECE1", "FMT", "BFMT")


def import_ompl():
    """(ompl.base, ompl.geometric, ompl.util), or ConfigError naming the pip install that fixes it."""
    try:
        from ompl import base as ob
        from ompl import geometric as og
        from ompl import util as ou
    except ImportError as exc:
        raise ConfigError(f"planner backend 'ompl' needs the OMPL Python package, which is not "
                          f"installed: {INSTALL_HINT}") from exc
    return ob, og, ou


def available_planners() -> list[str]:
    """Names of the OMPL geometric planners this install offers."""
    _, og, _ = import_ompl()
    return [n for n in KNOWN_PLANNERS if hasattr(og, n)]


def check_planner_name(name: str) -> None:
    """ConfigError unless ``name`` is an OMPL geometric planner of this install."""
    names = available_planners()
    if name not in names:
        raise ConfigError(f"planner.name={name!r} is not an OMPL geometric planner; allowed: {names}")


def _silenced(ou, fn: Callable[[], object]) -> object:
    ou.noOutputHandler()
    try:
        return fn()
    finally:
        ou.restorePreviousOutputHandler()


def plan_ompl(group, start: np.ndarray, goal: np.ndarray, moving: np.ndarray,
              rng: np.random.Generator, deadline: float) -> tuple[list[np.ndarray], dict]:
    """Raw path start → goal (both valid) found by OMPL's ``group.settings.name`` planner.

    Returns the waypoints (full group configurations) and a few statistics; raises
    PlanningError('timeout') when no exact solution is found before ``deadline``.
    """
    ob, og, ou = import_ompl()
    s = group.settings
    check_planner_name(s.name)
    idx = np.flatnonzero(moving)
    dim = int(idx.size)
    start = np.asarray(start, float)
    goal = np.asarray(goal, float)
    full = start.copy()
    checker, edges = group.checker, group.edges

    def to_q(state) -> np.ndarray:
        q = full.copy()
        q[idx] = [state[i] for i in range(dim)]
        return q

    # seed before anything that owns an RNG (space samplers, planner, nearest-neighbour structures)
    seed = int(rng.integers(1, 2**31 - 1))
    _silenced(ou, lambda: ou.RNG.setSeed(seed))
    ou.setLogLevel(ou.LOG_WARN)

    space = ob.RealVectorStateSpace(dim)
    bounds = ob.RealVectorBounds(dim)
    for k, j in enumerate(idx):
        bounds.setLow(k, float(group.lower[j]))
        bounds.setHigh(k, float(group.upper[j]))
    space.setBounds(bounds)
    setup = og.SimpleSetup(space)
    si = setup.getSpaceInformation()
    setup.setStateValidityChecker(lambda state: checker.is_valid(to_q(state)))

    class _EdgeValidator(ob.MotionValidator):
        """OMPL's motion check = our end-state check + our guaranteed-resolution edge check (or, with
        ``ompl_motion: per_state``, every state at that resolution through the per-state callback)."""

        def checkMotion(self, s1, s2, *last_valid):  # noqa: N802 - OMPL's name
            a, b = to_q(s1), to_q(s2)
            if s.ompl_motion == "per_state":
                return bool(checker.is_valid(b) and all(checker.is_valid(q) for q in edges.interior(a, b)))
            if edges.weights is not None and not edges.compiled:   # MuJoCo's bubbles: query the end
                info = checker.clearance_query(b)
                return bool(info[0] and edges.motion_valid(a, b, None, info))
            return bool(checker.is_valid(b) and edges.motion_valid(a, b))

    validator = _EdgeValidator(si)
    si.setMotionValidator(validator)

    def state_of(q):
        st = si.allocState()
        for k, j in enumerate(idx):
            st[k] = float(q[j])
        return st

    setup.setStartAndGoalStates(state_of(start), state_of(goal))
    planner = getattr(og, s.name)(si)
    if hasattr(planner, "setRange"):
        step = s.max_step_rad if s.range_rad is None else s.range_rad
        if step > 0:
            planner.setRange(float(step))
    setup.setPlanner(planner)
    objective = ob.PathLengthOptimizationObjective(si)
    objective.setCostThreshold(ob.Cost(float("inf")))   # any solution satisfies: stop at the first
    setup.setOptimizationObjective(objective)
    setup.setup()

    remaining = deadline - time.perf_counter()
    if remaining <= 0:
        raise PlanningError("timeout", f"OMPL {s.name}: no time left in the budget")
    t0 = time.perf_counter()
    status = setup.solve(ob.timedPlannerTerminationCondition(remaining))
    elapsed = time.perf_counter() - t0
    if not setup.haveExactSolutionPath():
        raise PlanningError("timeout", f"OMPL {s.name} found no exact path within its time budget "
                            f"({elapsed:.2f} s, status {status})")
    path = setup.getSolutionPath()
    waypoints = [to_q(path.getState(i)) for i in range(path.getStateCount())]
    waypoints[0], waypoints[-1] = start, goal
    stats = {"planner": s.name, "solve_s": elapsed, "states": path.getStateCount()}
    return waypoints, stats
