"""A ChArUco calibration board as a thin textured box (``kind: hardware.models.charuco:add_charuco_board``).

Keys (``conf/scene/peg_table.yaml``, ``objects.board``)::

    pos: [x, y, z]             # centre of the board's printed (top) surface, world frame
    quat: [w, x, y, z]         # board frame: +x = image right, +y = image up, +z = out of the print
    squares: [8, 6]            # squares along x, y
    square_m: 0.04
    marker_m: 0.03
    dictionary: DICT_5X5_100   # must differ from the peg's tags (AprilTag 36h11)
    margin_m: 0.01             # white border around the squares
    thickness_m: 0.003
    px_per_square: 80          # texture resolution
    mocap: true                # a mocap body: lies still in physics, and a calibration stage
                               # may hold it at other poses in front of the camera
    rgba: [0.75, 0.75, 0.75, 1]   # multiplies the texture: keeps lit white below clipping

The image is ``cv2.aruco.CharucoBoard.generateImage`` (run time, written as PNG to the build's
asset folder), on a thin visual box ``<name>_print`` of the (mocap) body ``<name>``; collisions
use ``<name>_geom``, a box with the same top surface but 2 cm thick on the static body
``<name>_base`` (a peg may land on the board; the board never moves under contact).

OpenCV's board frame (the frame of ``board.getChessboardCorners()``): origin at the top-left
corner of the squares, x right, y down the image, z into the board. :meth:`CharucoSpec.T_body_board`
gives it in the body frame, for tests and for anyone projecting the board's corners.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import ConfigError
from core.settings import from_config, require
from core.tag_layouts import marker_dictionary
from hardware.models.peg import write_png

COLLISION_HALF_THICKNESS_M = 0.01


@dataclass(frozen=True)
class CharucoSpec:
    """The board itself: squares, their size, the markers' dictionary, margins, texture resolution."""

    squares: tuple[int, int] = (8, 6)     # along x, y
    square_m: float = 0.04
    marker_m: float = 0.03
    dictionary: str = "DICT_5X5_100"      # must differ from the peg's tags (AprilTag 36h11)
    margin_m: float = 0.01                # white border around the squares
    thickness_m: float = 0.003
    px_per_square: int = 80               # texture resolution

    def __post_init__(self):
        require(min(self.squares) >= 3, "squares", list(self.squares), "[nx, ny], at least [3, 3]")
        require(0 < self.marker_m < self.square_m, "marker_m", self.marker_m,
                f"0 < marker_m < square_m ({self.square_m})")
        require(self.margin_m >= 0, "margin_m", self.margin_m, ">= 0 (m)")
        require(self.thickness_m > 0, "thickness_m", self.thickness_m, "> 0 (m)")
        require(self.px_per_square >= 20, "px_per_square", self.px_per_square, ">= 20")

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], where: str = "scene.objects.board") -> CharucoBoardSettings:
        """The board object's settings (a :class:`CharucoSpec` with its placement); ``kind`` is skipped."""
        return from_config(CharucoBoardSettings, {k: v for k, v in cfg.items() if k != "kind"}, where)

    @property
    def size_m(self) -> tuple[float, float]:
        """Outer size of the board (squares plus margins), x and y."""
        return (self.squares[0] * self.square_m + 2 * self.margin_m,
                self.squares[1] * self.square_m + 2 * self.margin_m)

    def board(self):
        """The ``cv2.aruco.CharucoBoard``."""
        import cv2

        d = marker_dictionary(self.dictionary)
        n_markers = (self.squares[0] * self.squares[1]) // 2
        if n_markers > d.bytesList.shape[0]:
            raise ConfigError(f"a {self.squares[0]}x{self.squares[1]} ChArUco board needs "
                              f"{n_markers} markers; {self.dictionary} has {d.bytesList.shape[0]}")
        return cv2.aruco.CharucoBoard(self.squares, self.square_m, self.marker_m, d)

    def image(self) -> np.ndarray:
        """RGB texture of the whole board, margins included (x right, y up the image)."""
        import cv2

        px_m = self.px_per_square / self.square_m
        w = int(round(self.size_m[0] * px_m))
        h = int(round(self.size_m[1] * px_m))
        margin = int(round(self.margin_m * px_m))
        img = self.board().generateImage((w, h), marginSize=margin, borderBits=1)
        return cv2.cvtColor(img, cv2.COLOR_GRAY2RGB)

    def T_body_board(self) -> np.ndarray:  # noqa: N802
        """OpenCV's board frame in the board body's frame (body origin = printed-surface centre)."""
        T = np.eye(4)
        T[:3, :3] = np.diag([1.0, -1.0, -1.0])
        T[:3, 3] = [-self.squares[0] * self.square_m / 2, self.squares[1] * self.square_m / 2, 0.0]
        return T


@dataclass(frozen=True)
class CharucoBoardSettings(CharucoSpec):
    """``kind: hardware.models.charuco:add_charuco_board``: the board and where it lies (module docstring)."""

    pos: tuple[float, float, float] = (0.55, 0.0, 0.75)   # centre of the printed (top) surface, world
    quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    mocap: bool = True    # lies still in physics; a calibration stage may hold it elsewhere
    rgba: tuple[float, float, float, float] = (0.75, 0.75, 0.75, 1.0)   # multiplies the texture

    def __post_init__(self):
        super().__post_init__()
        require(float(np.linalg.norm(self.quat)) >= 1e-9, "quat", list(self.quat), "a non-zero quaternion")


def add_charuco_board(spec, name: str, params: Mapping[str, Any], context) -> None:
    """The ChArUco board object (see the module docstring)."""
    import mujoco

    board = CharucoSpec.from_config(params, f"scene.objects.{name}")
    png = write_png(Path(context.asset_dir) / f"{name}_charuco.png", board.image())
    tex = f"{name}_tex"
    spec.add_texture(name=tex, type=mujoco.mjtTexture.mjTEXTURE_2D, file=str(png))
    mat = spec.add_material(name=f"{name}_mat")
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = tex
    mat.specular = 0.0
    mat.shininess = 0.0
    quat = np.asarray(board.quat)
    body = spec.worldbody.add_body(name=name, pos=list(board.pos), mocap=board.mocap,
                                   quat=(quat / np.linalg.norm(quat)).tolist())
    sx, sy = board.size_m
    # the printed sheet: a thin textured visual box
    body.add_geom(name=f"{name}_print", type=mujoco.mjtGeom.mjGEOM_BOX,
                  size=[sx / 2, sy / 2, board.thickness_m / 2], pos=[0, 0, -board.thickness_m / 2],
                  material=mat.name, rgba=list(board.rgba),
                  contype=0, conaffinity=0, group=2, density=0)
    # its collision box: the same top surface, but thick (MuJoCo's box-box contacts against a
    # millimetre-thin box chatter: a peg resting on it never came to rest). It reaches below
    # the board into the table. It sits on a static body of its own (welded to the world, like
    # the table), not on the mocap body: static pairs (board - table) are then no pair at all for
    # contacts and clearance checks, and a stage holding the printed board up in front of the
    # camera does not carry a collision box through the scene.
    base = spec.worldbody.add_body(name=f"{name}_base", pos=list(body.pos), quat=list(body.quat))
    base.add_geom(name=f"{name}_geom", type=mujoco.mjtGeom.mjGEOM_BOX,
                  size=[sx / 2, sy / 2, COLLISION_HALF_THICKNESS_M],
                  pos=[0, 0, -COLLISION_HALF_THICKNESS_M], rgba=[1, 1, 1, 0],
                  contype=1, conaffinity=1, condim=3, group=3, friction=[0.8, 0.005, 0.0001])
