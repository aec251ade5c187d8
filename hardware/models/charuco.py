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

COLLISION_HALF_THICKNESS_M = 0.01
BOARD_KEYS = ("pos", "quat", "squares", "square_m", "marker_m", "dictionary", "margin_m",
              "thickness_m", "px_per_square", "mocap", "rgba")


@dataclass(frozen=True)
class CharucoSpec:
    squares: tuple[int, int]
    square_m: float
    marker_m: float
    dictionary: str
    margin_m: float
    thickness_m: float
    px_per_square: int

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], where: str = "scene.objects.board") -> CharucoSpec:
        unknown = sorted(str(k) for k in cfg if k not in BOARD_KEYS and k != "kind")
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: "
                              f"{', '.join(BOARD_KEYS)}")
        sq = cfg.get("squares", [8, 6])
        if isinstance(sq, str | bytes) or not hasattr(sq, "__len__") or len(sq) != 2:
            raise ConfigError(f"{where}.squares must be [nx, ny], got {sq!r}")
        nx, ny = (int(v) for v in sq)
        if nx < 3 or ny < 3:
            raise ConfigError(f"{where}.squares must be at least [3, 3], got {[nx, ny]}")
        spec = cls((nx, ny), float(cfg.get("square_m", 0.04)), float(cfg.get("marker_m", 0.03)),
                   str(cfg.get("dictionary", "DICT_5X5_100")), float(cfg.get("margin_m", 0.01)),
                   float(cfg.get("thickness_m", 0.003)), int(cfg.get("px_per_square", 80)))
        if not 0 < spec.marker_m < spec.square_m:
            raise ConfigError(f"{where}: need 0 < marker_m < square_m, got marker_m="
                              f"{spec.marker_m}, square_m={spec.square_m}")
        if spec.margin_m < 0 or spec.thickness_m <= 0 or spec.px_per_square < 20:
            raise ConfigError(f"{where}: need margin_m >= 0, thickness_m > 0, px_per_square >= 20")
        return spec

    @property
    def size_m(self) -> tuple[float, float]:
        """Outer size of the board (squares plus margins), x and y."""
        return (self.squares[0] * self.square_m + 2 * self.margin_m,
                self.squares[1] * self.square_m + 2 * self.margin_m)

    def board(self):
        """The ``cv2.aruco.CharucoBoard``."""
        import cv2

        from core.tag_layouts import marker_dictionary

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


def add_charuco_board(spec, name: str, params: Mapping[str, Any], context) -> None:
    """The ChArUco board object (see the module docstring)."""
    import mujoco

    from hardware.models.peg import _vec, write_png

    where = f"scene.objects.{name}"
    cfg = dict(params)
    board = CharucoSpec.from_config(cfg, where)
    quat = np.asarray(_vec(cfg.get("quat", [1, 0, 0, 0]), 4, f"{where}.quat"))
    if np.linalg.norm(quat) < 1e-9:
        raise ConfigError(f"{where}.quat must not be zero")
    png = write_png(Path(context.asset_dir) / f"{name}_charuco.png", board.image())
    tex = f"{name}_tex"
    spec.add_texture(name=tex, type=mujoco.mjtTexture.mjTEXTURE_2D, file=str(png))
    mat = spec.add_material(name=f"{name}_mat")
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = tex
    mat.specular = 0.0
    mat.shininess = 0.0
    body = spec.worldbody.add_body(name=name, pos=_vec(cfg.get("pos", [0.55, 0.0, 0.75]), 3,
                                                       f"{where}.pos"),
                                   quat=(quat / np.linalg.norm(quat)).tolist(),
                                   mocap=bool(cfg.get("mocap", True)))
    sx, sy = board.size_m
    # the printed sheet: a thin textured visual box
    body.add_geom(name=f"{name}_print", type=mujoco.mjtGeom.mjGEOM_BOX,
                  size=[sx / 2, sy / 2, board.thickness_m / 2], pos=[0, 0, -board.thickness_m / 2],
                  material=mat.name,
                  rgba=_vec(cfg.get("rgba", [0.75, 0.75, 0.75, 1.0]), 4, f"{where}.rgba"),
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
