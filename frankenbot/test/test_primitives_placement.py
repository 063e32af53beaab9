"""Release spots inside containers that already hold objects (pure geometry, no sim)."""

import math

from frankenbot.primitives.placement import Palm, occupants, spot_in_container
from frankenbot.state import SceneObject

BIN = SceneObject("gray_bin", "gray bin", "bin", "gray", (0.47, 0.0, 0.05), (0.26, 0.20, 0.10),
                  yaw=-math.pi / 2)
BLOCK = (0.04, 0.04, 0.04)


def block(oid: str, x: float, y: float, z: float = 0.028) -> SceneObject:
    return SceneObject(oid, oid, "block", oid.split("_")[0], (x, y, z), BLOCK)


def test_empty_bin_releases_at_its_centre_fingers_across_the_short_side():
    spot = spot_in_container(BIN, 0.008, BLOCK, [])
    assert math.isclose(spot.x, 0.47, abs_tol=1e-9) and math.isclose(spot.y, 0.0, abs_tol=1e-9)
    assert spot.support_z == 0.008
    # the bin's long side runs along world y here, so the fingers close along world x
    assert math.isclose(abs(math.cos(spot.finger_axis)), 1.0, abs_tol=1e-6)


def test_second_block_goes_beside_the_first_with_the_palm_inside_the_rim():
    first = block("green_block", 0.47, 0.0)
    inside = occupants(BIN, [BIN, first, block("red_block", 0.8, 0.3)], exclude=("purple",))
    assert [o.object_id for o in inside] == ["green_block"]
    palm = Palm()
    spot = spot_in_container(BIN, 0.008, BLOCK, inside, palm)
    assert math.hypot(spot.x - 0.47, spot.y) > 0.06  # clear of the first block and its fingers
    assert spot.support_z == 0.008  # on the floor, not on the first block
    # the palm (long along the fingers, i.e. world x) stays inside the walls
    assert abs(spot.x - 0.47) + palm.along <= 0.10 - palm.rim_clearance + 1e-9
    assert abs(spot.y) + palm.across <= 0.13 - palm.rim_clearance + 1e-9


def test_full_small_bowl_stacks_on_what_is_inside_instead_of_pushing_into_it():
    bowl = SceneObject("red_bowl", "red bowl", "bowl", "red", (0.5, 0.2, 0.025),
                       (0.15, 0.15, 0.05))
    filler = block("blue_block", 0.5, 0.2, 0.028)
    spot = spot_in_container(bowl, 0.008, BLOCK, [filler])
    assert math.isclose(spot.support_z, filler.top_z)
