"""A grammar-aware fuzzer for the parser and validator (stdlib only, seeded, reproducible).

Inputs mix random text, token soup from the language's own vocabulary, mutations of valid
programs (deletions, duplications, swaps, truncation, odd Unicode), deep nesting and ~10 kB
texts. For each input, ``check_text`` and ``parse_program`` must either succeed or raise only
``ProgramSyntaxError``; a parsed program must validate without raising and survive a print/parse
round trip; and no input may take longer than ``MAX_SECONDS``.

    python -m frankenbot.eval.fuzz --n 100000 --seed 1
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from frankenbot.program.catalog import default_catalog
from frankenbot.program.check import check_text
from frankenbot.program.errors import ProgramSyntaxError
from frankenbot.program.parser import KEYWORDS, parse_program
from frankenbot.program.printer import print_program
from frankenbot.program.validator import validate

MAX_SECONDS = 1.0  # per input, parse + validate + round trip, in CPU time of this thread
# (wall time is reported too; on a shared 2-core machine it includes other people's work)

SEED_PROGRAMS: tuple[str, ...] = (
    '''task "put the red block in the green bowl" {
  main {
    start:
    pick(obj=red_block)
    place_in(obj=red_block, container=green_bowl)
    if not in(red_block, green_bowl) { goto start max 2 } else { home() }
    repeat 3 { wait(seconds=0.5) }
    while not holding(red_block) max 3 { pick(obj=red_block) }
    exit success "done"
  }
  monitor dropped when not holding(red_block) during place_in {
    pick(obj=red_block)
    then resume
  }
  monitor bowl_moved when not visible(green_bowl) or (gripper_open and near(a, b, 0.05)) {
    detect(obj=green_bowl)
    then retry start max 1
  }
  skill put_twice(obj: object, n: number) "pick and place" {
    pick(obj=obj)
    place_at(obj=obj, x=-0.25, y=0.3)
    wait(seconds=n)
  }
}
''',
    '''skill stack_on(obj: object, base: object) "stack" {
  again:
  pick(obj=obj)
  place_on(obj=obj, target=base)
  if not on(obj, base) { goto again max 1 } else if empty(base) { exit failure "odd" }
}
''',
)

VOCAB: tuple[str, ...] = tuple(sorted(KEYWORDS)) + (
    "{", "}", "(", ")", ",", "=", ":", "#", '"', "```", "success", "failure", "resume",
    "escalate", "object", "number", "string", "pick", "place_in", "holding", "in", "red_block",
    "green_bowl", "0.5", "-1", "3", "\n", " ", "\t", '"text"', "\u201c", "\u201d", "\u00a0",
)


@dataclass
class FuzzReport:
    inputs: int = 0
    parsed: int = 0
    syntax_errors: int = 0
    failures: list[str] = field(default_factory=list)  # unexpected exceptions / violations
    max_seconds: float = 0.0  # thread CPU time of the slowest input
    max_wall_seconds: float = 0.0
    slowest_input: str = ""
    total_seconds: float = 0.0
    by_kind: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures and self.max_seconds <= MAX_SECONDS

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.by_kind.items()))
        return (f"fuzz: {self.inputs} inputs ({kinds})"
                f"\n  parsed {self.parsed}, syntax errors {self.syntax_errors}, "
                f"other failures {len(self.failures)}"
                f"\n  slowest input {self.max_seconds * 1e3:.1f} ms CPU "
                f"(limit {MAX_SECONDS * 1e3:.0f} ms), {self.max_wall_seconds * 1e3:.1f} ms wall"
                f"\n  total {self.total_seconds:.1f} s wall"
                f"\n  result: {'PASS' if self.ok else 'FAIL'}")


def _random_text(rng: random.Random, seeds: Sequence[str]) -> str:
    n = rng.randint(0, 200)
    pool = rng.choice(["ascii", "printable", "unicode"])
    if pool == "ascii":
        return "".join(chr(rng.randint(0, 127)) for _ in range(n))
    if pool == "printable":
        return "".join(rng.choice('abcxyz_019 {}()=,:"#\n\t-.') for _ in range(n))
    return "".join(chr(rng.randint(0, 0x2FFF)) for _ in range(n))


def _token_soup(rng: random.Random, seeds: Sequence[str]) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(rng.randint(1, 120)))


def _mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 6)):
        if not text:
            break
        i, j = sorted(rng.randrange(len(text) + 1) for _ in range(2))
        op = rng.randrange(7)
        if op == 0:
            text = text[:i] + text[j:]  # delete a span
        elif op == 1:
            text = text[:i] + text[i:j] + text[i:]  # duplicate a span
        elif op == 2:
            text = text[:i] + rng.choice(VOCAB) + text[i:]  # insert a token
        elif op == 3:
            text = text[:i] + chr(rng.randint(0, 0x10FFF)) + text[i + 1:]  # odd character
        elif op == 4:
            text = text[:i]  # truncate
        elif op == 5:
            text = text[j:] + text[:i]  # rotate pieces
        else:
            text = f"Sure, here you go:\n```fb\n{text}\n```\nThanks!"
    return text


def _deep(rng: random.Random, seeds: Sequence[str]) -> str:
    n = rng.choice([10, 31, 33, 100, 1000, 5000])
    kind = rng.randrange(5)
    if kind == 0:
        return "{" * n + "}" * rng.randint(0, n)
    if kind == 1:
        return 'task "x" { main { if ' + "(" * n + "gripper_open" + ")" * n + " { home() } } }"
    if kind == 2:
        return 'task "x" { main { ' + "if gripper_open { " * n + "home()" + " }" * n + " } }"
    if kind == 3:
        return 'task "x" { main { if ' + "not " * n + "gripper_open { home() } } }"
    return 'task "x" { main { repeat 2 { ' * n + "} } }" * n


def _big(rng: random.Random, seeds: Sequence[str]) -> str:
    seed = rng.choice(seeds)
    body = "\n".join(f"    pick(obj=block_{k})\n    home()" for k in range(rng.randint(300, 450)))
    kind = rng.randrange(3)
    if kind == 0:  # one valid ~10 kB program
        return f'task "big" {{\n  main {{\n{body}\n  }}\n}}\n'
    if kind == 1:  # 10 kB of chat noise around a program
        return ("lorem ipsum { ( " * 700)[: 10_000] + "\n" + seed
    return _mutate(rng, seed * (10_000 // len(seed) + 1))


GENERATORS: dict[str, Callable[[random.Random, Sequence[str]], str]] = {
    "random": _random_text,
    "soup": _token_soup,
    "mutant": lambda rng, seeds: _mutate(rng, rng.choice(seeds)),
    "deep": _deep,
    "big": _big,
}
WEIGHTS = {"random": 2, "soup": 3, "mutant": 8, "deep": 1, "big": 1}


def check_one(text: str) -> tuple[bool, str]:
    """Run one input; returns (parsed, problem) where problem is "" when all is well."""
    catalog = default_catalog()
    try:
        result = check_text(text, catalog, ("red_block", "green_bowl"))
        try:
            parsed = parse_program(text)
        except ProgramSyntaxError as e:
            if result.program is not None:
                return False, "check_text parsed what parse_program refused"
            if not (isinstance(e.line, int) and isinstance(e.column, int) and e.message):
                return False, f"syntax error without position/message: {e!r}"
            return False, ""
        program = parsed.program
        validate(program, catalog, None)
        if parse_program(print_program(program)).program != program:
            return True, "round trip changed the program"
        return True, ""
    except ProgramSyntaxError:
        return False, ""
    except Exception:
        return False, traceback.format_exc(limit=6)


def run_fuzz(n: int = 10_000, seed: int = 0, extra_seeds: Sequence[str] = (),
             progress: bool = False) -> FuzzReport:
    """Fuzz ``n`` inputs from a seeded generator mix; never raises for a bad input."""
    seeds = SEED_PROGRAMS + tuple(extra_seeds)
    rng = random.Random(seed)
    kinds = [k for k, w in WEIGHTS.items() for _ in range(w)]
    report = FuzzReport()
    t_start = time.perf_counter()
    for i in range(n):
        kind = rng.choice(kinds)
        text = GENERATORS[kind](rng, seeds)
        t0, c0 = time.perf_counter(), time.thread_time()
        parsed, problem = check_one(text)
        dt, wall = time.thread_time() - c0, time.perf_counter() - t0
        report.inputs += 1
        report.by_kind[kind] = report.by_kind.get(kind, 0) + 1
        report.parsed += parsed
        report.syntax_errors += not parsed and not problem
        if problem:
            report.failures.append(f"input #{i} ({kind}): {problem}\n--- input ---\n{text[:500]}")
        report.max_wall_seconds = max(report.max_wall_seconds, wall)
        if dt > report.max_seconds:
            report.max_seconds, report.slowest_input = dt, f"#{i} {kind} ({len(text)} chars)"
        if progress and (i + 1) % 10_000 == 0:
            print(f"  {i + 1} inputs, {len(report.failures)} failures, "
                  f"slowest {report.max_seconds * 1e3:.1f} ms CPU", flush=True)
    report.total_seconds = time.perf_counter() - t_start
    return report


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="number of inputs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("seeds", nargs="*", help="extra seed program files")
    args = ap.parse_args(argv)
    extra = [Path(p).read_text(encoding="utf-8", errors="replace") for p in args.seeds]
    report = run_fuzz(args.n, args.seed, extra, progress=True)
    print(report.summary())
    print(f"  slowest: {report.slowest_input}")
    for f in report.failures[:5]:
        print(f)
    return 0 if report.ok else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
