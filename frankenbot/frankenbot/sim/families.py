"""Task families of the fixtures-and-everyday-objects world: drawers of a cabinet chosen by
position, doors, the light and the stove, everyday objects into and onto containers and beside
each other, and two-goal tasks.

Each family has instruction templates, a sampler (fixtures at their slots, objects on free table
outside every fixture's footprint and swept space) and an oracle predicate over simulator state
(``OracleView``: object poses and every fixture part's joint state). ``sim/tasks.py`` is the one
registry; it dispatches here for these families.
"""

from __future__ import annotations

import math
from typing import Callable, Mapping

import numpy as np

from frankenbot.errors import SimError
from frankenbot.fixture_map import FixtureMap
from frankenbot.sim import fixtures as fx
from frankenbot.sim import layout

# Where each fixture stands when a scene has it: fronts facing the robot's working space (the
# cabinet and the door boxes on the left of the table facing -y, where the camera sees their
# fronts), the flat ones on the right. The microwave stands nearer than the cupboard: its door's
# handle swings through a quarter circle and must stay in reach all the way (a scene has one of
# the cabinet and the microwave, whose slots overlap).
SLOTS: dict[str, tuple[float, float, float]] = {
    "cabinet": (0.42, 0.52, math.pi / 2),
    "microwave": (0.56, 0.47, math.pi / 2),
    "cupboard": (0.78, 0.42, math.pi / 2),
    "stove": (0.62, -0.33, 0.0),
    "light_panel": (0.22, -0.45, 0.0),
}
DRAWER_POSITIONS = ("top", "middle", "bottom")

# oracle thresholds: a drawer is open when pulled at least this share of its stroke (as the
# first waves' open_drawer), closed within CLOSED_M; a hinged door open past OPEN_DOOR_RAD
DRAWER_OPEN_SHARE = 0.8
CLOSED_M = 0.015
OPEN_DOOR_RAD = 1.2
CLOSED_DOOR_RAD = 0.08
SLIDING_OPEN_SHARE = 0.6

# everyday objects by what they can go into or onto
SMALL_ITEMS = ("blue_box", "yellow_box", "brown_box", "red_apple", "yellow_lemon",
               "orange_marker", "red_can", "green_can", "red_mug", "white_mug", "yellow_mug",
               "blue_mug", "red_bottle", "purple_bottle", "white_carton", "orange_carton",
               "green_spatula")
DRAWER_ITEMS = ("blue_box", "yellow_box", "red_apple", "yellow_lemon", "orange_marker",
                "red_block", "green_block", "blue_block", "yellow_block")
PLATE_ITEMS = ("red_mug", "white_mug", "yellow_mug", "blue_mug", "red_apple", "yellow_lemon",
               "blue_box", "yellow_box", "red_can", "green_can", "white_carton")
BASKETS = ("brown_basket", "gray_tray", "black_bowl", "green_bowl", "blue_bowl")
BOWL_ITEMS = ("red_apple", "yellow_lemon", "blue_box", "yellow_box", "red_block",
              "green_block", "orange_marker")
RELATIVE_REFS = ("pink_plate", "white_plate", "brown_basket", "red_mug", "white_carton")
RELATIONS = ("left_of", "right_of", "in_front_of", "behind")
_REL_TEXT = {"left_of": "to the left of", "right_of": "to the right of",
             "in_front_of": "in front of", "behind": "behind"}

TEMPLATES: dict[str, tuple[str, ...]] = {
    "close_drawer": ("close the drawer", "push the drawer shut", "shut the drawer"),
    "open_cabinet_drawer": ("open the {pos} drawer", "pull the {pos} drawer of the cabinet open",
                            "open the {pos} drawer of the cabinet"),
    "close_cabinet_drawer": ("close the {pos} drawer", "shut the {pos} drawer of the cabinet",
                             "push the {pos} drawer closed"),
    "put_in_cabinet_drawer": ("put the {obj_text} in the {pos} drawer",
                              "place the {obj_text} into the {pos} drawer of the cabinet",
                              "open the {pos} drawer and put the {obj_text} inside"),
    "open_door": ("open the {door_text}", "open the {door_text} door",
                  "pull the {door_text} door open"),
    "close_door": ("close the {door_text}", "close the {door_text} door",
                   "shut the door of the {door_text}"),
    "switch_light": ("turn {state} the light", "switch the light {state}",
                     "turn the lamp {state}"),
    "switch_stove": ("turn {state} the stove", "switch the stove {state}",
                     "turn the stove {state}"),
    "everyday_in": ("put the {obj_text} in the {target_text}",
                    "place the {obj_text} into the {target_text}",
                    "pick up the {obj_text} and put it in the {target_text}"),
    "everyday_on": ("put the {obj_text} on the {target_text}",
                    "place the {obj_text} onto the {target_text}",
                    "set the {obj_text} down on the {target_text}"),
    "everyday_relative": ("put the {obj_text} {rel_text} the {target_text}",
                          "place the {obj_text} {rel_text} the {target_text}",
                          "move the {obj_text} {rel_text} the {target_text}"),
    "two_goal": ("put the {obj_text} in the {target_text} and close the drawer",
                 "put the {obj_text} in the {target_text} and turn off the light",
                 "open the {pos} drawer and put the {obj_text} in it"),
}
FAMILIES: tuple[str, ...] = tuple(TEMPLATES)


def _text(name: str) -> str:
    return name.replace("_", " ")


def fixture_map(placements) -> FixtureMap:
    """The fixture map (core type) of a scene's placements, for the oracle's geometry."""
    from frankenbot.sim.config_files import fixtures_config

    return FixtureMap.from_data(fixtures_config(placements))


def keepouts(placements) -> list[Callable[[float, float, float], bool]]:
    """Per placed fixture: does a disc (x, y, r) touch its body or what its parts sweep?"""
    fmap = fixture_map(placements)
    out = []
    for f in fmap.fixtures:
        if f.kind == "zone":
            continue
        out.append(lambda x, y, r, f=f: f.footprint_contains(x, y, margin=r + 0.03))
    return out


def sample(family: str, rng: np.random.Generator, k: int, sampler, fmt: dict[str, str],
           params: dict[str, object]) -> tuple[tuple, dict[str, float]]:
    """Lay out ``family``'s scene on ``sampler`` (tasks._Sampler); returns (fixture placements,
    initial part states) and fills ``fmt``/``params``."""
    from frankenbot.sim.tasks import DEFAULT_FIXTURES, FixturePlacement

    def slot(fid: str) -> FixturePlacement:
        x, y, yaw = SLOTS[fid]
        return FixturePlacement(fid, x, y, yaw)

    placements: list = []
    states: dict[str, float] = {}

    def objects(names, n_distractors: int = 2, pool=SMALL_ITEMS) -> None:
        sampler.keepouts = keepouts(placements)
        for name in names:
            sampler.place(name)
        spare = [n for n in pool if n not in names]
        for i in rng.permutation(len(spare))[:n_distractors]:
            sampler.place(spare[int(i)])

    if family == "close_drawer":
        placements = list(DEFAULT_FIXTURES)
        states["drawer"] = float(rng.uniform(0.08, fx.DRAWER.stroke))
        params.update(target="drawer", goal="closed")
        objects([], 2, DRAWER_ITEMS)
    elif family in ("open_cabinet_drawer", "close_cabinet_drawer", "put_in_cabinet_drawer"):
        placements = [slot("cabinet")]
        pos = DRAWER_POSITIONS[int(rng.integers(3))]
        drawer = f"{pos}_drawer"
        fmt["pos"] = pos
        params.update(target=drawer)
        for other in DRAWER_POSITIONS:  # the others may be ajar: only the chosen one counts
            if other != pos and rng.random() < 0.3:
                states[f"{other}_drawer"] = float(rng.uniform(0.03, 0.08))
        if family == "close_cabinet_drawer":
            states[drawer] = float(rng.uniform(0.08, fx.CAB_STROKE))
            params["goal"] = "closed"
            objects([], 2)
        elif family == "open_cabinet_drawer":
            params["goal"] = "open"
            objects([], 2)
        else:
            obj = DRAWER_ITEMS[int(rng.integers(len(DRAWER_ITEMS)))]
            params.update(object=obj, goal="in")
            objects([obj], 2)
    elif family in ("open_door", "close_door"):
        fid = ("microwave", "cupboard")[int(rng.integers(2))]
        placements = [slot(fid)]
        door = f"{fid}_door"
        part = fx.KINDS[fid].parts[0]
        fmt["door_text"] = fid
        params.update(target=door, fixture=fid,
                      goal="open" if family == "open_door" else "closed")
        if family == "close_door":
            states[door] = float(rng.uniform(0.6, 1.0)) * part.travel
        objects([], 2)
    elif family in ("switch_light", "switch_stove"):
        fid = "light_panel" if family == "switch_light" else "stove"
        placements = [slot(fid)]
        on = bool(rng.integers(2))
        fmt["state"] = "on" if on else "off"
        target = "light" if fid == "light_panel" else "stove_burner"
        params.update(target=target, goal="on" if on else "off")
        if not on:  # it starts lit, the task is to switch it off
            if fid == "light_panel":
                states["switch"] = fx.SWITCH_TRAVEL
            else:
                states["stove_knob"] = float(rng.uniform(0.9, fx.KNOB_TRAVEL))
        objects([], 2)
    elif family in ("everyday_in", "everyday_on"):
        if family == "everyday_in":
            target = BASKETS[int(rng.integers(len(BASKETS)))]
            pool = BOWL_ITEMS if target.endswith("bowl") else SMALL_ITEMS
        else:
            target = ("pink_plate", "white_plate")[int(rng.integers(2))]
            pool = PLATE_ITEMS
        obj = pool[int(rng.integers(len(pool)))]
        params.update(object=obj, target=target, goal="in" if family == "everyday_in" else "on")
        sampler.place(target)
        objects([obj], 2, tuple(n for n in SMALL_ITEMS if n in pool or n in PLATE_ITEMS))
    elif family == "everyday_relative":
        relation = RELATIONS[int(rng.integers(len(RELATIONS)))]
        ref = RELATIVE_REFS[int(rng.integers(len(RELATIVE_REFS)))]
        obj = next(n for n in rng.permutation(PLATE_ITEMS) if n != ref)
        fmt["rel_text"] = _REL_TEXT[relation]
        from frankenbot.sim.tasks import RELATIVE_REF_REGION

        r = sampler.place(ref, RELATIVE_REF_REGION)
        spec = layout.OBJECT_BY_NAME[obj]
        for _ in range(100):
            p = sampler.place(str(obj))
            if math.hypot(p.x - r.x, p.y - r.y) > spec.radius + layout.OBJECT_BY_NAME[
                    ref].radius + 0.14:
                break
            sampler.placed.pop()
            sampler.out.pop()
        else:
            raise SimError("no start for the object away from its reference")
        params.update(object=str(obj), relation=relation, target=ref, refs=(ref,),
                      ref_start=((r.x, r.y),))
        objects([], 1, tuple(n for n in SMALL_ITEMS if n not in (obj, ref)))
    elif family == "two_goal":
        variant = k
        if variant == 0:  # ... and close the drawer (the one-drawer unit starts open)
            placements = list(DEFAULT_FIXTURES)
            states["drawer"] = float(rng.uniform(0.08, fx.DRAWER.stroke))
            target = BASKETS[int(rng.integers(len(BASKETS)))]
            extra = {"target2": "drawer", "goal2": "closed"}
        elif variant == 1:  # ... and turn off the light (it starts lit)
            placements = [slot("light_panel")]
            states["switch"] = fx.SWITCH_TRAVEL
            target = BASKETS[int(rng.integers(len(BASKETS)))]
            extra = {"target2": "light", "goal2": "off"}
        else:  # open the chosen drawer and put the object in it
            placements = [slot("cabinet")]
            pos = DRAWER_POSITIONS[int(rng.integers(3))]
            fmt["pos"] = pos
            target = f"{pos}_drawer"
            extra = {}
        pool = BOWL_ITEMS if target.endswith(("bowl", "drawer")) else SMALL_ITEMS
        if target.endswith("drawer"):
            pool = DRAWER_ITEMS
        obj = pool[int(rng.integers(len(pool)))]
        params.update(object=obj, target=target, goal="in", variant=variant, **extra)
        sampler.keepouts = keepouts(placements)
        if not target.endswith("drawer"):
            sampler.place(target)
        objects([obj], 2, pool)
    else:  # pragma: no cover - TEMPLATES and this function change together
        raise SimError(f"task family {family!r} has no sampler")
    if "object" in params:
        fmt.setdefault("obj_text", _text(str(params["object"])))
    if "target" in params:
        fmt.setdefault("target_text", _text(str(params["target"])))
    return tuple(placements), states


# ------------------------------------------------------------------------------ oracle
def part_state(view, part: str, lines: list[str]) -> float:
    if part not in view.fixtures:
        lines.append(f"NO {part} is not in the scene")
        raise KeyError(part)
    return float(view.fixtures[part])


def goal_holds(view, target: str, goal: str, lines: list[str]) -> bool:
    """A fixture part's goal state: open | closed | on | off."""
    value = part_state(view, target, lines)
    spec = _part_spec(target)
    if goal in ("on", "off"):
        good = (value >= 0.5) == (goal == "on")
        lines.append(f"{'OK' if good else 'NO'} {target} {'on' if value >= 0.5 else 'off'} "
                     f"(want {goal})")
        return good
    kind = spec.kind if spec is not None else "drawer"
    travel = spec.travel if spec is not None else fx.DRAWER.stroke
    if kind == "hinged_door":
        good = value >= OPEN_DOOR_RAD if goal == "open" else value <= CLOSED_DOOR_RAD
        unit, need = "rad", (f">= {OPEN_DOOR_RAD}" if goal == "open" else
                             f"<= {CLOSED_DOOR_RAD}")
    else:
        share = SLIDING_OPEN_SHARE if kind == "sliding_door" else DRAWER_OPEN_SHARE
        good = value >= share * travel if goal == "open" else value <= CLOSED_M
        unit, need = "m", (f">= {share * travel:.3f}" if goal == "open" else f"<= {CLOSED_M}")
    lines.append(f"{'OK' if good else 'NO'} {target} at {value:.3f} {unit} (want {goal}: "
                 f"{need})")
    return good


def _part_spec(part_id: str) -> fx.PartSpec | None:
    for inst in fx.INSTANCES:
        for p in inst.spec.parts:
            if inst.part_id(p.suffix) == part_id:
                return p
    return None


def in_enclosure(view, obj_name: str, part_id: str, lines: list[str]) -> bool:
    """The object rests inside a drawer's (or a door box's) cavity, released."""
    o = view.objects[obj_name]
    part = view.fixture_map.part(part_id) if view.fixture_map is not None else None
    if part is None or part.cavity_size is None:
        lines.append(f"NO {part_id} has no cavity in the map")
        return False
    opening = float(view.fixtures.get(part_id, 0.0))
    centre = part.cavity_at(opening)
    assert centre is not None
    c, s = math.cos(part.yaw), math.sin(part.yaw)
    dx, dy = o.position[0] - centre[0], o.position[1] - centre[1]
    lx, ly = c * dx + s * dy, -s * dx + c * dy
    sx, sy, sz = part.cavity_size
    good = (abs(lx) < sx / 2 and abs(ly) < sy / 2
            and abs(o.position[2] - centre[2]) < sz / 2 + 0.01 and not o.held)
    lines.append(f"{'OK' if good else 'NO'} {obj_name} in {part_id}: local ({lx:+.3f}, "
                 f"{ly:+.3f}), z {o.position[2]:.3f} (cavity centre z {centre[2]:.3f})"
                 f"{' held' if o.held else ''}")
    return good


def check(family: str, p: Mapping[str, object], view, lines: list[str]) -> bool:
    from frankenbot.sim.tasks import inside, relative_ok

    if family in ("close_drawer", "open_cabinet_drawer", "close_cabinet_drawer",
                  "open_door", "close_door", "switch_light", "switch_stove"):
        return goal_holds(view, str(p["target"]), str(p["goal"]), lines)
    if family == "put_in_cabinet_drawer":
        return in_enclosure(view, str(p["object"]), str(p["target"]), lines)
    if family in ("everyday_in", "everyday_on"):
        good, line = inside(view.objects[str(p["object"])], view.objects[str(p["target"])])
        lines.append(("OK " if good else "NO ") + line)
        return good
    if family == "everyday_relative":
        return relative_ok(p, view, lines)
    if family == "two_goal":
        target = str(p["target"])
        if target.endswith("drawer"):
            return in_enclosure(view, str(p["object"]), target, lines)
        good, line = inside(view.objects[str(p["object"])], view.objects[target])
        lines.append(("OK " if good else "NO ") + line)
        second = goal_holds(view, str(p["target2"]), str(p["goal2"]), lines)
        return good and second
    raise SimError(f"no oracle for family {family!r}")  # pragma: no cover
