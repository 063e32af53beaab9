"""``frankenbot check FILE|-``: parse and validate a program, exit 0 when valid, 1 when not."""

from __future__ import annotations

import argparse
import json
import sys

from frankenbot.program.catalog import default_catalog
from frankenbot.program.check import check_text
from frankenbot.program.diagnostics import render_diagnostics


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "check", help="parse and validate a program file (or - for stdin)",
        description="Parse and validate a FrankenBot program against the default catalog. "
                    "Exit status 0 when valid (warnings allowed), 1 when not.")
    p.add_argument("file", help="program file, or - to read standard input")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--objects", default=None,
                   help="comma-separated scene object ids to check against (default: no check)")
    p.add_argument("--compact", action="store_true", help="one line per diagnostic")
    p.set_defaults(func=run_check)


def _read(path: str) -> tuple[str | None, str]:
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            return None, f"cannot read {path}: {e.strerror or e}"
    return data.decode("utf-8", errors="replace"), ""


def run_check(args: argparse.Namespace) -> int:
    text, problem = _read(args.file)
    if text is None:
        if args.json:
            print(json.dumps({"file": args.file, "valid": False, "error": problem}))
        else:
            print(f"frankenbot check: error: {problem}", file=sys.stderr)
        return 1
    objects = None
    if args.objects is not None:
        objects = [o.strip() for o in args.objects.split(",") if o.strip()]
    result = check_text(text, default_catalog(), objects)
    if args.json:
        print(json.dumps({
            "file": args.file,
            "valid": result.ok,
            "diagnostics": [d.to_dict() for d in result.diagnostics],
            "stripped": list(result.stripped),
        }, indent=2))
    else:
        for note in result.stripped:
            print(f"note: extracted the program; {note}")
        shown = render_diagnostics(result.diagnostics, compact=args.compact, source=text)
        if result.diagnostics:
            print(shown)
        print(f"{args.file}: {'valid' if result.ok else 'invalid'}")
    return 0 if result.ok else 1
