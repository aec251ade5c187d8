"""What bring-up checks a motion with: the world's clearance checker and its contact count."""

from __future__ import annotations

import numpy as np

from stages.arms.execution.replay import colliding_states
from stages.arms.planning.goals import make_group


def motion_validator(world):
    """validate(arms, waypoints): None when every waypoint and edge keeps the robot's clearance."""
    group = make_group(world)

    def validate(arms, waypoints):
        index = {a: group.arm_slice(a) for a in group.arms}
        q_all = np.tile(np.concatenate([np.asarray(world.robot.arm(a).home, float) for a in group.arms]),
                        (len(waypoints), 1))
        col = 0
        for a in arms:
            n = index[a].stop - index[a].start
            q_all[:, index[a]] = waypoints[:, col:col + n]
            col += n
        for k, q in enumerate(q_all):
            if not group.checker.is_valid(q):
                return group._why(q, f"test motion waypoint {k}")
        for k in range(len(q_all) - 1):
            if not group.edges.motion_valid(q_all[k], q_all[k + 1]):
                return f"test motion edge {k}→{k + 1} comes within clearance"
        return None

    return validate


def touching_counter(world):
    """count(arms, positions): states (rows over the arms' joints) where geometry touches."""
    def count(arms, positions):
        names = [j for a in arms for j in world.robot.arm(a).joints]
        return int(colliding_states(world, names, positions).sum())

    return count
