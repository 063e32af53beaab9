"""Find a sim scene for a free-form instruction, so the demo can run what the user typed.

The sim samples a task instance from (family, seed). For a user's instruction we find the family
whose instruction template it matches, then the first seed (from the one asked for) whose sampled
scene contains exactly the objects the instruction names in those roles. The oracle then judges
the very task the user asked for. An instruction no template matches is refused with the list of
task families, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from frankenbot.errors import FrankenbotError

MAX_SEED_SEARCH = 3000


@dataclass(frozen=True)
class Scenario:
    family: str
    seed: int
    instruction: str
    objects: tuple[str, ...] = ()  # the objects the instruction names (perceived ids)


def _normalise(text: str) -> str:
    return " ".join(text.lower().replace(",", " , ").replace(":", " : ").split()).rstrip(" .!")


def _template_regex(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)\}", _normalise(template))
    rx, seen = "", set()
    for i, part in enumerate(parts):
        if i % 2 == 0:
            rx += re.escape(part)
        elif part in seen:  # the same role named twice must be the same words
            rx += rf"(?P={part})"
        else:
            seen.add(part)
            rx += rf"(?P<{part}>[a-z]+(?: [a-z]+)*?)"
    return re.compile(rx)


# template placeholder -> where the sampled task's params keep that object
ROLE_PARAMS: dict[str, tuple[str, int | None]] = {
    "obj_text": ("object", None), "target_text": ("target", None),
    "a": ("order", 0), "b": ("order", 1), "c": ("order", 2),
}


def _fills_roles(params: dict, roles: dict[str, str]) -> bool:
    for role, name in roles.items():
        key, index = ROLE_PARAMS[role]
        value = params.get(key)
        if index is not None:
            value = value[index] if isinstance(value, (tuple, list)) and len(value) > index \
                else None
        if value != name:
            return False
    return True


def match_families(instruction: str) -> list[tuple[str, dict[str, str]]]:
    """(family, named object roles) for every template the instruction matches."""
    from frankenbot.sim.tasks import TASK_FAMILIES, instruction_templates

    text = _normalise(instruction)
    found = []
    for family in TASK_FAMILIES:
        for template in instruction_templates(family):
            m = _template_regex(template).fullmatch(text)
            if m:
                found.append((family, {k: v.replace(" ", "_") for k, v in m.groupdict().items()}))
    return found


def scenario_for(instruction: str, first_seed: int = 0) -> Scenario:
    from frankenbot.sim.tasks import TASK_FAMILIES, sample_task

    matches = match_families(instruction)
    if not matches:
        raise FrankenbotError(
            f"the sim has no task matching {instruction!r}; it sets up these families: "
            f"{', '.join(TASK_FAMILIES)} (see `frankenbot sim tasks`)")
    for family, roles in matches:
        for seed in range(first_seed, first_seed + MAX_SEED_SEARCH):
            if _fills_roles(dict(sample_task(family, seed).task.params), roles):
                return Scenario(family, seed, instruction, tuple(roles.values()))
    raise FrankenbotError(f"no sim scene within {MAX_SEED_SEARCH} seeds has the objects of "
                          f"{instruction!r}")
