"""The language development set: hand-written phrasings, each bound to a sampled sim scene.

Sources (written for issues 14 and 34, in ``frankenbot/test/fixtures/language/``):
``phrasings.tsv`` rows ``family<TAB>expected frames<TAB>phrasing[<TAB>class]`` with placeholders
(an expectation ``?KIND:TEXT`` asks for a refusal of that kind whose message names TEXT: a
phrasing whose words leave something open), and ``refusals.tsv`` rows ``scene
family<TAB>kind<TAB>must contain<TAB>instruction[<TAB>class]``; ``class`` names the phrasing
class a row was written for (coordination, terse, source_path, goal_state, quantified,
list_order, manner_until), so the benchmark can score each class. ``build()``
fills every row from the sim's task sampler on a development seed: the text placeholders become
the sampled task's objects in words, the expected frames their ids (the truth comes from the
sampler's parameters, never from the planner). The filled set is stored as ``dev_set.jsonl`` so
the test reads exactly what the frames must bind; ``python -m frankenbot.eval.language_set``
rebuilds it. Every fifth phrasing is held out: scored and reported, never tuned on.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from frankenbot.eval.seeds import EVALUATION_FIRST_SEED

FIXTURES = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "language"
HELD_OUT_EVERY = 5
NEAR = {"red": ("crimson", "scarlet"), "green": ("lime", "emerald"), "blue": ("navy", "azure"),
        "yellow": ("golden", "lemon"), "orange": ("tangerine", "apricot"),
        "purple": ("violet", "lilac")}
BLOCK_COLOURS = ("red", "green", "blue", "yellow", "orange", "purple")
BOWL_COLOURS = ("green", "blue", "red")


@dataclass(frozen=True)
class LanguageCase:
    """One phrasing on one scene. ``expect`` is the rendered frames, or "" for a refusal."""

    case_id: str
    family: str  # the scene's sim family
    seed: int
    text: str
    expect: str = ""
    refusal: str = ""  # expected refusal kind
    must_contain: tuple[str, ...] = ()
    split: str = "dev"  # dev | held_out
    source: str = ""  # the phrasing as written, placeholders and all
    tag: str = ""  # the phrasing's family label (conditional/closest, multi/stack, ...)
    phrasing_class: str = ""  # the phrasing class it was written for ("" before issue 34)


DEV_ONLY_MARK = "#@dev-only"  # rows after this line were tuned on: never held out


def _rows(path: Path) -> list[list[str]]:
    return _rows_and_mark(path)[0]


def _rows_and_mark(path: Path) -> tuple[list[list[str]], int]:
    """The tab-separated rows, and the index of the first row after the dev-only mark (the row
    count without one)."""
    out: list[list[str]] = []
    mark = -1
    for line in path.read_text().splitlines():
        if line.startswith(DEV_ONLY_MARK) and mark < 0:
            mark = len(out)
        elif line.strip() and not line.startswith("#"):
            out.append(line.split("\t"))
    return out, (len(out) if mark < 0 else mark)


def _roles(family: str, seed: int) -> tuple[dict[str, str], object]:
    """Object ids by role for the sampled task, and the scene (perceived-like)."""
    from frankenbot.eval.taskset import scene_of_task
    from frankenbot.sim.tasks import sample_task

    params = dict(sample_task(family, seed).task.params)
    _instruction, scene = scene_of_task(family, seed)
    roles: dict[str, str] = {}
    if "object" in params:
        roles["obj"] = str(params["object"])
    if "target" in params:
        roles["target"] = str(params["target"])
    if "order" in params:
        for k, oid in zip("abc", params["order"], strict=False):
            roles[k] = str(oid)
    named = set(roles.values())
    others = sorted(o.object_id for o in scene.objects
                    if o.shape == "block" and o.object_id not in named)
    if others:
        roles["other"] = others[0]
    if len(others) > 1:
        roles["other2"] = others[1]
    present = {o.colour for o in scene.objects if o.shape == "block"}
    roles["absent"] = next(c for c in BLOCK_COLOURS if c not in present)
    bowls = {o.colour for o in scene.objects if o.shape == "bowl"}
    roles["absent_bowl"] = next((c for c in BOWL_COLOURS if c not in bowls), "pink")
    roles["_variant"] = str(params.get("variant", ""))
    if "relation" in params:  # the new world's relative placements
        roles["rel"] = str(params["relation"])
        roles["rel_text"] = RELATION_TEXT.get(roles["rel"], roles["rel"].replace("_", " "))
    return roles, scene


RELATION_TEXT = {"left_of": "to the left of", "right_of": "to the right of",
                 "in_front_of": "in front of", "behind": "behind"}


def _fill(template: str, roles: dict[str, str], seed: int) -> str | None:
    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        base, _, kind = key.partition("_")
        if key in ("absent", "absent_bowl", "rel_text"):
            return roles[key]
        if base not in roles:
            raise KeyError(key)
        words = roles[base].replace("_", " ")
        colour = words.split()[0]
        if kind == "c":
            return colour
        if kind == "near":
            return NEAR.get(colour, (colour,))[seed % len(NEAR.get(colour, (colour,)))]
        return words

    try:
        return re.sub(r"\{(\w+)\}", sub, template)
    except KeyError:
        return None


def _expect(template: str, roles: dict[str, str]) -> str:
    return re.sub(r"@(\w+)", lambda m: roles[m.group(1)], template)


def build(first_seed: int = 0) -> list[LanguageCase]:
    """Every phrasing and refusal filled on seeds from ``first_seed`` (deterministic): the
    stored set uses development seeds; the benchmark also fills the same phrasings on evaluation
    seeds, scenes never used in development, to measure how the reading carries over."""
    cases: list[LanguageCase] = []
    rows, dev_only = _rows_and_mark(FIXTURES / "phrasings.tsv")
    for i, (label, expect, text, *cls) in enumerate(rows):
        family, _, variant = label.partition("/")
        if family == "multi":
            family, variant = variant, ""
        seed = first_seed + i
        while True:
            roles, _scene = _roles(family, seed)
            if not variant or roles["_variant"] == variant:
                break
            seed += 1
        if first_seed < EVALUATION_FIRST_SEED <= seed:  # pragma: no cover - a bug in the set
            raise ValueError("development set reached into evaluation seeds")
        filled = _fill(text, roles, seed)
        if filled is None:
            raise ValueError(f"phrasing {i} ({text!r}) names a role {family} has no object for")
        refusal, must = "", ()
        if expect.startswith("?"):  # the words leave something open: a question, not a plan
            refusal, _, said = expect[1:].partition(":")
            must, expect = ((_fill(said, roles, seed) or said,) if said else ()), ""
        cases.append(LanguageCase(
            f"p{i:03d}", family, seed, filled, expect=_expect(expect, roles), refusal=refusal,
            must_contain=must,
            split="held_out" if i < dev_only and i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1
            else "dev",
            source=text, tag=label, phrasing_class=cls[0] if cls else ""))
    for i, (family, kind, must, text, *cls) in enumerate(_rows(FIXTURES / "refusals.tsv")):
        seed = first_seed + 500 + i
        roles, _scene = _roles(family, seed)
        filled = _fill(text, roles, seed)
        if filled is None:
            raise ValueError(f"refusal {i} ({text!r}) names a role {family} has no object for")
        must_filled = tuple(x for x in (_fill(m, roles, seed) or m for m in must.split("|"))
                            if x)
        cases.append(LanguageCase(
            f"r{i:03d}", family, seed, filled, refusal=kind, must_contain=must_filled,
            split="held_out" if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1 else "dev",
            source=text, tag="refusal", phrasing_class=cls[0] if cls else ""))
    return cases


def store(cases: list[LanguageCase], path: Path = FIXTURES / "dev_set.jsonl") -> Path:
    path.write_text("".join(json.dumps(asdict(c)) + "\n" for c in cases))
    return path


def load(path: Path = FIXTURES / "dev_set.jsonl") -> list[LanguageCase]:
    out = []
    for line in path.read_text().splitlines():
        d = json.loads(line)
        d["must_contain"] = tuple(d["must_contain"])
        out.append(LanguageCase(**d))
    return out


def scene_for(case: LanguageCase):
    from frankenbot.eval.taskset import scene_of_task

    return scene_of_task(case.family, case.seed)[1]


if __name__ == "__main__":  # pragma: no cover
    print(store(build()))
