"""Check frames: the bound frames -> the canonical frames the planner gets, or a refusal.

"Pick up X and put it in Y" is one ``put_in`` (the placing picks it up); a clause that
restates the one before it adds nothing; stacks that build one column are one tower.
"""

from __future__ import annotations

from dataclasses import replace

from frankenbot.planner.frames import (
    TASK_ROLES,
    Frame,
    InstructionNotUnderstood,
    ObjectNotResolved,
    chain_towers,
)
from frankenbot.planner.understanding.resolve import PICKABLE, Binding, say
from frankenbot.state import Scene


def check_frames(frames: list[Frame], ctx: Binding, text: str) -> tuple[Frame, ...]:
    """The canonical frames; refuses when nothing is left to do or a role stays unbound."""
    scene = ctx.scene
    out: list[Frame] = []
    for f in frames:  # "pick up X and hold it": one pick
        if (out and out[-1].task in HOLDING and f.task in (*PLACING, "carry")
                and f.role("obj") == out[-1].role("obj")):
            out[-1] = f  # "pick up X and put it in Y": the placing picks it up
            continue
        if out and (f.task, f.roles, f.condition) == (out[-1].task, out[-1].roles,
                                                       out[-1].condition) and f.task in (
                "pick_up", "open_drawer", "close_drawer", "clear_table", "sort_by_colour",
                "home", "put_in", "stack", "push_to_zone"):
            # "get X over to Y and leave it there": the second clause restates the first
            out[-1] = replace(out[-1], manner=out[-1].manner or f.manner)
            continue
        out.append(f)
    if not out:
        first = scene.get(ctx.named[0]) if ctx.named else None
        raise InstructionNotUnderstood(
            f"nothing to do in {text.strip()[:120]!r}: finding or gripping is not a task by "
            "itself", suggestion=f"pick up {say(first)}" if first is not None and (
                first.shape in PICKABLE) else "")
    for f in out:
        _bound(f, scene)
    _one_on_each(out, scene)
    return chain_towers(tuple(out))


def _one_on_each(frames: list[Frame], scene: Scene) -> None:
    """One block fits on a block: "put A and B on C" says a column or a mistake, not which;
    asked about, never guessed."""
    below: dict[str, str] = {}
    for f in frames:
        if f.task == "stack":
            obj, target = f.role("obj"), f.role("target")
            if target in below and below[target] != obj:
                t = scene.get(target)
                raise ObjectNotResolved(
                    f"only one block fits on {say(t) if t else target}: should "
                    f"{f.role('obj')} go on {below[target]} instead (a tower), or somewhere "
                    "else?", kind="ambiguous", candidates=(below[target], obj))
            below[target] = obj


HOLDING = ("pick_up", "carry")  # frames that hold an object the next frame may place
PLACING = ("put_in", "stack", "push_to_zone")


def _bound(f: Frame, scene: Scene) -> None:
    """A frame the planner may get: a task it knows with every role bound to a scene id.
    A carried object with nowhere named to go is asked about, never dropped or guessed."""
    if f.task == "carry":
        o = scene.get(f.role("obj"))
        raise ObjectNotResolved(f"where should {say(o) if o else f.role('obj')} go? say where "
                                "to put it", kind="ambiguous")
    for sub in (*f.then, *f.otherwise):
        _bound(sub, scene)
    known = TASK_ROLES.get(f.task)
    if known is None:
        raise InstructionNotUnderstood(f"internal: frame {f.render()} is no task")
    missing = [r for r in known if not any(k == r and v for k, v in f.roles)]
    ids = [v for _k, v in f.roles]
    if missing or any(scene.get(v) is None for v in ids):
        raise InstructionNotUnderstood(f"internal: frame {f.render()} has unbound roles")
