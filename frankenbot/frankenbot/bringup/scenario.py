"""Find a sim scene for a free-form instruction, so the demo can run what the user typed.

The sim samples a task instance from (family, seed). For a user's instruction the offline
planner's understanding stage (``planner/understanding/``, the one home of reading
instructions) reads it without a scene; from what it read we take the families it can be and
the objects it names in their roles ("the crimson cube" is the red block), then the first seed
(from the one asked for) whose sampled task has those objects in those roles and whose scene,
read again with the objects in it, gives exactly that family's task. The oracle then judges the
very task the user asked for. An instruction that is not one of the sim's tasks is refused with
the list of task families, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from frankenbot.errors import FrankenbotError

MAX_SEED_SEARCH = 3000


@dataclass(frozen=True)
class Scenario:
    family: str
    seed: int
    instruction: str
    objects: tuple[str, ...] = ()  # the objects the instruction names (perceived ids)


def _name(ref: Any, default_shape: str = "") -> str | None:
    """The sim object a symbolic phrase names, when the words alone say so (else None)."""
    from frankenbot.planner import lexicon

    if ref is None or ref.pronoun or ref.items or ref.superlative or ref.quantifier == "all":
        return None
    if ref.object_id:
        return ref.object_id
    shape = ref.shape or default_shape
    if shape == "drawer":
        return "drawer"
    if shape == "zone":
        return "zone"
    if shape == "plate":
        return "white_plate"
    if shape == "bin":
        return "gray_bin"
    if ref.colour and shape in ("block", "bowl"):
        tiers = lexicon.COLOUR_WORDS.get(ref.colour, (ref.colour,))
        return f"{tiers[0]}_{shape}" if len(tiers) == 1 else None
    return None


def _candidates(acts: list[Any]) -> list[tuple[str, dict[str, object]]]:
    """(family, sampled params the instruction fixes) for the sim families it can be."""
    acts = [a for a in acts if a.kind != "home"]
    if acts and acts[0].kind == "open" and len(acts) > 1:
        acts = acts[1:]  # "open the drawer, put X inside and shut it"
    if (len(acts) >= 2 and acts[0].kind == "pick" and acts[1].kind in ("place", "push")
            and acts[1].obj is not None and acts[1].obj.pronoun):
        acts = [replace(acts[1], obj=acts[0].obj), *acts[2:]]  # "pick up X and put it in Y"
    if not acts:
        return []
    a = acts[0]
    out: list[tuple[str, dict[str, object]]] = []

    def fixed(**roles: str | None) -> dict[str, object]:
        return {k: v for k, v in roles.items() if v is not None}

    if len(acts) == 2 and a.kind == "place" and acts[1].kind == "close":
        return [("put_in_drawer", fixed(object=_name(a.obj, "block")))]
    if len(acts) != 1:
        return []
    if a.kind == "pick":
        out.append(("pick_up", fixed(object=_name(a.obj, "block"))))
    elif a.kind == "place" and a.dest is not None:
        dest_shape = a.dest.shape or ("block" if a.prep == "on" else "")
        obj = _name(a.obj, "block")
        if a.obj is not None and a.obj.superlative == "closest" and a.obj.relative_to is None:
            out.append(("conditional", {"variant": "closest",
                                        **fixed(target=_name(a.dest, dest_shape))}))
        elif dest_shape == "bowl":
            out.append(("put_in_bowl", fixed(object=obj, target=_name(a.dest, "bowl"))))
        elif dest_shape == "plate":
            out.append(("put_on_plate", fixed(object=obj)))
        elif dest_shape == "block":
            out.append(("stack", fixed(object=obj, target=_name(a.dest, "block"))))
        elif dest_shape == "zone":
            out.append(("push_to_zone", fixed(object=obj)))
    elif a.kind == "push":
        out.append(("push_to_zone", fixed(object=_name(a.obj, "block"))))
    elif a.kind == "tower":
        names = [_name(r, "block") for r in a.tower]
        out.append(("tower", {"order": tuple(names)} if all(names) else {}))
    elif a.kind == "sort":
        out.append(("sort_by_colour", {}))
    elif a.kind == "clear":
        out.append(("clear_table", {}))
    elif a.kind == "open":
        out.append(("open_drawer", {}))
    elif a.kind == "if" and a.cond is not None and a.cond[0] == "empty":
        then = a.then[0] if a.then else None
        out.append(("conditional", {"variant": "if_empty",
                                    **fixed(target=_name(a.cond[1], "bowl"),
                                            object=_name(getattr(then, "obj", None), "block"))}))
    return out


def match_families(instruction: str) -> list[tuple[str, dict[str, object]]]:
    """(family, the task parameters the instruction fixes) for every sim family it can be."""
    from frankenbot.planner.frames import Refusal
    from frankenbot.planner.understanding import parse

    try:
        return _candidates(parse(instruction))
    except Refusal:
        return []


def _task_frames(family: str, params: dict) -> list[str]:
    """The frames (rendered) that do the sampled task: what the instruction must come to."""
    o, t = params.get("object"), params.get("target")
    if family == "pick_up":
        return [f"pick_up(obj={o})"]
    if family in ("put_in_bowl", "put_on_plate"):
        return [f"put_in(obj={o}, target={t})"]
    if family == "stack":
        return [f"stack(obj={o}, target={t})"]
    if family == "tower":
        a, b, c = params["order"]
        return [f"tower(a={a}, b={b}, c={c})"]
    if family == "sort_by_colour":
        return ["sort_by_colour()"]
    if family == "clear_table":
        return [f"clear_table(target={t})"]
    if family == "open_drawer":
        return ["open_drawer(drawer=drawer)"]
    if family == "put_in_drawer":
        return [f"put_in(obj={o}, target=drawer)", "close_drawer(drawer=drawer)"]
    if family == "push_to_zone":
        return [f"push_to_zone(obj={o}, target=zone)"]
    if family == "conditional":
        if params.get("variant") == "closest":
            return [f"put_in(obj={o}, target={t})"]
        yes, no = f"put_in(obj={o}, target={t})", f"put_in(obj={o}, target=white_plate)"
        return [f"if empty({t}) {{{yes}}} else {{{no}}}"]
    return []


def _does_task(frames: tuple[Any, ...], family: str, params: dict) -> bool:
    rendered = [f.render() for f in frames if f.task != "home"]
    if family == "put_in_drawer" and rendered[:1] == ["open_drawer(drawer=drawer)"]:
        rendered = rendered[1:]
    want = _task_frames(family, params)
    if family == "conditional" and params.get("variant") == "if_empty" and len(rendered) == 1:
        o, t = params["object"], params["target"]
        flipped = (f"if not empty({t}) {{put_in(obj={o}, target=white_plate)}} else "
                   f"{{put_in(obj={o}, target={t})}}")
        return rendered[0] in (want[0], flipped)
    return rendered == want


def _fits(params: dict, fixed: dict[str, object]) -> bool:
    for key, value in fixed.items():
        if key == "order":
            if tuple(params.get("order", ())) != value:
                return False
        elif params.get(key) != value:
            return False
    return True


def scenario_for(instruction: str, first_seed: int = 0) -> Scenario:
    from frankenbot.eval.taskset import scene_of_task
    from frankenbot.planner.frames import Refusal
    from frankenbot.planner.understanding import understand
    from frankenbot.sim.tasks import TASK_FAMILIES, sample_task

    matches = match_families(instruction)
    if not matches:
        raise FrankenbotError(
            f"the sim has no task matching {instruction!r}; it sets up these families: "
            f"{', '.join(TASK_FAMILIES)} (see `frankenbot sim tasks`)")
    for family, fixed in matches:
        for seed in range(first_seed, first_seed + MAX_SEED_SEARCH):
            params = dict(sample_task(family, seed).task.params)
            if not _fits(params, fixed):
                continue
            try:
                frames = understand(instruction, scene_of_task(family, seed)[1]).frames
            except Refusal:
                continue
            if _does_task(frames, family, params):
                named = tuple(str(v) for k, v in fixed.items() if k in ("object", "target"))
                named += tuple(str(v) for v in fixed.get("order", ()))
                return Scenario(family, seed, instruction, named)
    raise FrankenbotError(f"no sim scene within {MAX_SEED_SEARCH} seeds has the objects of "
                          f"{instruction!r}")
