"""Check frames: the bound frames -> the canonical frames the planner gets, or a refusal.

"Pick up X and put it in Y" is one ``put_in`` (the placing picks it up); a clause that
restates the one before it adds nothing; stacks that build one column are one tower.
"""

from __future__ import annotations

from frankenbot.planner.frames import Frame, InstructionNotUnderstood, chain_towers
from frankenbot.planner.understanding.resolve import PICKABLE, Binding, say


def check_frames(frames: list[Frame], ctx: Binding, text: str) -> tuple[Frame, ...]:
    """The canonical frames; refuses when nothing is left to do."""
    scene = ctx.scene
    out: list[Frame] = []
    for f in frames:  # "pick up X and hold it": one pick
        if (out and out[-1].task == "pick_up" and f.task in ("put_in", "stack", "push_to_zone")
                and f.role("obj") == out[-1].role("obj")):
            out[-1] = f  # "pick up X and put it in Y": the placing picks it up
            continue
        if out and f == out[-1] and f.task in ("pick_up", "open_drawer", "close_drawer",
                                               "clear_table", "sort_by_colour", "home",
                                               "put_in", "stack", "push_to_zone"):
            # "get X over to Y and leave it there": the second clause restates the first
            continue
        out.append(f)
    if not out:
        first = scene.get(ctx.named[0]) if ctx.named else None
        raise InstructionNotUnderstood(
            f"nothing to do in {text.strip()[:120]!r}: finding or gripping is not a task by "
            "itself", suggestion=f"pick up {say(first)}" if first is not None and (
                first.shape in PICKABLE) else "")
    return chain_towers(tuple(out))
