"""The movable objects of the sim: a catalogue of everyday categories built as procedural MJCF.

Every object is drawn from simple primitives (boxes, cylinders, capsules, spheres, ellipsoids)
so nothing is downloaded and every dimension is known exactly to the oracle. A category fixes the
geometry's form (a mug is a walled cylinder with a C handle, a bottle a body and a neck, a basket
a walled box); an instance fixes its colour, size and mass. Objects are one colour each: what a
camera tells them apart by is their form, which is what perception's catalogue matches on.

All lengths in metres; an object's frame is at the centre of its bounding box, x along its length.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace

from frankenbot.errors import SimError

WORLD_CONTYPE, WORLD_CONAFFINITY = 1, 3

RGBA = {
    "red": (0.85, 0.10, 0.10, 1.0),
    "green": (0.10, 0.65, 0.20, 1.0),
    "blue": (0.10, 0.25, 0.90, 1.0),
    "yellow": (0.95, 0.85, 0.10, 1.0),
    "orange": (1.00, 0.50, 0.05, 1.0),
    "purple": (0.55, 0.15, 0.70, 1.0),
    "white": (0.95, 0.95, 0.95, 1.0),
    "gray": (0.50, 0.50, 0.50, 1.0),
    "black": (0.12, 0.12, 0.13, 1.0),
    "brown": (0.55, 0.33, 0.16, 1.0),
    "pink": (0.95, 0.45, 0.65, 1.0),
}


@dataclass(frozen=True)
class ObjectSpec:
    """One movable object: its simulator name, category, colour, bounding extent and mass.

    ``shape`` is the category (block, bowl, mug, bottle, ...), the word perception names it by.
    ``dims`` carries the category's own measurements (radius, wall, neck ...) for the builder.
    ``lying``: the object rests on its side (a bottle laid down: its axis along x).
    """

    name: str  # sim name == perception id, e.g. red_block
    shape: str
    colour: str
    rgba: tuple[float, float, float, float]
    size: tuple[float, float, float]  # full extent x, y, z
    mass: float
    friction: float = 1.0
    dims: tuple[tuple[str, float], ...] = field(default=())
    lying: bool = False

    @property
    def radius(self) -> float:
        """Radius of the footprint's bounding circle (used to keep objects apart)."""
        if self.shape in ROUND_FOOTPRINT:
            return max(self.size[0], self.size[1]) / 2
        return 0.5 * (self.size[0] ** 2 + self.size[1] ** 2) ** 0.5

    def dim(self, key: str) -> float:
        for k, v in self.dims:
            if k == key:
                return v
        raise SimError(f"{self.name}: no dimension {key!r}")


# categories whose footprint is a disc (their radius is half their width, not the diagonal)
ROUND_FOOTPRINT = ("bowl", "plate", "mug", "bottle", "can", "apple", "ball", "pot")

BLOCK_SIZE = 0.04  # edge of the standard cube
BLOCK_MASS = 0.06
BLOCK_COLOURS = ("red", "green", "blue", "yellow", "orange", "purple")
BOWL_COLOURS = ("green", "blue", "red")
BOWL_RADIUS = 0.075  # outer
BOWL_INNER_RADIUS = 0.062
BOWL_HEIGHT = 0.05
PLATE_RADIUS = 0.09
PLATE_HEIGHT = 0.012
BIN_SIZE = (0.20, 0.26, 0.10)
BIN_WALL = 0.01
ROLLING_FRICTION = 0.002  # m: spheres and the lemon (MuJoCo's rolling friction coefficient)
# categories drawn as a sphere (as low whichever way they turn) and as an ellipsoid whose axes
# are the size's x, y, z
SPHERICAL = ("apple", "ball")
ELLIPSOIDAL = ("lemon",)
BOWL_WALL = 0.006  # floor and wall thickness of the standard bowl (inner radius + this)


def _block(colour: str, edge: float = BLOCK_SIZE) -> ObjectSpec:
    mass = BLOCK_MASS * (edge / BLOCK_SIZE) ** 3
    return ObjectSpec(f"{colour}_block", "block", colour, RGBA[colour], (edge,) * 3, mass)


def _bowl(name: str, colour: str, radius: float, height: float, mass: float,
          inner: float | None = None) -> ObjectSpec:
    inner = inner if inner is not None else radius - 0.013
    return ObjectSpec(name, "bowl", colour, RGBA[colour], (2 * radius, 2 * radius, height),
                      mass, dims=(("inner", inner),))


def _walled(name: str, shape: str, colour: str, size: tuple[float, float, float], wall: float,
            mass: float) -> ObjectSpec:
    return ObjectSpec(name, shape, colour, RGBA[colour], size, mass, dims=(("wall", wall),))


def _mug(colour: str, radius: float = 0.032, height: float = 0.085) -> ObjectSpec:
    reach = 0.026  # the handle stands this far out of the wall
    return ObjectSpec(f"{colour}_mug", "mug", colour, RGBA[colour],
                      (2 * radius + reach, 2 * radius, height), 0.25, friction=1.0,
                      dims=(("radius", radius), ("wall", 0.005), ("handle", reach)))


def _bottle(colour: str, radius: float, body: float, neck_r: float, neck: float,
            mass: float, lying: bool = False) -> ObjectSpec:
    length = body + neck
    size = (length, 2 * radius, 2 * radius) if lying else (2 * radius, 2 * radius, length)
    return ObjectSpec(f"{colour}_bottle", "bottle", colour, RGBA[colour], size, mass,
                      dims=(("radius", radius), ("body", body), ("neck_r", neck_r),
                            ("neck", neck)), lying=lying)


def _box(name: str, shape: str, colour: str, size: tuple[float, float, float],
         mass: float) -> ObjectSpec:
    return ObjectSpec(name, shape, colour, RGBA[colour], size, mass)


OBJECTS: tuple[ObjectSpec, ...] = (
    # the original cell (task families of the first waves)
    *(_block(c) for c in BLOCK_COLOURS),
    *(_bowl(f"{c}_bowl", c, BOWL_RADIUS, BOWL_HEIGHT, 0.3, BOWL_INNER_RADIUS)
      for c in BOWL_COLOURS),
    ObjectSpec("white_plate", "plate", "white", RGBA["white"],
               (2 * PLATE_RADIUS, 2 * PLATE_RADIUS, PLATE_HEIGHT), 0.3),
    ObjectSpec("gray_bin", "bin", "gray", RGBA["gray"], BIN_SIZE, 2.0,
               dims=(("wall", BIN_WALL),)),
    # everyday objects
    _bowl("black_bowl", "black", 0.068, 0.045, 0.25),
    _bowl("white_bowl", "white", 0.058, 0.04, 0.2),
    ObjectSpec("pink_plate", "plate", "pink", RGBA["pink"], (0.16, 0.16, PLATE_HEIGHT), 0.25),
    _mug("red"), _mug("white"), _mug("yellow"), _mug("blue"),
    _bottle("green", 0.032, 0.15, 0.013, 0.06, 0.45),
    _bottle("red", 0.028, 0.11, 0.012, 0.035, 0.3),
    _bottle("purple", 0.03, 0.12, 0.012, 0.04, 0.3, lying=True),
    ObjectSpec("red_can", "can", "red", RGBA["red"], (0.066, 0.066, 0.10), 0.35),
    ObjectSpec("green_can", "can", "green", RGBA["green"], (0.066, 0.066, 0.10), 0.35),
    _box("blue_box", "box", "blue", (0.085, 0.052, 0.035), 0.12),
    _box("yellow_box", "box", "yellow", (0.075, 0.045, 0.03), 0.1),
    _box("brown_box", "box", "brown", (0.09, 0.055, 0.04), 0.14),
    _box("white_carton", "carton", "white", (0.064, 0.064, 0.15), 0.3),
    _box("orange_carton", "carton", "orange", (0.064, 0.064, 0.15), 0.3),
    _walled("brown_basket", "basket", "brown", (0.24, 0.18, 0.09), 0.008, 0.5),
    _walled("gray_tray", "tray", "gray", (0.28, 0.20, 0.03), 0.008, 0.4),
    ObjectSpec("red_apple", "apple", "red", RGBA["red"], (0.072, 0.072, 0.072), 0.18,
               dims=(("radius", 0.036),)),
    ObjectSpec("yellow_lemon", "lemon", "yellow", RGBA["yellow"], (0.084, 0.06, 0.06), 0.1,
               dims=(("radius", 0.03), ("half_length", 0.042))),
    ObjectSpec("blue_ball", "ball", "blue", RGBA["blue"], (0.06, 0.06, 0.06), 0.05,
               friction=0.8, dims=(("radius", 0.03),)),
    ObjectSpec("orange_marker", "marker", "orange", RGBA["orange"], (0.14, 0.02, 0.02), 0.03,
               dims=(("radius", 0.01),)),
    ObjectSpec("green_spatula", "spatula", "green", RGBA["green"], (0.24, 0.04, 0.015), 0.08),
)


def _like(name: str, model: str, colour: str | None = None) -> ObjectSpec:
    """Another instance of ``model``'s category and geometry (a second bowl of the same make,
    or the same can in another colour): its size signature stays one its category already has."""
    spec = next(o for o in OBJECTS if o.name == model)
    if colour is None:
        return replace(spec, name=name)
    return replace(spec, name=name, colour=colour, rgba=RGBA[colour])


# Second and third instances that scenes of external suites need (LIBERO: three bowls alike,
# two plates, two packs of butter or two books alike, two pots alike). Every object is in every
# model (parked when unused), so each one costs physics time in every scene: only these five.
OBJECTS = OBJECTS + (
    _like("black_bowl_2", "black_bowl"), _like("black_bowl_3", "black_bowl"),
    _like("white_plate_2", "white_plate"), _like("yellow_box_2", "yellow_box"),
    _like("red_can_2", "red_can"),
)
OBJECT_BY_NAME = {o.name: o for o in OBJECTS}
CATEGORIES: tuple[str, ...] = tuple(dict.fromkeys(o.shape for o in OBJECTS))
# the everyday objects (not the first waves' blocks, three bowls, plate and bin)
EVERYDAY: tuple[ObjectSpec, ...] = OBJECTS[11:]


# ------------------------------------------------------------------------------- MJCF builders
def fmt(values) -> str:
    return " ".join(f"{float(v):.6g}" for v in values)


def sub(parent: ET.Element, tag: str, **attrs) -> ET.Element:
    return ET.SubElement(parent, tag, {k: str(v) for k, v in attrs.items()})


def geom(body: ET.Element, **attrs) -> ET.Element:
    attrs.setdefault("contype", WORLD_CONTYPE)
    attrs.setdefault("conaffinity", WORLD_CONAFFINITY)
    return sub(body, "geom", **attrs)


def _ring(body: ET.Element, spec: ObjectSpec, radius: float, wall: float, z0: float, z1: float,
          mass: float, n: int = 12, x0: float = 0.0) -> None:
    """A cylindrical wall from z0 to z1 of ``n`` boxes (what a bowl's or mug's side is made of)."""
    r = radius - wall / 2
    half_w = math.pi * r / n * 1.05
    for k in range(n):
        a = 2 * math.pi * k / n
        geom(body, type="box", size=fmt((wall / 2, half_w, (z1 - z0) / 2)), rgba=fmt(spec.rgba),
             pos=fmt((x0 + r * math.cos(a), r * math.sin(a), (z0 + z1) / 2)),
             euler=f"0 0 {a:.6f}",
             mass=mass / n)


def _build_block(body: ET.Element, spec: ObjectSpec) -> None:
    sx, sy, sz = spec.size
    geom(body, name=f"{spec.name}_geom", type="box", size=fmt((sx / 2, sy / 2, sz / 2)),
         rgba=fmt(spec.rgba), mass=spec.mass, friction=f"{spec.friction} 0.01 0.001", condim=4)


def _build_bowl(body: ET.Element, spec: ObjectSpec) -> None:
    sz = spec.size[2]
    radius, inner = spec.size[0] / 2, spec.dim("inner")
    t = BOWL_WALL
    geom(body, type="cylinder", size=f"{inner + t} {t / 2}", pos=f"0 0 {-sz / 2 + t / 2}",
         rgba=fmt(spec.rgba), mass=spec.mass * 0.4)
    # walls stand on the bottom disc, 1 mm clear of the table (fewer contacts); the wall boxes
    # sit between the inner and the outer radius, as the first bowls' did
    n = 12
    r = (radius + inner) / 2
    half_w = math.pi * r / n * 1.05
    hz = sz / 2 - t / 2 - 0.0005
    for k in range(n):
        a = 2 * math.pi * k / n
        geom(body, type="box", size=fmt((t, half_w, hz)), rgba=fmt(spec.rgba),
             pos=fmt((r * math.cos(a), r * math.sin(a), t / 2 + 0.0005)),
             euler=f"0 0 {a:.6f}", mass=spec.mass * 0.6 / n)


def _build_plate(body: ET.Element, spec: ObjectSpec) -> None:
    geom(body, type="cylinder", size=f"{spec.size[0] / 2} {spec.size[2] / 2}",
         rgba=fmt(spec.rgba), mass=spec.mass)


def _build_walled_box(body: ET.Element, spec: ObjectSpec) -> None:
    """An open box: floor plate and four walls (bin, basket, tray)."""
    sx, sy, sz = spec.size
    w = spec.dim("wall")
    rgba = fmt(spec.rgba)
    geom(body, type="box", size=fmt((sx / 2, sy / 2, w / 2)), pos=f"0 0 {-sz / 2 + w / 2}",
         rgba=rgba, mass=spec.mass * 0.4)
    hz = sz / 2 - w / 2 - 0.0005  # walls stand on the floor plate, clear of the table
    for sgn in (-1, 1):
        geom(body, type="box", size=fmt((w / 2, sy / 2, hz)),
             pos=fmt((sgn * (sx / 2 - w / 2), 0, w / 2 + 0.0005)), rgba=rgba,
             mass=spec.mass * 0.15)
        geom(body, type="box", size=fmt((sx / 2 - w, w / 2, hz)),
             pos=fmt((0, sgn * (sy / 2 - w / 2), w / 2 + 0.0005)), rgba=rgba,
             mass=spec.mass * 0.15)


def _build_mug(body: ET.Element, spec: ObjectSpec) -> None:
    """A walled cylinder with a floor and a C-shaped handle on +x. The frame is the bounding
    box's centre, so the cylinder's axis sits ``handle / 2`` towards -x. All geoms hang on the
    object's one body (parking switches a body's geoms off; a child body would stay live)."""
    r, wall, reach = spec.dim("radius"), spec.dim("wall"), spec.dim("handle")
    h = spec.size[2]
    rgba = fmt(spec.rgba)
    ox = -reach / 2  # the cup's axis
    geom(body, type="cylinder", size=f"{r} {wall / 2}", pos=fmt((ox, 0, -h / 2 + wall / 2)),
         rgba=rgba, mass=spec.mass * 0.3)
    _ring(body, spec, r, wall, -h / 2 + wall + 0.0005, h / 2, spec.mass * 0.55, n=14, x0=ox)
    t = 0.007  # handle bar thickness
    x_out = ox + r + reach - t / 2
    geom(body, type="box", size=fmt((t / 2, 0.006, 0.022)), pos=fmt((x_out, 0, 0.0)),
         rgba=rgba, mass=spec.mass * 0.05)
    for zs in (-1, 1):
        geom(body, type="box", size=fmt(((reach + 0.002) / 2, 0.006, t / 2)),
             pos=fmt((ox + r + reach / 2 - 0.001, 0, zs * (0.022 - t / 2))), rgba=rgba,
             mass=spec.mass * 0.05)


def _build_bottle(body: ET.Element, spec: ObjectSpec) -> None:
    r, length = spec.dim("radius"), spec.dim("body")
    nr, neck = spec.dim("neck_r"), spec.dim("neck")
    total = length + neck
    rgba = fmt(spec.rgba)
    # along the bottle's own axis: body first, then the neck; upright the axis is z, lying x
    axis = "x" if spec.lying else "z"
    euler = "0 1.5708 0" if spec.lying else "0 0 0"

    def along(d: float) -> str:
        return fmt((d, 0, 0)) if axis == "x" else fmt((0, 0, d))

    # lying, its body rests on a line and would roll off at the slightest contact softness: a
    # glass bottle on a table has rolling resistance (set going, it rolls a while and stops)
    rolling, condim = (ROLLING_FRICTION, 6) if spec.lying else (0.001, 4)
    geom(body, type="cylinder", size=f"{r} {length / 2}", pos=along(-total / 2 + length / 2),
         euler=euler, rgba=rgba, mass=spec.mass * 0.85,
         friction=f"{spec.friction} 0.01 {rolling}", condim=condim)
    geom(body, type="cylinder", size=f"{nr} {neck / 2}", pos=along(total / 2 - neck / 2),
         euler=euler, rgba=rgba, mass=spec.mass * 0.15, friction=f"{spec.friction} 0.01 0.001",
         condim=4)


def _build_cylinder(body: ET.Element, spec: ObjectSpec) -> None:
    geom(body, type="cylinder", size=f"{spec.size[0] / 2} {spec.size[2] / 2}",
         rgba=fmt(spec.rgba), mass=spec.mass, friction=f"{spec.friction} 0.01 0.001", condim=4)


def _build_sphere(body: ET.Element, spec: ObjectSpec) -> None:
    # rolling friction: set going, a ball rolls a while and stops (an object that rolls away
    # is an anomaly of its own, sim/anomalies.py)
    geom(body, type="sphere", size=f"{spec.dim('radius')}", rgba=fmt(spec.rgba), mass=spec.mass,
         friction=f"{spec.friction} 0.01 {ROLLING_FRICTION}", condim=6)


APPLE_BASE = 0.45  # of the radius: the flattened bottom an apple stands on (it does not roll)


def _build_apple(body: ET.Element, spec: ObjectSpec) -> None:
    """A sphere on a flattened bottom: put down, an apple stays (only pushed hard, or with the
    object_rolls anomaly, does it roll)."""
    r = spec.dim("radius")
    geom(body, type="sphere", size=f"{r}", rgba=fmt(spec.rgba), mass=spec.mass * 0.95,
         friction=f"{spec.friction} 0.01 {ROLLING_FRICTION}", condim=6)
    geom(body, type="cylinder", size=fmt((APPLE_BASE * r, 0.003)), pos=fmt((0, 0, -r + 0.003)),
         rgba=fmt(spec.rgba), mass=spec.mass * 0.05, friction=f"{spec.friction} 0.01 0.001",
         condim=4)


def _build_lemon(body: ET.Element, spec: ObjectSpec) -> None:
    r, hl = spec.dim("radius"), spec.dim("half_length")
    geom(body, type="ellipsoid", size=fmt((hl, r, r)), rgba=fmt(spec.rgba), mass=spec.mass,
         friction=f"{spec.friction} 0.01 {ROLLING_FRICTION}", condim=6)


def _build_marker(body: ET.Element, spec: ObjectSpec) -> None:
    # a capsule (a marker's rounded ends): a lying cylinder's contact with the table rolled it
    # away on its own (4 cm in 3 s, faster and faster); a capsule's stays put
    r = spec.dim("radius")
    geom(body, type="capsule", size=f"{r} {spec.size[0] / 2 - r}", euler="0 1.5708 0",
         rgba=fmt(spec.rgba), mass=spec.mass, friction=f"{spec.friction} 0.01 0.002", condim=4)


BUILDERS = {
    "block": _build_block, "bowl": _build_bowl, "plate": _build_plate,
    "bin": _build_walled_box, "basket": _build_walled_box, "tray": _build_walled_box,
    "mug": _build_mug, "bottle": _build_bottle, "can": _build_cylinder,
    "box": _build_block, "carton": _build_block, "spatula": _build_block,
    "apple": _build_apple, "ball": _build_sphere, "lemon": _build_lemon,
    "marker": _build_marker,
}


def build_object(world: ET.Element, spec: ObjectSpec, position: tuple[float, float, float]
                 ) -> ET.Element:
    """The object's free body (named ``spec.name``) with its geoms, at ``position``."""
    builder = BUILDERS.get(spec.shape)
    if builder is None:  # pragma: no cover - the catalogue and the builders change together
        raise SimError(f"no geometry for category {spec.shape!r}")
    body = sub(world, "body", name=spec.name, pos=fmt(position))
    sub(body, "freejoint", name=f"{spec.name}_free")
    builder(body, spec)
    return body
