"""Conditionals: ``if COND[,] [then] ACTS [otherwise ACTS]`` and ``ACTS if COND``, with
conditions over the scene (empty, open, in, on, visible) kept for run time.
"""

from __future__ import annotations

from frankenbot.planner.understanding.acts import Act, NotParsed
from frankenbot.planner.understanding.chunks import parse_sequence
from frankenbot.planner.understanding.roles import strip_wrappers
from frankenbot.planner.understanding.states import parse_condition
from frankenbot.planner.understanding.words import find

_IF_HEADS = ("only if", "if", "provided that", "provided", "as long as", "assuming that",
             "assuming", "in case", "when", "should", "in the event that", "unless")
_ELSE_MARKERS = ("if that is not the case", "if it is not", "if not", "and if not",
                 "or else", "otherwise", "else", "failing that", "if it is not empty",
                 "but if not", "if it is full", "if it is occupied", "if that fails",
                 "if it is not so", "in the other case", "and otherwise", "but otherwise")


def parse_conditional(words: list[str]) -> Act | None:
    """``if COND[,] [then] ACTS [otherwise ACTS]`` and ``ACTS if COND[, otherwise ACTS]``."""
    head, _m = strip_wrappers(list(words))
    for ih in _IF_HEADS:
        p = ih.split()
        if head[:len(p)] == p:
            negate = ih == "unless"
            body = head[len(p):]
            for k in range(len(body) - 1, 0, -1):  # the longest condition that reads
                cond = parse_condition([x for x in body[:k] if x != ","])
                if cond is None:
                    continue
                rest = body[k:]
                while rest and rest[0] in (",", "then"):
                    rest = rest[1:]
                try:
                    then, otherwise = _branches(rest)
                except NotParsed:
                    continue
                c = (cond[0], cond[1], cond[2], cond[3] != negate)
                return Act("if", cond=c, then=tuple(then), otherwise=tuple(otherwise),
                           text=" ".join(words))
            return None
    for ih in ("only if", "if", "unless", "provided that", "provided", "as long as",
               "but only if", "in case"):
        i = find(head, ih, 1)
        if i < 0:
            continue
        negate = ih == "unless"
        main = head[:i]
        after = head[i + len(ih.split()):]
        for k in range(len(after), 0, -1):
            cond = parse_condition([x for x in after[:k] if x != ","])
            if cond is None:
                continue
            tail = after[k:]
            while tail and tail[0] == ",":
                tail = tail[1:]
            try:
                then = parse_sequence(main)
                otherwise = []
                if tail:
                    marker = next((m for m in sorted(_ELSE_MARKERS, key=lambda x: -len(x))
                                   if tail[:len(m.split())] == m.split()), None)
                    if marker is None:
                        continue
                    otherwise = parse_sequence(tail[len(marker.split()):], then[-1])
            except NotParsed:
                continue
            c = (cond[0], cond[1], cond[2], cond[3] != negate)
            return Act("if", cond=c, then=tuple(then), otherwise=tuple(otherwise),
                       postfix=True, text=" ".join(words))
    return None


def _branches(rest: list[str]) -> tuple[list[Act], list[Act]]:
    for marker in sorted(_ELSE_MARKERS, key=lambda x: -len(x.split())):
        i = find(rest, marker, 1)
        while i > 0:
            left = rest[:i]
            right = rest[i + len(marker.split()):]
            while right and right[0] in (",", "then", "just"):
                right = right[1:]
            try:
                then = parse_sequence(left)
                return then, parse_sequence(right, then[-1])
            except NotParsed:
                i = find(rest, marker, i + 1)
    return parse_sequence(rest), []
