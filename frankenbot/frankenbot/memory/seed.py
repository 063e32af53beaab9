"""Seed skills: the hand-written library in ``frankenbot/skills/*.fb``, loaded on open.

Every file is parsed and every skill validated against the catalog before anything is stored; a
file with a syntax error or an invalid skill is reported as ``file:line: message`` and skipped as a
whole (a half-loaded file would hide the mistake). Loading is idempotent: unchanged seeds are left
alone, edited seeds replace their old text and keep their usage statistics.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from frankenbot import resources
from frankenbot.errors import FrankenbotError
from frankenbot.memory import language
from frankenbot.memory.records import SkillOrigin

if TYPE_CHECKING:
    from frankenbot.memory.store import MemoryStore

log = logging.getLogger(__name__)
SKILL_SUFFIX = ".fb"


def load_seed_skills(store: "MemoryStore", seed_dir: str | Path | None = None) -> tuple[str, ...]:
    """Load every ``*.fb`` file of ``seed_dir`` into ``store``; returns the problems found."""
    directory = Path(seed_dir) if seed_dir else resources.skills_dir()
    if not directory.is_dir():
        problem = f"{directory}: seed skill directory not found; no seed skills loaded"
        log.warning(problem)
        return (problem,)
    problems: list[str] = []
    for path in sorted(directory.glob(f"*{SKILL_SUFFIX}")):
        problem = _load_file(store, path)
        if problem:
            log.warning("skipped seed skill file: %s", problem)
            problems.append(problem)
    return tuple(problems)


def _load_file(store: "MemoryStore", path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return f"{path}: cannot read: {e}"
    try:
        skills = language.parse_library(text)
    except FrankenbotError as e:
        return f"{path}:{getattr(e, 'line', 0)}: {getattr(e, 'message', e)}"
    names = [s.name for s in skills]
    for name in names:
        existing = store.get_skill(name)
        if existing is not None and existing.origin != SkillOrigin.SEED:
            return (f"{path}:{_line_of(skills, name)}: seed skill {name!r} clashes with the"
                    f" {existing.origin} skill of that name in the library")
    changed = [s for s in skills if _differs(store, s)]
    if not changed:
        return ""
    try:
        store.add_skills(changed, SkillOrigin.SEED, source=str(path), replace=True)
    except FrankenbotError as e:
        line = getattr(e, "line", 0) or _line_of(skills, _name_in(str(e), names))
        return f"{path}:{line}: {e}"
    return ""


def _differs(store: "MemoryStore", skill: language.SkillDef) -> bool:
    existing = store.get_skill(skill.name)
    return existing is None or existing.body != language.print_skill(skill) \
        or existing.description != skill.description


def _line_of(skills: tuple[language.SkillDef, ...], name: str) -> int:
    for s in skills:
        if s.name == name:
            return s.span.line
    return 0


def _name_in(message: str, names: list[str]) -> str:
    for n in names:
        if repr(n) in message:
            return n
    return ""
