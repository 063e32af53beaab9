"""Plain-language instructions -> task intents, for the offline planner.

The offline planner must never guess: every instruction either matches one of a small set of
anchored patterns (whole instruction, after normalising politeness, punctuation, plurals and
synonyms) or is refused with ``InstructionNotUnderstood``. Object phrases stay symbolic here
("the largest block", "it"); ``offline.py`` resolves them against the perceived scene.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Union

from frankenbot.errors import PlannerError
from frankenbot.state import COLOURS


class InstructionNotUnderstood(PlannerError):
    """The offline planner does not understand the instruction (it never guesses)."""


# --- vocabulary -----------------------------------------------------------------------------

COLOUR_SYNONYMS = {c: c for c in COLOURS} | {"grey": "gray", "violet": "purple", "aqua": "cyan"}
SHAPE_SYNONYMS = {
    "block": "block", "blocks": "block", "cube": "block", "cubes": "block", "brick": "block",
    "bricks": "block", "bowl": "bowl", "bowls": "bowl", "plate": "plate", "plates": "plate",
    "dish": "plate", "bin": "bin", "bins": "bin", "basket": "bin", "trash": "bin",
    "drawer": "drawer", "zone": "zone", "area": "zone", "region": "zone", "square": "zone",
    "patch": "zone", "spot": "zone",
    "one": "", "object": "", "objects": "", "thing": "", "item": "",
}
SUPERLATIVES = {
    "largest": "largest", "biggest": "largest", "smallest": "smallest", "tiniest": "smallest",
    "closest": "closest", "nearest": "closest", "farthest": "farthest", "furthest": "farthest",
    "leftmost": "leftmost", "rightmost": "rightmost", "tallest": "tallest",
    "big": "largest", "large": "largest", "bigger": "largest", "larger": "largest",
    "small": "smallest", "smaller": "smallest",
}
# Words that may sit inside an object phrase without changing its meaning.
_NOISE = {"target", "marked", "goal", "trash", "can", "of", "table", "on", "the", "down",
          "coloured"}
_ARTICLES = {"the", "a", "an", "any", "that", "this", "one"}

PICK = r"(?:pick up|pick|grab|grasp|lift up|lift|take|get|hold|raise)"
PUT = (r"(?:put|place|drop|move|set|transfer|bring|carry|deposit|load|stick|toss|throw|"
       r"stash|store)")
IN = r"(?:into|in to|inside of|inside|in)"
ON = r"(?:on top of|onto|on|atop)"
PUSH = r"(?:push|slide|shove|nudge|sweep)"


@dataclass(frozen=True)
class ObjectRef:
    """A symbolic object phrase: ``the largest red block``, ``the block closest to the bowl``."""

    text: str
    colour: str = ""
    shape: str = ""
    superlative: str = ""
    relative_to: "ObjectRef | None" = None  # "closest to the bowl"
    quantifier: str = "the"  # the | a (a/an/any: any match will do)
    pronoun: bool = False  # "it"
    object_id: str = ""  # the phrase named an id directly (red_block_2)


@dataclass(frozen=True)
class Pick:
    obj: ObjectRef


@dataclass(frozen=True)
class PutIn:
    obj: ObjectRef
    container: ObjectRef


@dataclass(frozen=True)
class PlaceOn:
    obj: ObjectRef
    target: ObjectRef


@dataclass(frozen=True)
class Tower:
    objs: tuple[ObjectRef, ...]  # bottom first


@dataclass(frozen=True)
class Sort:
    """Put every block into the bowl of its colour."""


@dataclass(frozen=True)
class Clear:
    container: ObjectRef  # where everything goes (default: the bin)


@dataclass(frozen=True)
class OpenDrawer:
    drawer: ObjectRef


@dataclass(frozen=True)
class CloseDrawer:
    drawer: ObjectRef


@dataclass(frozen=True)
class Push:
    obj: ObjectRef
    zone: ObjectRef


@dataclass(frozen=True)
class Home:
    pass


@dataclass(frozen=True)
class Condition:
    """``kind`` is empty | in | on | visible | drawer_open; ``negated`` flips it."""

    kind: str
    subject: ObjectRef
    other: ObjectRef | None = None
    negated: bool = False


@dataclass(frozen=True)
class Conditional:
    cond: Condition
    then: tuple["Action", ...]
    otherwise: tuple["Action", ...] = ()


Action = Union[Pick, PutIn, PlaceOn, Tower, Sort, Clear, OpenDrawer, CloseDrawer, Push, Home,
               Conditional]

_BIN = ObjectRef(text="the bin", shape="bin")
_DRAWER = ObjectRef(text="the drawer", shape="drawer")

# --- normalisation ----------------------------------------------------------------------------

_LEADING = re.compile(
    r"^(?:(?:ok(?:ay)?|hey|robot|frankenbot|please|kindly|now|then|go ahead and|"
    r"(?:can|could|would|will) you(?: please)?|i (?:want|need|would like|'d like) you to|"
    r"i want to|let's|let us|try to|you should|your task is to|the task is to)\s+)+")
_TRAILING = re.compile(r"(?:\s+(?:please|for me|now|thanks|thank you|right now|fully|again|"
                       r"all the way|completely|carefully|gently|quickly))+$")


def normalise(text: str) -> str:
    """Lower-case, canonical spelling, no politeness or punctuation except commas."""
    s = text.strip().lower()
    s = s.replace("\u2019", "'").replace("colors", "colours").replace("color", "colour")
    s = re.sub(r"[!?.;:\"`()\[\]\\{}<>=]+", " ", s)
    s = re.sub(r"\s*,\s*", ", ", s)
    s = re.sub(r"\s+", " ", s).strip(" ,")
    s = re.sub(r"\b(\w+)'s\b", r"\1s", s)
    for _ in range(3):
        s = _LEADING.sub("", s).strip(" ,")
        s = _TRAILING.sub("", s).strip(" ,")
    return s


# --- object phrases ---------------------------------------------------------------------------

_ID = re.compile(r"^[a-z]+(?:_[a-z0-9]+)+$")


def parse_ref(phrase: str) -> ObjectRef | None:
    """An object phrase -> ObjectRef, or None when the phrase is not a plain object reference."""
    phrase = phrase.strip(" ,")
    if phrase in ("it", "that", "this one", "that one"):
        return ObjectRef(text=phrase, pronoun=True)
    rel: ObjectRef | None = None
    m = re.match(r"^(.+?) (?:that is |which is )?(closest|nearest|farthest|furthest)"
                 r"(?: to| from)? (.+)$", phrase)
    superlative = ""
    if m:
        if m.group(3) in ("the robot", "you", "me", "the arm", "the base"):
            rel = None
        else:
            rel = parse_ref(m.group(3))
            if rel is None or rel.pronoun:
                return None
        superlative = SUPERLATIVES[m.group(2)]
        phrase = m.group(1)
    words = phrase.split()
    if not words:
        return None
    quantifier = "the"
    colour = shape = object_id = ""
    for i, w in enumerate(words):
        if w in _ARTICLES and i == 0 and len(words) > 1:
            quantifier = "a" if w in ("a", "an", "any", "one") else "the"
        elif w in COLOUR_SYNONYMS and not colour:
            colour = COLOUR_SYNONYMS[w]
        elif w in SUPERLATIVES and not superlative:
            superlative = SUPERLATIVES[w]
        elif w in SHAPE_SYNONYMS and (not shape or SHAPE_SYNONYMS[w] in (shape, "")):
            shape = shape or SHAPE_SYNONYMS[w]
        elif _ID.match(w) and not object_id and len(words) <= 2:
            object_id = w
        elif w in _NOISE:
            continue
        else:
            return None
    if not (colour or shape or superlative or object_id):
        if not any(w in SHAPE_SYNONYMS for w in words):
            return None
    return ObjectRef(text=phrase, colour=colour, shape=shape, superlative=superlative,
                     relative_to=rel, quantifier=quantifier, object_id=object_id)


def parse_ref_list(phrase: str) -> tuple[ObjectRef, ...] | None:
    """``the red, green and blue blocks`` or ``red block, then green block`` -> refs in order."""
    phrase = re.sub(r"\b(?:at the bottom|on the bottom|at the top|on top|in the middle|first|"
                    r"next|last|finally|followed by)\b", ",", phrase)
    parts = [p.strip() for p in re.split(r",|\band then\b|\bthen\b|\band\b", phrase)]
    parts = [p for p in parts if p and p not in ("the", "and")]
    if len(parts) < 2:
        return None
    refs = [parse_ref(p) for p in parts]
    if any(r is None for r in refs):
        # "the red, green and blue blocks": colours share the trailing shape word
        shared = parts[-1].split()[-1]
        if shared in SHAPE_SYNONYMS:
            refs = [parse_ref(p if p.endswith(shared) else f"{p} {shared}") for p in parts]
    if any(r is None or r.pronoun for r in refs):
        return None
    return tuple(r for r in refs if r is not None)


# --- clause patterns --------------------------------------------------------------------------

def _refs(*phrases: str) -> tuple[ObjectRef, ...] | None:
    refs = tuple(parse_ref(p) for p in phrases)
    return None if any(r is None for r in refs) else refs  # type: ignore[return-value]


def _put(m: re.Match[str]) -> tuple[Action, ...] | None:
    target = parse_ref(m["b"])
    if target is None:
        return None
    objs = parse_ref_list(m["a"]) or _refs(m["a"])
    if objs is None:
        return None
    return tuple(PutIn(o, target) for o in objs)


def _on(m: re.Match[str]) -> tuple[Action, ...] | None:
    refs = _refs(m["a"], m["b"])
    return None if refs is None else (PlaceOn(refs[0], refs[1]),)


def _put_in_drawer_close(m: re.Match[str]) -> tuple[Action, ...] | None:
    refs = _refs(m["a"], m["b"])
    if refs is None or refs[1].shape not in ("drawer", ""):
        return None
    return (PutIn(refs[0], refs[1]), CloseDrawer(refs[1]))


def _put_there(m: re.Match[str]) -> tuple[Action, ...] | None:
    """``put X inside [and shut it]``: into the container mentioned before."""
    refs = _refs(m["a"])
    if refs is None:
        return None
    there = ObjectRef(text="it", pronoun=True)
    closing = (CloseDrawer(there),) if m["b"] else ()
    return (PutIn(refs[0], there), *closing)


def _single(kind: Callable[[ObjectRef], Action]) -> Callable[[re.Match[str]], tuple | None]:
    def build(m: re.Match[str]) -> tuple[Action, ...] | None:
        refs = _refs(m["a"])
        return None if refs is None else (kind(refs[0]),)
    return build


def _push(m: re.Match[str]) -> tuple[Action, ...] | None:
    refs = _refs(m["a"], m["b"])
    return None if refs is None else (Push(refs[0], refs[1]),)


def _tower(m: re.Match[str]) -> tuple[Action, ...] | None:
    objs = parse_ref_list(m["list"])
    if objs is None:
        return None
    conn = m.groupdict().get("conn") or ""
    if m.groupdict().get("dir") == "top to bottom" or conn.startswith(("from the top",
                                                                      "from top")):
        objs = tuple(reversed(objs))
    return (Tower(objs),)


def _clear(m: re.Match[str]) -> tuple[Action, ...] | None:
    target = m.groupdict().get("b")
    ref = parse_ref(target) if target else _BIN
    return None if ref is None else (Clear(ref),)


_BLOCKS = r"(?:blocks|cubes|objects|things|items|block|cube)"
_ALL = r"(?:all(?: of)?(?: the)?|every|each|the)"
_BOWLS = r"(?:the |their |matching |the matching |the right |right )?(?:coloured )?bowls?"
_SAME_COLOUR = (r"(?:(?:by|according to|based on) (?:their |its |the )?colours?|"
                r"(?:of|with|in) (?:the same|their|its|a matching|matching|the matching) colours?|"
                r"that (?:has|have|matches|match) (?:the same|its|their) colours?)")
_SORT_TAIL = r"(?: (?:(?:in|into|to) " + _BOWLS + r"|" + _SAME_COLOUR + r")){1,3}"
_TOWER_HEAD = (r"^(?:build|make|stack|create|form|assemble) (?:up )?(?:a |the )?(?:block )?tower"
               r"(?: of (?:two|three|four|2|3|4) blocks?)?")
_TOWER_CONN = (r"(?:,? (?P<conn>with|using|of|out of|in the order|in this order|"
               r"from the bottom(?: up)?|from bottom to top|from the top(?: down)?|"
               r"from top to bottom))?,?")
_TOWER_DIR = r"(?:,? from (?P<dir>bottom to top|top to bottom))?$"

# Ordered: the first full match wins. Whole-instruction families come before single clauses.
_PATTERNS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], tuple | None]], ...] = tuple(
    (re.compile(p), f) for p, f in (
        (_TOWER_HEAD + _TOWER_CONN + r" (?P<list>.+?)" + _TOWER_DIR, _tower),
        (r"^stack (?P<list>.+?) (?:into|in|as) a tower" + _TOWER_DIR, _tower),
        (r"^stack (?P<list>.+?) on top of each other" + _TOWER_DIR, _tower),
        (r"^(?:sort|group|organise|organize|arrange|separate|distribute) " + _ALL + r"? ?"
         + _BLOCKS + r"(?: on the table)?" + _SORT_TAIL + "$", lambda m: (Sort(),)),
        (r"^" + PUT + r" " + _ALL + r" " + _BLOCKS + r" " + IN + r" " + _BOWLS + r" "
         + _SAME_COLOUR + r"$", lambda m: (Sort(),)),
        (r"^match (?:the )?" + _BLOCKS + r" (?:to|with) (?:the )?bowls?(?: by colour)?$",
         lambda m: (Sort(),)),
        (r"^(?:clear|clean|tidy)(?: up| off)? (?:the )?table(?: (?:into|in|to) (?P<b>.+))?$",
         _clear),
        (r"^(?:clear|clean|tidy)(?: up| off)? (?:the )?table,? (?:by )?(?:putting|put|moving|"
         r"move|throwing|throw|placing|place) (?:all|every|each|everything)(?: of)?(?: the)?(?: "
         + _BLOCKS + r")? " + IN + r" (?P<b>.+)$", _clear),
        (r"^(?:clear|clean|tidy)(?: up| away| off)? (?:all )?(?:of )?(?:the )?(?:everything|"
         + _BLOCKS + r")(?: on the table)? (?:into|in|to) (?P<b>.+)$", _clear),
        (r"^(?:clear|clean|tidy) (?:up|off) everything$", _clear),
        (r"^(?:" + PUT + r"|throw|get) (?:all(?: of)?(?: the)?|every|each|everything)(?: "
         + _BLOCKS + r")?(?: on the table| from the table)? " + IN + r" (?P<b>.+)$", _clear),
        (r"^(?:" + PUT + r") (?P<a>.+?) " + IN + r" (?P<b>(?:the )?drawer),?(?: and)?(?: then)?"
         r" (?:close|shut) (?:it|the drawer)(?: again| afterwards)?$", _put_in_drawer_close),
        (r"^(?:" + PUT + r") (?P<a>.+?) (?:inside|in there|there|in it|into it)(?:,? and"
         r"(?: then)? (?:close|shut) (?P<b>it|the drawer))?$", _put_there),
        (r"^(?:" + PICK + r") (?P<a>.+?)(?: up)?,?(?: and)?(?: then)? (?:" + PUT + r") "
         r"(?:it )?(?:" + IN + r"|to) (?P<b>.+)$", _put),
        (r"^(?:" + PICK + r") (?P<a>.+?)(?: up)?,?(?: and)?(?: then)? (?:" + PUT + r"|stack) "
         r"(?:it )?" + ON + r" (?P<b>.+)$", _on),
        (r"^(?:" + PICK + r") (?P<a>.+?)(?: up)? and (?:lift|raise|hold) it(?: up)?$",
         _single(Pick)),
        (r"^(?:open|pull open|pull out|slide open) (?P<a>.+)$", _single(OpenDrawer)),
        (r"^pull (?P<a>.+) (?:open|out)$", _single(OpenDrawer)),
        (r"^(?:close|shut|push in|slide shut) (?P<a>.+)$", _single(CloseDrawer)),
        (r"^push (?P<a>.+) (?:closed|shut|in)$", _single(CloseDrawer)),
        (r"^(?:" + PUSH + r") (?P<a>.+?) (?:into|in to|in|onto|to|towards|over to|inside) "
         r"(?P<b>.+)$", _push),
        (r"^(?:" + PUT + r"|stack) (?P<a>.+?) " + ON + r" (?P<b>.+)$", _on),
        (r"^(?:" + PUT + r") (?P<a>.+?) (?:" + IN + r"|to|over to|towards) (?P<b>.+)$", _put),
        (r"^(?:" + PICK + r") (?P<a>.+?)(?: up)?(?: off| from)?(?: the table)?$",
         _single(Pick)),
        (r"^(?:go|move|return)(?: back)?(?: to)?(?: the)? home(?: position| pose)?$",
         lambda m: (Home(),)),
    ))


def _parse_clause(clause: str) -> tuple[Action, ...] | None:
    """First pattern whose match also builds; the shortest and the longest first object phrase
    are both tried ("put the block closest to the robot in the bowl")."""
    for pattern, greedy, build in _PATTERNS_BOTH:
        for p in (pattern, greedy):
            m = p.match(clause)
            if m:
                actions = build(m)
                if actions is not None:
                    return actions
    return None


_PATTERNS_BOTH = tuple((p, re.compile(p.pattern.replace("(?P<a>.+?)", "(?P<a>.+)")), f)
                       for p, f in _PATTERNS)


def _parse_sequence(text: str) -> tuple[Action, ...] | None:
    """One clause, or clauses joined by 'then' / 'and' (each must parse)."""
    whole = _parse_clause(text)
    if whole is not None:
        return whole
    for splitter in (r",? and then |,? then |, after that |, and ", r" and ", r", "):
        parts = re.split(splitter, text)
        if len(parts) < 2:
            continue
        out: list[Action] = []
        verb = ""
        for part in parts:
            part = part.strip(" ,")
            sub = _parse_sequence(part) if part else None
            if sub is None and verb:  # "stack a on b and then c on a": the verb carries over
                sub = _parse_sequence(f"{verb} {part}")
            if sub is None:
                break
            verb = verb or part.split(" ", 1)[0]
            out.extend(sub)
        else:
            return tuple(out)
    return None


_COND_PATTERNS: tuple[tuple[re.Pattern[str], str, bool], ...] = tuple(
    (re.compile(p), kind, neg) for p, kind, neg in (
        (r"^(?P<a>.+?) is empty$", "empty", False),
        (r"^(?P<a>.+?) (?:is not|isn't|isnt) empty$", "empty", True),
        (r"^(?P<a>.+?) (?:is full|is occupied|has something in it|contains something)$",
         "empty", True),
        (r"^(?:there is nothing in|nothing is in) (?P<a>.+)$", "empty", False),
        (r"^(?P<a>.+?) is (?:already )?" + IN + r" (?P<b>.+)$", "in", False),
        (r"^(?P<a>.+?) (?:is not|isn't|isnt) " + IN + r" (?P<b>.+)$", "in", True),
        (r"^(?P<a>.+?) is (?:already )?" + ON + r" (?P<b>.+)$", "on", False),
        (r"^(?P<a>.+?) (?:is not|isn't|isnt) " + ON + r" (?P<b>.+)$", "on", True),
        (r"^(?P<a>.+?) is open$", "drawer_open", False),
        (r"^(?P<a>.+?) (?:is closed|is shut|is not open|isn't open|isnt open)$",
         "drawer_open", True),
        (r"^(?:there is|you (?:can )?see) (?P<a>.+)$", "visible", False),
        (r"^(?P<a>.+?) is visible$", "visible", False),
    ))


def _parse_condition(text: str) -> Condition | None:
    for pattern, kind, neg in _COND_PATTERNS:
        m = pattern.match(text)
        if not m:
            continue
        a = parse_ref(m["a"])
        b = parse_ref(m["b"]) if "b" in pattern.groupindex else None
        if a is None or ("b" in pattern.groupindex and b is None):
            continue
        return Condition(kind, a, b, neg)
    return None


def _parse_conditional(text: str) -> Conditional | None:
    """``if COND[,] [then] ACTIONS [, else|otherwise ACTIONS]``: tries every split point."""
    if not text.startswith("if "):
        return None
    words = text[3:].split(" ")
    for k in range(1, len(words)):
        cond = _parse_condition(" ".join(words[:k]).strip(" ,"))
        if cond is None:
            continue
        rest = " ".join(words[k:]).strip(" ,")
        rest = re.sub(r"^then ", "", rest)
        branches = re.split(r",? (?:else|otherwise|if not|and if not)(?: then)?,? ", rest,
                            maxsplit=1)
        then = _parse_sequence(branches[0].strip(" ,"))
        otherwise = _parse_sequence(branches[1].strip(" ,")) if len(branches) > 1 else ()
        if then is not None and otherwise is not None:
            return Conditional(cond, then, otherwise)
    return None


def parse_instruction(text: str) -> tuple[Action, ...]:
    """Instruction -> actions in order; raises InstructionNotUnderstood (never guesses)."""
    if not isinstance(text, str) or not text.strip():
        raise InstructionNotUnderstood("empty instruction")
    norm = normalise(text)
    actions: tuple[Action, ...] | None = None
    conditional = _parse_conditional(norm)
    if conditional is not None:
        actions = (conditional,)
    else:
        actions = _parse_sequence(norm)
    if not actions:
        raise InstructionNotUnderstood(
            f"not understood: {text.strip()[:120]!r}. The offline planner knows: pick up X; "
            "put X in Y; stack X on Y; build a tower of A, B and C; sort the blocks by colour; "
            "clear the table; open/close the drawer; put X in the drawer and close it; push X "
            "into the zone; 'if the bowl is empty ... else ...'; the largest/closest block")
    return actions
