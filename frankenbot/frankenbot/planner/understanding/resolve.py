"""Resolve references against the scene: symbolic object phrases -> scene objects.

Colour words map to the scene's colours, pronouns to what was named before, superlatives
and "closest to" to the ranked candidates; the ambiguous and the absent are refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from frankenbot.planner import lexicon as lx
from frankenbot.planner.frames import ObjectNotResolved, ObjectNotSeen, Refusal
from frankenbot.planner.understanding.acts import Ref
from frankenbot.program import predicates
from frankenbot.shapes import UNKNOWN as UNKNOWN_SHAPE
from frankenbot.state import Scene, SceneObject, WorldSnapshot

PICKABLE = lx.PICKABLE_SHAPES
CONTAINER_SHAPES = lx.CONTAINER_SHAPES


@dataclass
class Binding:
    scene: Scene
    last_item: SceneObject | None = None
    last_container: SceneObject | None = None
    named: list[str] = field(default_factory=list)
    building: bool = False  # the act before built a column (a stack, a tower, its base)

    def fork(self) -> "Binding":
        """A copy to try one reading on; ``adopt`` takes it back if the reading binds."""
        return replace(self, named=list(self.named))

    def adopt(self, other: "Binding") -> None:
        self.last_item, self.last_container = other.last_item, other.last_container
        self.named, self.building = list(other.named), other.building


def _volume(o: SceneObject) -> float:
    return o.size[0] * o.size[1] * o.size[2]


def colour_list(objs: list[SceneObject], conj: str = "or") -> str:
    names = [o.colour or o.object_id for o in objs]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" {conj} " + names[-1]


def _noun(shape: str) -> str:
    return shape or "object"


def resolve(ref: Ref, ctx: Binding, role: str) -> SceneObject:
    """The one scene object ``ref`` means in ``role`` (item | container | push_target |
    openable: the lexicon's kinds of object)."""
    scene = ctx.scene
    if ref.pronoun:
        found = (ctx.last_container if role in ("container", "openable", "push_target")
                 else ctx.last_item)
        if found is None and role == "openable":
            found = next((o for o in scene.objects if o.shape in lx.OPENABLE), None)
        if found is None:
            raise ObjectNotResolved(f"{ref.text!r}: nothing mentioned before that it could mean",
                                    kind="ambiguous")
        return found
    if ref.items:
        raise ObjectNotResolved(f"{ref.text!r} names several objects here", kind="ambiguous")
    if ref.object_id:
        obj = scene.get(ref.object_id)
        if obj is None:
            raise ObjectNotSeen(f"{ref.object_id!r} is not in the scene "
                                f"({', '.join(scene.ids()) or 'nothing'})")
        return obj
    if ref.self_ref:
        raise Refusal("handing things over or moving to a person is not something the robot "
                      "does", kind="out_of_scope")
    cands, noun = candidates(ref, ctx, role)
    if ref.remaining:
        cands = [o for o in cands if o.object_id not in ctx.named]
        if len(cands) == 1:
            return cands[0]
        raise ObjectNotResolved(f"{ref.text!r} could be {len(cands)} blocks; which block: "
                                f"{colour_list(cands)}?", kind="ambiguous",
                                candidates=tuple(o.object_id for o in cands))
    if ref.superlative:
        return _superlative(ref, cands, ctx, noun)
    if len(cands) == 1 or ref.quantifier == "a" and len({o.colour for o in cands}) == 1:
        return cands[0]
    if ref.quantifier == "a":
        return cands[0]
    raise ObjectNotResolved(
        f"{ref.text!r} is ambiguous: which {noun}: {colour_list(cands)}?",
        kind="ambiguous", candidates=tuple(o.object_id for o in cands))


ROLE_SHAPES: dict[str, tuple[str, ...]] = {
    "item": lx.ITEM_SHAPES, "container": CONTAINER_SHAPES, "push_target": lx.PUSH_TARGETS,
    "openable": tuple(lx.OPENABLE), "switched": lx.SWITCHED_SHAPES,
    "control": tuple(lx.CONTROL_SHAPES)}
ROLE_NOUNS = {"item": "block", "container": "container", "push_target": lx.PUSH_TARGETS[0],
              "openable": "drawer", "switched": "light", "control": "control"}


def _shapes(ref: Ref, role: str, scene: Scene | None = None) -> tuple[str, ...]:
    """The shapes ``ref`` may mean in ``role``: the one it names (or, when the scene has none
    of that category, what the same word means in the first world: lexicon.SHAPE_FALLBACKS),
    else the role's."""
    if ref.shape:
        if scene is not None and not any(o.shape == ref.shape for o in scene.objects):
            return (ref.shape, *lx.SHAPE_FALLBACKS.get(ref.shape, ()))
        return (ref.shape,)
    return ROLE_SHAPES[role]


def candidates(ref: Ref, ctx: Binding, role: str) -> tuple[list[SceneObject], str]:
    """The scene objects ``ref``'s words fit in ``role`` (shape, colour, relation), sorted by
    id, and the noun to ask with; refuses when none fits."""
    scene = ctx.scene
    of_shape = sorted((o for o in scene.objects if o.shape in _shapes(ref, role, scene)),
                      key=lambda o: o.object_id)
    noun = _noun(ref.shape or ROLE_NOUNS[role])
    if ref.position:  # "the top drawer": the part its fixture's map names by that position
        placed = [o for o in of_shape if ref.position in o.label.split()
                  or ref.position in o.object_id.split("_")]
        if not placed:
            raise ObjectNotSeen(
                f"there is no {ref.position} {noun} in the scene"
                + (f" (it has: {', '.join(say(o) for o in of_shape)})" if of_shape else ""),
                candidates=tuple(o.object_id for o in of_shape))
        of_shape = placed
        noun = f"{ref.position} {noun}"
    if ref.name_words:  # "the cookie box": a box whose taught name says so
        of_shape = [o for o in of_shape
                    if set(ref.name_words) <= set(o.label.lower().split())]
        noun = " ".join((*ref.name_words, noun) if ref.shape else ref.name_words)
        if not of_shape:
            raise ObjectNotSeen(f"there is no {noun} in view "
                                f"({', '.join(scene.ids()) or 'nothing'})")
    cands = of_shape
    if ref.colour:
        tiers = lx.COLOUR_WORDS.get(ref.colour, (ref.colour,))
        cands = [o for o in of_shape if o.colour in tiers]
        if not cands:
            have = colour_list(of_shape, "and") if of_shape else ""
            raise ObjectNotSeen(
                f"there is no {ref.colour} {noun} in the scene"
                + (f" (it has {len(of_shape)} {noun}{'s' if len(of_shape) > 1 else ''}: "
                   f"{have})" if have else f" ({', '.join(scene.ids()) or 'nothing'})"),
                candidates=tuple(o.object_id for o in of_shape))
    if not cands and ref.quantifier != "all":
        raise ObjectNotSeen(f"there is no {ref.text!r} in the scene "
                            f"({', '.join(scene.ids()) or 'nothing'})")
    if ref.where is not None:
        cands = _where(ref, cands, ctx, noun)
    return cands, noun


_RELATION_WORDS = {"in": "in", "on": "on", "in_or_on": "on or in"}


def _where(ref: Ref, cands: list[SceneObject], ctx: Binding, noun: str) -> list[SceneObject]:
    """Keep the candidates that stand in ``ref.where``'s relation to its anchor, on the scene
    as perceived now (the program's own predicates judge it)."""
    assert ref.where is not None
    rel, anchor_ref = ref.where
    try:
        anchor = _anchor(anchor_ref, ctx)
    except ObjectNotResolved as e:
        if rel == "in" or e.kind == "ambiguous":
            raise
        # "the bowl on the cookie box" where no box is seen: the box may be the thing under
        # the bowl that the bowl hides. One candidate resting on something unseen is meant
        # (an unknown thing of the colour said counts too: seen askew on its hidden support,
        # the thing meant may not be recognised); none or several, and the anchor's absence
        # stands.
        unknown = _unknown_of_colour(ref, ctx)
        hidden_under = [o for o in (*cands, *unknown) if on_something_unseen(o, ctx.scene)]
        if len(hidden_under) > 1:
            # several stand on hidden things: the one with an unrecognised thing peeking out
            # from under it (the named thing's visible edge) is meant
            hidden_under = [o for o in hidden_under
                            if any(_peeks_out_under(u, o) for u in ctx.scene.objects
                                   if u.shape == UNKNOWN_SHAPE and u not in hidden_under)]
        if len(hidden_under) == 1:
            return hidden_under
        raise
    kept = [o for o in cands if o.object_id != anchor.object_id
            and relation_holds(rel, o.object_id, anchor.object_id, ctx.scene)]
    if kept or ref.quantifier == "all" and not ref.colour and not ref.shape:
        return kept
    if ref.quantifier != "all":
        # none of the named kind stands there, but one thing the camera could not name, of
        # the colour said, does: seen askew or far off, the thing meant may not be recognised
        unnamed = [o for o in _unknown_of_colour(ref, ctx) if o.object_id != anchor.object_id
                   and relation_holds(rel, o.object_id, anchor.object_id, ctx.scene)]
        if len(unnamed) == 1:
            return unnamed
    said = _RELATION_WORDS[rel]
    if len(cands) == 1:
        raise ObjectNotResolved(f"{say(cands[0])} is not {said} {say(anchor)} (as the camera "
                                "sees it now)", kind="impossible")
    raise ObjectNotResolved(f"there is no {noun} {said} {say(anchor)} (as the camera sees it "
                            "now)", kind="impossible")


def _unknown_of_colour(ref: Ref, ctx: Binding) -> list[SceneObject]:
    """The unrecognised objects that may be what ``ref`` names: of the colour it says (any,
    when it says none), where it names a kind of object at all."""
    if not ref.shape:
        return []
    tiers = lx.COLOUR_WORDS.get(ref.colour, (ref.colour,)) if ref.colour else ()
    return [o for o in ctx.scene.objects if o.shape == UNKNOWN_SHAPE
            and (not tiers or o.colour in tiers)]


def _anchor(ref: Ref, ctx: Binding) -> SceneObject:
    """What a relation is judged against ("on the cabinet"): any object, or the piece of
    furniture itself where its word means one of its parts elsewhere ("open the cabinet": a
    drawer; "the bowl on the cabinet": the cabinet)."""
    try:
        return any_object(ref, ctx)
    except ObjectNotResolved:
        furniture = furniture_named(ref, ctx)
        if furniture is None:
            raise
        return furniture


def furniture_named(ref: Ref, ctx: Binding) -> SceneObject | None:
    """The one piece of furniture in the scene a furniture word of ``ref`` names ("the
    cabinet" where the scene has a cabinet), else None."""
    words = set(ref.text.split())
    found = [o for o in ctx.scene.objects if o.is_fixture and not ref.position
             and (o.shape in words & set(lx.HOUSING_WORDS) or o.object_id in words)]
    return found[0] if len(found) == 1 else None


UNSEEN_SUPPORT_Z = 0.02  # m: an object's bottom this far over the table stands on something


def on_something_unseen(o: SceneObject, scene: Scene) -> bool:
    """Does ``o`` stand well over the table on nothing the scene holds (a box its rim hides
    from the camera)? Never for what the gripper holds."""
    if o.is_fixture or o.position[2] - o.size[2] / 2.0 < UNSEEN_SUPPORT_Z:
        return False
    snap = WorldSnapshot(scene=scene)
    objs = {x.object_id: x for x in scene.objects}
    if predicates.holding(snap, objs, o.object_id):
        return False
    return not any(relation_holds("in_or_on", o.object_id, b.object_id, scene)
                   for b in scene.objects if b.object_id != o.object_id)


def _peeks_out_under(u: SceneObject, o: SceneObject) -> bool:
    """Is ``u`` seen under ``o``: its top below ``o``'s bottom and its footprint's centre within
    ``o``'s outline grown by half ``u``'s smaller extent (only its edge shows)?"""
    if u.is_fixture or u.top_z > o.position[2] - o.size[2] / 2.0 + 0.005:
        return False
    reach = max(o.size[0], o.size[1]) / 2.0 + min(u.size[0], u.size[1]) / 2.0
    return o.xy_distance(u) < reach


def relation_holds(rel: str, a: str, b: str, scene: Scene) -> bool:
    """Does ``a`` stand ``rel`` (in | on | in_or_on) ``b`` in the scene as perceived now? The
    program's own predicates judge it, so reading and run-time checks agree."""
    snap = WorldSnapshot(scene=scene)
    objs = {o.object_id: o for o in scene.objects}
    if a not in objs or b not in objs:
        return False
    inside = predicates.inside(snap, objs, a, b)
    upon = predicates.on(snap, objs, a, b)
    return {"in": inside, "on": upon or inside and objs[b].shape in lx.FLAT_SHAPES,
            "in_or_on": inside or upon}[rel]


def any_object(ref: Ref, ctx: Binding) -> SceneObject:
    """A reference object of any shape: an item first, else a container or fixture."""
    try:
        return resolve(ref, ctx, "item")
    except ObjectNotResolved:
        return resolve(ref, ctx, "container")


def resolve_set(ref: Ref, ctx: Binding) -> list[SceneObject]:
    """The blocks a quantified phrase means ("every block except the red one", "whatever is
    on the plate", "all the other blocks", "both blocks"), sorted by id; refuses an empty set
    and a count the scene does not have."""
    cands, noun = candidates(ref, ctx, "item")
    cands = [o for o in cands if o.shape in PICKABLE]
    if ref.remaining:
        cands = [o for o in cands if o.object_id not in ctx.named]
    for out in ref.exclude:
        gone = item(out, ctx)
        cands = [o for o in cands if o.object_id != gone.object_id]
    if not cands:
        where = (f" {_RELATION_WORDS[ref.where[0]]} {say(any_object(ref.where[1], ctx))}"
                 if ref.where is not None else "")
        raise ObjectNotResolved(f"{ref.text!r}: nothing{where} fits (as the camera sees it "
                                "now)", kind="impossible")
    if ref.count and len(cands) != ref.count:
        raise ObjectNotResolved(f"{ref.text!r} says {ref.count}, but {len(cands)} "
                                f"{noun}{'s' if len(cands) != 1 else ''} fit: "
                                f"{colour_list(cands, 'and')}", kind="ambiguous",
                                candidates=tuple(o.object_id for o in cands))
    return cands


def _superlative(ref: Ref, cands: list[SceneObject], ctx: Binding, noun: str) -> SceneObject:
    import math

    origin = (0.0, 0.0)
    if ref.superlative in ("near", "between"):
        # "the bowl next to the plate", "the bowl between the plate and the cup": the anchors
        # may be of any kind, and are never the object meant
        anchors = [any_object(a, ctx) for a in (ref.relative_to.items if ref.relative_to
                                                 is not None else ())
                   or (ref.relative_to,) if a is not None]
        origin = (sum(a.position[0] for a in anchors) / len(anchors),
                  sum(a.position[1] for a in anchors) / len(anchors))
        ids = {a.object_id for a in anchors}
        cands = [o for o in cands if o.object_id not in ids]
    elif ref.superlative == "central":  # the middle of everything on the table
        xs = [x for o in ctx.scene.objects for x in (o.position[0] - o.size[0] / 2,
                                                     o.position[0] + o.size[0] / 2)]
        ys = [y for o in ctx.scene.objects for y in (o.position[1] - o.size[1] / 2,
                                                     o.position[1] + o.size[1] / 2)]
        origin = ((min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2)
    elif ref.superlative == "middle":  # "the middle bowl": the one amid the others
        origin = (sum(o.position[0] for o in cands) / len(cands),
                  sum(o.position[1] for o in cands) / len(cands))
    elif ref.relative_to is not None:
        anchor = resolve(ref.relative_to, ctx, "container")
        origin = (anchor.position[0], anchor.position[1])
        cands = [o for o in cands if o.object_id != anchor.object_id] or cands
    if not cands:
        raise ObjectNotResolved(f"there is no {noun} {ref.text!r} could mean, other than what "
                                "it is said to be near", kind="impossible")

    def dist(o: SceneObject) -> float:
        return math.hypot(o.position[0] - origin[0], o.position[1] - origin[1])

    keys: dict[str, Callable[[SceneObject], float]] = {
        "largest": lambda o: -_volume(o), "smallest": _volume, "closest": dist, "near": dist,
        "between": dist, "central": dist, "middle": dist,
        "farthest": lambda o: -dist(o), "leftmost": lambda o: -o.position[1],
        "rightmost": lambda o: o.position[1], "tallest": lambda o: -o.size[2],
    }
    key = keys[ref.superlative]
    ranked = sorted(cands, key=lambda o: (key(o), o.object_id))
    if len(ranked) > 1:
        a, b = key(ranked[0]), key(ranked[1])
        tol = 0.1 * abs(a) if ref.superlative in ("largest", "smallest", "tallest") else 0.002
        if abs(a - b) <= tol:
            raise ObjectNotResolved(
                f"{ref.text!r} is ambiguous: {ranked[0].object_id} and {ranked[1].object_id} "
                f"are about equally {ref.superlative}; which {noun}: "
                f"{colour_list(ranked[:2])}?", kind="ambiguous",
                candidates=(ranked[0].object_id, ranked[1].object_id))
    return ranked[0]


def item(ref: Ref, ctx: Binding) -> SceneObject:
    o = resolve(ref, ctx, "item")
    if o.shape not in PICKABLE:
        raise ObjectNotResolved(f"{o.object_id} is a {o.shape}; the robot cannot pick it up",
                                kind="impossible")
    return o


def parts_of(fixture: SceneObject, scene: Scene, shapes: tuple[str, ...]) -> list[SceneObject]:
    """The parts of ``fixture`` of ``shapes`` (a microwave's door, a stove's burner): named
    after it by the fixture map, or else standing within its footprint."""
    cands = [o for o in scene.objects if o.shape in shapes and o.object_id != fixture.object_id]
    named = [o for o in cands if o.object_id.startswith(fixture.object_id + "_")]
    if named:
        return sorted(named, key=lambda o: o.object_id)
    margin = 0.05
    return sorted((o for o in cands
                   if abs(o.position[0] - fixture.position[0]) <= fixture.size[0] / 2 + margin
                   and abs(o.position[1] - fixture.position[1]) <= fixture.size[1] / 2 + margin),
                  key=lambda o: o.object_id)


def opened_part(obj: SceneObject, scene: Scene) -> SceneObject:
    """What opening ``obj`` moves: itself (a drawer, a door) or its door (a microwave)."""
    part_shape = lx.OPENED_BY_PART.get(obj.shape)
    if part_shape is None:
        return obj
    parts = parts_of(obj, scene, (part_shape,))
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return obj  # the fixture's only door, as the primitives read it
    raise ObjectNotResolved(f"{say(obj)} has {len(parts)} {part_shape}s: which one: "
                            f"{', '.join(say(p) for p in parts)}?", kind="ambiguous",
                            candidates=tuple(p.object_id for p in parts))


def switch_and_control(target: SceneObject, scene: Scene,
                       prefer: str = "") -> tuple[SceneObject, SceneObject]:
    """(the part whose state says on or off, the control that switches it) for a light, a
    burner, a stove or a light panel, from the controls the fixture map lists; ``prefer``: a
    control kind the words named ("the switch")."""
    lit = [target] if target.shape in ("light", "burner") else parts_of(
        target, scene, ("light", "burner"))
    ids = {o.object_id for o in lit} | {target.object_id}
    controls = [o for o in sorted(scene.objects, key=lambda o: o.object_id)
                if o.shape in lx.CONTROL_SHAPES and ids & set(o.controls)]
    if not controls:
        raise ObjectNotResolved(f"nothing in the scene is known to switch {say(target)} (no "
                                "button, switch or knob lists it)", kind="impossible")
    order = list(lx.CONTROL_SHAPES)
    # a switch or knob is worked from its measured angle; a button needs none: with the angle
    # unmeasured (not seen well enough), the button of the same lamp is the one that can work
    controls.sort(key=lambda o: (o.shape != prefer,
                                 o.opening is None and lx.CONTROL_SHAPES[o.shape] != "press",
                                 order.index(o.shape)))
    c = controls[0]
    switched = next((o for o in lit if o.object_id in c.controls), lit[0] if lit else target)
    return switched, c


def note(ctx: Binding, *objs: SceneObject) -> None:
    for o in objs:
        if o.object_id not in ctx.named:
            ctx.named.append(o.object_id)


def say(o: SceneObject) -> str:
    return f"the {o.label}" if o.label else o.object_id


def matching(dest: Ref, obj: SceneObject, ctx: Binding) -> SceneObject:
    """The container ``dest`` describes by the item's colour ("the bowl that matches it")."""
    shapes = _shapes(dest, "container")
    found = [o for o in sorted(ctx.scene.objects, key=lambda o: o.object_id)
             if o.shape in shapes and obj.colour and o.colour == obj.colour]
    if len(found) == 1:
        return found[0]
    noun = _noun(dest.shape or "container")
    if not found:
        raise ObjectNotResolved(f"no {noun} matches {say(obj)} in colour", kind="impossible")
    raise ObjectNotResolved(f"several {noun}s match {say(obj)}: which {noun}: "
                            f"{colour_list(found)}?", kind="ambiguous",
                            candidates=tuple(o.object_id for o in found))
