"""Finding the program inside chat text: prose, markdown fences, several blocks, odd characters.

Models wrap programs in explanations and fences and sometimes write two versions. Extraction
proposes candidate spans (balanced ``task "..." { }`` blocks, fenced blocks, the whole text); the
parser tries them and keeps the last one that parses. Normalisation is length-preserving
(every character maps to one character, CRLF to space+LF), and candidates are parsed inside a
copy of the text where everything else is blanked, so line:column positions in errors and
diagnostics always point into the text as the author wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from frankenbot.program.errors import ProgramSyntaxError

MAX_TEXT_CHARS = 100_000  # anything longer is not a program a model wrote for one task
MAX_NESTING = 32  # braces + parentheses; keeps every later tree walk far from recursion limits
MAX_NOT_RUN = 8  # `not not not ...` in a row
MAX_CANDIDATES = 16  # blocks tried per text (the last ones: later versions win)

_CHAR_MAP = {
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"',
    "\u00bb": '"', "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u2032": "'",
    "\u00a0": " ", "\u2007": " ", "\u202f": " ", "\u2009": " ", "\u200a": " ", "\u2002": " ",
    "\u2003": " ", "\u200b": " ", "\u200c": " ", "\u200d": " ", "\ufeff": " ", "\u2060": " ",
    "\u2028": "\n", "\u2029": "\n", "\u00ad": " ",
}
_TRANSLATE = str.maketrans(_CHAR_MAP)
_SMART_QUOTES = set("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb")

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n", re.M)
_TASK_START = re.compile(r"(?<![A-Za-z0-9_])task\s*\"")
_SKILL_START = re.compile(r"(?<![A-Za-z0-9_])skill\s+[A-Za-z_][A-Za-z0-9_]*\s*\(")
_NOT_RUN = re.compile(r"(?:(?<![A-Za-z0-9_])not(?![A-Za-z0-9_])[\s(]*){" + str(MAX_NOT_RUN + 1)
                      + ",}")


@dataclass(frozen=True)
class Candidate:
    """A span [start, end) of the normalised text that may hold the program."""

    start: int
    end: int
    origin: str  # "block" | "fence" | "text"


def normalise_line_endings(text: str) -> tuple[str, tuple[str, ...]]:
    """CRLF -> space + LF (length-preserving; a string literal can never span lines)."""
    notes: list[str] = []
    if "\r\n" in text:
        text = text.replace("\r\n", " \n")
        notes.append("CRLF line endings")
    if "\t" in text:
        notes.append("tabs (kept as whitespace)")
    return text, tuple(notes)


def normalise_characters(text: str) -> tuple[str, tuple[str, ...]]:
    """Smart quotes -> straight quotes, exotic spaces -> space (one character for one)."""
    if not any(c in _CHAR_MAP for c in text):
        return text, ()
    if any(c in _SMART_QUOTES for c in text):
        note = "smart quotes replaced by straight quotes"
    else:
        note = "non-ASCII spaces or quotes replaced"
    return text.translate(_TRANSLATE), (note,)


def normalise(text: str) -> tuple[str, tuple[str, ...]]:
    """Both normalisations (for tools that want the cleaned text in one step)."""
    text, notes = normalise_line_endings(text)
    text, more = normalise_characters(text)
    return text, notes + more


_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"?|#[^\n]*')
_BRACKET = re.compile(r"[{}()]")


def _position(text: str, pos: int) -> tuple[int, int]:
    return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1


def check_limits(text: str) -> None:
    """Refuse texts no honest program needs: huge, or nested deep enough to hurt tree walks."""
    if len(text) > MAX_TEXT_CHARS:
        raise ProgramSyntaxError(
            f"text is {len(text)} characters, more than the limit of {MAX_TEXT_CHARS}",
            1, 1, "send one program for one task")
    # strings and comments blanked (same length), so brackets and `not` inside them don't count
    code = _STRING_OR_COMMENT.sub(lambda m: " " * len(m.group()), text)
    depth = 0
    for m in _BRACKET.finditer(code):
        if m.group() in "{(":
            depth += 1
            if depth > MAX_NESTING:
                raise ProgramSyntaxError(
                    f"nesting deeper than {MAX_NESTING} braces/parentheses",
                    *_position(text, m.start()),
                    "flatten the program: use labels, skills or fewer nested blocks")
        elif depth:
            depth -= 1
    nots = _NOT_RUN.search(code)
    if nots:
        raise ProgramSyntaxError(f"more than {MAX_NOT_RUN} `not` in a row",
                                 *_position(text, nots.start()), "simplify the condition")


def balanced_end(text: str, start: int) -> int:
    """Index just past the brace that closes the first ``{`` at or after ``start``.

    Strings and ``#`` comments are skipped. An unclosed block runs to the end of the text (the
    parser then reports the missing brace at the right place).
    """
    depth = 0
    i, n = start, len(text)
    opened = False
    while i < n:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] != '"' and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
        elif ch == "#":
            nl = text.find("\n", i)
            i = n if nl < 0 else nl
            continue
        elif ch == "{":
            depth += 1
            opened = True
        elif ch == "}" and opened:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def fenced_blocks(text: str) -> list[tuple[int, int, int, int]]:
    """(open_start, body_start, body_end, close_end) for each markdown fence; unclosed -> EOF."""
    out: list[tuple[int, int, int, int]] = []
    pos = 0
    while True:
        m = _FENCE.search(text, pos)
        if not m:
            return out
        marker = m.group(1)
        close = re.compile(r"^[ \t]*" + re.escape(marker[0]) + "{" + str(len(marker)) + ",}[ \t]*$",
                           re.M)
        c = close.search(text, m.end())
        if c is None:
            out.append((m.start(), m.end(), len(text), len(text)))
            return out
        out.append((m.start(), m.end(), c.start(), c.end()))
        pos = c.end()


def candidates(text: str, library: bool = False) -> list[Candidate]:
    """Candidate spans in the order they should be tried (later ones win when several parse)."""
    found: list[Candidate] = [Candidate(0, len(text), "text")]
    seen = {(0, len(text))}
    for _o, b, e, _c in fenced_blocks(text):
        if (b, e) not in seen:
            seen.add((b, e))
            found.append(Candidate(b, e, "fence"))
    if library:
        starts = [m.start() for m in _SKILL_START.finditer(text)]
        if starts:
            # a library is a run of skills: from the first to the end of the last one
            end = balanced_end(text, starts[-1])
            if (starts[0], end) not in seen:
                seen.add((starts[0], end))
                found.append(Candidate(starts[0], end, "block"))
        return found
    for m in _TASK_START.finditer(text):
        end = balanced_end(text, m.start())
        if (m.start(), end) not in seen:
            seen.add((m.start(), end))
            found.append(Candidate(m.start(), end, "block"))
    return found[:1] + found[1:][-MAX_CANDIDATES:]


def blank_outside(text: str, start: int, end: int) -> str:
    """The candidate [start, end) alone, preceded by just enough newlines and spaces that
    line:column positions inside it are the same as in the whole text."""
    line_start = text.rfind("\n", 0, start) + 1
    return "\n" * text.count("\n", 0, start) + " " * (start - line_start) + text[start:end]


def describe_stripped(text: str, cand: Candidate) -> tuple[str, ...]:
    """What was thrown away around the chosen candidate, for ParseResult.stripped."""
    out = []
    for label, part in (("before", text[: cand.start]), ("after", text[cand.end:])):
        for fence in re.findall(r"^[ \t]*(?:`{3,}|~{3,})[^\n]*$", part, re.M):
            out.append(f"markdown fence {label}: {fence.strip()}")
        prose = re.sub(r"^[ \t]*(?:`{3,}|~{3,})[^\n]*$", "", part, flags=re.M).strip()
        if prose:
            short = " ".join(prose.split())
            short = short if len(short) <= 80 else short[:77] + "..."
            out.append(f"text {label} the program: {short}")
    return tuple(out)
