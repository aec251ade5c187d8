"""The peg calibration fits the grasp along the gripper's axes, whatever the hand body's axes are."""

from __future__ import annotations

from types import SimpleNamespace

import mujoco
import numpy as np

from stages.arms.calibration.peg_procedure import grip_frame

HAND = """
<mujoco><worldbody><body name="hand" pos="0.1 0.2 0.3" euler="0.3 0.2 0.1">
  <site name="grip" pos="0 0 0.1" euler="0 0 {yaw}"/>
</body></worldbody></mujoco>"""


def _frame(yaw_deg: float, site_axes: np.ndarray | None = None) -> np.ndarray:
    model = mujoco.MjModel.from_xml_string(HAND.format(yaw=yaw_deg))
    world = SimpleNamespace(model=model, robot=SimpleNamespace(arm=lambda a: SimpleNamespace(ee_site_id=0)))
    axes = np.eye(3) if site_axes is None else site_axes
    return grip_frame(world, "left", SimpleNamespace(site_axes=axes))


def test_the_grip_frame_is_the_hand_turned_onto_the_gripper_axes():
    assert np.array_equal(_frame(0.0), np.eye(4))          # axes that agree: exactly the identity
    T = _frame(-45.0)                                        # a hand turned 45° to its site (the Franka's)
    c = np.cos(np.radians(-45.0))
    np.testing.assert_allclose(T[:3, :3], [[c, c, 0], [-c, c, 0], [0, 0, 1]], atol=1e-9)
    assert np.array_equal(T[:3, 3], np.zeros(3))             # the same origin: only the axes turn
    swap = np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])    # approach along the site's x (Fetch's)
    np.testing.assert_allclose(_frame(0.0, swap)[:3, :3], swap, atol=1e-12)
