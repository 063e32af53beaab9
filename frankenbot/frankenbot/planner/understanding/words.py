"""Normalise and tokenise: an instruction's text -> lemmatised, spell-checked words.

lemminflect (lemmas) and rapidfuzz (misspellings) load once per process, lazily; without them
the stage falls back to rules (a suffix-stripping lemmatiser, no spelling correction) and
says so. Multi-word units ("on top of", "trash can") become one word here, so the later
stages see one token for one meaning.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Callable

from frankenbot.planner import lexicon as lx
from frankenbot.planner.frames import UnsafeInstruction

# ------------------------------------------------------------------------------ language tools


@dataclass
class _Tools:
    lemmas: Callable[[str], dict[str, tuple[str, ...]]] | None = None
    correct: Callable[[str, bool], str | None] | None = None
    messages: tuple[str, ...] = ()


_TOOLS: _Tools | None = None
_TOOLS_LOCK = threading.Lock()


def tools() -> _Tools:
    """lemminflect and rapidfuzz, loaded once; a missing package leaves a message, not a crash."""
    global _TOOLS
    with _TOOLS_LOCK:
        if _TOOLS is not None:
            return _TOOLS
        t = _Tools()
        msgs = []
        try:
            import lemminflect

            lemminflect.getAllLemmas("blocks")  # loads its tables now, not mid-instruction
            t.lemmas = lemminflect.getAllLemmas
        except ImportError:
            msgs.append("lemminflect is not installed: lemmas come from suffix rules")
        try:
            from rapidfuzz import process
            from rapidfuzz.distance import OSA

            vocab = lx.vocabulary()

            def correct(word: str, first: bool) -> str | None:
                if len(word) == 3:  # short words: only a swapped pair of letters ("teh")
                    swaps = [w for w in vocab if len(w) == 3 and sorted(w) == sorted(word)
                             and OSA.distance(w, word) == 1]
                    return swaps[0] if len(swaps) == 1 else None
                limit = 1 if len(word) <= 6 else 2
                found = process.extract(word, vocab, scorer=OSA.distance, score_cutoff=limit,
                                        limit=6)
                if not found:
                    return None
                best = min(d for _w, d, _i in found)
                ties = sorted(w for w, d, _i in found if d == best)
                verbs = [w for w in ties if w in lx.VERBS]
                if first and len(verbs) == 1:  # a clause's first word is its verb
                    return verbs[0]
                # equally near two words: prefer the same length, else do not guess
                same_len = [w for w in ties if len(w) == len(word)]
                if len(ties) == 1:
                    return ties[0]
                return same_len[0] if len(same_len) == 1 else None

            t.correct = correct
        except ImportError:
            msgs.append("rapidfuzz is not installed: misspelt words are not corrected")
        t.messages = tuple(msgs)
        _TOOLS = t
        return t


_SUFFIXES = (("ies", "y"), ("ves", "f"), ("ches", "ch"), ("shes", "sh"), ("xes", "x"),
             ("ing", ""), ("ed", ""), ("es", "e"), ("s", ""))


def _rule_lemmas(word: str) -> list[str]:
    out = [word]
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            stem = word[: -len(suffix)] + repl
            out += [stem, stem + "e"]
            if len(stem) > 2 and stem[-1] == stem[-2]:
                out.append(stem[:-1])  # "grabbing" -> "grabb" -> "grab"
    return out


KNOWN = (set(lx.VERBS) | set(lx.NOUNS) | set(lx.PARTS) | set(lx.COLOUR_WORDS)
          | set(lx.SUPERLATIVES))
_LEMMA_CACHE: dict[str, tuple[str, bool]] = {}


def lemma_of(word: str) -> tuple[str, bool]:
    """(the lexicon's word for ``word``, whether it was a plural noun)."""
    hit = _LEMMA_CACHE.get(word)
    if hit is not None:
        return hit
    result = (word, False)
    if word not in KNOWN and not is_function_word(word):
        lem = tools().lemmas
        cands: list[tuple[str, str]] = []
        if lem is not None:
            for pos, lemmas in lem(word).items():
                cands += [(pos, w) for w in lemmas]
        else:
            cands = [("?", w) for w in _rule_lemmas(word)]
        for pos, w in cands:
            if w in KNOWN:
                result = (w, pos in ("NOUN", "?") and w in lx.NOUNS and w != word)
                break
    _LEMMA_CACHE[word] = result
    return result


_FUNCTION_WORDS = (lx.DETERMINERS | lx.QUANTIFIERS | set(lx.DEST_PREPS) | lx.NP_NOISE | {
    "and", "then", "if", "else", "otherwise", "unless", "is", "are", "it", "them", "not",
    "be", "to", "of", "by", "with", "without", "before", "after", "once", "when", "you", "i",
    "we", "me", "there", "what", "where", "which", "who", "how", "why", "has", "have", "was",
    "do", "does", "did", "so", "as", "or", "but", "for", "its", "up", "down", "out", "off",
    "open", "closed", "shut", "home", "left", "right", "top", "bottom", "middle", "tower",
    "empty", "full", "would", "could", "should", "will", "can", "must", "need", "want",
    "like", "wish", "please", "thanks", "thank", "three", "two", "four", "five", "six",
    "they", "their", "than", "these", "those", "this", "into", "onto", "from",
    "over", "under", "above", "below", "while", "until", "again", "first", "second", "third",
    "last", "next", "other", "same", "here", "very", "some", "any", "all",
    "each", "both", "none", "nothing", "something", "anything", "everything", "your", "our",
    "yours", "mine", "myself", "himself", "herself", "itself", "ourselves", "themselves"})


def is_function_word(w: str) -> bool:
    return w in _FUNCTION_WORDS


# ------------------------------------------------------------------------------ tokens

_CONTRACTIONS = (
    (r"\bi'd\b", "i would"), (r"\bi'm\b", "i am"), (r"\bi've\b", "i have"),
    (r"\bi'll\b", "i will"), (r"\byou're\b", "you are"), (r"\byou've\b", "you have"),
    (r"\byou'll\b", "you will"), (r"\byou'd\b", "you would"), (r"\bwe'd\b", "we would"),
    (r"\bwe're\b", "we are"), (r"\bwe'll\b", "we will"), (r"\bit's\b", "it is"),
    (r"\bthat's\b", "that is"), (r"\bthere's\b", "there is"), (r"\blet's\b", "let us"),
    (r"\bwhat's\b", "what is"), (r"\bcan't\b", "can not"), (r"\bcannot\b", "can not"),
    (r"\bwon't\b", "will not"), (r"\bdon't\b", "do not"), (r"\bdoesn't\b", "does not"),
    (r"\bdidn't\b", "did not"), (r"\bisn't\b", "is not"), (r"\baren't\b", "are not"),
    (r"\bwasn't\b", "was not"), (r"\bhasn't\b", "has not"), (r"\bhaven't\b", "have not"),
    (r"\bshouldn't\b", "should not"), (r"\bwouldn't\b", "would not"),
    (r"\bcouldn't\b", "could not"), (r"\bthey're\b", "they are"), (r"\bhere's\b", "here is"),
    (r"\bisnt\b", "is not"), (r"\bdont\b", "do not"), (r"\bim\b", "i am"),
)


@dataclass(frozen=True)
class Tok:
    """One word: ``w`` the lexicon's lemma (or the word), ``surface`` as typed."""

    w: str
    surface: str
    plural: bool = False


def normalise(text: str) -> str:
    s = text.strip().lower().replace("\u2019", "'").replace("\u2018", "'")
    s = s.replace("colors", "colours").replace("color", "colour")
    s = s.replace("->", " to ").replace("\u2192", " to ")
    s = re.sub(r"\bu\b", "you", s)
    s = re.sub(r"\bur\b", "your", s)
    for pat, repl in _CONTRACTIONS:
        s = re.sub(pat, repl, s)
    s = re.sub(r"(\w)'s\b", r"\1 's", s)
    s = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", s)
    s = re.sub(r"[\"`()\[\]{}<>=*#\\/|~^+&@$%]+", " ", s)
    s = re.sub(r"\s*([,.;:!?])\s*", r" \1 ", s)
    s = " " + re.sub(r"\s+", " ", s).strip() + " "
    for a, b in lx.UNITS:
        s = s.replace(f" {a} ", f" {b} " if b else " ")
    return re.sub(r"\s+", " ", s).strip()


def tokenise(text: str, notes: list[str]) -> list[Tok]:
    out: list[Tok] = []
    t = tools()
    for raw in normalise(text).split(" "):
        if not raw:
            continue
        if raw in (",", ":"):
            out.append(Tok(",", raw))
            continue
        if raw == ";":
            out.append(Tok(",", raw))
            continue
        if raw in (".", "!", "?"):
            out.append(Tok(".", raw))
            continue
        if raw == "'s":
            out.append(Tok("'s", raw))
            continue
        word = raw.strip("'")
        if not word:
            continue
        lemma, plural = lemma_of(word)
        lemma = _plural_form(lemma, plural)
        if (lemma == word and word not in KNOWN and not is_function_word(word)
                and len(word) >= 3 and word.isalpha() and t.correct is not None
                and (t.lemmas is None or not t.lemmas(word))):
            fixed = t.correct(word, not out or out[-1].w in (",", "."))
            if fixed is not None and fixed in lx.UNSAFE_WORDS:
                raise UnsafeInstruction(f"refused as unsafe: {word!r} reads as {fixed!r}")
            if fixed is not None:
                notes.append(f"read {word!r} as {fixed!r}")
                lemma, plural = lemma_of(fixed)
                lemma = _plural_form(lemma if lemma != fixed or fixed in KNOWN else fixed,
                                     plural)
        out.append(Tok(lemma, raw, plural))
    return out


def _plural_form(lemma: str, plural: bool) -> str:
    """Plural nouns as "<shape>s" ("cubes" -> "blocks"): the rules read number from that."""
    if plural and lemma in lx.NOUNS and not lemma.endswith("s"):
        return (lx.NOUNS[lemma] or "thing") + "s"
    return lemma


def words_of(toks: list[Tok]) -> list[str]:
    return [t.w for t in toks]


def find(words: list[str], phrase: str, start: int = 0) -> int:
    """Index of ``phrase`` (space-separated words) in ``words`` from ``start``, or -1."""
    p = phrase.split()
    for i in range(start, len(words) - len(p) + 1):
        if words[i:i + len(p)] == p:
            return i
    return -1
