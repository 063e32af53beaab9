"""Which of LIBERO's instruction forms the offline planner understands, refuses or misreads.

Nothing is executed: every set-up task's instruction (LIBERO's benchmark words, the BDDL file's
own ``:language`` text, and as a control the benchmark words with our stand-ins' colour and
category in place of LIBERO's object names) is planned on its scene as a perfect camera would
report it (objects where the layout puts them, labelled with the names taught for the task, the
fixtures of the scene's map with their initial states), and the program is compared with the
task's goal: a program *reads* the goal when every goal atom is addressed by a call naming the
same object and target (``in(red_can, brown_basket)`` by a place into the basket of the red
can, ``open(top_drawer)`` by an opening call on that drawer, ``turned_on(stove)`` by a call on
the stove or its knob); otherwise it is a *misreading*, with the atoms it missed. Refusals keep
the planner's message. Forms group the instructions by their wording, so the planner's authors
see which LIBERO phrasings fail and why.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable, Sequence

from frankenbot.eval.libero.mapping import MappedTask
from frankenbot.eval.libero.scenes import instruction_of, sample_scene
from frankenbot.sim import families, layout
from frankenbot.sim.fixtures import KNOB_ON
from frankenbot.sim.scene_spec import RELATIONS, SceneSpec, parse_goal
from frankenbot.state import Scene, SceneObject

# instruction forms, first match wins (LIBERO's wordings, by what makes them hard)
FORMS: tuple[tuple[str, str], ...] = (
    ("stack X on Y and place them in Z", r"^stack .* and place them in "),
    ("stack X (at/in the <position>) on Y", r"^stack "),
    ("put both X and Y in/on Z", r"^put both "),
    ("put X on/in A and put Y on/in B (two goals)", r"^put .* and put "),
    ("turn on the stove and put X on it", r"^turn on the stove and put "),
    ("put X on the stove and turn it on", r"stove.* and turn"),
    ("close drawer A and open drawer B", r"^close .* drawer .* and open "),
    ("close the drawer and put X on top of it", r"^close .* and put "),
    ("open the drawer and put X in/inside it", r"^open .* and put "),
    ("put X in the <which> drawer of the cabinet and close it", r"drawer.* and close it$"),
    ("put X in the microwave and close it", r"microwave and close it$"),
    ("turn on/off the stove", r"^turn (on|off) the stove$"),
    ("open/close the <which> drawer (of the cabinet)", r"^(open|close) the .*(drawer|layer)"),
    ("open/close the microwave", r"^(open|close) the microwave$"),
    ("pick (up) the X <where> and place it on Y (LIBERO-Spatial)",
     r"^pick (up )?the (akita )?black bowl .* and place it on the plate$"),
    ("pick (up) the X and place/put it in/on Y", r"^pick (up )?the .* and (place|put) it "),
    ("push X to the front of Y", r"^push "),
    ("put X to the left/right/front of Y", r"to the (left|right|front) of "),
    ("put X (at the <position> / <which>) on the left/right plate", r"(left|right) plate$"),
    ("put the <position> X on/in Y", r"^put the (middle|right|left|front|back) "),
    ("put X at the front/back/in the middle on/in Y", r" (at the (front|back)|in the middle) "),
    ("put X in the <which> drawer of the cabinet", r"drawer of the cabinet$"),
    ("put X on top of the cabinet/shelf", r"on (the )?top of the "),
    ("put X on the stove", r"on the stove$"),
    ("put X in/on Y", r"^put "),
)


def form_of(instruction: str) -> str:
    text = instruction.strip().lower()
    for name, pattern in FORMS:
        if re.search(pattern, text):
            return name
    return "other"


def scene_of(spec: SceneSpec, names: dict[str, str]) -> Scene:
    """The scene a perfect camera would report for ``spec`` at its start."""
    objs = []
    for p in spec.placements:
        o = layout.OBJECT_BY_NAME[p.name]
        z = p.z if p.z is not None else layout.TABLE_TOP_Z + o.size[2] / 2
        objs.append(SceneObject(p.name, names.get(p.name, p.name.replace("_", " ")), o.shape,
                                o.colour, (p.x, p.y, z), o.size, p.yaw))
    fmap = families.fixture_map(spec.fixtures)
    states = dict(spec.fixture_states)
    for so in fmap.scene_objects():
        part = fmap.part(so.object_id)
        if part is not None and part.kind in ("drawer", "hinged_door", "sliding_door"):
            so = replace(so, opening=float(states.get(part.part_id, 0.0)))
        elif part is not None and part.kind in ("light", "burner"):
            knobs = [c for c in fmap.controller_of(part.part_id) if c.kind == "knob"]
            so = replace(so, on=bool(knobs) and states.get(knobs[0].part_id, 0.0) >= KNOB_ON)
        objs.append(so)
    return Scene.of(objs, stamp=0.0)


_SAME = {"stove_burner": ("stove", "stove_knob"), "stove": ("stove_burner", "stove_knob"),
         "microwave": ("microwave_door",), "microwave_door": ("microwave",)}


def _aliases(name: str) -> set[str]:
    return {name, *_SAME.get(name, ())}


def _calls(program: Any) -> list[tuple[str, set[str]]]:
    out = []
    for call in program.calls():
        vals = {getattr(a.value, "name", str(a.value)) for a in call.args}
        out.append((call.name, vals))
    return out


def missed_atoms(goal: str, program: Any) -> list[str]:
    """The goal atoms no call of ``program`` addresses (empty: it reads the goal)."""
    calls = _calls(program)
    missed = []
    for atom in parse_goal(goal):
        p, args = atom.predicate, atom.args
        if p in ("in", "on"):
            ok = any(name.startswith(("place", "put", "push")) and args[0] in vals
                     and vals & _aliases(args[1]) for name, vals in calls)
        elif p in RELATIONS:
            ok = any(name in (f"place_{p}", f"push_{p}") and args[0] in vals and args[1] in vals
                     for name, vals in calls)
        elif p in ("open", "closed"):
            word = "open" if p == "open" else "close"
            ok = any(word in name and vals & _aliases(args[0]) for name, vals in calls)
        else:  # turned_on / turned_off
            ok = any(re.search(r"turn|switch|toggle|press|knob", name)
                     and vals & _aliases(args[0]) for name, vals in calls)
        if not ok:
            missed.append(str(atom))
    return missed


@dataclass(frozen=True)
class ProbeRow:
    task: str
    language: str  # benchmark | bddl | ours (the benchmark words, our objects' names)
    instruction: str
    form: str
    goal: str
    verdict: str  # reads | misreads | refused | error
    detail: str
    program: str = ""


def in_our_words(mapped: MappedTask) -> str:
    """LIBERO's benchmark instruction with each object's LIBERO name replaced by its stand-in's
    colour and category ("pick up the red can and place it in the brown basket"): a control
    that tells a form the planner cannot read from a name it does not know."""
    text = mapped.task.benchmark_language
    words: dict[str, str] = {}
    for ours, name in mapped.names.items():
        o = layout.OBJECT_BY_NAME[ours]
        words.setdefault(name, f"{o.colour} {o.shape}")
    for name in sorted(words, key=len, reverse=True):
        text = re.sub(rf"\b{re.escape(name)}( box)?\b", words[name], text)
    return text


def _text(mapped: MappedTask, language: str) -> str:
    return in_our_words(mapped) if language == "ours" else instruction_of(mapped, language)


def probe(tasks: Sequence[MappedTask], *, seed: int = 0, planner: Any = None,
          languages: Sequence[str] = ("benchmark", "bddl", "ours"),
          log: Callable[[str], None] = print) -> list[ProbeRow]:
    """Plan every task's instruction(s) on its scene for ``seed`` (a development seed)."""
    from frankenbot.execution.episode import plan_request
    from frankenbot.program import parse_program

    if planner is None:
        from frankenbot.planner.planner import Planner

        planner = Planner()
    rows = []
    for m in tasks:
        spec = sample_scene(m, seed)
        scene = scene_of(spec, m.names)
        for language in languages:
            text = _text(m, language)
            try:
                outcome = planner.plan(plan_request(text, scene, planner="offline"))
            except Exception as e:  # a planner crash is a finding, not a stop
                rows.append(ProbeRow(m.task.task_id, language, text, form_of(text), m.goal,
                                     "error", f"{type(e).__name__}: {e}"))
                continue
            if not outcome.ok:
                row = ProbeRow(m.task.task_id, language, text, form_of(text), m.goal,
                               "refused", outcome.message)
            else:
                program = parse_program(outcome.program_text).program
                missed = missed_atoms(m.goal, program)
                row = ProbeRow(m.task.task_id, language, text, form_of(text), m.goal,
                               "misreads" if missed else "reads",
                               ("does not address " + ", ".join(missed)) if missed else "",
                               outcome.program_text)
            rows.append(row)
            log(f"  {row.verdict:8s} [{language}] {text!r}"
                + (f"\n           {row.detail[:220]}" if row.detail else ""))
    return rows


def grouped(rows: Sequence[ProbeRow]) -> dict[str, Any]:
    """Forms -> counts by verdict, with the instructions and the planner's reasons."""
    out: dict[str, Any] = {}
    for r in rows:
        g = out.setdefault(r.form, {"reads": 0, "misreads": 0, "refused": 0, "error": 0,
                                    "cases": []})
        g[r.verdict] += 1
        if r.verdict != "reads":
            g["cases"].append({"task": r.task, "language": r.language, "verdict": r.verdict,
                               "why": _short(r.detail)})
    return dict(sorted(out.items(), key=lambda kv: -(kv[1]["refused"] + kv[1]["misreads"]
                                                     + kv[1]["error"])))


def _short(detail: str) -> str:
    """The planner's reason without the list of what it knows (the same in every refusal)."""
    return detail.split(". The offline planner knows:")[0][:240]


def report(rows: Sequence[ProbeRow]) -> dict[str, Any]:
    def count(lang: str, verdict: str) -> int:
        return sum(r.language == lang and r.verdict == verdict for r in rows)

    langs = sorted({r.language for r in rows})
    return {"totals": {lang: {v: count(lang, v) for v in ("reads", "misreads", "refused",
                                                          "error")} for lang in langs},
            "forms": grouped(rows),
            "rows": [{**asdict(r), "detail": _short(r.detail)} for r in rows]}


def markdown(result: dict[str, Any]) -> str:
    lines = ["| form | reads | misreads | refused | error |", "|---|---|---|---|---|"]
    for form, g in result["forms"].items():
        lines.append(f"| {form} | {g['reads']} | {g['misreads']} | {g['refused']} | "
                     f"{g['error']} |")
    return "\n".join(lines) + "\n"
