"""The simulated driver's hidden joint zero offsets: physics runs at commanded + offset, the
driver reports (and takes) the believed angles; the hardware config names its keys."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import ConfigError
from stages.arms.execution.rig import hardware_settings
from tests.arms.perception.test_peg_physics import world  # noqa: F401 - the module's fixture


def test_offsets_shift_physics_but_not_the_reported_angles(world):  # noqa: F811
    from hardware.arms.mujoco_driver import MujocoArmDriver
    from hardware.arms.mujoco_sim import PhysicsSim

    arm = world.robot.arm("left")
    offsets = np.radians([0.5, -0.3, 0.8, 0.2, -0.6, 0.4, -0.9])
    home = world.home_qpos()
    sim = PhysicsSim(world.model, home)
    driver = MujocoArmDriver(sim, "left", arm.joints, offsets)
    plain = MujocoArmDriver(sim, "right", world.robot.arm("right").joints)
    sim.step(500)                                  # 1 s: the arms hold where they are
    idx = list(arm.qpos_indices)
    true_q = sim.data.qpos[idx]
    believed = driver.read_state().positions
    np.testing.assert_allclose(believed, np.asarray(arm.home), atol=2e-3)          # reports home
    np.testing.assert_allclose(true_q - believed, offsets, atol=1e-9)              # physics is off
    np.testing.assert_allclose(true_q, np.asarray(arm.home) + offsets, atol=2e-3)
    right = world.robot.arm("right")
    np.testing.assert_allclose(sim.data.qpos[list(right.qpos_indices)], plain.read_state().positions)
    with pytest.raises(ValueError, match="7 values"):
        MujocoArmDriver(PhysicsSim(world.model, home), "left", arm.joints, [0.1, 0.2])


def test_hardware_config_checks_the_offsets_key():
    assert hardware_settings({"joint_offsets_deg": None}).joint_offsets_deg is None
    given = hardware_settings({"joint_offsets_deg": {"left": [0.1] * 7}})
    assert given.joint_offsets_deg == {"left": (0.1,) * 7}
    with pytest.raises(ConfigError, match="joint_offsets_deg"):
        hardware_settings({"joint_offsets_deg": {"left": ["a"]}})
    with pytest.raises(ConfigError, match="<= 10 deg"):
        hardware_settings({"joint_offsets_deg": {"left": [45.0] * 7}})
    with pytest.raises(ConfigError, match="allowed: .*joint_offsets_deg"):
        hardware_settings({"joint_offset": {}})


def test_hardware_timestep_is_checked_and_sets_the_physics_step(world):  # noqa: F811
    import copy

    from hardware.arms.mujoco_sim import PhysicsSim

    assert hardware_settings({"timestep_s": None}).timestep_s is None
    for bad in (0, -0.001, 0.1):
        with pytest.raises(ConfigError, match=r"hardware\.timestep_s.*\(0, 0\.01\]"):
            hardware_settings({"timestep_s": bad})
    with pytest.raises(ConfigError, match=r"hardware\.timestep_s='fine': expected a number"):
        hardware_settings({"timestep_s": "fine"})
    model = copy.deepcopy(world.model)
    sim = PhysicsSim(model, world.home_qpos(), timestep_s=0.0005)
    sim.step(10)
    assert model.opt.timestep == 0.0005 and sim.clock() == pytest.approx(0.005)
