"""LIBERO's task definitions (BDDL) read from the installed ``libero`` package, as data.

The ``libero`` package (PyPI 0.1.1, MIT; installed with ``--no-deps`` from
``requirements/data.txt``) ships the 130 ``.bddl`` files of LIBERO-Spatial, -Object, -Goal, -10
and -90. Its Python modules import robosuite, torch and more, none of which we install, so they
are never imported: the files are located with ``importlib.util.find_spec`` (which does not run
the package) and read as text. Nothing is downloaded.

BDDL is PDDL's problem syntax plus LIBERO's sections: ``:language``, ``:regions`` (a target
surface or fixture, ``:ranges`` of x0 y0 x1 y1 boxes and an optional ``:yaw_rotation``),
``:fixtures``, ``:objects``, ``:obj_of_interest``, ``:init`` and ``:goal``. A small
S-expression reader (this module) is all it needs: no PDDL library parses the non-standard
sections, and the grammar is four tokens wide.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

from frankenbot.errors import ConfigError

# LIBERO's five suites, by our name and the package's folder; LIBERO-130 = 10 + 10 + 10 + 10 + 90
SUITES: dict[str, str] = {
    "libero-spatial": "libero_spatial",
    "libero-object": "libero_object",
    "libero-goal": "libero_goal",
    "libero-10": "libero_10",
    "libero-90": "libero_90",
}
PACKAGE = "libero"
PACKAGE_VERSION = "0.1.1"


class BddlError(ConfigError):
    """A BDDL file does not read (unbalanced parentheses, a section of the wrong form)."""


Sexp = Union[str, list["Sexp"]]


# ------------------------------------------------------------------------------ reading
_TOKEN = re.compile(r"\(|\)|;[^\n]*|[^\s()]+")


def read_sexp(text: str, source: str = "<text>") -> Sexp:
    """The one top-level S-expression of ``text`` (atoms stay strings; ``;`` starts a comment)."""
    stack: list[list[Sexp]] = [[]]
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        if tok.startswith(";"):
            continue
        if tok == "(":
            stack.append([])
        elif tok == ")":
            if len(stack) == 1:
                line = text.count("\n", 0, m.start()) + 1
                raise BddlError(f"{source}:{line}: ')' without a matching '('")
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(tok)
    if len(stack) != 1:
        raise BddlError(f"{source}: {len(stack) - 1} '(' never closed")
    top = stack[0]
    if len(top) != 1:
        raise BddlError(f"{source}: expected one top-level expression, found {len(top)}")
    return top[0]


# ------------------------------------------------------------------------------ the task model
@dataclass(frozen=True)
class Region:
    """A named region: on ``target`` (a table or a fixture); boxes of (x0, y0, x1, y1) in
    LIBERO's table frame (metres), and a yaw range (rad) for what is placed there."""

    name: str
    target: str
    ranges: tuple[tuple[float, float, float, float], ...] = ()
    yaw: tuple[float, float] | None = None

    @property
    def full_name(self) -> str:
        """How ``:init``/``:goal`` refer to it: ``<target>_<name>``."""
        return f"{self.target}_{self.name}"


@dataclass(frozen=True)
class Predicate:
    """One atom of ``:init`` or ``:goal``: ``(On a b)`` -> name "on", args ("a", "b")."""

    name: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return f"({self.name} {' '.join(self.args)})"


@dataclass(frozen=True)
class BddlTask:
    """One LIBERO task as its BDDL file defines it."""

    suite: str  # our suite name, e.g. libero-spatial
    name: str  # the file's stem (LIBERO's task name)
    language: str  # the file's ``:language`` text
    regions: tuple[Region, ...]
    fixtures: dict[str, str]  # instance -> category (tables included)
    objects: dict[str, str]  # instance -> category
    of_interest: tuple[str, ...]
    init: tuple[Predicate, ...]
    goal: tuple[Predicate, ...]  # a conjunction (every LIBERO goal is an And of atoms)
    path: Path = field(compare=False, default=Path())

    @property
    def task_id(self) -> str:
        return f"{self.suite}/{self.name}"

    @property
    def benchmark_language(self) -> str:
        """The instruction LIBERO's benchmark hands its policies (``Task.language``): the file
        name's words, after the ``*_SCENEn_`` prefix of LIBERO-90/-10 tasks. Where the two
        differ, the ``:language`` text has slips this one has not ("Put the cream cheese on
        the bowl" for an In goal)."""
        stem = self.name
        m = re.match(r"^[A-Z_]+_SCENE\d+_", stem)
        if m:
            stem = stem[m.end():]
        return stem.replace("_", " ")

    def region(self, full_name: str) -> Region | None:
        for r in self.regions:
            if r.full_name == full_name:
                return r
        return None


def _section(top: list[Sexp], key: str) -> list[Sexp] | None:
    for item in top:
        if isinstance(item, list) and item and item[0] == key:
            return item
    return None


def _typed_list(items: list[Sexp], source: str, key: str) -> dict[str, str]:
    """``a b - type c - type2`` -> {a: type, b: type, c: type2} (PDDL typed lists)."""
    out: dict[str, str] = {}
    pending: list[str] = []
    i = 0
    while i < len(items):
        tok = items[i]
        if not isinstance(tok, str):
            raise BddlError(f"{source}: {key} holds a list where a name was expected: {tok}")
        if tok == "-":
            if i + 1 >= len(items) or not isinstance(items[i + 1], str) or not pending:
                raise BddlError(f"{source}: {key}: '-' must follow names and precede a type")
            for name in pending:
                out[name] = str(items[i + 1])
            pending = []
            i += 2
            continue
        pending.append(tok)
        i += 1
    if pending:
        raise BddlError(f"{source}: {key}: {', '.join(pending)} have no type")
    return out


def _atom(item: Sexp, source: str) -> Predicate:
    if not isinstance(item, list) or not item or not all(isinstance(a, str) for a in item):
        raise BddlError(f"{source}: a predicate must be (Name arg ...), got {item}")
    return Predicate(str(item[0]).lower(), tuple(str(a) for a in item[1:]))


def _goal(item: Sexp, source: str) -> tuple[Predicate, ...]:
    if isinstance(item, list) and item and isinstance(item[0], str) and item[0].lower() == "and":
        return tuple(_atom(a, source) for a in item[1:])
    return (_atom(item, source),)


def _floats(item: Sexp, source: str, what: str) -> tuple[float, ...]:
    if not isinstance(item, list) or not all(isinstance(v, str) for v in item):
        raise BddlError(f"{source}: {what} must be a list of numbers, got {item}")
    try:
        return tuple(float(v) for v in item)  # type: ignore[arg-type]
    except ValueError as e:
        raise BddlError(f"{source}: {what}: {e}") from e


def _region(item: Sexp, source: str) -> Region:
    if not isinstance(item, list) or not item or not isinstance(item[0], str):
        raise BddlError(f"{source}: a region must be (name (:target t) ...), got {item}")
    name = item[0]
    target, ranges, yaw = "", [], None
    for part in item[1:]:
        if not isinstance(part, list) or not part:
            raise BddlError(f"{source}: region {name}: unexpected {part}")
        key = part[0]
        if key == ":target" and len(part) == 2 and isinstance(part[1], str):
            target = part[1]
        elif key == ":ranges" and len(part) == 2 and isinstance(part[1], list):
            for box in part[1]:
                vals = _floats(box, source, f"region {name} range")
                if len(vals) != 4:
                    raise BddlError(f"{source}: region {name}: a range has 4 numbers, got "
                                    f"{len(vals)}")
                ranges.append(vals)
        elif key == ":yaw_rotation" and len(part) == 2 and isinstance(part[1], list):
            boxes = [_floats(b, source, f"region {name} yaw") for b in part[1]]
            if boxes:
                if len(boxes[0]) != 2:
                    raise BddlError(f"{source}: region {name}: a yaw range has 2 numbers")
                yaw = (boxes[0][0], boxes[0][1])
        elif key == ":rgba":
            continue  # colour of a drawn region (none of the 130 tasks uses one)
        else:
            raise BddlError(f"{source}: region {name}: unknown section {key}")
    if not target:
        raise BddlError(f"{source}: region {name} has no :target")
    return Region(name, target, tuple(ranges), yaw)  # type: ignore[arg-type]


def parse_bddl(text: str, *, suite: str = "", name: str = "", path: Path = Path()
               ) -> BddlTask:
    """Read one BDDL problem (BddlError names the file and what is wrong)."""
    source = str(path) if path != Path() else (name or "<bddl>")
    top = read_sexp(text, source)
    if not isinstance(top, list) or not top or top[0] != "define":
        raise BddlError(f"{source}: expected (define (problem ...) ...)")
    lang = _section(top, ":language")
    if lang is None or len(lang) < 2:
        raise BddlError(f"{source}: no :language")
    language = " ".join(str(w) for w in lang[1:] if isinstance(w, str))
    regions_s = _section(top, ":regions") or [":regions"]
    fixtures_s = _section(top, ":fixtures") or [":fixtures"]
    objects_s = _section(top, ":objects")
    if objects_s is None:
        raise BddlError(f"{source}: no :objects")
    interest_s = _section(top, ":obj_of_interest") or [":obj_of_interest"]
    init_s = _section(top, ":init") or [":init"]
    goal_s = _section(top, ":goal")
    if goal_s is None or len(goal_s) != 2:
        raise BddlError(f"{source}: :goal must hold one expression")
    return BddlTask(
        suite=suite, name=name, language=language,
        regions=tuple(_region(r, source) for r in regions_s[1:]),
        fixtures=_typed_list(fixtures_s[1:], source, ":fixtures"),
        objects=_typed_list(objects_s[1:], source, ":objects"),
        of_interest=tuple(str(x) for x in interest_s[1:] if isinstance(x, str)),
        init=tuple(_atom(a, source) for a in init_s[1:]),
        goal=_goal(goal_s[1], source), path=path)


# ------------------------------------------------------------------------------ the package
def bddl_root() -> Path:
    """``libero/libero/bddl_files`` of the installed package (ConfigError if it is missing)."""
    spec = importlib.util.find_spec(PACKAGE)  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            f"the LIBERO task definitions are not installed: `pip install --no-deps "
            f"{PACKAGE}=={PACKAGE_VERSION}` (requirements/data.txt; `make setup` does it)")
    root = Path(list(spec.submodule_search_locations)[0]) / "libero" / "bddl_files"
    if not root.is_dir():
        raise ConfigError(f"the installed {PACKAGE} package has no bddl_files folder ({root})")
    return root


def package_licence() -> str:
    """The licence the installed package declares in its metadata."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        return str((metadata(PACKAGE).get_all("License") or [""])[0])
    except PackageNotFoundError:
        return ""


def suite_names(requested: str) -> tuple[str, ...]:
    """``libero`` -> all five suites; one suite name -> itself (ConfigError otherwise)."""
    if requested == "libero":
        return tuple(SUITES)
    if requested not in SUITES:
        raise ConfigError(f"unknown LIBERO suite {requested!r}; valid: libero, "
                          f"{', '.join(SUITES)}")
    return (requested,)


def load_suite(suite: str) -> tuple[BddlTask, ...]:
    """Every task of one suite, sorted by name."""
    if suite not in SUITES:
        raise ConfigError(f"unknown LIBERO suite {suite!r}; valid: {', '.join(SUITES)}")
    folder = bddl_root() / SUITES[suite]
    files = sorted(folder.glob("*.bddl"))
    if not files:
        raise ConfigError(f"no .bddl files in {folder}")
    return tuple(parse_bddl(f.read_text(), suite=suite, name=f.stem, path=f) for f in files)


def load_tasks(requested: str = "libero") -> tuple[BddlTask, ...]:
    """The tasks of ``requested`` (a suite or ``libero`` for all 130)."""
    out: list[BddlTask] = []
    for suite in suite_names(requested):
        out.extend(load_suite(suite))
    return tuple(out)
