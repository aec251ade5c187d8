"""A URDF robot file as MuJoCo reads it: collision geometry only, meshes found, a site per link.

:func:`read_urdf` parses the file's links and joints (names, tree, limits, efforts) into a
:class:`UrdfRobot`; :func:`urdf_spec` gives the uncompiled ``mujoco.MjSpec``. Before MuJoCo's
importer sees the file it is rewritten in memory:

* ``<visual>`` elements are dropped (MuJoCo reads no ``.dae``; the collision meshes are drawn);
* every mesh URI becomes an absolute path: ``package://<pkg>/<path>`` is looked up in the
  folders above the URDF (the ROS share folder named ``<pkg>``, or one holding a ``<pkg>``
  folder), ``file://`` and relative paths against the URDF's folder; one that does not resolve is
  a :class:`~core.errors.ConfigError` naming the file, the link and the URI;
* ``<mujoco><compiler discardvisual="true" fusestatic="false" strippath="false"/></mujoco>``:
  links on fixed joints stay bodies of their own (an SRDF names them), mesh paths stay whole;
* each link gets a site of its own name at its frame (``ee_site: <arm>/<tool link>``), and each
  joint's URDF velocity limit becomes ``<custom><numeric name="<joint>_max_velocity">``, which
  :mod:`hardware.robot` reads when the config gives no ``velocity_limits``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from core.errors import ConfigError

MOVING = ("revolute", "continuous", "prismatic")


@dataclass(frozen=True)
class UrdfJoint:
    """One ``<joint>``: its type, parent and child link, limits (``None`` where the file has none)."""

    name: str
    type: str
    parent: str
    child: str
    lower: float | None = None
    upper: float | None = None
    effort: float | None = None
    velocity: float | None = None

    @property
    def moves(self) -> bool:
        return self.type in MOVING


@dataclass(frozen=True)
class UrdfRobot:
    """A URDF's kinematic tree: its links and joints, by name."""

    path: Path
    name: str
    links: tuple[str, ...]
    joints: tuple[UrdfJoint, ...]

    @property
    def root(self) -> str:
        """The link that is no joint's child."""
        children = {j.child for j in self.joints}
        return next((link for link in self.links if link not in children), "")

    def joint(self, name: str) -> UrdfJoint | None:
        return next((j for j in self.joints if j.name == name), None)

    def parent_joint(self, link: str) -> UrdfJoint | None:
        return next((j for j in self.joints if j.child == link), None)

    def chain(self, base: str, tip: str) -> tuple[UrdfJoint, ...] | None:
        """The joints from link ``base`` down to link ``tip`` (``None`` if ``tip`` is not below it)."""
        out, link = [], tip
        while link != base:
            j = self.parent_joint(link)
            if j is None:
                return None
            out.append(j)
            link = j.parent
        return tuple(reversed(out))


def read_urdf(path: Path, key: str) -> UrdfRobot:
    """Links and joints of the URDF at ``path`` (``key``: the config key, for errors)."""
    root = _parse(path, key, "URDF")
    if root.tag != "robot":
        raise ConfigError(f"{key}: {path} is not a URDF (its root element is <{root.tag}>, not <robot>)")
    joints = []
    for j in root.findall("joint"):
        limit = j.find("limit")
        num = {a: None if limit is None or limit.get(a) is None else float(limit.get(a))
               for a in ("lower", "upper", "effort", "velocity")}
        parent, child = j.find("parent"), j.find("child")
        if parent is None or child is None:
            raise ConfigError(f"{key}: {path}: <joint name={j.get('name')!r}> needs <parent> and <child>")
        joints.append(UrdfJoint(j.get("name", ""), j.get("type", ""), parent.get("link", ""),
                                child.get("link", ""), num["lower"], num["upper"], num["effort"],
                                num["velocity"]))
    return UrdfRobot(path, root.get("name", ""), tuple(link.get("name", "") for link in root.findall("link")),
                     tuple(joints))


def urdf_spec(path: Path, key: str):
    """The URDF at ``path`` as an uncompiled ``mujoco.MjSpec`` (rewritten as the module says)."""
    import mujoco

    root = _parse(path, key, "URDF")
    for link in root.findall("link"):
        for visual in link.findall("visual"):
            link.remove(visual)
        for mesh in link.iter("mesh"):
            mesh.set("filename", str(_mesh_path(mesh.get("filename", ""), path, link.get("name", ""), key)))
    for old in root.findall("mujoco"):
        root.remove(old)
    ext = ET.SubElement(root, "mujoco")
    ET.SubElement(ext, "compiler", discardvisual="true", fusestatic="false", strippath="false")
    try:
        spec = mujoco.MjSpec.from_string(ET.tostring(root, encoding="unicode"))
    except Exception as e:   # mujoco raises ValueError on what its importer refuses
        raise ConfigError(f"{key}: {path} does not load as URDF: {e}") from e
    robot = read_urdf(path, key)
    for name in robot.links:
        body = spec.body(name)
        if body is not None:
            body.add_site(name=name, size=[0.005, 0.005, 0.005], group=5)
    for j in robot.joints:
        if j.moves and j.velocity and spec.joint(j.name) is not None:
            spec.add_numeric(name=f"{j.name}_max_velocity", data=[j.velocity], size=1)
    return spec


# ---------------------------------------------------------------------- helpers
def _parse(path: Path, key: str, what: str) -> ET.Element:
    try:
        return ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise ConfigError(f"{key}: {path} does not parse as {what} XML: {e}") from e


def _mesh_path(uri: str, urdf: Path, link: str, key: str) -> Path:
    """An absolute path for a mesh URI of ``link`` (``package://``, ``file://``, relative, absolute)."""
    where = f"{key}: {urdf}: <link name={link!r}> <mesh filename={uri!r}>"
    parsed = urlparse(uri)
    if parsed.scheme == "package":
        pkg, inner = parsed.netloc, unquote(parsed.path).lstrip("/")
        roots = [d for up in urdf.resolve().parents for d in (up, up / pkg) if d.name == pkg and d.is_dir()]
        found = [r / inner for r in roots if (r / inner).is_file()]
        if not found:
            raise ConfigError(f"{where}: does not resolve; no folder named {pkg!r} above {urdf.parent} "
                              f"holds {inner!r}"
                              + (f" (looked in {', '.join(map(str, roots))})" if roots else ""))
        return found[0]
    p = Path(unquote(parsed.path)) if parsed.scheme == "file" else Path(uri)
    p = p if p.is_absolute() else urdf.parent / p
    if not uri or not p.is_file():
        raise ConfigError(f"{where}: does not resolve; no file at {p}")
    return p.resolve()
