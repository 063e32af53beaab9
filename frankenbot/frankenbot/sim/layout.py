"""The tabletop's fixed geometry and the catalogue of objects the simulator can place.

Everything here is data: sizes, colours, fixture poses and the region where movable objects are
randomised. It is the single source for the MJCF builder, the task sampler, the oracle and the
fixture file perception reads (config/scene_fixtures.yaml), so none of them can disagree.
All lengths in metres, in ``base_link`` (x forward, y left, z up); the table top is at z = 0.
"""

from __future__ import annotations

from dataclasses import dataclass

TABLE_TOP_Z = 0.0
TABLE_CENTRE = (0.35, 0.0)
TABLE_HALF = (0.65, 0.75)  # x spans [-0.30, 1.00], y spans [-0.75, 0.75]
FLOOR_Z = -0.75
PARKING_Z = -3.0  # hidden shelf under the floor where unused objects wait

BLOCK_SIZE = 0.04  # edge of the standard cube
BLOCK_MASS = 0.06


@dataclass(frozen=True)
class ObjectSpec:
    """One movable object type: its simulator name, shape class, colour and footprint."""

    name: str  # sim name == perception id, e.g. red_block
    shape: str  # block | bowl | plate | bin
    colour: str
    rgba: tuple[float, float, float, float]
    size: tuple[float, float, float]  # full extent x, y, z
    mass: float

    @property
    def radius(self) -> float:
        """Radius of the footprint's bounding circle (used to keep objects apart)."""
        if self.shape in ("bowl", "plate"):
            return self.size[0] / 2
        return 0.5 * (self.size[0] ** 2 + self.size[1] ** 2) ** 0.5


RGBA = {
    "red": (0.85, 0.10, 0.10, 1.0),
    "green": (0.10, 0.65, 0.20, 1.0),
    "blue": (0.10, 0.25, 0.90, 1.0),
    "yellow": (0.95, 0.85, 0.10, 1.0),
    "orange": (1.00, 0.50, 0.05, 1.0),
    "purple": (0.55, 0.15, 0.70, 1.0),
    "white": (0.95, 0.95, 0.95, 1.0),
    "gray": (0.50, 0.50, 0.50, 1.0),
}
BLOCK_COLOURS = ("red", "green", "blue", "yellow", "orange", "purple")
BOWL_COLOURS = ("green", "blue", "red")

BOWL_RADIUS = 0.075  # outer
BOWL_INNER_RADIUS = 0.062
BOWL_HEIGHT = 0.05
PLATE_RADIUS = 0.09
PLATE_HEIGHT = 0.012
BIN_SIZE = (0.20, 0.26, 0.10)
BIN_WALL = 0.01


def _block(colour: str, edge: float = BLOCK_SIZE, suffix: str = "block") -> ObjectSpec:
    mass = BLOCK_MASS * (edge / BLOCK_SIZE) ** 3
    return ObjectSpec(f"{colour}_{suffix}", "block", colour, RGBA[colour], (edge,) * 3, mass)


OBJECTS: tuple[ObjectSpec, ...] = (
    *(_block(c) for c in BLOCK_COLOURS),
    *(ObjectSpec(f"{c}_bowl", "bowl", c, RGBA[c], (2 * BOWL_RADIUS,) * 2 + (BOWL_HEIGHT,), 0.3)
      for c in BOWL_COLOURS),
    ObjectSpec("white_plate", "plate", "white", RGBA["white"],
               (2 * PLATE_RADIUS, 2 * PLATE_RADIUS, PLATE_HEIGHT), 0.3),
    ObjectSpec("gray_bin", "bin", "gray", RGBA["gray"], BIN_SIZE, 2.0),
)
OBJECT_BY_NAME = {o.name: o for o in OBJECTS}


@dataclass(frozen=True)
class DrawerFixture:
    """A cabinet with one drawer that slides along ``pull_axis`` towards the robot."""

    name: str = "drawer"
    body_centre: tuple[float, float, float] = (0.72, 0.38, 0.06)  # cabinet centre
    body_size: tuple[float, float, float] = (0.20, 0.26, 0.12)  # cabinet outer extent
    pull_axis: tuple[float, float, float] = (-1.0, 0.0, 0.0)
    stroke: float = 0.12
    wall: float = 0.01
    handle_offset: float = 0.05  # handle bar distance in front of the drawer face
    handle_length: float = 0.10
    handle_radius: float = 0.007
    handle_z: float = 0.07  # handle height above the table

    @property
    def front_x(self) -> float:
        return self.body_centre[0] - self.body_size[0] / 2

    def handle_position(self, opening: float = 0.0) -> tuple[float, float, float]:
        """Handle bar centre when the drawer is open by ``opening`` metres."""
        return (self.front_x - self.handle_offset - opening, self.body_centre[1], self.handle_z)

    @property
    def box_length(self) -> float:
        """Outer length of the sliding box along the pull axis (front panel flush when closed)."""
        return self.body_size[0] - self.wall - 0.002

    def box_centre_x(self, opening: float = 0.0) -> float:
        return self.front_x + self.box_length / 2 - opening

    @property
    def cavity_size(self) -> tuple[float, float, float]:
        """Inner extent of the drawer box (x, y, z); a few mm of play inside the cabinet."""
        sx, sy, sz = self.body_size
        w = self.wall
        return (self.box_length - 2 * w, sy - 4 * w - 0.004, sz - 3 * w - 0.004)

    def cavity_centre(self, opening: float = 0.0) -> tuple[float, float, float]:
        """Centre of the drawer's inner cavity (bottom face + half height) at ``opening``."""
        return (self.box_centre_x(opening), self.body_centre[1],
                2 * self.wall + self.cavity_size[2] / 2)


@dataclass(frozen=True)
class ZoneFixture:
    """A flat coloured patch on the table that push tasks aim at."""

    name: str = "zone"
    colour: str = "cyan"
    rgba: tuple[float, float, float, float] = (0.10, 0.80, 0.85, 1.0)
    centre: tuple[float, float] = (0.42, -0.45)
    size: tuple[float, float] = (0.14, 0.14)

    def contains(self, x: float, y: float, margin: float = 0.0) -> bool:
        return (abs(x - self.centre[0]) <= self.size[0] / 2 - margin
                and abs(y - self.centre[1]) <= self.size[1] / 2 - margin)


DRAWER = DrawerFixture()
ZONE = ZoneFixture()

# Region where movable objects are randomised (keeps clear of drawer and zone, inside reach).
SPAWN_X = (0.30, 0.66)
SPAWN_Y = (-0.30, 0.22)
# Beyond the arm's reach (no top-down pose has an IK solution) but on the table and in the
# camera's view, clear of the zone and the cabinet: where "move container away" puts things (a
# spot the camera cannot see would make it "removed" for any brain).
OUT_OF_REACH = (0.89, -0.22)


def parking_position(index: int) -> tuple[float, float]:
    """xy of the hidden parking slot ``index`` (objects not used by the current scene)."""
    return (-1.0 + 0.3 * (index % 8), -1.0 + 0.4 * (index // 8))
