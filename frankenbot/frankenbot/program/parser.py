"""Text -> tree: lenient extraction, the Lark LALR parser, and errors a model can act on.

The grammar lives in ``grammar.lark`` beside this module. Trees are built by an inline Lark
transformer during the LALR parse (no intermediate parse tree, no recursion), so parsing is fast
and deep inputs cannot exhaust the stack. Every failure is a ``ProgramSyntaxError`` with line,
column, a message naming what was expected, and a hint for the usual mistakes.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path

from lark import Lark, Token, Transformer
from lark.exceptions import (
    LarkError,
    UnexpectedCharacters,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from frankenbot.program import extract
from frankenbot.program.errors import ProgramSyntaxError
from frankenbot.program.lexer import FastLexer
from frankenbot.program.tree import (
    And,
    Arg,
    Call,
    Exit,
    Goto,
    Ident,
    If,
    Label,
    Main,
    Monitor,
    Not,
    Or,
    Param,
    Pred,
    Program,
    Repeat,
    Scope,
    SkillDef,
    Span,
    Then,
    ThenKind,
    While,
)

GRAMMAR_FILE = Path(__file__).with_name("grammar.lark")
KEYWORDS = frozenset((
    "task", "main", "if", "else", "repeat", "while", "max", "goto", "exit", "monitor", "when",
    "during", "then", "retry", "skill", "not", "and", "or",
))


@dataclass(frozen=True)
class ParseResult:
    """A parsed program and what extraction removed around it (prose, fences, normalisations)."""

    program: Program
    stripped: tuple[str, ...] = ()
    source: str = ""  # the program's own text (the chosen candidate), normalised


def grammar_text(dialect: str = "lark", start: str = "task") -> str:
    """The grammar as text, for servers that constrain decoding.

    ``dialect`` is ``"lark"`` (this package's parser) or ``"llguidance"`` (LLGuidance's Lark
    subset, also what the OpenAI grammar tool accepts). The file is written in the common subset,
    so both return the same rules; for ``start="library"`` the start rule is a run of skills.
    """
    if dialect not in ("lark", "llguidance"):
        raise ValueError(f"dialect must be 'lark' or 'llguidance', got {dialect!r}")
    if start not in ("task", "library"):
        raise ValueError(f"start must be 'task' or 'library', got {start!r}")
    text = GRAMMAR_FILE.read_text(encoding="utf-8")
    if start == "library":
        text = text.replace("start: task\n", "start: skill_def+\n", 1)
    return text


_DATA_TOKENS = frozenset(("NAME", "INT", "NUMBER", "STRING", "EXIT_KIND", "THEN_SIMPLE",
                          "PARAM_TYPE"))


@dataclass(frozen=True)
class _Block:
    """A braced block while building: its statements and the span of its braces."""

    stmts: tuple
    span: Span


def _start_of(x: object) -> tuple[int, int] | None:
    if isinstance(x, Token):
        return (x.line or 0, x.column or 0)
    span = getattr(x, "span", None)
    if isinstance(span, Span) and span.line:
        return (span.line, span.column)
    return None


def _end_of(x: object) -> tuple[int, int] | None:
    if isinstance(x, Token):
        return (x.end_line or 0, x.end_column or 0)
    span = getattr(x, "span", None)
    if isinstance(span, Span) and span.line:
        return (span.end_line, span.end_column)
    return None


def _span(children: list) -> Span:
    """Span from the first to the last child that has a position (tokens are all kept)."""
    first = next((p for p in map(_start_of, children) if p), None)
    last = next((p for p in map(_end_of, reversed(children)) if p), None)
    if first is None or last is None:
        return Span()
    return Span(first[0], first[1], last[0], last[1])


def _data(children: list) -> list:
    """Children without keyword/punctuation tokens (kept only for spans); blocks unwrapped."""
    out = []
    for x in children:
        if isinstance(x, Token):
            if x.type in _DATA_TOKENS:
                out.append(x)
        elif isinstance(x, _Block):
            out.append(x.stmts)
        else:
            out.append(x)
    return out


def _unquote(token: str) -> str:
    body = token[1:-1]
    if "\\" not in body:
        return body
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), body)


class _Builder(Transformer):
    """Inline LALR callbacks: each rule's children -> a frozen tree node.

    The parser keeps every token so spans can run from the first keyword to the closing brace;
    ``_data`` drops the punctuation before the children are read.
    """

    def start(self, c):
        return c[0]

    def library(self, c):
        return tuple(c)

    def task(self, c):
        desc, main, *rest = _data(c)
        return Program(
            _unquote(desc), main,
            tuple(x for x in rest if isinstance(x, Monitor)),
            tuple(x for x in rest if isinstance(x, SkillDef)),
            _span(c))

    def main(self, c):
        return Main(_data(c)[0], _span(c))

    def block(self, c):
        return _Block(tuple(_data(c)), _span(c))

    def call(self, c):
        d = _data(c)
        return Call(str(d[0]), tuple(x for x in d[1:] if x is not None), _span(c))

    def arg(self, c):
        d = _data(c)
        return Arg(str(d[0]), d[1], _span(c))

    def ident(self, c):
        return Ident(str(c[0]))

    def number(self, c):
        return float(c[0])

    def string(self, c):
        return _unquote(str(c[0]))

    def if_stmt(self, c):
        cond, then, orelse = _data(c)
        return If(cond, then, orelse if orelse is not None else (), _span(c))

    def else_part(self, c):
        return _data(c)[0]

    def else_if(self, c):
        return (_data(c)[0],)

    def repeat_stmt(self, c):
        d = _data(c)
        return Repeat(int(d[0]), d[1], _span(c))

    def while_stmt(self, c):
        cond, bound, body = _data(c)
        return While(cond, bound, body, _span(c))

    def label(self, c):
        return Label(str(_data(c)[0]), _span(c))

    def goto_stmt(self, c):
        label, bound = _data(c)
        return Goto(str(label), bound, _span(c))

    def bound(self, c):
        return int(_data(c)[0])

    def exit_stmt(self, c):
        kind, reason = _data(c)
        return Exit(str(kind) == "success", _unquote(str(reason)) if reason is not None else "",
                    _span(c))

    def monitor(self, c):
        name, cond, during, *rest = _data(c)
        then = rest.pop() if rest else None
        return Monitor(str(name), cond, during or (), tuple(rest),
                       then if then is not None else Then(ThenKind.RESUME), _span(c))

    def during(self, c):
        return tuple(_data(c))

    def scope(self, c):
        d = _data(c)
        return Scope(str(d[0]), tuple(x for x in d[1:] if x is not None), _span(c))

    def then_simple(self, c):
        return Then(str(_data(c)[0]), span=_span(c))

    def then_retry(self, c):
        label, bound = _data(c)
        return Then(ThenKind.RETRY, str(label), bound, _span(c))

    def then_goto(self, c):
        return Then(ThenKind.GOTO, str(_data(c)[0]), None, _span(c))

    def skill_def(self, c):
        d = _data(c)
        name = str(d[0])
        params = tuple(x for x in d[1:] if isinstance(x, Param))
        desc = next((_unquote(str(x)) for x in d[1:]
                     if isinstance(x, Token) and x.type == "STRING"), "")
        return SkillDef(name, params, desc, d[-1], _span(c))

    def param(self, c):
        name, ptype = _data(c)
        return Param(str(name), str(ptype), _span(c))

    def or_expr(self, c):
        return Or(tuple(_data(c)), _span(c))

    def and_expr(self, c):
        return And(tuple(_data(c)), _span(c))

    def neg(self, c):
        return Not(_data(c)[0], _span(c))

    def atom(self, c):  # "(" cond ")": parentheses only group
        return _data(c)[0]

    def pred(self, c):
        d = _data(c)
        return Pred(str(d[0]), tuple(x for x in d[1:] if x is not None), _span(c))


_parser_lock = threading.Lock()
_parser: Lark | None = None


def _lark() -> Lark:
    """The one compiled parser (built on first use; LALR parsing is re-entrant)."""
    global _parser
    with _parser_lock:
        if _parser is None:
            _parser = Lark.open(
                str(GRAMMAR_FILE.name), rel_to=__file__, parser="lalr", lexer=FastLexer,
                start=["start", "library"], keep_all_tokens=True, maybe_placeholders=True,
                transformer=_Builder())
        return _parser


# ------------------------------------------------------------------------------------ errors

_READABLE = {
    "NAME": "a name", "INT": "a whole number", "NUMBER": "a number", "STRING": 'a "string"',
    "EXIT_KIND": "success or failure", "THEN_SIMPLE": "resume or escalate",
    "PARAM_TYPE": "object, number or string", "$END": "end of text",
}


def _expected_words(names: set[str] | frozenset[str]) -> list[str]:
    lark = _lark()
    words = set()
    for name in names:
        if name in _READABLE:
            words.add(_READABLE[name])
            continue
        try:
            term = lark.get_terminal(name)
            words.add(f"'{term.pattern.value}'")
        except (KeyError, AttributeError):
            words.add(name.lower())
    return sorted(words)


def _hint(text: str, pos: int, got: str, expected: set[str]) -> str:
    """A repair hint for the usual mistakes, judged from the offending text and context."""
    before = text[max(0, pos - 40):pos]
    if got in ("'", "`"):
        return 'strings use double quotes: "like this"'
    if got in ("=", "==", "!=", "&", "|", "!", "&&", "||"):
        if "EQUAL" not in expected and re.search(
                r"(holding|in|on|near|visible|empty|drawer_open|open|closed|on_state)"
                r"\s*\([^()]*$", before):
            return "predicates take positional arguments: holding(red_block)"
        return "combine conditions with `and`, `or`, `not`; compare nothing with = or =="
    in_call = re.search(r"[A-Za-z_][A-Za-z0-9_]*\s*\([^()]*$", before)
    if in_call and ("EQUAL" in expected or expected == {"NAME", "RPAR"}
                    or expected == {"NAME"}):
        return "calls take named arguments: pick(obj=red_block)"
    if in_call and got.startswith('"') and "NUMBER" in expected:
        return "predicate arguments are bare object ids: holding(red_block)"
    if got == ":" and re.search(r"\b(if|while|else|repeat)\b[^\n{]*$", before):
        return "blocks use braces: if holding(x) { ... } else { ... }"
    if got in KEYWORDS and ("NAME" in expected):
        return f"`{got}` is a reserved word; choose another name"
    if got in ("elif", "elseif"):
        return "write `else if`"
    if "RBRACE" in expected and got in ("", "$END"):
        return "a block is not closed: every { needs a matching }"
    if got in ("task", "main") and not before.strip():
        return "a program is: task \"what\" { main { ... } monitors... skills... }"
    if "LBRACE" in expected:
        return "a block in braces { ... } was expected here"
    return ""


def _syntax_error(e: UnexpectedInput, text: str) -> ProgramSyntaxError:
    if isinstance(e, UnexpectedCharacters):
        pos = e.pos_in_stream
        got = text[pos] if 0 <= pos < len(text) else ""
        if text.startswith(("==", "!=", "&&", "||"), pos):
            got = text[pos:pos + 2]
        expected = set(e.allowed or ())
        msg = f"unexpected character {got!r}"
        line, col = e.line, e.column
    elif isinstance(e, UnexpectedToken):
        tok = e.token
        expected = set(e.expected or ())
        if tok.type == "$END":
            pos = len(text)
            got = "$END"
            msg = "unexpected end of text"
            line = text.count("\n") + 1
            col = len(text) - (text.rfind("\n") + 1) + 1
        else:
            pos = tok.start_pos or 0
            got = str(tok)
            msg = f"unexpected {got!r}"
            line, col = tok.line or 1, tok.column or 1
    else:  # UnexpectedEOF and anything else positional
        expected = set(getattr(e, "expected", ()) or ())
        pos = len(text)
        got = "$END"
        msg = "unexpected end of text"
        line = text.count("\n") + 1
        col = len(text) - (text.rfind("\n") + 1) + 1
    words = _expected_words(expected)
    if words:
        shown = ", ".join(words[:8]) + (", ..." if len(words) > 8 else "")
        msg += f"; expected {shown}"
    return ProgramSyntaxError(msg, int(line or 1), int(col or 1), _hint(text, pos, got, expected))


def _parse_one(text: str, start: str) -> object:
    try:
        return _lark().parse(text, start=start)
    except UnexpectedInput as e:
        raise _syntax_error(e, text) from None
    except VisitError as e:  # a callback failed: the text shape is not what the rule expects
        raise ProgramSyntaxError(f"malformed program: {e.orig_exc}", 1, 1) from None
    except (LarkError, RecursionError) as e:
        raise ProgramSyntaxError(f"cannot parse: {e}", 1, 1) from None


# ------------------------------------------------------------------------------- public API


def _try(text: str, start: str, library: bool
         ) -> tuple[object, extract.Candidate] | ProgramSyntaxError:
    """Parse each candidate of ``text``; the whole text wins outright, else the last block."""
    try:  # the common case: the text is just the program
        return _parse_one(text, start), extract.Candidate(0, len(text), "text")
    except ProgramSyntaxError as err:
        first_error = err
    best: tuple[object, extract.Candidate] | None = None
    block_error: ProgramSyntaxError | None = None
    for cand in extract.candidates(text, library=library)[1:]:
        try:
            result = _parse_one(extract.blank_outside(text, cand.start, cand.end), start)
        except ProgramSyntaxError as err:
            block_error = block_error or err
            continue
        best = (result, cand)
    if best is not None:
        return best
    failure = block_error or first_error
    assert failure is not None
    return failure


def _choose(text: str, start: str, library: bool
            ) -> tuple[object, extract.Candidate, str, tuple[str, ...]]:
    """Parse as written (line endings aside); only if that fails, retry with smart quotes and
    odd spaces replaced, so a string that legitimately holds them is never altered."""
    base, notes = extract.normalise_line_endings(text)
    extract.check_limits(base)
    first = _try(base, start, library)
    if not isinstance(first, ProgramSyntaxError):
        return first[0], first[1], base, notes
    norm, more = extract.normalise_characters(base)
    if norm == base:
        raise first
    second = _try(norm, start, library)
    if isinstance(second, ProgramSyntaxError):
        raise second
    return second[0], second[1], norm, notes + more


def parse_program(text: str) -> ParseResult:
    """Parse a task program out of ``text`` (which may be chat output with prose and fences).

    Raises ProgramSyntaxError when no candidate parses; positions refer to ``text``.
    """
    if not isinstance(text, str):
        raise ProgramSyntaxError(f"expected program text (str), got {type(text).__name__}")
    result, cand, norm, notes = _choose(text, "start", library=False)
    stripped = notes + extract.describe_stripped(norm, cand)
    assert isinstance(result, Program)
    return ParseResult(result, stripped, norm[cand.start:cand.end])


def parse_skills(text: str) -> tuple[SkillDef, ...]:
    """Parse a skill library text: one or more top-level ``skill`` definitions."""
    if not isinstance(text, str):
        raise ProgramSyntaxError(f"expected skill library text (str), got {type(text).__name__}")
    result, _cand, _norm, _notes = _choose(text, "library", library=True)
    assert isinstance(result, tuple)
    return result
