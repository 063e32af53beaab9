"""The offline planner: instruction + perceived scene -> program text, deterministically.

It is the embedded default when no API key is configured and the rule-based baseline reported
beside the VLM. ``understanding/`` turns the instruction and the perceived scene's objects into
task frames bound to scene ids ("the largest block" becomes the id of the largest block perceived
now); this module synthesises one program from the frames, in order, with verification loops
(``if not in(x, y) { goto s1 max 2 }``) and monitors for losing the grasp in transport.
Conditions about the future ("if the bowl is empty") stay run-time predicates.

It cannot replan creatively: a tier-3 replan through it re-plans the original instruction from the
current scene (0 VLM calls).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from frankenbot.errors import PlannerError
from frankenbot.planner import lexicon
from frankenbot.planner.frames import Frame, ObjectNotResolved, Refusal  # noqa: F401
from frankenbot.planner.relative import PUSH_TASKS, TASKS, placement_call
from frankenbot.planner.understanding import Understanding, understand
from frankenbot.state import Scene, SceneObject

PICKABLE = lexicon.PICKABLE_SHAPES  # kinds of object: one home, the lexicon
CONTAINER_SHAPES = lexicon.CONTAINER_SHAPES
VERIFY_RETRIES = 2  # how often a verification loop may go back and try a step again
# frames of relative placements and pushes (relative.py)
RELATIVE_TASKS = frozenset(TASKS.values()) | frozenset(PUSH_TASKS.values())
HANDLER_RETRIES = 2



@dataclass
class _Context:
    """Synthesis state while writing one program."""

    scene: Scene
    labels: int = 0
    # (object id, primitive) -> goal predicates; one drop monitor per carried object
    carried: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    opened: str = ""  # the drawer the previous top-level frame opened (and verified)
    asked_open: set[str] = field(default_factory=set)  # parts the instruction opens

    def new_label(self) -> str:
        self.labels += 1
        return f"s{self.labels}"

    def get(self, oid: str) -> SceneObject:
        obj = self.scene.get(oid)
        if obj is None:  # frames are bound to this scene; a miss is a bug, not user input
            raise PlannerError(f"offline planner: frame names {oid!r}, not in the scene")
        return obj


def _inside(obj: SceneObject, container: SceneObject) -> bool:
    """Rough geometric test: the object's centre lies over the container's footprint."""
    return (abs(obj.position[0] - container.position[0]) <= container.size[0] / 2.0
            and abs(obj.position[1] - container.position[1]) <= container.size[1] / 2.0
            and obj.object_id != container.object_id)


def _drawers_above(drawer: SceneObject, scene: Scene) -> list[SceneObject]:
    """The drawers of the same cabinet above ``drawer`` (stacked over it, however far each
    is pulled out along its axis), top first."""
    x, y, z = drawer.position
    c, s = math.cos(drawer.yaw), math.sin(drawer.yaw)

    def stacked(o: SceneObject) -> bool:
        dx, dy = o.position[0] - x, o.position[1] - y
        return abs(-s * dx + c * dy) < 0.05 and abs(c * dx + s * dy) < 0.3

    return sorted((o for o in scene.objects if o.shape == "drawer" and o.position[2] > z + 0.01
                   and stacked(o)), key=lambda o: -o.position[2])


def _describe(scene: Scene) -> str:
    return ", ".join(scene.ids()) or "nothing"


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

    Each monitor is scoped to its own object's placing call (``during place_in(obj=x)``), so
    with several carried objects the monitor of one stays quiet while another is placed."""
    out = []
    for (obj, primitive), goals in ctx.carried.items():
        cond = " and ".join([f"not holding({obj})"] + [f"not {g}" for g in goals])
        name = f"{obj}_dropped" if primitive.startswith("place_in") else f"{obj}_dropped_on"
        out.append(f"  monitor {name} when {cond} during {primitive}(obj={obj}) {{\n"
                   f"    pick(obj={obj})\n    then resume\n  }}")
    return out


class _Writer:
    """Turns frames into statements (lists of lines, indented by the caller)."""

    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx

    def frame(self, f: Frame, top: bool) -> list[str]:
        ctx = self.ctx
        r = dict(f.roles)
        if f.task == "pick_up":
            o = r["obj"]
            return self._verified([f"pick(obj={o})"], f"holding({o})", top)
        if f.task in ("put_in", "stack"):
            obj, target = ctx.get(r["obj"]), ctx.get(r["target"])
            if target.shape in CONTAINER_SHAPES:
                return self._put_objects(obj, target, top)
            return self._place_on(obj, target, top)
        if f.task == "tower":
            objs = [ctx.get(v) for _k, v in f.roles]
            lines: list[str] = []
            for below, above in zip(objs, objs[1:], strict=False):
                lines += self._place_on(above, below, top)
            return lines
        if f.task == "sort_by_colour":
            return self._sort(top)
        if f.task == "clear_table":
            return self._clear(ctx.get(r["target"]), top)
        if f.task in ("open_drawer", "open_door"):
            part, role = (r["drawer"], "drawer") if f.task == "open_drawer" else (r["door"], "door")
            return self._verified([f"{f.task}({role}={part})"], f"open({part})", top)
        if f.task in ("close_drawer", "close_door"):
            part, role = (r["drawer"], "drawer") if f.task == "close_drawer" else (r["door"],
                                                                                  "door")
            return self._verified([f"{f.task}({role}={part})"], f"closed({part})", top)
        if f.task in ("switch_on", "switch_off"):
            return self._switch(r["target"], ctx.get(r["control"]), f.task == "switch_on", top)
        if f.task in ("press", "toggle"):
            return [f"{f.task}(obj={r['obj']})"]
        if f.task == "push_to_zone":
            o, z = r["obj"], r["target"]
            return self._verified([f"push_to(obj={o}, target={z})"], f"in({o}, {z})", top)
        if f.task == "home":
            return ["home()"]
        if f.task == "if":
            return self._conditional(f)
        if f.task in RELATIVE_TASKS:
            return self._relative(f, top)
        raise PlannerError(f"offline planner: unsupported frame {f.render()}")

    def _switch(self, target: str, control: SceneObject, on: bool, top: bool) -> list[str]:
        """Work ``control`` only if ``target`` is not yet in the wanted state, then check it."""
        c = control.object_id
        how = lexicon.CONTROL_SHAPES.get(control.shape, "")
        if how == "turn":
            degrees = lexicon.KNOB_ON_DEGREES if on else lexicon.KNOB_OFF_DEGREES
            call = f"turn(obj={c}, degrees={degrees:g})"
        elif how:
            call = f"{how}(obj={c})"
        else:
            raise ObjectNotResolved(f"{c} ({control.shape}) is not a control", kind="impossible")
        state = f"on_state({target})"
        wanted, unwanted = (state, f"not {state}") if on else (f"not {state}", state)
        return self._verified([f"if {unwanted} {{", f"  {call}", "}"], wanted, top)

    def _relative(self, f: Frame, top: bool) -> list[str]:
        """Pick the object and place it relative to others (planner/relative.py)."""
        obj = f.role("obj")
        call, goal = placement_call(f)
        if f.task in PUSH_TASKS.values():  # along the table: nothing is held, nothing drops
            return self._verified([call], goal, top)
        _monitor_dropped(self.ctx, obj, goal, f.task)
        return self._verified([f"pick(obj={obj})", call], goal, top)

    def _verified(self, steps: list[str], goal: str, top: bool) -> list[str]:
        """Steps then a bounded check that goes back once or twice (top level only); still
        not done after that, the program ends in failure (a used-up goto falls through, and
        the program must not go on to claim success)."""
        if not top:
            return steps
        label = self.ctx.new_label()
        negated = goal[4:] if goal.startswith("not ") else f"not {goal}"
        return [f"{label}:", *steps, f"if {negated} {{ goto {label} max {VERIFY_RETRIES} }}",
                f'if {negated} {{ exit failure "{goal} still does not hold after '
                f'{VERIFY_RETRIES} retries" }}']

    def _put_objects(self, obj: SceneObject, cont: SceneObject, top: bool) -> list[str]:
        ctx = self.ctx
        if cont.shape not in CONTAINER_SHAPES:
            raise ObjectNotResolved(f"{cont.object_id} ({cont.shape}) is not a container")
        o, c = obj.object_id, cont.object_id
        pre: list[str] = []
        if cont.shape == "drawer":
            for above in _drawers_above(cont, ctx.scene):
                # an ajar drawer above stands out over the open part: closed first (unless
                # the instruction itself opens it)
                if above.object_id not in ctx.asked_open:
                    pre += [f"if not closed({above.object_id}) {{",
                            f"  close_drawer(drawer={above.object_id})", "}"]
        if cont.shape in lexicon.OPENABLE and ctx.opened != c:  # unless the frame before did
            opening = lexicon.OPENABLE[cont.shape][0]
            role = lexicon.OPENABLE[cont.shape][2]
            pre += [f"if not open({c}) {{", f"  {opening}({role}={c})", "}"]
        _monitor_dropped(ctx, o, f"in({o}, {c})", "place_in")
        return pre + self._verified([f"pick(obj={o})", f"place_in(obj={o}, container={c})"],
                                    f"in({o}, {c})", top)

    def _place_on(self, obj: SceneObject, target: SceneObject, top: bool) -> list[str]:
        ctx = self.ctx
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
            lines += self._put_objects(block, bowl, top)
        if not lines and not bowls:
            raise ObjectNotResolved("sorting by colour needs coloured bowls; the scene has none "
                                    f"({_describe(scene)})", kind="impossible")
        return lines

    def _clear(self, target: SceneObject, top: bool) -> list[str]:
        scene = self.ctx.scene
        lines: list[str] = []
        containers = [o for o in scene.objects if o.shape in ("bin", "drawer")]
        for block in sorted(scene.objects, key=lambda o: o.object_id):
            if block.shape != "block" or any(_inside(block, c) for c in containers):
                continue
            if _inside(block, target):
                continue
            lines += self._put_objects(block, target, top)
        return lines

    def _conditional(self, f: Frame) -> list[str]:
        assert f.condition is not None
        pred = f.condition.render()
        then_lines: list[str] = []
        for a in f.then:
            then_lines += self.frame(a, top=False)
        else_lines: list[str] = []
        for a in f.otherwise:
            else_lines += self.frame(a, top=False)
        out = [f"if {pred} {{", *(f"  {line}" for line in then_lines)]
        if else_lines:
            out += ["} else {", *(f"  {line}" for line in else_lines)]
        return out + ["}"]


def synthesise(frames: tuple[Frame, ...], scene: Scene, instruction: str) -> str:
    """One program doing ``frames`` in order (each verified at top level)."""
    ctx = _Context(scene=scene)
    ctx.asked_open = {part for f in frames if f.task in ("open_drawer", "open_door")
                      for part in (f.role("drawer") if f.task == "open_drawer"
                                   else f.role("door"),)}
    writer = _Writer(ctx)
    body: list[str] = []
    for f in frames:
        body += writer.frame(f, top=True)
        ctx.opened = (f.role("drawer") if f.task == "open_drawer"
                      else f.role("door") if f.task == "open_door" else "")
    lines = [f'task "{_title(instruction)}" {{', "  main {"]
    lines += [f"    {line}" for line in body]
    lines += ["    exit success", "  }"]
    lines += _monitors(ctx)
    lines.append("}")
    return "\n".join(lines) + "\n"


def plan_offline_explained(instruction: str, scene: Scene) -> tuple[Understanding, str]:
    """(what was understood, the program) for ``instruction`` in ``scene``."""
    u = understand(instruction, scene)
    return u, synthesise(u.frames, scene, instruction)


def plan_offline(instruction: str, scene: Scene) -> str:
    """Program text for ``instruction`` in ``scene``.

    Raises a Refusal (InstructionNotUnderstood, UnsafeInstruction, ObjectNotResolved: not a
    task it knows, unsafe, no such object or several). Never guesses.
    """
    return plan_offline_explained(instruction, scene)[1]
