"""Conditionals: ``if COND[,] [then] ACTS [otherwise ACTS]`` and ``ACTS if COND``, with
conditions over the scene (empty, open, in, on, visible) kept for run time.
"""

from __future__ import annotations

from frankenbot.planner import lexicon as lx
from frankenbot.planner.understanding.acts import Act, NotParsed, Ref
from frankenbot.planner.understanding.chunks import parse_sequence
from frankenbot.planner.understanding.phrases import parse_np
from frankenbot.planner.understanding.roles import strip_wrappers
from frankenbot.planner.understanding.words import find

_IF_HEADS = ("only if", "if", "provided that", "provided", "as long as", "assuming that",
             "assuming", "in case", "when", "should", "in the event that", "unless")
_ELSE_MARKERS = ("if that is not the case", "if it is not", "if not", "and if not",
                 "or else", "otherwise", "else", "failing that", "if it is not empty",
                 "but if not", "if it is full", "if it is occupied", "if that fails",
                 "if it is not so", "in the other case", "and otherwise", "but otherwise")


def parse_condition(words: list[str]) -> tuple[str, Ref, Ref | None, bool] | None:
    w = [x for x in words if x not in ("already", "currently", "still", "actually", "really")]
    if not w:
        return None
    neg = False

    def subject(ws: list[str]) -> Ref | None:
        return parse_np(ws)

    s = " ".join(w)
    for pre, kind, n in (("there is nothing in", "empty", False),
                         ("nothing is in", "empty", False),
                         ("there is something in", "empty", True),
                         ("something is in", "empty", True),
                         ("there is a block in", "empty", True),
                         ("there is no block in", "empty", False),
                         ("there are no blocks in", "empty", False)):
        if s.startswith(pre + " "):
            ref = subject(w[len(pre.split()):])
            return (kind, ref, None, n) if ref is not None else None
    for pre in ("there is", "there are", "you see", "you can see", "you spot", "you find",
                "you can find"):
        if s.startswith(pre + " "):
            rest = w[len(pre.split()):]
            if rest and rest[0] in ("no", "not"):
                neg, rest = True, rest[1:]
            ref = subject(rest)
            return ("visible", ref, None, neg) if ref is not None else None
    for verb in ("is", "are", "looks", "seems", "has", "contains", "does", "holds"):
        if verb in w:
            i = w.index(verb)
            subj, pred = w[:i], w[i + 1:]
            if pred[:1] == ["not"]:
                neg, pred = True, pred[1:]
            ref = subject(subj)
            if ref is None:
                return None
            if verb in ("has", "contains", "holds", "does"):
                if pred[:1] == ["have"] or pred[:1] == ["contain"] or pred[:1] == ["hold"]:
                    pred = pred[1:]
                ps = " ".join(pred)
                if ps in ("nothing", "nothing in it", "nothing inside", "no block",
                          "no blocks", "no block in it", "nothing on it"):
                    return ("empty", ref, None, neg)
                if ps in ("something", "something in it", "anything", "anything in it",
                          "a block", "a block in it", "a block inside", "an object",
                          "an object in it", "something inside", "anything inside",
                          "stuff in it", "something on it", "any block", "any blocks",
                          "blocks in it", "items in it"):
                    return ("empty", ref, None, not neg)
                return None
            ps = " ".join(pred)
            if ps in ("empty", "free", "clear", "vacant", "unoccupied", "available",
                      "empty of blocks", "unused", "still empty", "empty right now", "bare"):
                return ("empty", ref, None, neg)
            if ps in ("full", "occupied", "taken", "in use", "not empty", "filled",
                      "not free", "busy"):
                return ("empty", ref, None, not neg)
            if ps in ("open", "opened", "pulled out", "out"):
                return ("drawer_open", ref, None, neg)
            if ps in ("closed", "shut", "pushed in", "close"):
                return ("drawer_open", ref, None, not neg)
            if ps in ("visible", "there", "present", "here", "on the table", "in view",
                      "in sight"):
                return ("visible", ref, None, neg)
            if pred and pred[0] in lx.DEST_PREPS:
                other = subject(pred[1:])
                rel = lx.DEST_PREPS[pred[0]]
                if other is not None and rel in ("in", "on"):
                    return (rel, ref, other, neg)
            return None
    return None


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
                otherwise: list[Act] = []
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
