"""One vocabulary of what things are: object categories, fixture kinds, fixture parts, and the
roles each plays (what can be picked, put into, put on, stacked on, opened, pressed, ...).

Perception names every scene object by one of ``SHAPES`` (``SceneObject.shape``); the catalog,
the validator, the planners, the predicates, the primitives and the tracker ask the role sets
below instead of keeping lists of their own. A category added here (and to perception's object
catalogue) is known to all of them.
"""

from __future__ import annotations

# Movable objects: what perception's catalogue recognises (frankenbot/config/objects.yaml).
OBJECT_CATEGORIES: tuple[str, ...] = (
    "block", "bowl", "plate", "bin", "basket", "tray", "mug", "bottle", "can", "box", "carton",
    "apple", "lemon", "ball", "marker", "spatula",
)
# Fixtures (from the cell's fixture map; their state comes from the camera).
FIXTURE_KINDS: tuple[str, ...] = (
    "cabinet", "microwave", "cupboard", "light_panel", "stove", "drawer", "zone",
)
# Parts of fixtures: a drawer of a cabinet, a door, a control, a lamp, a burner, a handle.
PART_KINDS: tuple[str, ...] = ("drawer", "door", "button", "switch", "knob", "light", "burner",
                               "handle")
UNKNOWN = "unknown"

SHAPES: tuple[str, ...] = tuple(dict.fromkeys(
    (*OBJECT_CATEGORIES, *FIXTURE_KINDS, *PART_KINDS, UNKNOWN)))

# --- roles ------------------------------------------------------------------------------------
# picked with the gripper (an unknown object may be, if it fits)
GRASPABLE = frozenset({"block", "bowl", "mug", "bottle", "can", "box", "carton", "apple",
                       "lemon", "ball", "marker", "spatula", UNKNOWN})
# open containers things are put *into* from above
OPEN_CONTAINERS = frozenset({"bowl", "bin", "basket", "tray"})
# things with a floor behind a drawer front or a door (put into only when open)
ENCLOSURES = frozenset({"drawer", "microwave", "cupboard"})
# flat surfaces things are put *on* (a plate is a container of the first waves too)
SUPPORTS = frozenset({"plate", "block", "box", "carton", "can", "tray", "cabinet", "stove",
                      "microwave", "cupboard", "burner"})
# flat tops a block may be stacked on and that stay level (stacking on flat tops only)
STACKABLE = frozenset({"block", "box", "carton", "can"})
# place_in targets: open containers, enclosures, plates (on) and the painted zone
CONTAINERS = frozenset(OPEN_CONTAINERS | ENCLOSURES | {"plate", "zone"})
# hollow: the camera sees down to their floor (rim judged, not the top centre)
HOLLOW = frozenset({"bowl", "bin", "basket", "tray", "mug"})
# a round footprint (a disc; rotating it changes nothing)
ROUND = frozenset({"bowl", "plate", "mug", "bottle", "can", "apple", "ball"})
# rolls when let go on its side or nudged
ROLLING = frozenset({"apple", "ball", "lemon"})
# may lie on its side: round across its length (seen lying, as wide as it is high)
LIES_ROUND = frozenset({"bottle", "can", "marker"})
OPENABLE = frozenset({"drawer", "door", "microwave", "cupboard"})
PRESSABLE = frozenset({"button"})
TOGGLEABLE = frozenset({"switch"})
TURNABLE = frozenset({"knob"})
# things that are on or off (the lamp, the burner; a stove or a light panel by its part)
SWITCHABLE = frozenset({"light", "burner", "stove", "light_panel"})
FIXTURES = frozenset({*FIXTURE_KINDS, *PART_KINDS})


def is_known(shape: str) -> bool:
    return shape in SHAPES
