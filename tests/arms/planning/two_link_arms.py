"""A tiny two-arm MJCF (planar 2-link capsule arms facing each other) for planner tests."""

TWO_ARMS = """
<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1" pos="0 0 -0.2"/>
    <geom name="post" type="box" size="0.05 0.05 0.3" pos="0 0.6 0"/>
    {arms}
  </worldbody>
</mujoco>
"""

ARM = """
    <body name="{n}_base" pos="{x} 0 0" euler="0 0 {yaw}">
      <geom name="{n}_base_geom" type="cylinder" size="0.06 0.05"/>
      <body name="{n}_link1">
        <joint name="{n}_j1" type="hinge" axis="0 0 1" range="-2.8 2.8"/>
        <geom name="{n}_link1_geom" type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"/>
        <body name="{n}_link2" pos="0.4 0 0">
          <joint name="{n}_j2" type="hinge" axis="0 0 1" range="-2.8 2.8"/>
          <geom name="{n}_link2_geom" type="capsule" fromto="0 0 0 0.35 0 0" size="0.035"/>
          <site name="{n}_tip" pos="0.35 0 0"/>
        </body>
      </body>
    </body>
"""


def two_arm_xml(separation_m: float = 1.0) -> str:
    arms = ARM.format(n="left", x=-separation_m / 2, yaw=0) + ARM.format(
        n="right", x=separation_m / 2, yaw=180)
    return TWO_ARMS.format(arms=arms)


JOINTS = ["left_j1", "left_j2", "right_j1", "right_j2"]
