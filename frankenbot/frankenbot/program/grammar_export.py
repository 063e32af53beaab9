"""The program grammar in the dialects inference servers take, generated from grammar.lark.

``grammar.lark`` stays the one source of truth. llama.cpp's ``grammar`` field takes GBNF and
SGLang's ``ebnf`` field takes xgrammar's EBNF (GBNF's notation); neither has a lexer, so the
export works on the grammar Lark compiles (plain BNF: Lark has already expanded ``?``, ``*``,
``+`` and ``[...]`` into rules) and makes the lexer's work explicit:

- every terminal becomes a rule, its regex translated construct by construct (literals, classes,
  groups, alternation, ``? * +``); anything outside that subset is an error, not a guess;
- left recursion (Lark's form of ``x*``) becomes right recursion: llama.cpp cannot take it;
- the ``%ignore``d terminal becomes whitespace between the symbols of every rule (and around the
  start symbol). Where the symbol before can end in a word character and the one after can start
  with one (``goto`` then a label, ``max`` then a count) the whitespace is required, because
  a lexer would read ``gotostart`` as one name.

What a lexer does and BNF cannot say: a keyword is never a name where both could be read. A
lexer-free grammar therefore accepts a few texts Lark refuses (a call named ``if``); the
validator rejects those (reserved-name), and the corpus test in ``test_grammar_export`` pins
exactly which texts differ. ``check_gbnf`` compiles a GBNF text with LLGuidance's GBNF reader
(the llama.cpp notation) so a malformed grammar is caught here, never by a server, which may
die of it.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

try:  # Python 3.11+: the regex parser is private but stable in what it returns
    import re._constants as sre_constants
    import re._parser as sre_parse
except ImportError:  # pragma: no cover
    import sre_constants
    import sre_parse

from lark import Lark
from lark.lexer import PatternRE, PatternStr

from frankenbot.errors import ProgramError
from frankenbot.program.parser import KEYWORDS, grammar_text

WORD_CHARS = frozenset(string.ascii_letters + string.digits + "_")
ALL_CHARS = frozenset(chr(i) for i in range(128))


class GrammarExportError(ProgramError, ValueError):
    """The Lark grammar uses something the exporter cannot translate exactly."""


@dataclass(frozen=True)
class _Edges:
    """Whether a symbol's text can start / end with a word character."""

    starts_word: bool
    ends_word: bool


def _hex(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02X}" if code < 256 else f"\\u{code:04X}"


def _char(ch: str) -> str:
    """One character inside a literal or class: letters, digits and ``_`` as they are,
    everything else as a hex escape (both GBNF and xgrammar read ``\\xNN``)."""
    return ch if ch in WORD_CHARS else _hex(ch)


def _literal(text: str) -> str:
    return '"' + "".join(_char(c) for c in text) + '"'


# ------------------------------------------------------------------------ regex -> BNF

def _class_items(items: list) -> tuple[bool, str]:
    negate, parts = False, []
    for op, av in items:
        if op == sre_constants.NEGATE:
            negate = True
        elif op == sre_constants.LITERAL:
            parts.append(_char(chr(av)))
        elif op == sre_constants.RANGE:
            parts.append(f"{_char(chr(av[0]))}-{_char(chr(av[1]))}")
        elif op == sre_constants.CATEGORY and av == sre_constants.CATEGORY_DIGIT:
            parts.append("0-9")
        elif op == sre_constants.CATEGORY and av == sre_constants.CATEGORY_SPACE:
            parts.append(_char(" ") + _char("\t") + _char("\n") + _char("\r"))
        elif op == sre_constants.CATEGORY and av == sre_constants.CATEGORY_WORD:
            parts.append("A-Za-z0-9_")
        else:
            raise GrammarExportError(f"unsupported character class item {op} {av!r}")
    return negate, "".join(parts)


def _regex_seq(items: list) -> str:
    out: list[str] = []
    run = ""  # consecutive literal characters become one string
    for op, av in items:
        if op == sre_constants.LITERAL:
            run += chr(av)
            continue
        if run:
            out.append(_literal(run))
            run = ""
        out.append(_regex_item(op, av))
    if run:
        out.append(_literal(run))
    return " ".join(x for x in out if x)


def _regex_item(op: object, av: Any) -> str:
    """``av``: the private regex parser's argument of ``op`` (an int, a tuple, a list)."""
    if op == sre_constants.LITERAL:
        return _literal(chr(av))
    if op == sre_constants.NOT_LITERAL:
        return f"[^{_char(chr(av))}]"
    if op == sre_constants.ANY:
        return f"[^{_char(chr(10))}]"
    if op == sre_constants.IN:
        negate, body = _class_items(av)
        return f"[{'^' if negate else ''}{body}]"
    if op == sre_constants.SUBPATTERN:
        _group, _add, _del, sub = av
        return f"({_regex_seq(list(sub))})"
    if op == sre_constants.BRANCH:
        _none, branches = av
        return "(" + " | ".join(_regex_seq(list(b)) for b in branches) + ")"
    if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
        lo, hi, sub = av
        inner = _regex_seq(list(sub))
        if " " in inner and not (inner.startswith("(") and inner.endswith(")")):
            inner = f"({inner})"
        if (lo, hi) == (0, sre_constants.MAXREPEAT):
            return f"{inner}*"
        if (lo, hi) == (1, sre_constants.MAXREPEAT):
            return f"{inner}+"
        if (lo, hi) == (0, 1):
            return f"{inner}?"
        if hi == sre_constants.MAXREPEAT:
            return f"{inner}{{{lo},}}"
        return f"{inner}{{{lo},{hi}}}"
    raise GrammarExportError(f"unsupported regex construct {op}")


def regex_to_bnf(pattern: str) -> str:
    """A Python regex (the subset Lark terminals use here) as a GBNF/EBNF expression."""
    return _regex_seq(list(sre_parse.parse(pattern)))


def _regex_edges(pattern: str) -> tuple[frozenset[str], frozenset[str]]:
    """The characters a regex's matches can start and end with (ASCII; over-approximated)."""
    return _first(list(sre_parse.parse(pattern))), _first(list(sre_parse.parse(pattern))[::-1],
                                                          reverse=True)


def _item_chars(op: object, av: Any, reverse: bool) -> tuple[frozenset[str], bool]:
    """(characters the item can start with, whether it can match empty)."""
    if op == sre_constants.LITERAL:
        return frozenset(chr(av)), False
    if op == sre_constants.NOT_LITERAL:
        return ALL_CHARS - {chr(av)}, False
    if op == sre_constants.ANY:
        return ALL_CHARS - {"\n"}, False
    if op == sre_constants.IN:
        chars: set[str] = set()
        negate = False
        for iop, iav in av:
            if iop == sre_constants.NEGATE:
                negate = True
            elif iop == sre_constants.LITERAL:
                chars.add(chr(iav))
            elif iop == sre_constants.RANGE:
                chars.update(chr(c) for c in range(iav[0], iav[1] + 1))
            else:
                chars.update(ALL_CHARS)
        return (ALL_CHARS - chars if negate else frozenset(chars)), False
    if op == sre_constants.SUBPATTERN:
        sub = list(av[3])
        return _first_empty(sub[::-1] if reverse else sub, reverse)
    if op == sre_constants.BRANCH:
        out: set[str] = set()
        empty = False
        for b in av[1]:
            c, e = _first_empty(list(b)[::-1] if reverse else list(b), reverse)
            out |= c
            empty = empty or e
        return frozenset(out), empty
    if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
        lo, _hi, sub = av
        c, e = _first_empty(list(sub)[::-1] if reverse else list(sub), reverse)
        return c, e or lo == 0
    raise GrammarExportError(f"unsupported regex construct {op}")


def _first_empty(items: list, reverse: bool) -> tuple[frozenset[str], bool]:
    out: set[str] = set()
    for op, av in items:
        c, e = _item_chars(op, av, reverse)
        out |= c
        if not e:
            return frozenset(out), False
    return frozenset(out), True


def _first(items: list, reverse: bool = False) -> frozenset[str]:
    return _first_empty(items, reverse)[0]


# ------------------------------------------------------------------------ the export

def _rule_name(name: str, dialect: str) -> str:
    """GBNF names are ``[a-zA-Z0-9-]+``; xgrammar also takes ``_``. Lark's helper rules
    (``__block_star_2``) and terminals (``NAME``) get prefixes that cannot collide."""
    base = name.lower().strip("_")
    prefix = "t-" if name.isupper() else ("x-" if name.startswith("_") else "")
    out = prefix + base
    return out.replace("_", "-") if dialect == "gbnf" else out.replace("-", "_")


@functools.lru_cache(maxsize=8)
def export_grammar(dialect: str = "gbnf", start: str = "task", lark_text: str = "",
                   max_space: int = 0) -> str:
    """The grammar (default: the language's own, comments allowed) as GBNF or EBNF text.

    ``dialect``: ``gbnf`` (llama.cpp) or ``ebnf`` (xgrammar/SGLang). ``start``: ``task`` for a
    program, ``library`` for a run of skills. ``lark_text``: another Lark text of the same shape
    (the planner passes its comment-free variant). ``max_space`` > 0 makes a grammar for
    generation: no whitespace before or after the program and at most that many whitespace
    characters between two tokens, so a small model cannot spend its whole token budget on
    blank lines (measured: Gemma 3 270M wrote 150 empty lines under the unbounded grammar)."""
    if dialect not in ("gbnf", "ebnf"):
        raise ValueError(f"dialect must be 'gbnf' or 'ebnf', got {dialect!r}")
    if start not in ("task", "library"):
        raise ValueError(f"start must be 'task' or 'library', got {start!r}")
    text = lark_text or grammar_text("lark")
    # the compiled rules and the %ignore terminals: Lark sets them at run time without
    # declaring them in its type hints
    lark: Any = Lark(text, parser="lalr", start=["start", "library"], maybe_placeholders=False,
                     keep_all_tokens=True)
    if len(lark.ignore_tokens) != 1:
        raise GrammarExportError("expected exactly one %ignore terminal (the whitespace)")
    skip_name = lark.ignore_tokens[0]
    edges: dict[str, _Edges] = {}
    bodies: dict[str, str] = {}
    for t in lark.terminals:
        if isinstance(t.pattern, PatternStr):
            value = t.pattern.value
            bodies[t.name] = _literal(value)
            edges[t.name] = _Edges(value[:1] in WORD_CHARS, value[-1:] in WORD_CHARS)
        elif isinstance(t.pattern, PatternRE):
            if t.pattern.flags:
                raise GrammarExportError(f"terminal {t.name} uses regex flags {t.pattern.flags}")
            bodies[t.name] = regex_to_bnf(t.pattern.value)
            first, last = _regex_edges(t.pattern.value)
            edges[t.name] = _Edges(bool(first & WORD_CHARS), bool(last & WORD_CHARS))
        else:  # pragma: no cover - Lark has only these two
            raise GrammarExportError(f"terminal {t.name}: unknown pattern type")
    rules: dict[str, list[list[str]]] = {}
    for r in lark.rules:
        rules.setdefault(r.origin.name, []).append([s.name for s in r.expansion])
    if any(not a for alts in rules.values() for a in alts):
        raise GrammarExportError("the compiled grammar has an empty expansion")
    if max_space > 0:
        body = bodies[skip_name]
        if "#" in body or "\\x23" in body:
            raise GrammarExportError("bounded whitespace needs a skip rule without comments")
        bodies[skip_name] = f"[\\x20\\x09\\x0D\\x0A]{{1,{max_space}}}"
    return _emit(_no_left_recursion(rules), bodies, edges, skip_name, start, dialect,
                 pad_root=max_space <= 0)


def _no_left_recursion(rules: dict[str, list[list[str]]]) -> dict[str, list[list[str]]]:
    """Lark writes ``x*`` as a left-recursive rule (``s: x | s x``); llama.cpp's grammar engine
    expands rules top-down and a left-recursive one crashed the server (SIGSEGV). Rewrite each
    ``R: a | R b`` as the right-recursive, still epsilon-free ``R: a | a T; T: b | b T``."""
    out: dict[str, list[list[str]]] = {}
    for name, alts in rules.items():
        rec = [a[1:] for a in alts if a[0] == name]
        base = [a for a in alts if a[0] != name]
        if not rec:
            out[name] = alts
            continue
        if not base or any(not r for r in rec):
            raise GrammarExportError(f"rule {name} cannot be rewritten without left recursion")
        tail = f"{name}_tail"
        out[name] = base + [b + [tail] for b in base]
        out[tail] = rec + [r + [tail] for r in rec]
    for name, alts in out.items():  # indirect left recursion is not handled: refuse it
        for alt in alts:
            if _starts_with(out, alt[0], name, set()):
                raise GrammarExportError(f"rule {name} is left-recursive through {alt[0]}")
    return out


def _starts_with(rules: dict[str, list[list[str]]], sym: str, target: str, seen: set) -> bool:
    if sym == target:
        return True
    if sym not in rules or sym in seen:
        return False
    seen.add(sym)
    return any(_starts_with(rules, a[0], target, seen) for a in rules[sym])


_W, _P = "w", "p"  # a text edge that is / is not a word character


def _emit(rules: dict[str, list[list[str]]], bodies: dict[str, str],
          term_edges: dict[str, _Edges], skip_name: str, start: str, dialect: str,
          pad_root: bool = True) -> str:
    """BNF with explicit whitespace, exact about where a separator is required.

    Each rule is split by the kind of character its text starts and ends with (word or not),
    so the glue between two neighbours is known exactly: required whitespace (``sep``) between
    a word end and a word start, optional (``ws``) elsewhere. A sequence is written as a chain
    of suffix rules so the split stays linear in the rule length."""
    kinds: dict[str, set[tuple[str, str]]] = {
        t: {(_W if e.starts_word else _P, _W if e.ends_word else _P)}
        for t, e in term_edges.items()}
    for name in rules:
        kinds[name] = set()
    changed = True
    while changed:  # which (start, end) kinds each rule can produce
        changed = False
        for name, alts in rules.items():
            for alt in alts:
                if len(alt) == 1:
                    new = set(kinds[alt[0]])
                else:
                    new = {(s, e) for s, _ in kinds[alt[0]] for _, e in kinds[alt[-1]]}
                if not new <= kinds[name]:
                    kinds[name] |= new
                    changed = True

    def rn(name: str) -> str:
        return _rule_name(name, dialect)

    def var(sym: str, s: str, e: str) -> str:
        if sym in term_edges:
            return rn(sym)
        return rn(f"{sym}_{s}{e}")

    ws, sep = rn("ws"), rn("sep")
    out: dict[str, list[str]] = {}

    def chain(name: str, k: int, alt: list[str], i: int, s: str, e: str) -> str | None:
        """The rule for ``alt[i:]`` starting with kind ``s`` and ending with kind ``e``."""
        key = rn(f"{name}_{k}_{i}_{s}{e}") if i else ""
        if key and key in out:
            return key if out[key] else None
        if key:
            out[key] = []  # placeholder against cycles (chains only go forward)
        sym = alt[i]
        options = []
        for s0, e0 in sorted(kinds[sym]):
            if s0 != s:
                continue
            if i == len(alt) - 1:
                if e0 == e:
                    options.append(var(sym, s0, e0))
                continue
            for s1 in sorted({k0 for k0, _ in kinds[alt[i + 1]]}):
                rest = chain(name, k, alt, i + 1, s1, e)
                if rest is None:
                    continue
                glue = sep if (e0, s1) == (_W, _W) else ws
                options.append(f"{var(sym, s0, e0)} {glue} {rest}")
        options = list(dict.fromkeys(options))
        if key:
            out[key] = options
            return key if options else None
        return " | ".join(options) if options else None

    order = _reachable(rules, start)
    for name in order:
        for s, e in sorted(kinds[name]):
            choices: list[str] = []
            for k, alt in enumerate(rules[name]):
                body = chain(name, k, alt, 0, s, e)
                if body:
                    choices.append(body)
            out[rn(f"{name}_{s}{e}")] = [" | ".join(choices)]
    used_terms = sorted({sym for alts in rules.values() for alt in alts for sym in alt
                         if sym in term_edges and any(n in rules for n in order)})
    roots = " | ".join(var(start, s, e) for s, e in sorted(kinds[start]))
    lines = [f"root ::= {ws} ({roots}) {ws}" if pad_root else f"root ::= {roots}"]
    lines += [f"{k} ::= {' | '.join(v)}" for k, v in out.items() if v]
    lines += [f"{rn(t)} ::= {bodies[t]}" for t in used_terms]
    lines.append(f"{sep} ::= {bodies[skip_name]}")
    lines.append(f"{ws} ::= {sep}?")
    return "\n".join(lines) + "\n"


def _reachable(rules: dict[str, list[list[str]]], start: str) -> list[str]:
    seen: list[str] = []
    todo = [start]
    while todo:
        name = todo.pop(0)
        if name in seen or name not in rules:
            continue
        seen.append(name)
        for alt in rules[name]:
            todo.extend(s for s in alt if s in rules and s not in seen)
    return seen


def gbnf(start: str = "task", lark_text: str = "") -> str:
    """GBNF for llama.cpp's ``grammar`` field."""
    return export_grammar("gbnf", start, lark_text)


def ebnf(start: str = "task", lark_text: str = "") -> str:
    """xgrammar EBNF for SGLang's ``ebnf`` field."""
    return export_grammar("ebnf", start, lark_text)


def check_gbnf(text: str) -> str:
    """"" when ``text`` is a well-formed GBNF/EBNF grammar with a ``root`` rule, else why not.

    Read by LLGuidance's GBNF front end (llama.cpp's notation) and compiled, so a grammar a
    server would choke on is refused before it is sent."""
    if not re.search(r"^root\s*::=", text, re.M):
        return "no root rule"
    try:
        import llguidance
    except ImportError:  # pragma: no cover - a base requirement
        return ""
    try:
        grammar = llguidance.grammar_from("gbnf", text)
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    err = llguidance.LLMatcher.validate_grammar(grammar, None)
    return err or ""


# ------------------------------------------------------------------------ specialisation

# The rules of grammar.lark that a specialised grammar replaces, as the specialisation expects
# them (whitespace-normalised). If the language changes one of them, specialising refuses
# (GrammarExportError) instead of guessing, and the planner sends the generic grammar.
_SPECIALISED_RULES = {
    "task": '"task" STRING "{" main (monitor | skill_def)* "}"',
    "call": 'NAME "(" [arg ("," arg)*] ")"',
    "scope": 'NAME ["(" [arg ("," arg)*] ")"]',
    "pred": 'NAME ["(" [pval ("," pval)*] ")"]',
}
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
MAX_OPTIONAL_SUBSETS = 16  # a callee with more optional parameters lists fewer spellings


def _rule_spans(text: str) -> dict[str, tuple[int, int, str]]:
    """Each rule's (start, end, body) in a Lark text: a line ``[?]name:`` and its indented
    continuation lines."""
    out: dict[str, tuple[int, int, str]] = {}
    lines = text.splitlines(keepends=True)
    pos = 0
    i = 0
    while i < len(lines):
        m = re.match(r"(\??)([a-z_][a-z0-9_]*)\s*:(.*)", lines[i])
        if not m:
            pos += len(lines[i])
            i += 1
            continue
        start, body = pos, [m.group(3)]
        pos += len(lines[i])
        i += 1
        while i < len(lines) and re.match(r"\s+\S", lines[i]) and not \
                lines[i].lstrip().startswith("//"):
            body.append(lines[i])
            pos += len(lines[i])
            i += 1
        out[m.group(2)] = (start, pos, " ".join(" ".join(body).split()))
    return out


def _lit(word: str) -> str:
    return '"' + word + '"'


class _Objects:
    """The object-id rules of a specialised grammar: one per set of shapes a parameter takes
    (``pick`` takes blocks, ``place_in`` containers), made on first use."""

    def __init__(self, shapes: dict[str, str]) -> None:
        self.shapes = shapes  # id -> shape ("unknown": fits every parameter)
        self.rules: dict[tuple[str, ...], tuple[str, list[str]]] = {}

    def fitting(self, wanted: tuple[str, ...]) -> list[str]:
        return sorted(i for i, sh in self.shapes.items()
                      if not wanted or sh in wanted or sh == "unknown")

    def symbol(self, wanted: tuple[str, ...]) -> str:
        key = tuple(sorted(wanted))
        if key not in self.rules:
            self.rules[key] = (f"sp_object_{len(self.rules)}", self.fitting(key))
        return self.rules[key][0]

    def lines(self) -> list[str]:
        return [f"{name}: " + " | ".join(_lit(i) for i in ids)
                for name, ids in self.rules.values()]


def _value_symbol(param, objects: _Objects) -> str:
    if param.type.value == "object":
        return objects.symbol(tuple(param.shapes))
    return {"number": "NUMBER", "string": "STRING"}[param.type.value]


def _call_spellings(sig, objects: _Objects) -> list[str]:
    """Argument lists for ``sig`` in catalog order: every required parameter, each optional
    one present or not (``name=value`` with the value of the parameter's type)."""
    params = [(p.name, p, p.required) for p in sig.params]
    optional = [i for i, p in enumerate(params) if not p[2]]
    subsets: list[frozenset[int]] = []
    for mask in range(1 << len(optional)):
        subsets.append(frozenset(optional[j] for j in range(len(optional)) if mask >> j & 1))
        if len(subsets) >= MAX_OPTIONAL_SUBSETS:
            break
    out = []
    for chosen in subsets:
        parts = [f'{_lit(n)} "=" {_value_symbol(p, objects)}'
                 for i, (n, p, req) in enumerate(params) if req or i in chosen]
        out.append(' "," '.join(parts))
    return out


def specialise_lark(object_ids, callees, predicates, lark_text: str = "") -> str:
    """The program grammar (Lark) narrowed to one request: argument values of object type may
    only be ``object_ids`` (the perceived scene's ids, the only ones the validator accepts; a
    mapping id -> shape also narrows each parameter to the ids of the shapes it takes, as the
    catalog's ``Param.shapes`` say, ``unknown`` fitting all: ``pick`` only blocks,
    ``place_in``'s container only bowls, bins, plates, drawers and zones),
    calls and ``during`` scopes only name ``callees`` (the catalog's primitives and the
    memory's skills, as ``Signature``s) with their own parameter names and value types (calls
    in catalog order, optional parameters optional), predicates only ``predicates`` with their
    arity and argument types, and the program defines no local skills (a skill body could
    name its parameters anywhere an object goes). Every text it accepts the generic grammar
    accepts too; it comes from the same Lark text, so the GBNF/EBNF exports follow.

    Ids or names that are not plain names, or are keywords, are left out (the validator would
    refuse them). A callee or predicate with an object parameter no scene object fits is left
    out (``open_drawer`` in a scene without a drawer).
    """
    text = lark_text or grammar_text("lark")
    spans = _rule_spans(text)
    for name, expected in _SPECIALISED_RULES.items():
        if name not in spans:
            raise GrammarExportError(f"cannot specialise: grammar has no rule {name!r}")
        if spans[name][2] != expected:
            raise GrammarExportError(f"cannot specialise: rule {name!r} changed "
                                     f"({spans[name][2]!r}, expected {expected!r})")

    def plain(word: str) -> bool:
        return bool(_NAME_RE.match(word)) and word not in KEYWORDS

    shapes = dict(object_ids) if isinstance(object_ids, Mapping) else dict.fromkeys(
        object_ids, "unknown")
    objects = _Objects({i: str(sh) for i, sh in shapes.items() if plain(i)})

    def usable(sig) -> bool:
        return plain(sig.name) and all(plain(p.name) for p in sig.params) and all(
            objects.fitting(tuple(p.shapes)) for p in sig.params if p.type.value == "object")

    callees = [s for s in callees if usable(s)]
    predicates = [s for s in predicates if usable(s)]
    if not callees or not predicates:
        raise GrammarExportError("cannot specialise: no callee or no predicate is usable")
    new: dict[str, str] = {"task": '"task" STRING "{" main monitor* "}"'}
    extra: list[str] = []
    call_alts, scope_alts, pred_alts = [], [], []
    for k, sig in enumerate(callees):
        spellings = _call_spellings(sig, objects)
        body = " | ".join(f'{_lit(sig.name)} "(" {a} ")"' if a else f'{_lit(sig.name)} "(" ")"'
                          for a in spellings)
        extra.append(f"sp_call_{k}: {body}")
        call_alts.append(f"sp_call_{k}")
        if sig.params:
            extra.append(f"sp_sarg_{k}: " + " | ".join(
                f'{_lit(p.name)} "=" {_value_symbol(p, objects)}' for p in sig.params))
            extra.append(f'sp_scope_{k}: {_lit(sig.name)} ["(" [sp_sarg_{k} ("," sp_sarg_{k})*]'
                         ' ")"]')
        else:
            extra.append(f'sp_scope_{k}: {_lit(sig.name)} ["(" ")"]')
        scope_alts.append(f"sp_scope_{k}")
    for k, sig in enumerate(predicates):
        if sig.params:
            args = ' "," '.join(_value_symbol(p, objects) for p in sig.params)
            extra.append(f'sp_pred_{k}: {_lit(sig.name)} "(" {args} ")"')
        else:
            extra.append(f'sp_pred_{k}: {_lit(sig.name)} ["(" ")"]')
        pred_alts.append(f"sp_pred_{k}")
    new["call"] = " | ".join(call_alts)
    new["scope"] = " | ".join(scope_alts)
    new["pred"] = " | ".join(pred_alts)
    extra += objects.lines()
    out = text
    for name in sorted(new, key=lambda n: -spans[n][0]):  # from the end: offsets stay valid
        start, end, _body = spans[name]
        out = out[:start] + f"{name}: {new[name]}\n" + out[end:]
    header = "\n// Specialised to one request (scene ids, catalog, memory skills):\n"
    return out.rstrip("\n") + "\n" + header + "\n".join(extra) + "\n"
