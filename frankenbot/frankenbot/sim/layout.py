"""The tabletop's fixed geometry and the catalogue of objects the simulator can place.

Everything here is data: sizes, colours, fixture poses and the region where movable objects are
randomised. It is the single source for the MJCF builder, the task sampler, the oracle and the
fixture file perception reads (config/scene_fixtures.yaml), so none of them can disagree.
All lengths in metres, in ``base_link`` (x forward, y left, z up); the table top is at z = 0.
"""

from __future__ import annotations

from dataclasses import dataclass

# The movable objects and the fixtures have modules of their own; their names are re-exported
# here, where the first waves' code looks for them.
from frankenbot.sim.fixtures import DRAWER, DrawerUnit  # noqa: F401
from frankenbot.sim.objects import (  # noqa: F401
    BIN_SIZE,
    BIN_WALL,
    BLOCK_COLOURS,
    BLOCK_SIZE,
    BOWL_COLOURS,
    BOWL_HEIGHT,
    BOWL_INNER_RADIUS,
    BOWL_RADIUS,
    OBJECT_BY_NAME,
    OBJECTS,
    PLATE_HEIGHT,
    PLATE_RADIUS,
    RGBA,
    ObjectSpec,
)

TABLE_TOP_Z = 0.0
TABLE_CENTRE = (0.35, 0.0)
TABLE_HALF = (0.65, 0.75)  # x spans [-0.30, 1.00], y spans [-0.75, 0.75]
FLOOR_Z = -0.75
PARKING_Z = -3.0  # hidden shelf under the floor where unused objects wait
DrawerFixture = DrawerUnit


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
