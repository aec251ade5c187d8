"""The simulated arm controller cancels the joints' own damping and springs (as a robot's joint
controller does): a heavily damped, sprung joint follows its trajectory and holds its goal."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from hardware.arms.mujoco_sim import PhysicsSim
from hardware.arms.protocol import ArmTrajectory

JOINT = """
<mujoco>
  <compiler angle="radian"/>
  <option gravity="0 0 0" timestep="0.002"/>
  <worldbody>
    <body name="link">
      <joint name="j" type="hinge" axis="0 0 1" damping="{damping}" stiffness="{stiffness}" springref="0.3"
             range="-3 3"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="1"/>
    </body>
  </worldbody>
  <actuator><position name="a" joint="j" kp="400" kv="40" forcerange="-500 500"/></actuator>
</mujoco>
"""


def _run(damping: float, stiffness: float) -> tuple[float, float]:
    """(largest tracking error along a 1 rad ramp at 0.5 rad/s, error 0.5 s after it ends), rad."""
    model = mujoco.MjModel.from_xml_string(JOINT.format(damping=damping, stiffness=stiffness))
    sim = PhysicsSim(model, np.zeros(1), record_every=1)
    sim.add_arm("arm", ["j"])
    times = np.arange(0.0, 2.0 + 1e-9, 0.008)
    q = 0.5 * times
    goal = sim.submit("arm", ArmTrajectory(("j",), times, q[:, None], np.full((len(times), 1), 0.5)), 0.0)
    worst = 0.0
    while not goal.done.is_set():
        sim.step()
        worst = max(worst, abs(sim.data.qpos[0] - 0.5 * min(sim.data.time, 2.0)))
    sim.step(250)
    return worst, abs(sim.data.qpos[0] - 1.0)


def test_damping_and_springs_are_fed_forward():
    worst, held = _run(damping=50.0, stiffness=10.0)
    # without the feedforward the lag would be damping · q̇ / kp = 50 · 0.5 / 400 = 0.0625 rad and the
    # spring would hold it stiffness · (1 − 0.3) / kp = 0.0175 rad short
    assert worst < 0.005 and held == pytest.approx(0.0, abs=1e-4)
