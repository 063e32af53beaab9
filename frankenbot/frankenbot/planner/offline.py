"""The offline planner: instruction + perceived scene -> program text, deterministically.

It is the embedded default when no API key is configured and the rule-based baseline reported
beside the VLM. It understands the sim's ten task families (with paraphrases, synonyms and colour
words, see ``instruction.py``), resolves object phrases against the scene at planning time
("the largest block" becomes the id of the largest block perceived now), and writes programs with
verification loops (``if not in(x, y) { goto s1 max 2 }``) and monitors for losing the grasp in
transport. Conditions about the future ("if the bowl is empty") stay run-time predicates.

It cannot replan creatively: a tier-3 replan through it re-plans the original instruction from the
current scene (0 VLM calls).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from frankenbot.errors import PlannerError
from frankenbot.planner import instruction as ins
from frankenbot.state import Scene, SceneObject

PICKABLE = ("block", "unknown")
CONTAINER_SHAPES = ("bowl", "bin", "plate", "drawer", "zone")
VERIFY_RETRIES = 2  # how often a verification loop may go back and try a step again
HANDLER_RETRIES = 2


class ObjectNotResolved(PlannerError):
    """An object phrase names nothing (or several things) in the perceived scene."""


@dataclass
class _Context:
    """Resolution state while writing one program: pronoun targets and names in use."""

    scene: Scene
    last_item: SceneObject | None = None
    last_container: SceneObject | None = None
    labels: int = 0
    # (object id, primitive) -> goal predicates; one drop monitor per carried object
    carried: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def new_label(self) -> str:
        self.labels += 1
        return f"s{self.labels}"


def _volume(o: SceneObject) -> float:
    return o.size[0] * o.size[1] * o.size[2]


def _inside(obj: SceneObject, container: SceneObject) -> bool:
    """Rough geometric test: the object's centre lies over the container's footprint."""
    return (abs(obj.position[0] - container.position[0]) <= container.size[0] / 2.0
            and abs(obj.position[1] - container.position[1]) <= container.size[1] / 2.0
            and obj.object_id != container.object_id)


def _describe(scene: Scene) -> str:
    return ", ".join(scene.ids()) or "nothing"


def resolve(ref: ins.ObjectRef, ctx: _Context, role: str) -> SceneObject:
    """Find the one scene object an ObjectRef means. ``role``: item | container | zone | drawer."""
    scene = ctx.scene
    if ref.pronoun:
        found = ctx.last_container if role in ("container", "drawer", "zone") else ctx.last_item
        if found is None:
            raise ObjectNotResolved(f"{ref.text!r}: nothing mentioned before that it could mean")
        return found
    if ref.object_id:
        obj = scene.get(ref.object_id)
        if obj is None:
            raise ObjectNotResolved(f"{ref.object_id!r} is not in the scene ({_describe(scene)})")
        return obj
    shapes: tuple[str, ...]
    if ref.shape:
        shapes = (ref.shape,)
    else:
        shapes = {"item": PICKABLE, "container": CONTAINER_SHAPES, "zone": ("zone",),
                  "drawer": ("drawer",)}[role]
    cands = [o for o in scene.objects if o.shape in shapes
             and (not ref.colour or o.colour == ref.colour)]
    cands.sort(key=lambda o: o.object_id)
    if not cands:
        raise ObjectNotResolved(f"there is no {ref.text!r} in the scene ({_describe(scene)})")
    if ref.superlative:
        return _pick_superlative(ref, cands, ctx)
    if len(cands) == 1 or ref.quantifier == "a":
        return cands[0]
    raise ObjectNotResolved(
        f"{ref.text!r} is ambiguous: it could be {', '.join(o.object_id for o in cands)}; "
        "name one (e.g. by colour, or 'the largest', 'the closest')")


def _pick_superlative(ref: ins.ObjectRef, cands: list[SceneObject], ctx: _Context) -> SceneObject:
    origin = (0.0, 0.0)
    if ref.relative_to is not None:
        anchor = resolve(ref.relative_to, ctx, "container")
        origin = (anchor.position[0], anchor.position[1])
        cands = [o for o in cands if o.object_id != anchor.object_id] or cands

    def dist(o: SceneObject) -> float:
        return math.hypot(o.position[0] - origin[0], o.position[1] - origin[1])

    keys = {
        "largest": lambda o: -_volume(o), "smallest": _volume, "closest": dist,
        "farthest": lambda o: -dist(o), "leftmost": lambda o: -o.position[1],
        "rightmost": lambda o: o.position[1], "tallest": lambda o: -o.size[2],
    }
    key = keys[ref.superlative]
    ranked = sorted(cands, key=lambda o: (key(o), o.object_id))
    return ranked[0]


def _title(instruction: str) -> str:
    text = " ".join(instruction.replace("\\", " ").replace('"', "'").split())
    return text[:100] or "task"


def _monitor_dropped(ctx: _Context, obj: str, goal: str, primitive: str) -> None:
    """Note that ``obj`` is carried to ``goal`` by ``primitive`` (for its drop monitor)."""
    goals = ctx.carried.setdefault((obj, primitive), [])
    if goal not in goals:
        goals.append(goal)


def _monitors(ctx: _Context) -> list[str]:
    """Grasp lost while carrying an object (not held and at none of its goals): re-pick it and
    resume the interrupted placing primitive.

    Only for programs that carry one object: ``during`` scopes a monitor by primitive name, not
    by its arguments, so with several carried objects the monitor of one would fire while
    another is being placed. Multi-object programs rely on the executor's built-in grasp-lost
    monitor and its coded regrasp instead."""
    if len({obj for obj, _ in ctx.carried}) > 1:
        return []
    out = []
    for (obj, primitive), goals in ctx.carried.items():
        cond = " and ".join([f"not holding({obj})"] + [f"not {g}" for g in goals])
        name = f"{obj}_dropped" if primitive.startswith("place_in") else f"{obj}_dropped_on"
        out.append(f"  monitor {name} when {cond} during {primitive} {{\n"
                   f"    pick(obj={obj})\n    then resume\n  }}")
    return out


class _Writer:
    """Turns actions into statements (lists of lines, indented by the caller)."""

    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx

    def action(self, act: ins.Action, top: bool) -> list[str]:
        ctx = self.ctx
        if isinstance(act, ins.Pick):
            obj = resolve(act.obj, ctx, "item")
            ctx.last_item = obj
            return self._verified([f"pick(obj={obj.object_id})"],
                                  f"holding({obj.object_id})", top)
        if isinstance(act, ins.PutIn):
            return self._put(act.obj, act.container, top)
        if isinstance(act, ins.PlaceOn):
            obj = resolve(act.obj, ctx, "item")
            if act.target.pronoun:  # "on top of it": the block named before, else the container
                prev = ctx.last_item
                target = (prev if prev is not None and prev.object_id != obj.object_id
                          else resolve(act.target, ctx, "container"))
            else:
                target = resolve(act.target, ctx, "item")
            if target.shape in CONTAINER_SHAPES:
                return self._put_objects(obj, target, top)
            return self._place_on(obj, target, top)
        if isinstance(act, ins.Tower):
            objs = [resolve(r, ctx, "item") for r in act.objs]
            ids = [o.object_id for o in objs]
            if len(set(ids)) != len(ids):
                raise ObjectNotResolved(f"a tower needs distinct blocks, got {', '.join(ids)}")
            lines: list[str] = []
            for below, above in zip(objs, objs[1:], strict=False):
                lines += self._place_on(above, below, top)
            return lines
        if isinstance(act, ins.Sort):
            return self._sort(top)
        if isinstance(act, ins.Clear):
            return self._clear(act, top)
        if isinstance(act, ins.OpenDrawer):
            ctx.last_container = resolve(act.drawer, ctx, "drawer")
            d = ctx.last_container.object_id
            return self._verified([f"open_drawer(drawer={d})"], f"drawer_open({d})", top)
        if isinstance(act, ins.CloseDrawer):
            ctx.last_container = resolve(act.drawer, ctx, "drawer")
            d = ctx.last_container.object_id
            return self._verified([f"close_drawer(drawer={d})"], f"not drawer_open({d})", top)
        if isinstance(act, ins.Push):
            obj = resolve(act.obj, ctx, "item")
            zone = resolve(act.zone, ctx, "zone")
            ctx.last_item = obj
            return self._verified([f"push_to(obj={obj.object_id}, target={zone.object_id})"],
                                  f"in({obj.object_id}, {zone.object_id})", top)
        if isinstance(act, ins.Home):
            return ["home()"]
        if isinstance(act, ins.Conditional):
            return self._conditional(act)
        raise PlannerError(f"offline planner: unsupported action {act!r}")

    def _verified(self, steps: list[str], goal: str, top: bool) -> list[str]:
        """Steps then a bounded check that goes back once or twice (top level only)."""
        if not top:
            return steps
        label = self.ctx.new_label()
        negated = goal[4:] if goal.startswith("not ") else f"not {goal}"
        return [f"{label}:", *steps, f"if {negated} {{ goto {label} max {VERIFY_RETRIES} }}"]

    def _put(self, obj_ref: ins.ObjectRef, cont_ref: ins.ObjectRef, top: bool) -> list[str]:
        cont = resolve(cont_ref, self.ctx, "container")
        obj = resolve(obj_ref, self.ctx, "item")
        return self._put_objects(obj, cont, top)

    def _put_objects(self, obj: SceneObject, cont: SceneObject, top: bool) -> list[str]:
        ctx = self.ctx
        if cont.shape not in CONTAINER_SHAPES:
            raise ObjectNotResolved(f"{cont.object_id} ({cont.shape}) is not a container")
        ctx.last_item, ctx.last_container = obj, cont
        o, c = obj.object_id, cont.object_id
        pre: list[str] = []
        if cont.shape == "drawer":
            pre = [f"if not drawer_open({c}) {{", f"  open_drawer(drawer={c})", "}"]
        _monitor_dropped(ctx, o, f"in({o}, {c})", "place_in")
        return pre + self._verified([f"pick(obj={o})", f"place_in(obj={o}, container={c})"],
                                    f"in({o}, {c})", top)

    def _place_on(self, obj: SceneObject, target: SceneObject, top: bool) -> list[str]:
        ctx = self.ctx
        ctx.last_item = obj
        o, t = obj.object_id, target.object_id
        if o == t:
            raise ObjectNotResolved(f"cannot place {o} on itself")
        _monitor_dropped(ctx, o, f"on({o}, {t})", "place_on")
        return self._verified([f"pick(obj={o})", f"place_on(obj={o}, target={t})"],
                              f"on({o}, {t})", top)

    def _sort(self, top: bool) -> list[str]:
        scene = self.ctx.scene
        bowls = {b.colour: b for b in sorted(scene.objects, key=lambda o: o.object_id)
                 if b.shape == "bowl" and b.colour}
        lines: list[str] = []
        for block in sorted(scene.objects, key=lambda o: o.object_id):
            bowl = bowls.get(block.colour)
            if block.shape != "block" or bowl is None or _inside(block, bowl):
                continue
            lines += self._put(ins.ObjectRef(block.object_id, object_id=block.object_id),
                               ins.ObjectRef(bowl.object_id, object_id=bowl.object_id), top)
        if not lines and not bowls:
            raise ObjectNotResolved("sorting by colour needs coloured bowls; the scene has none "
                                    f"({_describe(scene)})")
        return lines

    def _clear(self, act: ins.Clear, top: bool) -> list[str]:
        scene = self.ctx.scene
        target = resolve(act.container, self.ctx, "container")
        lines: list[str] = []
        containers = [o for o in scene.objects if o.shape in ("bin", "drawer")]
        for block in sorted(scene.objects, key=lambda o: o.object_id):
            if block.shape != "block" or any(_inside(block, c) for c in containers):
                continue
            lines += self._put(ins.ObjectRef(block.object_id, object_id=block.object_id),
                               ins.ObjectRef(target.object_id, object_id=target.object_id), top)
        return lines

    def _conditional(self, act: ins.Conditional) -> list[str]:
        cond = act.cond
        role = {"empty": "container", "drawer_open": "drawer"}.get(cond.kind, "item")
        subject = resolve(cond.subject, self.ctx, role)
        if role in ("container", "drawer"):
            self.ctx.last_container = subject
        else:
            self.ctx.last_item = subject
        s = subject.object_id
        if cond.kind in ("in", "on"):
            assert cond.other is not None
            other = resolve(cond.other, self.ctx, "container" if cond.kind == "in" else "item")
            if cond.kind == "in":
                self.ctx.last_container = other
            pred = f"{cond.kind}({s}, {other.object_id})"
        else:
            pred = f"{cond.kind}({s})"
        if cond.negated:
            pred = f"not {pred}"
        then_lines: list[str] = []
        for a in act.then:
            then_lines += self.action(a, top=False)
        else_lines: list[str] = []
        for a in act.otherwise:
            else_lines += self.action(a, top=False)
        out = [f"if {pred} {{", *(f"  {line}" for line in then_lines)]
        if else_lines:
            out += ["} else {", *(f"  {line}" for line in else_lines)]
        return out + ["}"]


def plan_offline(instruction: str, scene: Scene) -> str:
    """Program text for ``instruction`` in ``scene``.

    Raises InstructionNotUnderstood (not one of the known families) or ObjectNotResolved (the
    scene has no such object, or several). Never guesses.
    """
    actions = ins.parse_instruction(instruction)
    ctx = _Context(scene=scene)
    writer = _Writer(ctx)
    body: list[str] = []
    for act in actions:
        body += writer.action(act, top=True)
    lines = [f'task "{_title(instruction)}" {{', "  main {"]
    lines += [f"    {line}" for line in body]
    lines += ["    exit success", "  }"]
    lines += _monitors(ctx)
    lines.append("}")
    return "\n".join(lines) + "\n"
