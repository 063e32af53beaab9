"""``frankenbot skills list|show|export|import``: inspect and share the skill library.

Every subcommand opens the memory database (``--db``, default the user data dir's), which also
loads the seed skills, so what is listed is exactly what the planner would be offered.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from frankenbot.errors import FrankenbotError, MemoryStoreError
from frankenbot.memory import language
from frankenbot.memory.config import MemoryConfig
from frankenbot.memory.records import SkillOrigin, SkillRecord
from frankenbot.memory.store import MemoryStore


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("skills", help="list, show, export or import library skills",
                              description=__doc__)
    p.add_argument("--db", default="", help="memory database: an SQLite file or a URL such as"
                   " postgresql://frankenbot@db-host:5432/fleet (default: user data dir)")
    p.add_argument("--no-seeds", action="store_true", help="do not load the seed skills")
    sub = p.add_subparsers(dest="skills_command", metavar="ACTION", required=True)

    ls = sub.add_parser("list", help="one line per skill with its statistics")
    ls.add_argument("filter", nargs="?", default="", help="substring of name or description")
    ls.add_argument("--origin", choices=SkillOrigin.ALL, help="only skills of this origin")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.set_defaults(func=_list)

    show = sub.add_parser("show", help="a skill's definition and statistics")
    show.add_argument("name")
    show.set_defaults(func=_show)

    ex = sub.add_parser("export", help="write skills as a library file (.fb)")
    ex.add_argument("file", help="output file, or - for stdout")
    ex.add_argument("--origin", choices=SkillOrigin.ALL, help="only skills of this origin")
    ex.set_defaults(func=_export)

    im = sub.add_parser("import", help="add the skills of a library file (validated, deduped)")
    im.add_argument("file", help="library file (.fb), or - for stdin")
    im.add_argument("--replace", action="store_true",
                    help="overwrite skills of the same name instead of refusing them")
    im.set_defaults(func=_import)


def _open(args: argparse.Namespace) -> MemoryStore:
    url = "://" in args.db  # a database URL (sqlite:///..., postgresql://...) or a file
    config = MemoryConfig(db_path="" if url else args.db, db_url=args.db if url else "",
                          load_seeds=not args.no_seeds, use_embeddings=False)
    store = MemoryStore.open(config=config)
    for problem in store.seed_problems:
        print(f"warning: seed skills: {problem}", file=sys.stderr)
    return store


def _selected(store: MemoryStore, text: str, origin: str | None) -> tuple[SkillRecord, ...]:
    return tuple(s for s in store.list_skills(text) if origin is None or s.origin == origin)


def _signature(s: SkillRecord) -> str:
    return f"{s.name}({', '.join(f'{n}: {t}' for n, t in s.params)})"


def _list(args: argparse.Namespace) -> int:
    with _open(args) as store:
        skills = _selected(store, args.filter, args.origin)
    if args.json:
        print(json.dumps([{"name": s.name, "params": [list(p) for p in s.params],
                           "description": s.description, "origin": s.origin, "uses": s.uses,
                           "successes": s.successes, "body": s.body, "robot_id": s.robot_id,
                           "fixtures": list(s.fixtures)} for s in skills], indent=2))
        return 0
    if not skills:
        print("no skills")
        return 0
    width = max(len(_signature(s)) for s in skills)
    for s in skills:
        learnt = f"  [{s.robot_id}{': ' + ', '.join(s.fixtures) if s.fixtures else ''}]" \
            if s.robot_id else ""
        print(f"{_signature(s):<{width}}  {s.origin:<8}  uses {s.uses:>3}  ok {s.successes:>3}"
              f"  {s.description}{learnt}")
    return 0


def _show(args: argparse.Namespace) -> int:
    with _open(args) as store:
        skill = store.get_skill(args.name)
        names = [s.name for s in store.list_skills()]
    if skill is None:
        raise MemoryStoreError(f"no skill named {args.name!r}; known: {', '.join(names)}")
    print(f"# origin: {skill.origin}  uses: {skill.uses}  successes: {skill.successes}")
    if skill.source:
        print(f"# source: {skill.source}")
    print(skill.body, end="")
    return 0


def _export(args: argparse.Namespace) -> int:
    with _open(args) as store:
        skills = _selected(store, "", args.origin)
    text = "# FrankenBot skill library (exported)\n\n" + "\n".join(s.body for s in skills)
    if args.file == "-":
        sys.stdout.write(text)
    else:
        try:
            Path(args.file).write_text(text, encoding="utf-8")
        except OSError as e:
            raise MemoryStoreError(f"cannot write {args.file}: {e}") from e
        print(f"exported {len(skills)} skills to {args.file}")
    return 0


def _import(args: argparse.Namespace) -> int:
    name = "<stdin>" if args.file == "-" else args.file
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise MemoryStoreError(f"cannot read {name}: {e}") from e
    try:
        skills = language.parse_library(text)
    except FrankenbotError as e:
        raise MemoryStoreError(f"{name}:{getattr(e, 'line', 0)}: {e}") from e
    failed = 0
    with _open(args) as store:
        for s in skills:
            try:
                store.add_skills([s], SkillOrigin.IMPORTED, source=name, replace=args.replace)
                print(f"imported {s.name}")
            except FrankenbotError as e:
                failed += 1
                line = getattr(e, "line", 0) or s.span.line
                print(f"{name}:{line}: skipped {s.name}: {e}", file=sys.stderr)
    print(f"{len(skills) - failed} of {len(skills)} skills imported")
    return 1 if failed else 0
