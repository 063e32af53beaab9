"""Build frames: symbolic acts + the scene -> task frames with every role bound to an id."""

from __future__ import annotations

from frankenbot.planner import lexicon as lx
from frankenbot.planner.frames import (
    Condition,
    Frame,
    InstructionNotUnderstood,
    ObjectNotResolved,
    Refusal,
    render_frames,
    tower_frame,
)
from frankenbot.planner.understanding.acts import Act, Ref
from frankenbot.planner.understanding.phrases import every
from frankenbot.planner.understanding.resolve import (
    CONTAINER_SHAPES,
    PICKABLE,
    Binding,
    colour_list,
    furniture_named,
    item,
    matching,
    note,
    opened_part,
    parts_of,
    relation_holds,
    resolve,
    resolve_set,
    say,
    switch_and_control,
)
from frankenbot.state import Scene, SceneObject


def bind(act: Act, ctx: Binding) -> list[Frame]:
    """One symbolic act -> frames with ids (pronoun and last-named state in ``ctx``)."""
    k = act.kind
    if k == "home":
        return [Frame("home")]
    if k == "locate":  # names what "it" means next; moves nothing by itself
        assert act.obj is not None
        ctx.last_item = item(act.obj, ctx)
        note(ctx, ctx.last_item)
        return []
    if k == "slot":  # "first A", "use A as the base", "finish with C": a column's block
        assert act.obj is not None
        if act.prep == "bottom":
            ctx.last_item = item(act.obj, ctx)
            note(ctx, ctx.last_item)
            return []
        if not ctx.building or ctx.last_item is None:
            raise ObjectNotResolved(f"{act.text!r}: on top of what? name the block below it",
                                    kind="ambiguous")
        return _bind_place("place", act.obj, Act("place", obj=act.obj, dest=Ref(
            "it", pronoun=True), prep="on", manner=act.manner, text=act.text), ctx)
    if k == "either":  # several readings of one clause: the scene must leave exactly one
        return _one_reading(act, ctx)
    if k == "carry":  # carried somewhere the next clause names (check.py insists it does)
        assert act.obj is not None
        o = item(act.obj, ctx)
        ctx.last_item = o
        note(ctx, o)
        return [Frame("carry", (("obj", o.object_id),), manner=act.manner)]
    if k == "grip":  # gripping a drawer's handle is how the next clause opens or closes it
        assert act.obj is not None
        ctx.last_container = resolve(act.obj, ctx, "openable")
        return []
    if k == "sort":
        return [Frame("sort_by_colour", manner=act.manner)]
    if k == "clear":
        dest = (resolve(act.dest, ctx, "container") if act.dest is not None
                else resolve(Ref(f"the {lx.DISCARD_SHAPE}", shape=lx.DISCARD_SHAPE), ctx,
                             "container"))
        if dest.shape not in CONTAINER_SHAPES or dest.shape in lx.PUSH_TARGETS:
            raise ObjectNotResolved(f"{dest.object_id} is not a container", kind="impossible")
        ctx.last_container = dest
        return [Frame("clear_table", (("target", dest.object_id),), manner=act.manner)]
    if k in ("open", "close"):
        assert act.obj is not None
        d = opened_part(resolve(act.obj, ctx, "openable"), ctx.scene)
        if d.shape not in lx.OPENABLE:
            raise ObjectNotResolved(f"{d.object_id} cannot be opened or closed",
                                    kind="impossible")
        ctx.last_container = d
        opening, closing, role = lx.OPENABLE[d.shape]
        return [Frame(opening if k == "open" else closing, ((role, d.object_id),),
                      manner=act.manner)]
    if k == "switch":  # "turn on the light", "switch the stove off"
        assert act.obj is not None
        target = resolve(act.obj, ctx, "switched")
        ctx.last_container = target  # "turn on the stove and put the pot on it"
        switched, control = switch_and_control(target, ctx.scene)  # a stove: its burner
        return [_switch_frame(act.prep, switched.object_id, control.object_id, act.manner)]
    if k == "operate":  # "press the button", "flip the switch", "turn the knob on"
        assert act.obj is not None
        control = resolve(act.obj, ctx, "control")
        how = lx.CONTROL_SHAPES.get(control.shape, "")
        if act.prep:  # a way was said: what the control switches, that way
            part = next((o for o in ctx.scene.objects if o.object_id in control.controls), None)
            if part is None:
                raise ObjectNotResolved(f"{say(control)} switches nothing the scene lists",
                                        kind="impossible")
            return [_switch_frame(act.prep, part.object_id, control.object_id, act.manner)]
        if how == "turn":
            raise ObjectNotResolved(f"{act.text!r}: which way, and how far? say e.g. 'turn "
                                    "the stove on' or 'turn the stove off'", kind="ambiguous")
        if not how:
            raise ObjectNotResolved(f"{say(control)} is not a control", kind="impossible")
        return [Frame(how, (("obj", control.object_id),), manner=act.manner)]
    if k == "pick":
        assert act.obj is not None
        if act.obj.items:
            raise Refusal("the robot holds one block at a time", kind="impossible",
                          suggestion=f"pick up {act.obj.items[0].text}")
        o = item(act.obj, ctx)
        ctx.last_item = o
        note(ctx, o)
        return [Frame("pick_up", (("obj", o.object_id),), manner=act.manner)]
    if k == "tower":
        if len(act.tower) == 1:
            raise ObjectNotResolved(f"{act.tower[0].text!r}: in which order? name the block "
                                    "at the bottom, in the middle and on top", kind="ambiguous")
        objs = []
        named = [r for r in act.tower if not r.remaining]
        for r in named:
            o = item(r, ctx)
            objs.append(o)
            note(ctx, o)
        full = []
        it = iter(objs)
        for r in act.tower:
            full.append(item(r, ctx) if r.remaining else next(it))
        ids = [o.object_id for o in full]
        if len(set(ids)) != len(ids):
            raise ObjectNotResolved(f"a tower needs distinct blocks, got {', '.join(ids)}",
                                    kind="impossible")
        if not act.ordered:  # the words name the blocks, not which end is down: ask
            raise ObjectNotResolved(
                f"which block goes at the bottom: {colour_list(full)}? The words name the "
                "tower's blocks but not its order; say e.g. "
                f"'{say(full[0])} at the bottom, then {say(full[1])}, ...' or "
                "'... from the bottom up'", kind="ambiguous", candidates=tuple(ids))
        ctx.last_item = full[-1]
        return [tower_frame(ids, act.manner)]
    if k in ("place", "push"):
        assert act.obj is not None and act.dest is not None
        if k == "place" and every(act.obj) and not act.dest.pronoun and not act.dest.match \
                and act.dest.shape not in PICKABLE:  # every block into a container
            return bind(Act("clear", dest=act.dest, manner=act.manner, text=act.text), ctx)
        out: list[Frame] = []
        for r in act.obj.items or (act.obj,):
            if r.quantifier == "all" and not r.pronoun and not r.superlative:  # each, by id
                for o in resolve_set(r, ctx):
                    out += _bind_place(k, Ref(say(o), object_id=o.object_id), act, ctx)
            else:
                out += _bind_place(k, r, act, ctx)
        return out
    if k == "if":
        return [_bind_if(act, ctx)]
    raise InstructionNotUnderstood(f"unsupported act {k}")  # pragma: no cover


def _housing_top(part: SceneObject, ctx: Binding) -> SceneObject:
    """The fixture whose top is meant by "on" a part of it (a drawer of a cabinet); refused
    when the scene has no such fixture (nothing rests on a drawer itself)."""
    for o in sorted(ctx.scene.objects, key=lambda o: o.object_id):
        if o.shape in lx.SUPPORT_SHAPES and o.is_fixture and any(
                p.object_id == part.object_id for p in parts_of(o, ctx.scene, (part.shape,))):
            return o
    raise ObjectNotResolved(f"nothing can be put on {say(part)}: in it, or on the furniture "
                            "it belongs to?", kind="ambiguous")


def _switch_frame(way: str, target: str, control: str, manner: str) -> Frame:
    if way not in ("on", "off"):
        raise ObjectNotResolved(f"switch {target} on or off?", kind="ambiguous")
    return Frame("switch_on" if way == "on" else "switch_off",
                 (("target", target), ("control", control)), manner=manner)


def _one_reading(act: Act, ctx: Binding) -> list[Frame]:
    """Bind each reading on a copy of the context; exactly one distinct result may remain
    ("stack A on B on C": a column, unless B already sits on C). Several: ask."""
    done: list[tuple[list[Frame], Binding]] = []
    refused: list[Refusal] = []
    for alt in act.then:
        trial = ctx.fork()
        try:
            done.append((bind(alt, trial), trial))
        except Refusal as e:
            refused.append(e)
    if not done:
        raise refused[0]
    readings = {render_frames(f): f for f, _ in done}
    if len(readings) > 1 and not _same_end(list(readings.values()), ctx.scene):
        raise ObjectNotResolved(f"{act.text!r} can be read as: " + "; or ".join(readings)
                                + ". Which one?", kind="ambiguous")
    # readings that end in the same arrangement are one: the one that moves least
    frames, trial = min(done, key=lambda d: len(_goals(d[0]) or ()))
    ctx.adopt(trial)
    return frames


def _goals(frames: list[Frame]) -> frozenset[tuple[str, str, str]] | None:
    """The relations frames make true (None when some frame is not a placement)."""
    out: set[tuple[str, str, str]] = set()
    for f in frames:
        r = dict(f.roles)
        if f.task == "stack":
            out.add(("on", r["obj"], r["target"]))
        elif f.task in ("put_in", "push_to_zone"):
            out.add(("in_or_on", r["obj"], r["target"]))
        elif f.task == "tower":
            ids = [v for _k, v in f.roles]
            out |= {("on", up, down) for down, up in zip(ids, ids[1:], strict=False)}
        else:
            return None
    return frozenset(out)


def _same_end(readings: list[list[Frame]], scene: Scene) -> bool:
    """Do all readings end in the same arrangement, given what already holds? ("stack C on B
    on A" mid-tower, B already on A: the column and "C on the B that is on A" are one.)"""
    ends = []
    for frames in readings:
        goals = _goals(frames)
        if goals is None:
            return False
        ends.append(goals)
    union = frozenset().union(*ends)
    held = {g for g in union if relation_holds(g[0], g[1], g[2], scene)}
    return len({e | held for e in ends}) == 1


def _bind_place(k: str, ref: Ref, act: Act, ctx: Binding) -> list[Frame]:
    assert act.dest is not None
    obj = item(ref, ctx)
    note(ctx, obj)
    dref = act.dest
    if dref.match:  # "the bowl that matches it": the container of the item's own colour
        target = matching(dref, obj, ctx)
    elif dref.pronoun:
        prev = ctx.last_item
        if act.prep == "on" and prev is not None and prev.object_id != obj.object_id:
            target = prev
        else:
            target = resolve(dref, ctx, "container")
    elif act.prep == "on" and not dref.shape:
        target = resolve(dref, ctx, "item")
    else:
        role = "push_target" if k == "push" and not dref.shape else (
            "item" if dref.shape in PICKABLE and dref.shape not in CONTAINER_SHAPES
            else "container")
        try:
            target = resolve(dref, ctx, role)
        except ObjectNotResolved:
            # "on top of the cabinet": the furniture, though the word means a drawer of it
            # when opened ("open the cabinet")
            furniture = furniture_named(dref, ctx) if act.prep == "on" else None
            if furniture is None:
                raise
            target = furniture
    if target.object_id == obj.object_id:
        raise ObjectNotResolved(f"cannot put {obj.object_id} on or in itself", kind="impossible")
    if act.prep == "on" and target.shape == "drawer":  # "on top of it": the drawer's cabinet
        target = _housing_top(target, ctx)
    ctx.last_item = obj
    note(ctx, obj, target)
    roles = (("obj", obj.object_id), ("target", target.object_id))
    if target.shape in lx.PUSH_TARGETS:
        return [Frame("push_to_zone", roles, manner=act.manner or "push")]
    if k == "push":
        raise ObjectNotResolved(
            f"the robot can push blocks into the zone only, not into {target.object_id}",
            kind="impossible", suggestion=f"put {say(obj)} in {say(target)}")
    if target.shape in CONTAINER_SHAPES:
        ctx.last_container = target
        return [Frame("put_in", roles, manner=act.manner)]
    if target.shape in PICKABLE or target.shape in lx.SUPPORT_SHAPES:
        if act.prep == "in":
            raise ObjectNotResolved(f"{target.object_id} is a {target.shape}, not a container: "
                                    "nothing goes in it", kind="impossible",
                                    suggestion=f"stack {say(obj)} on {say(target)}")
        return [Frame("stack", roles, manner=act.manner)]
    raise ObjectNotResolved(f"{target.object_id} ({target.shape}) is not a container",
                            kind="impossible")


def _bind_if(act: Act, ctx: Binding) -> Frame:
    assert act.cond is not None
    kind, subj, other, neg = act.cond
    then: list[Frame] = []
    if act.postfix:  # "put X in the bowl if it is empty": "it" is the bowl
        for a in act.then:
            then += bind(a, ctx)
    role = {"empty": "container", "drawer_open": "openable"}.get(kind, "item")
    s = resolve(subj, ctx, role)
    if role in ("container", "openable"):
        if s.shape not in CONTAINER_SHAPES:
            raise ObjectNotResolved(f"{s.object_id} cannot be empty or full", kind="impossible")
        ctx.last_container = s
    else:
        ctx.last_item = s
    args: tuple[str, ...] = (s.object_id,)
    if kind in ("in", "on") and other is not None:
        o = resolve(other, ctx, "container" if kind == "in" else "item")
        if kind == "in":
            ctx.last_container = o
        args = (s.object_id, o.object_id)
    if not act.postfix:
        for a in act.then:
            then += bind(a, ctx)
    otherwise: list[Frame] = []
    for a in act.otherwise:
        otherwise += bind(a, ctx)
    return Frame("if", condition=Condition(kind, args, neg), then=tuple(then),
                 otherwise=tuple(otherwise))


def bind_all(acts: list[Act], scene: Scene) -> tuple[list[Frame], Binding]:
    """Every act bound in order (pronouns and the last-named objects carry over)."""
    ctx = Binding(scene)
    frames: list[Frame] = []
    for i, a in enumerate(acts):
        before = len(frames)
        try:
            frames += bind(a, ctx)
        except ObjectNotResolved as e:
            # "close the drawer after putting X inside it": a clause done first may point at
            # what the clause after it names
            if "nothing mentioned before" not in e.reason or i + 1 >= len(acts):
                raise
            ahead = Binding(scene)
            try:
                bind(acts[i + 1], ahead)
            except Refusal:
                raise e from None
            ctx.last_item = ctx.last_item or ahead.last_item
            ctx.last_container = ctx.last_container or ahead.last_container
            frames += bind(a, ctx)
        if len(frames) > before:
            ctx.building = frames[-1].task in ("stack", "tower")
        elif a.kind == "slot":
            ctx.building = True
    return frames, ctx
