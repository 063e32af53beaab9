"""LIBERO's tasks on our UR5e table: its object categories onto our catalogue, its fixtures onto
ours, its regions onto table areas and fixture parts, its goal predicates onto the sim's goal
expressions (``sim/scene_spec.py``).

LIBERO's scenes are built from scanned and modelled kitchen, living-room and study assets that
do not ship with the task definitions (and must not be downloaded). Every LIBERO category is
stood in for by an object of our procedural catalogue (``sim/objects.py``) of a category that
fits its form (a soup can -> a can, a cream-cheese box -> a box, a moka pot -> a can); each
stand-in keeps LIBERO's words as its name (``names``: what a user would teach the robot to call
it, the label the brain sees). Where no kind of ours can honestly stand in for what a goal needs
(a desk caddy's compartments, a wine rack, a two-layer shelf's layers), the task is not set up,
with the reason; scenery a goal never names is left out of the scene, and the task says so.

Directions: LIBERO names them as its front camera sees the table (its x grows towards that
camera, its y to that camera's right: "the left plate" has the smaller y); our brain names them
from behind the robot (left = +y, front = towards the robot). The layout is turned half a turn,
so every LIBERO direction word names the same object in our frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from frankenbot.errors import FrankenbotError
from frankenbot.eval.libero.bddl import BddlTask, Predicate, Region
from frankenbot.sim import fixtures as fx
from frankenbot.sim.families import SLOTS

# LIBERO's table-like surfaces (objects on them stand on our table)
TABLES = frozenset({"table", "main_table", "kitchen_table", "living_room_table", "study_table",
                    "floor"})


@dataclass(frozen=True)
class ObjectMapping:
    """A LIBERO category and what stands in for it: ``looks`` are groups of our catalogue
    instances in order of preference (a group holds the instances for a scene with several
    alike, e.g. three black bowls); ``words`` is what LIBERO calls it; ``how`` says how the
    stand-in differs."""

    words: str
    looks: tuple[tuple[str, ...], ...]
    how: str


OBJECT_MAP: dict[str, ObjectMapping] = {
    "akita_black_bowl": ObjectMapping("black bowl", (("black_bowl", "black_bowl_2",
                                                      "black_bowl_3"),),
                                      "our black bowl (13.6 cm across, 4.5 cm high)"),
    "plate": ObjectMapping("plate", (("white_plate", "white_plate_2"),),
                           "our white plate (18 cm across)"),
    "white_bowl": ObjectMapping("white bowl", (("white_bowl",),), "our small white bowl"),
    "glazed_rim_porcelain_ramekin": ObjectMapping(
        "ramekin", (("white_bowl",),), "a small white bowl (11.6 cm across) for the ramekin"),
    "cookies": ObjectMapping("cookie box", (("brown_box",),),
                             "a brown box (9 x 5.5 x 4 cm) for the cookie box"),
    "basket": ObjectMapping("basket", (("brown_basket",),), "our brown basket"),
    "wooden_tray": ObjectMapping("tray", (("gray_tray",),), "our gray tray for the wooden one"),
    "cream_cheese": ObjectMapping("cream cheese", (("blue_box",),),
                                  "a blue box (8.5 x 5.2 x 3.5 cm)"),
    "butter": ObjectMapping("butter", (("yellow_box", "yellow_box_2"),),
                            "a yellow box (7.5 x 4.5 x 3 cm)"),
    "chocolate_pudding": ObjectMapping("chocolate pudding", (("brown_box",),),
                                       "a brown box (9 x 5.5 x 4 cm)"),
    "alphabet_soup": ObjectMapping("alphabet soup", (("red_can",),), "a red can"),
    "tomato_sauce": ObjectMapping("tomato sauce", (("green_can",),), "a green can"),
    "milk": ObjectMapping("milk", (("white_carton",),), "a white carton"),
    "orange_juice": ObjectMapping("orange juice", (("orange_carton",),), "an orange carton"),
    "ketchup": ObjectMapping("ketchup", (("red_bottle",),), "a red bottle (14.5 cm, upright)"),
    "bbq_sauce": ObjectMapping("bbq sauce", (("purple_bottle",),),
                               "a purple bottle lying on its side (16 cm)"),
    "salad_dressing": ObjectMapping("salad dressing", (("green_bottle",),),
                                    "a green bottle (21 cm, upright)"),
    "new_salad_dressing": ObjectMapping("salad dressing", (("green_bottle",),),
                                        "a green bottle (21 cm, upright)"),
    "wine_bottle": ObjectMapping("wine bottle", (("purple_bottle",),),
                                 "a purple bottle lying on its side (16 cm)"),
    "red_coffee_mug": ObjectMapping("red mug", (("red_mug",),), "our red mug"),
    "porcelain_mug": ObjectMapping("white mug", (("white_mug",),), "our white mug"),
    "white_yellow_mug": ObjectMapping("yellow and white mug", (("yellow_mug",),),
                                      "our yellow mug (one colour, not two)"),
    "moka_pot": ObjectMapping("moka pot", (("red_can", "red_can_2"),),
                              "a red can (6.6 cm across, 10 cm high): no spout or handle"),
    "chefmate_8_frypan": ObjectMapping("frying pan", (("black_bowl",),),
                                       "a black bowl (13.6 cm, 4.5 cm high): no handle"),
    "black_book": ObjectMapping("book", (("blue_box",),), "a blue box (8.5 x 5.2 x 3.5 cm)"),
    "yellow_book": ObjectMapping("book", (("yellow_box", "yellow_box_2"),),
                                 "a yellow box (7.5 x 4.5 x 3 cm)"),
    # a LIBERO fixture that is, for a relation, an open box on the table
    "desk_caddy": ObjectMapping("caddy", (("gray_bin",),),
                                "our gray bin (20 x 26 x 10 cm), no compartments: only as the "
                                "reference of 'to the right of the caddy'"),
}


@dataclass(frozen=True)
class FixtureMapping:
    """A LIBERO fixture kind: our fixture id (None: none of ours stands in), its regions onto
    our parts or the fixture itself (its top or cavity), and how it differs."""

    fid: str | None
    regions: dict[str, str]
    how: str
    unmapped: str = ""  # why its other regions cannot be represented


_CABINET_REGIONS = {"top_region": "top_drawer", "middle_region": "middle_drawer",
                    "bottom_region": "bottom_drawer", "top_side": "cabinet"}
FIXTURE_MAP: dict[str, FixtureMapping] = {
    "wooden_cabinet": FixtureMapping("cabinet", _CABINET_REGIONS,
                                     "our cabinet of three drawers (LIBERO's 'layers' and "
                                     "'regions' are its drawers; top_side its top)"),
    "white_cabinet": FixtureMapping("cabinet", _CABINET_REGIONS,
                                    "our (brown) cabinet of three drawers"),
    "flat_stove": FixtureMapping("stove", {"cook_region": "stove_burner"},
                                 "our stove: a knob lights one burner (cook_region)"),
    "microwave": FixtureMapping("microwave", {"heating_region": "microwave",
                                              "top_side": "microwave"},
                                "our hinged-door box (heating_region = its inside)"),
    "wooden_two_layer_shelf": FixtureMapping(
        "cabinet", {"top_side": "cabinet"},
        "our cabinet of three drawers stands in for the two-layer shelf: only its top",
        unmapped="our fixtures have no open shelf layers (the two-layer shelf's top_region "
                 "and bottom_region)"),
    "wine_rack": FixtureMapping(None, {}, "left out of the scene (no rack of ours)",
                                unmapped="no fixture or object of ours holds a bottle as a "
                                         "wine rack does"),
    "desk_caddy": FixtureMapping(None, {}, "an object: our gray bin",
                                 unmapped="no container of ours has compartments (the desk "
                                          "caddy's front/back/left/right compartments)"),
}

# LIBERO's direction words in region names -> our relations (the half turn keeps the words)
RELATION_OF = {"right": "right_of", "left": "left_of", "front": "in_front_of",
               "back": "behind", "behind": "behind"}

# initial fixture part states for LIBERO's init predicates
OPEN_DRAWER = 0.9 * fx.CAB_STROKE
OPEN_DOOR = 1.5  # rad (past the oracle's 1.2)
KNOB_ON = 1.2  # rad (the burner lights past fx.KNOB_ON)


class NotSetUp(FrankenbotError):
    """This task cannot be represented on our table (the message says why)."""


@dataclass(frozen=True)
class Start:
    """How one object starts: on a table region, on another object, on a fixture's top or a
    burner, or inside a drawer."""

    name: str  # our object
    kind: str  # table | on_object | on_fixture | in_drawer
    ref: str = ""  # our object / fixture / part it starts on or in
    region: Region | None = None  # the LIBERO table region (kind table)


@dataclass(frozen=True)
class MappedTask:
    """One LIBERO task set up on our table (without a layout: ``scenes.sample_scene``)."""

    task: BddlTask
    objects: dict[str, str]  # LIBERO instance -> our object
    fixtures: dict[str, str]  # LIBERO fixture instance -> our fixture id
    starts: tuple[Start, ...]
    states: dict[str, float]  # initial part states
    goal: str  # the goal expression over our scene
    names: dict[str, str]  # our object -> LIBERO's words for it
    notes: tuple[str, ...] = field(default=())  # approximations and scenery left out


# ------------------------------------------------------------------------------ mapping
def _assign_objects(task: BddlTask) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """LIBERO instances -> our catalogue objects; different LIBERO categories never share a
    look (colour and category), so their names stay unambiguous."""
    from frankenbot.sim import layout

    by_cat: dict[str, list[str]] = {}
    for inst, cat in task.objects.items():
        by_cat.setdefault(cat, []).append(inst)
    for inst, cat in task.fixtures.items():
        if cat == "desk_caddy":
            by_cat.setdefault(cat, []).append(inst)
    out: dict[str, str] = {}
    names: dict[str, str] = {}
    notes: list[str] = []
    used_looks: set[tuple[str, str]] = set()
    for cat in sorted(by_cat, key=lambda c: (-len(by_cat[c]), c)):
        mapping = OBJECT_MAP.get(cat)
        if mapping is None:
            raise NotSetUp(f"no stand-in for LIBERO's {cat}")
        insts = sorted(by_cat[cat], key=_instance_number)
        for group in mapping.looks:
            look = (layout.OBJECT_BY_NAME[group[0]].colour, layout.OBJECT_BY_NAME[group[0]].shape)
            if len(group) >= len(insts) and look not in used_looks:
                used_looks.add(look)
                for inst, ours in zip(insts, group, strict=False):
                    out[inst] = ours
                    names[ours] = mapping.words
                notes.append(f"{cat} -> {', '.join(group[:len(insts)])}: {mapping.how}")
                break
        else:
            raise NotSetUp(f"no free stand-in for {len(insts)} x {cat} in this scene")
    return out, names, notes


def _why(cat: str) -> str:
    mapping = FIXTURE_MAP.get(cat)
    return (mapping.unmapped if mapping is not None and mapping.unmapped
            else "not representable on our table")


def _instance_number(inst: str) -> int:
    tail = inst.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else 0


class _Resolver:
    """Names of one task: LIBERO instances and regions -> our ids."""

    def __init__(self, task: BddlTask, objects: dict[str, str], fixtures: dict[str, str]
                 ) -> None:
        self.task, self.objects, self.fixtures = task, objects, fixtures

    def fixture_region(self, name: str) -> tuple[str, str]:
        """A region on a fixture -> (our id, LIBERO fixture category); NotSetUp if ours has no
        counterpart."""
        region = self.task.region(name)
        if region is None:
            raise NotSetUp(f"{name} is not a region of this task")
        cat = self.task.fixtures.get(region.target, self.task.objects.get(region.target, ""))
        if region.target in self.objects:  # a container object's contain_region
            if region.name == "contain_region":
                return self.objects[region.target], cat
            raise NotSetUp(f"{cat}'s {region.name}: {_why(cat)}")
        mapping = FIXTURE_MAP.get(cat)
        if mapping is None:
            raise NotSetUp(f"no fixture of ours for LIBERO's {cat}")
        ours = mapping.regions.get(region.name)
        if ours is None or mapping.fid is None:
            raise NotSetUp(f"{cat}'s {region.name}: {_why(cat)}")
        return ours, cat

    def thing(self, name: str) -> str:
        """A LIBERO object, fixture (whole) or fixture region -> our id."""
        if name in self.objects:
            return self.objects[name]
        if name in self.fixtures:
            return self.fixtures[name]
        if name in self.task.fixtures:
            cat = self.task.fixtures[name]
            raise NotSetUp(f"{cat}: {_why(cat)}")
        return self.fixture_region(name)[0]

    def table_relation(self, region: Region) -> tuple[str, str]:
        """A goal region on the table named after a thing and a side (plate_right_region,
        porcelain_mug_front_region, stove_front_region) -> (relation, our reference)."""
        parts = region.name.removesuffix("_region").split("_")
        if len(parts) < 2 or parts[-1] not in RELATION_OF:
            raise NotSetUp(f"goal region {region.name} on the table names no side of a thing")
        ref_words = "_".join(parts[:-1])
        candidates = [inst for inst, cat in {**self.task.objects, **self.task.fixtures}.items()
                      if cat == ref_words or cat.endswith("_" + ref_words)
                      or ref_words in cat.split("_")]
        if len(candidates) != 1:
            raise NotSetUp(f"goal region {region.name}: its reference {ref_words!r} matches "
                           f"{len(candidates)} things of the scene")
        return RELATION_OF[parts[-1]], self.thing(candidates[0])


def _goal_atom(p: Predicate, r: _Resolver) -> str:
    name = p.name
    if name in ("open", "close"):
        return f"{'open' if name == 'open' else 'closed'}({r.thing(p.args[0])})"
    if name in ("turnon", "turnoff"):
        return f"{'turned_on' if name == 'turnon' else 'turned_off'}({r.thing(p.args[0])})"
    if name not in ("on", "in") or len(p.args) != 2:
        raise NotSetUp(f"goal predicate {p} has no counterpart")
    obj = r.thing(p.args[0])
    if p.args[0] not in r.objects:
        raise NotSetUp(f"goal {p} moves a fixture")
    target = p.args[1]
    region = r.task.region(target)
    if region is not None and region.target in TABLES:
        relation, ref = r.table_relation(region)
        return f"{relation}({obj}, {ref})"
    ours = r.thing(target)
    return f"{name}({obj}, {ours})"


def _start(p: Predicate, r: _Resolver, states: dict[str, float]) -> Start | None:
    """One init predicate: an object's start (returned) or a fixture state (into ``states``)."""
    name = p.name
    if name in ("open", "close"):
        ours = r.thing(p.args[0])
        part = _stateful(ours)
        value = (OPEN_DOOR if part.endswith("_door") else OPEN_DRAWER) if name == "open" else 0.0
        states[part] = value
        return None
    if name in ("turnon", "turnoff"):
        ours = r.thing(p.args[0])
        if ours != "stove":
            raise NotSetUp(f"init {p}: only the stove is switched on at the start")
        states["stove_knob"] = KNOB_ON if name == "turnon" else 0.0
        return None
    if name not in ("on", "in") or len(p.args) != 2:
        raise NotSetUp(f"init predicate {p} has no counterpart")
    what, where = p.args
    if what in r.task.fixtures and r.task.fixtures[what] != "desk_caddy":
        return None  # fixtures stand at our slots
    obj = r.thing(what)
    region = r.task.region(where)
    if region is not None and region.target in TABLES:
        return Start(obj, "table", region=region)
    if where in r.objects:
        return Start(obj, "on_object", r.objects[where])
    ours = r.thing(where)
    if ours.endswith("_drawer"):
        return Start(obj, "in_drawer", ours)
    return Start(obj, "on_fixture", ours)


def _stateful(ours: str) -> str:
    return {"microwave": "microwave_door"}.get(ours, ours)


def map_task(task: BddlTask) -> MappedTask:
    """Set ``task`` up on our table, or NotSetUp with the reason."""
    fixtures: dict[str, str] = {}
    notes: list[str] = []
    for inst, cat in task.fixtures.items():
        if cat in TABLES or cat == "desk_caddy":
            continue
        mapping = FIXTURE_MAP.get(cat)
        if mapping is None:
            raise NotSetUp(f"no fixture of ours for LIBERO's {cat}")
        if mapping.fid is None:
            notes.append(f"{cat} {mapping.how}")
            continue
        if mapping.fid in fixtures.values():
            raise NotSetUp(f"two LIBERO fixtures would both be our {mapping.fid}")
        fixtures[inst] = mapping.fid
        notes.append(f"{cat} -> {mapping.fid} at its slot {SLOTS[mapping.fid]}: {mapping.how}")
    objects, names, obj_notes = _assign_objects(task)
    notes = obj_notes + notes
    r = _Resolver(task, objects, fixtures)
    goal = " and ".join(_goal_atom(p, r) for p in task.goal)
    states: dict[str, float] = {}
    starts = [s for s in (_start(p, r, states) for p in task.init) if s is not None]
    placed = {s.name for s in starts}
    missing = [ours for ours in objects.values() if ours not in placed]
    if missing:
        raise NotSetUp(f"no start for {', '.join(missing)}")
    return MappedTask(task, objects, fixtures, tuple(starts), states, goal, names,
                      tuple(notes))


def map_tasks(tasks: tuple[BddlTask, ...] | list[BddlTask]
              ) -> tuple[list[MappedTask], list[tuple[BddlTask, str]]]:
    """(set up, [(task, why not)]) for ``tasks``: every task lands in exactly one list."""
    done: list[MappedTask] = []
    skipped: list[tuple[BddlTask, str]] = []
    for t in tasks:
        try:
            done.append(map_task(t))
        except NotSetUp as e:
            skipped.append((t, str(e)))
    return done, skipped
