"""Understanding: a plain-language instruction + the scene's objects -> task frames, in order.

The offline planner's language stage. It never guesses: every word of an instruction must play
a part the rules know (an action, an object phrase, an ordering or condition word, a wrapper
such as "would you kindly"), or the instruction is refused with a reason and, where it can, the
closest reading it did understand. Steps:

1. safety: code, harm and limit-overriding words refuse outright (before anything is read);
2. words: lower-cased tokens, contractions opened, misspellings corrected against the known
   vocabulary (rapidfuzz, optimal-string-alignment distance, only for words lemminflect does
   not know as English), each word reduced to its lemma (lemminflect) so "hoisting" is "hoist";
3. structure: sentences -> conditionals (``if``/``unless``/postfix ``if``, ``otherwise``) ->
   clauses split at ordering words ("then", "once that is done", "before that", "after
   opening ...") -> one symbolic act per clause (action class + object phrases + destination
   preposition + manner), with goal-state phrasing ("I'd like the X to be in the Y") and
   ellipsis ("... and then C on B") read as the verb they leave out;
4. binding: object phrases against the scene's objects (colour words and near-colours mapped to
   the scene's colours, parts naming their object, pronouns to what was named before,
   superlatives and "closest to") -> frames with ids, refusing the ambiguous and the absent.

lemminflect and rapidfuzz load once per process, lazily; without them the stage falls back to
rules (a suffix-stripping lemmatiser, no spelling correction) and says so in ``notes``.
The same instruction and scene always give the same frames.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from frankenbot.planner import lexicon as lx
from frankenbot.planner.frames import (
    Condition,
    Frame,
    InstructionNotUnderstood,
    ObjectNotResolved,
    Refusal,
    UnsafeInstruction,
    chain_towers,
    tower_frame,
)
from frankenbot.state import Scene, SceneObject

MAX_WORDS = 120

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


_KNOWN = (set(lx.VERBS) | set(lx.NOUNS) | set(lx.PARTS) | set(lx.COLOUR_WORDS)
          | set(lx.SUPERLATIVES))
_LEMMA_CACHE: dict[str, tuple[str, bool]] = {}


def _lemma(word: str) -> tuple[str, bool]:
    """(the lexicon's word for ``word``, whether it was a plural noun)."""
    hit = _LEMMA_CACHE.get(word)
    if hit is not None:
        return hit
    result = (word, False)
    if word not in _KNOWN and not _is_function_word(word):
        lem = tools().lemmas
        cands: list[tuple[str, str]] = []
        if lem is not None:
            for pos, lemmas in lem(word).items():
                cands += [(pos, w) for w in lemmas]
        else:
            cands = [("?", w) for w in _rule_lemmas(word)]
        for pos, w in cands:
            if w in _KNOWN:
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


def _is_function_word(w: str) -> bool:
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
# multi-word units read as one word
_UNITS = (
    ("on top of", "onto"), ("on to", "onto"), ("in to", "into"), ("inside of", "into"),
    ("into the inside of", "into"), ("in the inside of", "into"), ("over to", "to"),
    ("over into", "into"), ("down into", "into"), ("down onto", "onto"), ("down on", "onto"),
    ("up onto", "onto"), ("up on", "onto"), ("across to", "to"), ("all the way into", "into"),
    ("left most", "leftmost"), ("right most", "rightmost"), ("left-most", "leftmost"),
    ("right-most", "rightmost"), ("far left", "leftmost"), ("far right", "rightmost"),
    ("trash can", "bin"), ("garbage can", "bin"), ("waste bin", "bin"),
    ("waste basket", "bin"), ("rubbish bin", "bin"), ("recycling bin", "bin"),
    ("get rid of", "discard"), ("throw away", "discard"), ("throw out", "discard"),
    ("put away", "stash"), ("until it is in", "into"), ("until it is inside", "into"),
    ("until it is on", "onto"), ("until it reaches", "to"), ("till it is in", "into"),
    ("take hold of", "grab"), ("grab hold of", "grab"),
    ("get hold of", "grab"), ("catch hold of", "grab"), ("keep holding", "hold"),
    ("keep hold of", "hold"), ("no longer", "not"), ("next to", "beside"),
    ("in front of", "beside"), ("a bit", ""), ("a little", ""), ("one by one", ""),
    ("the one", "one"), ("colour coded", "colour"), ("colour-coded", "colour"),
    ("colour match", "sort"), ("colour-match", "sort"), ("home position", "home"),
    ("home pose", "home"), ("starting position", "home"), ("start position", "home"),
    ("rest position", "home"), ("resting position", "home"), ("neutral position", "home"),
    ("ready position", "home"), ("original position", "home"),
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
    for a, b in _UNITS:
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
        lemma, plural = _lemma(word)
        lemma = _plural_form(lemma, plural)
        if (lemma == word and word not in _KNOWN and not _is_function_word(word)
                and len(word) >= 3 and word.isalpha() and t.correct is not None
                and (t.lemmas is None or not t.lemmas(word))):
            fixed = t.correct(word, not out or out[-1].w in (",", "."))
            if fixed is not None and fixed in lx.UNSAFE_WORDS:
                raise UnsafeInstruction(f"refused as unsafe: {word!r} reads as {fixed!r}")
            if fixed is not None:
                notes.append(f"read {word!r} as {fixed!r}")
                lemma, plural = _lemma(fixed)
                lemma = _plural_form(lemma if lemma != fixed or fixed in _KNOWN else fixed,
                                     plural)
        out.append(Tok(lemma, raw, plural))
    return out


def _plural_form(lemma: str, plural: bool) -> str:
    """Plural nouns as "<shape>s" ("cubes" -> "blocks"): the rules read number from that."""
    if plural and lemma in lx.NOUNS and not lemma.endswith("s"):
        return (lx.NOUNS[lemma] or "thing") + "s"
    return lemma


def _words(toks: list[Tok]) -> list[str]:
    return [t.w for t in toks]


def _find(words: list[str], phrase: str, start: int = 0) -> int:
    """Index of ``phrase`` (space-separated words) in ``words`` from ``start``, or -1."""
    p = phrase.split()
    for i in range(start, len(words) - len(p) + 1):
        if words[i:i + len(p)] == p:
            return i
    return -1


# ------------------------------------------------------------------------------ symbolic acts


@dataclass(frozen=True)
class Ref:
    """An object phrase, symbolic until bound: colour word, shape, superlative, pronoun..."""

    text: str
    colour: str = ""  # the colour word as said ("crimson")
    shape: str = ""
    superlative: str = ""
    relative_to: "Ref | None" = None
    quantifier: str = "the"  # the | a | all
    pronoun: bool = False
    object_id: str = ""
    plural: bool = False
    items: tuple["Ref", ...] = ()  # "the red and the blue block"
    remaining: bool = False  # "the other block" (tower middle, inferred)
    self_ref: bool = False  # "you", "me": the robot or the user


@dataclass(frozen=True)
class Act:
    """One clause, understood symbolically: ``kind`` is pick | place | push | tower | sort |
    clear | open | close | home | if."""

    kind: str
    obj: Ref | None = None
    dest: Ref | None = None
    prep: str = ""
    manner: str = ""
    tower: tuple[Ref, ...] = ()
    cond: tuple[str, Ref, Ref | None, bool] | None = None  # (kind, subject, other, negated)
    then: tuple["Act", ...] = ()
    otherwise: tuple["Act", ...] = ()
    postfix: bool = False  # "X if COND": pronouns in COND refer to X's objects
    order: str = "after"  # after | before (the clause goes before the one said before it)
    text: str = ""


class _NotParsed(Exception):
    """A clause did not parse (internal: the caller tries another split)."""


class _Deferred(_NotParsed):
    """A clause parsed far enough to know what to refuse; kept in case no split parses."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(str(refusal))
        self.refusal = refusal


_PENDING = threading.local()


def _defer(refusal: Refusal) -> _Deferred:
    pending = getattr(_PENDING, "refusals", None)
    if pending is not None:
        pending.append(refusal)
    return _Deferred(refusal)


# ------------------------------------------------------------------------------ object phrases

_PRONOUNS = {"it", "them", "that", "this", "there", "those", "these", "they"}
_POSITION = {"bottom": "bottom", "base": "bottom", "foundation": "bottom", "lowest": "bottom",
             "first": "bottom", "middle": "middle", "centre": "middle", "center": "middle",
             "second": "middle", "top": "top", "last": "top", "highest": "top",
             "uppermost": "top", "third": "top", "summit": "top", "peak": "top"}
_REL = {"closest", "farthest"}


def parse_np(toks: list[str]) -> Ref | None:
    """Words of an object phrase -> Ref, or None when a word does not belong in one."""
    words = list(toks)
    if "," in words:  # "the red, green and blue blocks": commas separate a list
        words = ["and" if w == "," else w for w in words]
        words = [w for i, w in enumerate(words) if not (w == "and" and i and words[i - 1]
                                                         == "and")]
    while words and words[0] == "and":
        words = words[1:]
    while words and words[-1] in ("and", "then"):
        words = words[:-1]
    if not words:
        return None
    text = " ".join(words)
    if len(words) <= 2 and words[-1] in _PRONOUNS | {"one"} and (
            len(words) == 1 or words[0] in ("that", "this", "the", "same")):
        if words == ["one"]:
            return None
        return Ref(text, pronoun=True)
    if words in (["the", "same", "place"], ["in", "there"], ["that", "place"]):
        return Ref(text, pronoun=True)
    # lists: "the red and the blue block", "red, green and blue blocks"
    if "and" in words:
        parts: list[list[str]] = [[]]
        for w in words:
            if w == "and":
                parts.append([])
            else:
                parts[-1].append(w)
        if all(parts) and len(parts) >= 2:
            shared = next((w for w in reversed(parts[-1]) if w in lx.NOUNS), "")
            refs = []
            for p in parts:
                r = parse_np(p)
                if r is not None and not r.shape and shared:
                    r = parse_np([*p, shared])
                if r is None or r.pronoun or r.items:
                    return None
                refs.append(r)
            return Ref(text, items=tuple(refs))
        return None
    # "the block closest to the bowl", "the one nearest you"
    for i, w in enumerate(words):
        if w in lx.SUPERLATIVES and lx.SUPERLATIVES[w] in _REL and i + 1 < len(words):
            rest = words[i + 1:]
            if rest[0] in ("to", "from", "the", "you", "me", "robot", "arm", "base"):
                if rest[0] in ("to", "from"):
                    rest = rest[1:]
                head = parse_np(words[:i]) if i else Ref("one")
                if head is None or not rest:
                    return None
                if rest[-1] in lx.SELF_WORDS and all(
                        x in lx.DETERMINERS | lx.SELF_WORDS for x in rest):
                    anchor = None
                else:
                    anchor = parse_np(rest)
                    if anchor is None or anchor.pronoun or anchor.items:
                        return None
                return Ref(text, colour=head.colour, shape=head.shape,
                           superlative=lx.SUPERLATIVES[w], relative_to=anchor,
                           quantifier=head.quantifier)
    # "the handle of the drawer", "the drawer's knob"
    for i, w in enumerate(words):
        if w in lx.PARTS:
            owner_words = []
            if i + 1 < len(words) and words[i + 1] == "of":
                owner_words = words[i + 2:]
            elif i >= 2 and words[i - 1] == "'s":
                owner_words = words[:i - 1]
            elif i >= 1 and words[i - 1] in lx.NOUNS:
                owner_words = words[:i]
            if owner_words:
                owner = parse_np(owner_words)
                return owner
            default = lx.PARTS[w]
            if not default:
                return None
            pre = parse_np(words[:i] + [default]) if i else Ref(text, shape=default)
            return pre
    if words[0] in ("the", "a", "an") and len(words) >= 2 and words[1] in ("other", "third",
                                                                             "remaining",
                                                                             "last"):
        if all(w in lx.NOUNS or w in ("other", "third", "remaining", "last", "the", "a", "an",
                                      "one")
               for w in words):
            return Ref(text, shape="block", remaining=True)
    quantifier = "the"
    colour = shape = superlative = object_id = ""
    plural = False
    selfref = False
    cupboard = False
    for i, w in enumerate(words):
        if w in lx.DETERMINERS and i == 0:
            quantifier = "a" if w in ("a", "an", "any", "some") else "the"
            if w in ("those", "these"):
                plural = True
        elif w in lx.QUANTIFIERS:
            quantifier = "all"
        elif w == "everything":
            quantifier = "all"
        elif w in lx.COLOUR_WORDS and not colour:
            colour = w
        elif w in lx.SUPERLATIVES and not superlative and lx.SUPERLATIVES[w] not in _REL:
            superlative = lx.SUPERLATIVES[w]
        elif w in lx.SUPERLATIVES and not superlative:
            superlative = lx.SUPERLATIVES[w]  # "the nearest block": to the robot
        elif w in ("left", "right") and not superlative:
            superlative = "leftmost" if w == "left" else "rightmost"
        elif w in lx.NOUNS:
            s = lx.NOUNS[w]
            if w in ("cupboard", "cabinet", "dresser", "chest"):
                cupboard = True
            if shape and s and s != shape:
                if cupboard and "drawer" in (s, shape):
                    shape = "drawer"
                    continue
                if {s, shape} == {"zone", "block"} or s == "zone" and w == "target":
                    continue  # "target block": the noun that follows decides
                if shape == "zone" and words[i - 1] == "target":
                    shape = s
                    continue
                return None
            shape = shape or s
        elif w in ("blocks", "cubes") or (w == "'s"):
            continue
        elif re.fullmatch(r"[a-z]+(?:_[a-z0-9]+)+", w) and not object_id:
            object_id = w
        elif w in lx.SELF_WORDS:
            selfref = True
        elif w in ("two", "three", "four", "2", "3", "4") and i > 0 and words[i - 1] in (
                "all", "the", "both", "these", "those", "every"):
            continue  # "all three blocks": the count the scene already has
        elif w in lx.NP_NOISE or w in ("one", "ones", "items", "other"):
            continue
        else:
            return None
    plural = plural or any(t in ("ones", "everything") or t.endswith("s") and t in lx.NOUNS
                           for t in words)
    if plural and not colour and not superlative and not object_id:
        quantifier = "all"  # "the blocks": every block
    if not (colour or shape or superlative or object_id or quantifier == "all" or selfref):
        if not any(w in ("one", "ones", "thing", "object", "item") for w in words):
            return None
    return Ref(text, colour=colour, shape=shape, superlative=superlative,
               quantifier=quantifier, object_id=object_id, plural=plural, self_ref=selfref)


# ------------------------------------------------------------------------------ clause rules

_PARTICLES = {"up", "down", "away", "back", "over", "off", "out", "aside", "along", "across",
              "forward", "forwards"}
_PICK_TAILS = ("in the air", "into the air", "up in the air", "up high", "high", "off the table",
               "off the surface", "from the table", "above the table", "for a moment",
               "for a second", "in your gripper", "in your hand", "in the gripper", "up",
               "off the ground", "and hold it", "and hold it up", "and keep it",
               "and keep holding it", "and lift it", "and lift it up", "and raise it",
               "and hold onto it", "so it is in the air", "up off the table",
               "off of the table", "and hold it there", "and keep it up", "and hold on")
_COPULA = {"be", "is", "are", "to", "end", "up", "should", "must", "need", "needs", "has",
           "have", "ought", "will", "would", "go", "goes", "belong", "belongs", "sit", "sits",
           "rest", "rests", "put", "placed", "moved", "lying", "sitting", "resting", "located",
           "stay", "remain", "being", "got", "gets", "get", "can", "could", "wind", "finish",
           "ends", "going", "land", "lands", "living", "positioned", "set", "stored",
           "stacked", "kept", "keep", "sat"}
_GOAL_HEADS = ("i would like", "i want", "i need", "i wish", "i would love", "i prefer",
               "we want", "we need", "we would like", "make sure that", "make sure",
               "ensure that", "ensure", "see to it that", "see that", "i want to see",
               "i would like to see", "it would be good if", "it would be nice if",
               "it would be great if", "can we have", "could we have", "can i have",
               "could i have", "i would like to have", "let us have", "let us get",
               "i expect", "the goal is that", "i would love it if", "i would like it if",
               "i would be happy if", "it would be lovely if", "i would prefer it if",
               "the idea is that", "arrange for", "get",
               "have", "leave", "the plan is for", "i would like for", "for")
_SORT_WORDS = {"block", "bowl", "colour", "matching", "same", "their", "its", "by", "into",
               "in", "to", "according", "based", "on", "the", "all", "every", "each", "of",
               "with", "that", "match", "has", "have", "corresponding", "respective", "own",
               "correct", "appropriate", "table", "one", "ones", "a", "an", "bowls",
               "blocks", "right", "proper", "coloured", "identical", "shares", "share", "is",
               "are", "it", "they", "them", "up", "whose", "everything", "object",
               "item", "thing", "cube", "cubes", "where", "belong", "belongs", "go", "goes",
               "respectively", "sort", "sorted", "hue", "shade", "appropriately",
               "matches", "out", "other", "onto", "inside", "together", "piece",
               "group", "grouped", "per", "different", "colours", "and", "so", "should", "must",
               "need", "needs", "want", "i", "would", "like"}
_COLOURISH = {"colour", "matching", "match", "matches", "corresponding", "respective", "hue",
              "shade", "identical", "same", "own", "colours", "appropriate", "respectively",
              "sort"}


def _strip_wrappers(words: list[str]) -> tuple[list[str], str]:
    """Drop politeness, filler and purpose words around a clause; return (words, manner)."""
    manner = ""
    changed = True
    while changed and words:
        changed = False
        for f in sorted(lx.LEADING_FILLERS, key=lambda x: -len(x.split())):
            p = f.replace("'", " '").split() if "'" in f else f.split()
            if words[:len(p)] == p and len(words) > len(p):
                if p[0] in lx.MANNER_WORDS and not manner:
                    manner = p[0]
                words = words[len(p):]
                changed = True
                break
        while words and words[0] == ",":
            words = words[1:]
            changed = True
        for f in sorted(lx.TRAILING_FILLERS, key=lambda x: -len(x.split())):
            p = f.split()
            if p == ["first"] and "tower" in words:
                continue  # "A, B and C into a tower, C first": C's place in the tower
            if len(words) > len(p) and words[-len(p):] == p:
                if p[0] in lx.MANNER_WORDS and not manner:
                    manner = p[0]
                words = words[:-len(p)]
                changed = True
                break
        while words and words[-1] == ",":
            words = words[:-1]
            changed = True
        for pw in lx.PURPOSE_WORDS:
            i = _find(words, pw, 1)
            if i > 1:
                words = words[:i]
                changed = True
                break
        # "... to make room": "to" + a verb that is not a destination
        for i, w in enumerate(words[1:], 1):
            if w == "to" and i + 1 < len(words) and words[i + 1] in (
                    "make", "keep", "free", "tidy", "clean", "help", "get", "save", "stop",
                    "avoid", "prevent", "see", "check", "test", "show", "practise",
                    "practice", "prepare", "finish", "complete", "open", "close", "shut"):
                words = words[:i]
                changed = True
                break
    while words and words[-1] in (",", "and"):
        words = words[:-1]
    return words, manner


def _manner(words: list[str]) -> tuple[list[str], str]:
    """``by sliding it``, ``without lifting it``, ``using the handle`` -> (rest, manner)."""
    for i, w in enumerate(words):
        if w in ("by", "without", "using", "via", "with") and i > 0 and i + 1 < len(words):
            nxt = words[i + 1]
            if w == "by" and nxt in lx.VERBS:
                cls = lx.VERBS[nxt]
                tail = words[i + 2:]
                dest_i = next((k for k, t in enumerate(tail) if t in lx.DEST_PREPS), -1)
                keep = tail[dest_i:] if dest_i >= 0 and words[:i].count("it") == 0 and not any(
                    t in lx.DEST_PREPS for t in words[:i]) else []
                return words[:i] + keep, {"pull": "pull", "push": "push"}.get(cls, cls)
            if w == "without" and nxt in lx.VERBS and lx.VERBS[nxt] == "pick":
                return words[:i], "push"
            if w in ("using", "with", "via", "by") and any(
                    t in lx.PARTS for t in words[i + 1:]) and all(
                    t in lx.PARTS or t in lx.DETERMINERS or t in lx.NOUNS or t in (
                        "'s", "of", "grip", "gripper", "hand", "fingers")
                    for t in words[i + 1:]):
                return words[:i], "by its handle"
            if w == "with" and all(t in lx.DETERMINERS or t in ("gripper", "hand", "fingers",
                                                                 "claw", "care")
                                   for t in words[i + 1:]):
                return words[:i], "gently" if "care" in words[i + 1:] else ""
    return words, ""


def _split_dest(rest: list[str]) -> tuple[Ref, str, Ref] | None:
    """``X in Y``: the first preposition where both sides are object phrases."""
    for i, w in enumerate(rest):
        if w in ("to", "from") and i > 0 and lx.SUPERLATIVES.get(rest[i - 1]) in _REL:
            continue  # "closest to": part of the object phrase
        if w in lx.DEST_PREPS and i > 0:
            left, right = rest[:i], rest[i + 1:]
            if not right:
                continue
            a, b = parse_np(left), parse_np(right)
            if a is not None and b is not None:
                return a, lx.DEST_PREPS[w], b
    return None


def _drawer_like(ref: Ref | None) -> bool:
    return ref is not None and ref.shape == "drawer"


def parse_clause(words: list[str], prev: Act | None) -> Act:
    """One clause (no ordering words left) -> an Act; raises _NotParsed."""
    try:
        return _parse_clause(words, prev)
    except _Deferred:
        raise
    except _NotParsed:
        # "make sure the X ends up in the Y": a goal state after a verb-like wrapper
        text = " ".join(words)
        w, manner = _strip_wrappers(list(words))
        w = [x for x in w if x not in lx.MANNER_WORDS]
        if not w:
            raise
        return _verbless(w, prev, manner, text)


def _parse_clause(words: list[str], prev: Act | None) -> Act:
    text = " ".join(words)
    words, manner = _strip_wrappers(words)
    for w in words:
        if w in lx.MANNER_WORDS:
            manner = manner or w
    words = [w for w in words if w not in lx.MANNER_WORDS]
    words, how = _manner(words)
    manner = how or manner
    if not words:
        raise _NotParsed(text)
    # go home
    if "home" in words and all(w in ("go", "return", "move", "head", "back", "to", "the",
                                     "your", "home", "arm", "position", "pose", "get", "come",
                                     "drive", "bring", "yourself", "put", "park", "the")
                               for w in words):
        return Act("home", text=text)
    head = words[0]
    verb = lx.VERBS.get(head, "")
    if head in ("find", "locate", "spot", "identify", "choose", "select", "pick out"):
        target = parse_np(words[1:])  # "find the closest block and put it in the bowl"
        if target is None:
            raise _NotParsed(text)
        return Act("locate", obj=target, text=text)
    if head in ("discard", "bin", "trash", "stash") and head not in ("stash",):
        obj = parse_np(words[1:])
        if obj is None:
            raise _NotParsed(text)
        if obj.quantifier == "all" and not obj.colour and not obj.items:
            return Act("clear", manner=manner, text=text)
        return Act("place", obj=obj, dest=Ref("the bin", shape="bin"), prep="in",
                   manner=manner, text=text)
    if head == "stash":
        verb = "put"
    if verb == "":
        return _verbless(words, prev, manner, text)
    rest = words[1:]
    if rest[:1] in (["me"], ["us"]) and verb in ("put", "pick"):
        obj = parse_np(rest[1:])
        raise _defer(Refusal("handing things to a person is not something the robot does",
                             kind="out_of_scope",
                             suggestion=f"pick up {obj.text}" if obj is not None else ""))
    particles = []
    while rest and rest[0] in _PARTICLES | {"open", "shut", "closed", "in"} and not (
            rest[0] == "in" and len(rest) > 1 and rest[1] not in lx.DETERMINERS | {"drawer"}):
        particles.append(rest[0])
        rest = rest[1:]
    while rest and rest[-1] in _PARTICLES | {"open", "shut", "closed", "opened", "in"}:
        if rest[-1] == "in" and verb not in ("push", "close", "slide"):
            break
        particles.append(rest[-1])
        rest = rest[:-1]
    if verb in ("open", "close", "pull", "push") or (
            verb in ("put", "pick") and {"open", "shut", "closed"} & set(particles)):
        target = parse_np(rest)
        if _drawer_like(target) or (target is not None and target.pronoun and (verb in (
                "open", "close") or {"open", "shut", "closed"} & set(particles))):
            opening = verb == "open" or (verb == "pull" and not {"shut", "closed", "in"}
                                         & set(particles)) or "open" in particles or (
                "out" in particles)  # "slide the drawer out", "pull it out"
            if verb in ("close", "push") and "open" not in particles and "out" not in particles:
                opening = False
            if {"shut", "closed"} & set(particles) or ("in" in particles and verb == "push"):
                opening = False
            return Act("open" if opening else "close", obj=target, manner=manner, text=text)
        if verb in ("open", "close") and target is not None and not target.items:
            return Act("open" if verb == "open" else "close", obj=target, text=text)
        if verb in ("open", "close"):
            raise _NotParsed(text)
    if verb == "sort":
        if all(w in _SORT_WORDS or w in lx.NOUNS or w in lx.DETERMINERS for w in rest):
            return Act("sort", manner=manner, text=text)
        raise _NotParsed(text)
    if verb == "clear":
        return _clear(rest, manner, text)
    if verb == "build" or "tower" in rest:
        return _tower(rest, manner, text)
    if verb == "pick" and any(w in lx.PARTS for w in rest):
        part = parse_np(rest)  # "grab the drawer's knob": hold the part its action pulls
        if part is not None and part.shape == "drawer":
            return Act("grip", obj=part, manner=manner, text=text)
    if verb == "pick":
        for tail in sorted(_PICK_TAILS, key=lambda x: -len(x.split())):
            p = tail.split()
            if len(rest) > len(p) and rest[-len(p):] == p:
                rest = rest[:-len(p)]
                break
    if _sort_like(rest):
        return Act("sort", manner=manner, text=text)
    for there in (["in", "there"], ["inside"], ["there"], ["in", "it"], ["into", "it"],
                  ["inside", "it"], ["in", "here"], ["in", "that"], ["on", "it"],
                  ["onto", "it"], ["on", "top"], ["on", "that"], ["in", "the", "same", "place"],
                  ["in", "as", "well"], ["inside", "too"], ["in", "too"], ["in"]):
        if len(rest) > len(there) and rest[-len(there):] == there and verb != "pick":
            obj = parse_np(rest[:-len(there)])
            if obj is not None:
                prep = "on" if there[0] in ("on", "onto") else "in"
                return Act("push" if verb == "push" or manner == "push" else "place", obj=obj,
                           dest=Ref(" ".join(there), pronoun=True), prep=prep, manner=manner,
                           text=text)
    split = _split_dest(rest)
    if split is None:
        obj = parse_np(rest)
        if obj is None:
            raise _NotParsed(text)
        if verb == "stack" and obj.items and len(obj.items) >= 2:
            return Act("tower", tower=obj.items, manner=manner, text=text)
        if verb == "stack" and obj.quantifier == "all":
            return Act("tower", tower=(obj,), manner=manner, text=text)
        if verb in ("pick",) or (verb == "put" and head in ("get", "fetch", "take", "hold")):
            return Act("pick", obj=obj, manner=manner, text=text)
        if verb in ("put", "stack", "push") and prev is not None and obj.pronoun is False and (
                prev.kind in ("place", "push") and prev.dest is not None):
            # "and then the blue one" after "put the red block in the bowl": same place
            return Act("push" if manner == "push" or verb == "push" else "place", obj=obj,
                       dest=prev.dest, prep=prev.prep, manner=manner, text=text)
        if verb == "push" and prev is None:
            raise _defer(Refusal(f"where should {obj.text} be pushed to? (the zone is the only "
                                 "place it can push to)", kind="ambiguous",
                                 suggestion=f"push {obj.text} into the zone"))
        raise _defer(Refusal(f"where should {obj.text} go? say where to put it",
                             kind="ambiguous"))
    obj, prep, dest = split
    if verb == "pick" and head in ("pick",) and not any(p in particles for p in ("up",)) and (
            False):
        pass
    if obj.self_ref or dest.self_ref:
        raise _defer(Refusal("handing things to a person is not something the robot does",
                             kind="out_of_scope",
                             suggestion=f"pick up {obj.text}" if not obj.self_ref else ""))
    if verb == "push" or manner == "push":
        return Act("push", obj=obj, dest=dest, prep=prep, manner=manner, text=text)
    if (obj.quantifier == "all" and not obj.colour and not obj.items and dest.shape != "block"
            and not _sortish(dest) and not dest.pronoun):
        return Act("clear", dest=dest, manner=manner, text=text)
    if _sortish(dest) and obj.quantifier == "all":
        return Act("sort", manner=manner, text=text)
    return Act("place", obj=obj, dest=dest, prep=prep, manner=manner, text=text)


def _sort_like(words: list[str]) -> bool:
    """``each block in the bowl that matches its colour``: every block to its colour's bowl."""
    ws = set(words)
    allowed = _SORT_WORDS | set(lx.NOUNS) | lx.DETERMINERS | lx.QUANTIFIERS
    blocks = any(lx.NOUNS.get(w) == "block" or w in ("everything", "thing", "things", "one",
                                                      "ones") for w in words)
    return (ws <= allowed and any(lx.NOUNS.get(w) == "bowl" for w in ws)
            and bool(ws & _COLOURISH) and blocks
            and bool(ws & (lx.QUANTIFIERS | {"blocks", "things", "ones", "everything"})))


def _sortish(dest: Ref) -> bool:
    return dest.shape == "bowl" and (dest.plural or any(
        w in _COLOURISH for w in dest.text.split()) or " its " in f" {dest.text} "
        or "their" in dest.text.split())


def _clear(rest: list[str], manner: str, text: str) -> Act:
    dest: Ref | None = None
    for i, w in enumerate(rest):
        if w in ("into", "in", "to", "inside") and i + 1 < len(rest):
            dest = parse_np(rest[i + 1:])
            if dest is None:
                raise _NotParsed(text)
            rest = rest[:i]
            break
    ok = {"the", "table", "tabletop", "everything", "all", "of", "blocks", "block", "off",
          "up", "away", "from", "on", "every", "each", "surface", "workspace", "area", "it",
          "stuff", "things", "objects", "object", "thing", "item", "items", "cube", "cubes",
          "desk", "out", "this", "mess", "remaining", "piece"}
    if not all(w in ok for w in rest):
        raise _NotParsed(text)
    return Act("clear", dest=dest, manner=manner, text=text)


def _tower(rest: list[str], manner: str, text: str) -> Act:
    """``a tower of A, B and C``, ``a tower: A at the bottom, then B, then C on top``."""
    words = list(rest)
    reverse = False
    for marker in ("from the top down", "from top to bottom", "top to bottom", "from the top",
                   "top down", "from top", "starting from the top", "starting at the top"):
        i = _find(words, marker)
        if i >= 0:
            reverse = True
            words = words[:i] + [","] + words[i + len(marker.split()):]
    for marker in ("from the bottom up", "from bottom to top", "bottom to top", "bottom up",
                   "from the bottom", "starting from the bottom", "starting at the bottom",
                   "in this order", "in that order", "in the order", "in order"):
        i = _find(words, marker)
        if i >= 0:
            words = words[:i] + [","] + words[i + len(marker.split()):]
    # items: split at commas, "and", "then", "followed by", "with", "next"
    seps = {",", "and", "then", "next", "followed", "with", "using", "of", "from", "out",
            "finally", "after", "that", "afterwards", "lastly", "by", "plus"}
    items: list[list[str]] = [[]]
    for w in words:
        if w in seps:
            if items[-1]:
                items.append([])
        else:
            items[-1].append(w)
    items = [it for it in items if it]
    slots: list[tuple[str, Ref]] = []
    skip = {"a", "tower", "the", "three", "two", "four", "3", "2", "4", "block", "blocks",
            "cube", "cubes", "high", "tall", "level", "levels", "storey", "story", "stack",
            "put", "place", "add", "set", "one", "is", "goes", "go", "should", "be",
            "at", "on", "in", "as", "it", "its", "itself", "that", "them", "this", "very",
            "onto", "to", "up", "make", "build", "piece", "pieces", "layer", "layers",
            "above", "below", "under", "over", "comes", "come", "sits", "sit", "me", "us",
            "you", "into", "where", "i", "would", "like", "want", "need", "please"}
    for it in items:
        pos = ""
        for w in it:
            if w in _POSITION:
                pos = _POSITION[w]
        if pos == "" and it[-1] in ("it", "that", "them") and len(it) > 2:
            pos = ""
        core = [w for w in it if w not in _POSITION and w not in ("of", "the", "at", "on",
                                                                  "in", "as", "onto")]
        if all(w in skip for w in core):
            continue
        noun_ok = [w for w in core if w not in skip or w in ("block", "cube")]
        ref = parse_np([w for w in noun_ok if w not in ("put", "place", "stack", "add", "set",
                                                        "goes", "go", "comes", "sits")])
        if ref is None or ref.pronoun:
            raise _NotParsed(text)
        if ref.items:
            for r in ref.items:
                slots.append(("", r))
        else:
            slots.append((pos, ref))
    if not slots:
        raise _NotParsed(text)
    if len(slots) == 1 and slots[0][1].quantifier == "all":
        return Act("tower", tower=(slots[0][1],), manner=manner, text=text)
    def key(r: Ref) -> tuple[str, str, str, str]:
        return (r.colour, r.shape or "block", r.superlative, r.object_id)

    placed = {key(r) for p, r in slots if p}
    # "A, B and C into a tower, A first": A's position is said twice, it is one block
    ordered = [r for p, r in slots if not p and (key(r) not in placed or not r.colour)]
    bottom = [r for p, r in slots if p == "bottom"]
    middle = [r for p, r in slots if p == "middle"]
    top = [r for p, r in slots if p == "top"]
    if reverse:
        ordered.reverse()
    seq = [*bottom, *middle, *ordered, *top] if not middle else [*bottom, *ordered[:0], *middle,
                                                                   *ordered, *top]
    if bottom and top and not middle and not ordered and "three" in words:
        seq = [bottom[0], Ref("the other block", shape="block", remaining=True), top[0]]
    if len(seq) < 2:
        raise _NotParsed(text)
    return Act("tower", tower=tuple(seq), manner=manner, text=text)


def _verbless(words: list[str], prev: Act | None, manner: str, text: str) -> Act:
    """Goal-state phrasing and ellipsis: "I'd like the X to be in the Y", "then C on B"."""
    w = list(words)
    for gh in sorted(_GOAL_HEADS, key=lambda x: -len(x.split())):
        p = gh.split()
        if w[:len(p)] == p and len(w) > len(p):
            w = w[len(p):]
            break
    if w and w[0] == "that":
        w = w[1:]
    if "tower" in w:
        return _tower(w, manner, text)
    if _sort_like(w):
        return Act("sort", manner=manner, text=text)
    kept = []
    for i, x in enumerate(w):  # "the X placed in the Y", "the X pushed into the zone"
        if i > 0 and x in lx.VERBS and lx.VERBS[x] in ("put", "stack", "push", "pick"):
            if lx.VERBS[x] == "push":
                manner = "push"
            if lx.VERBS[x] == "pick" and x not in ("hold", "lift", "raise"):
                raise _NotParsed(text)
            if lx.VERBS[x] == "pick":
                kept.append("held")
            continue
        kept.append(x)
    w = [x for x in kept if x not in _COPULA]
    w = [x for x in w if x not in ("to",)] if not any(x in lx.DEST_PREPS and x != "to"
                                                        for x in w) else [
        x for i, x in enumerate(w) if not (x == "to" and i + 1 < len(w) and w[i + 1] in (
            "be", "end"))]
    if not w:
        raise _NotParsed(text)
    if w[-1] in ("open", "opened", "closed", "shut"):
        ref = parse_np(w[:-1])
        if ref is not None and (ref.shape == "drawer" or ref.pronoun):
            return Act("open" if w[-1] in ("open", "opened") else "close", obj=ref,
                       manner=manner, text=text)
    if w[-1] in ("sort", "sorted", "organised", "organized", "grouped", "matched") or (
            "sort" in w and all(x in _SORT_WORDS or x in lx.NOUNS or x in lx.DETERMINERS
                                  or x in ("sorted", "organised", "grouped") for x in w)):
        return Act("sort", manner=manner, text=text)
    if w[-1] in ("clear", "cleared", "empty", "emptied", "tidy", "tidied", "clean"):
        if all(x in ("the", "table", "tabletop", "surface", "desk", "workspace") for x in w[:-1]):
            return Act("clear", manner=manner, text=text)
    if w[-1] in ("picked", "lifted", "held", "raised", "hoisted", "air", "grasped", "gripper",
                 "hand"):
        core = w[:-1]
        for tail in ("in the", "in your", "up in the", "in"):
            p = tail.split()
            if core[-len(p):] == p:
                core = core[:-len(p)]
                break
        ref = parse_np([x for x in core if x != "up"])
        if ref is not None:
            return Act("pick", obj=ref, manner=manner, text=text)
    split = _split_dest(w)
    if split is not None:
        obj, prep, dest = split
        kind = "push" if manner == "push" or (prev is not None and prev.kind == "push") else \
            "place"
        if obj.quantifier == "all" and not obj.colour and not obj.items and not _sortish(dest):
            return Act("clear", dest=dest, manner=manner, text=text)
        if _sortish(dest) and obj.quantifier == "all":
            return Act("sort", manner=manner, text=text)
        return Act(kind, obj=obj, dest=dest, prep=prep, manner=manner, text=text)
    if prev is not None and prev.obj is not None and w[0] in lx.DEST_PREPS:
        dest = parse_np(w[1:])
        if dest is not None:  # "otherwise on the plate": the same verb and object
            return Act(prev.kind if prev.kind in ("place", "push") else "place",
                       obj=Ref("it", pronoun=True), dest=dest, prep=lx.DEST_PREPS[w[0]],
                       manner=manner, text=text)
    if prev is not None and prev.kind in ("place", "push") and prev.obj is not None:
        dest = parse_np(w)
        if dest is not None and not dest.pronoun and prev.dest is not None and (
                dest.shape in ("block", "") and (dest.colour or dest.shape)
                and not (dest.shape == "" and dest.colour in ("white",))):
            # "... and then the green block too": the same action for another object
            return Act(prev.kind, obj=dest, dest=prev.dest, prep=prev.prep, manner=manner,
                       text=text)
        if dest is not None and not dest.pronoun and dest.shape != "block":
            return Act("place", obj=Ref("it", pronoun=True), dest=dest, prep=prev.prep,
                       manner=manner, text=text)
    raise _NotParsed(text)


# ------------------------------------------------------------------------------ sequences

_SPLIT_PRIORITY: tuple[tuple[str, ...], ...] = (
    tuple(sorted(lx.THEN_WORDS, key=lambda x: -len(x.split()))),
    tuple(sorted(lx.BEFORE_WORDS, key=lambda x: -len(x.split()))),
    ("before", "after", "and", ","),
)


def parse_sequence(words: list[str], prev: Act | None = None, depth: int = 0) -> list[Act]:
    """Clauses in order; raises _NotParsed when no split parses every part."""
    words = [w for w in words]
    while words and words[0] in (",", "and"):
        words = words[1:]
    while words and words[-1] in (",", "and"):
        words = words[:-1]
    if not words:
        raise _NotParsed("")
    if depth > 8:
        raise _NotParsed(" ".join(words))
    head, _m = _strip_wrappers(list(words))
    # leading "after opening the drawer, put ..." / "before putting X, open ..."
    if head and head[0] in ("after", "before", "once") and "," in head:
        k = head.index(",")
        first, second = head[1:k], head[k + 1:]
        if first and second:
            try:
                a = parse_sequence(first, prev, depth + 1)
                b = parse_sequence(second, a[-1], depth + 1)
                return a + b if head[0] in ("after", "once") else b + a
            except _NotParsed:
                pass
    try:
        return [parse_clause(words, prev)]
    except _NotParsed:
        pass
    if "," in words:  # "the red block, please put it in the bowl": the phrase is "it"
        k = words.index(",")
        topic = parse_np(words[:k])
        if topic is not None and not topic.pronoun and "it" in words[k + 1:]:
            try:
                loc = Act("locate", obj=topic, text=" ".join(words[:k]))
                return [loc, *parse_sequence(words[k + 1:], loc, depth + 1)]
            except _NotParsed:
                pass
    for marker in (", but", "but"):  # "put X in the drawer but open it first"
        i = _find(words, marker, 1)
        if i > 0:
            right = words[i + len(marker.split()):]
            if right[-1:] == ["first"] or right[:1] == ["first"]:
                right = [w for w in right if w != "first"]
                try:
                    a = parse_sequence(words[:i], prev, depth + 1)
                    b = parse_sequence(right, a[-1], depth + 1)
                    return b + a
                except _NotParsed:
                    pass
    for group in _SPLIT_PRIORITY:
        for marker in group:
            m = marker.split()
            i = _find(words, marker, 1)
            while i > 0:
                left, right = words[:i], words[i + len(m):]
                if marker in (",", "and") and right and right[0] in lx.DEST_PREPS and False:
                    pass
                try:
                    if marker in ("before", "after"):
                        # "open the drawer before putting X in it"; "put X in after opening"
                        a = parse_sequence(left, prev, depth + 1)
                        b = parse_sequence(_drop_you(right), a[-1], depth + 1)
                        return a + b if marker == "before" else b + a
                    a = parse_sequence(left, prev, depth + 1)
                    b = parse_sequence(right, a[-1], depth + 1)
                    if marker in lx.BEFORE_WORDS:
                        b = [_with_order(x, "before") for x in b]
                        return a[:-1] + b + a[-1:]
                    return a + b
                except _NotParsed:
                    i = _find(words, marker, i + 1)
    raise _NotParsed(" ".join(words))


def _drop_you(words: list[str]) -> list[str]:
    if words[:2] in (["you", "have"], ["you", "are"]):
        return words[2:]
    return words[1:] if words[:1] == ["you"] else words


def _with_order(a: Act, order: str) -> Act:
    from dataclasses import replace

    return replace(a, order=order)


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
    head, _m = _strip_wrappers(list(words))
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
                except _NotParsed:
                    continue
                c = (cond[0], cond[1], cond[2], cond[3] != negate)
                return Act("if", cond=c, then=tuple(then), otherwise=tuple(otherwise),
                           text=" ".join(words))
            return None
    for ih in ("only if", "if", "unless", "provided that", "provided", "as long as",
               "but only if", "in case"):
        i = _find(head, ih, 1)
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
            except _NotParsed:
                continue
            c = (cond[0], cond[1], cond[2], cond[3] != negate)
            return Act("if", cond=c, then=tuple(then), otherwise=tuple(otherwise),
                       postfix=True, text=" ".join(words))
    return None


def _branches(rest: list[str]) -> tuple[list[Act], list[Act]]:
    for marker in sorted(_ELSE_MARKERS, key=lambda x: -len(x.split())):
        i = _find(rest, marker, 1)
        while i > 0:
            left = rest[:i]
            right = rest[i + len(marker.split()):]
            while right and right[0] in (",", "then", "just"):
                right = right[1:]
            try:
                then = parse_sequence(left)
                return then, parse_sequence(right, then[-1])
            except _NotParsed:
                i = _find(rest, marker, i + 1)
    return parse_sequence(rest), []


# ------------------------------------------------------------------------------ binding

PICKABLE = ("block", "unknown")
CONTAINER_SHAPES = ("bowl", "bin", "plate", "drawer", "zone")


@dataclass
class _Bind:
    scene: Scene
    last_item: SceneObject | None = None
    last_container: SceneObject | None = None
    named: list[str] = field(default_factory=list)


def _volume(o: SceneObject) -> float:
    return o.size[0] * o.size[1] * o.size[2]


def _colour_list(objs: list[SceneObject], conj: str = "or") -> str:
    names = [o.colour or o.object_id for o in objs]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" {conj} " + names[-1]


def _noun(shape: str) -> str:
    return shape or "object"


def resolve(ref: Ref, ctx: _Bind, role: str) -> SceneObject:
    """The one scene object ``ref`` means in ``role`` (item | container | zone | drawer)."""
    scene = ctx.scene
    if ref.pronoun:
        found = ctx.last_container if role in ("container", "drawer", "zone") else ctx.last_item
        if found is None and role == "drawer":
            found = next((o for o in scene.objects if o.shape == "drawer"), None)
        if found is None:
            raise ObjectNotResolved(f"{ref.text!r}: nothing mentioned before that it could mean",
                                    kind="ambiguous")
        return found
    if ref.items:
        raise ObjectNotResolved(f"{ref.text!r} names several objects here", kind="ambiguous")
    if ref.object_id:
        obj = scene.get(ref.object_id)
        if obj is None:
            raise ObjectNotResolved(f"{ref.object_id!r} is not in the scene "
                                    f"({', '.join(scene.ids()) or 'nothing'})")
        return obj
    if ref.self_ref:
        raise Refusal("handing things over or moving to a person is not something the robot "
                      "does", kind="out_of_scope")
    shapes: tuple[str, ...]
    if ref.shape:
        shapes = (ref.shape,)
    else:
        shapes = {"item": PICKABLE, "container": CONTAINER_SHAPES, "zone": ("zone",),
                  "drawer": ("drawer",)}[role]
    of_shape = sorted((o for o in scene.objects if o.shape in shapes),
                      key=lambda o: o.object_id)
    if ref.remaining:
        cands = [o for o in of_shape if o.object_id not in ctx.named]
        if len(cands) == 1:
            return cands[0]
        raise ObjectNotResolved(f"{ref.text!r} could be {len(cands)} blocks; which block: "
                                f"{_colour_list(cands)}?", kind="ambiguous",
                                candidates=tuple(o.object_id for o in cands))
    noun = _noun(ref.shape or {"item": "block", "container": "container", "zone": "zone",
                               "drawer": "drawer"}[role])
    cands = of_shape
    if ref.colour:
        tiers = lx.COLOUR_WORDS.get(ref.colour, (ref.colour,))
        cands = [o for o in of_shape if o.colour in tiers]
        if not cands:
            have = _colour_list(of_shape, "and") if of_shape else ""
            raise ObjectNotResolved(
                f"there is no {ref.colour} {noun} in the scene"
                + (f" (it has {len(of_shape)} {noun}{'s' if len(of_shape) > 1 else ''}: "
                   f"{have})" if have else f" ({', '.join(scene.ids()) or 'nothing'})"),
                candidates=tuple(o.object_id for o in of_shape))
    if not cands:
        raise ObjectNotResolved(f"there is no {ref.text!r} in the scene "
                                f"({', '.join(scene.ids()) or 'nothing'})")
    if ref.superlative:
        return _superlative(ref, cands, ctx, noun)
    if len(cands) == 1 or ref.quantifier == "a" and len({o.colour for o in cands}) == 1:
        return cands[0]
    if ref.quantifier == "a":
        return cands[0]
    raise ObjectNotResolved(
        f"{ref.text!r} is ambiguous: which {noun}: {_colour_list(cands)}?",
        kind="ambiguous", candidates=tuple(o.object_id for o in cands))


def _superlative(ref: Ref, cands: list[SceneObject], ctx: _Bind, noun: str) -> SceneObject:
    import math

    origin = (0.0, 0.0)
    if ref.relative_to is not None:
        anchor = resolve(ref.relative_to, ctx, "container")
        origin = (anchor.position[0], anchor.position[1])
        cands = [o for o in cands if o.object_id != anchor.object_id] or cands

    def dist(o: SceneObject) -> float:
        return math.hypot(o.position[0] - origin[0], o.position[1] - origin[1])

    keys: dict[str, Callable[[SceneObject], float]] = {
        "largest": lambda o: -_volume(o), "smallest": _volume, "closest": dist,
        "farthest": lambda o: -dist(o), "leftmost": lambda o: -o.position[1],
        "rightmost": lambda o: o.position[1], "tallest": lambda o: -o.size[2],
    }
    key = keys[ref.superlative]
    ranked = sorted(cands, key=lambda o: (key(o), o.object_id))
    if len(ranked) > 1:
        a, b = key(ranked[0]), key(ranked[1])
        tol = 0.1 * abs(a) if ref.superlative in ("largest", "smallest", "tallest") else 0.002
        if abs(a - b) <= tol:
            raise ObjectNotResolved(
                f"{ref.text!r} is ambiguous: {ranked[0].object_id} and {ranked[1].object_id} "
                f"are about equally {ref.superlative}; which {noun}: "
                f"{_colour_list(ranked[:2])}?", kind="ambiguous",
                candidates=(ranked[0].object_id, ranked[1].object_id))
    return ranked[0]


def _item(ref: Ref, ctx: _Bind) -> SceneObject:
    o = resolve(ref, ctx, "item")
    if o.shape not in PICKABLE:
        raise ObjectNotResolved(f"{o.object_id} is a {o.shape}; the robot moves blocks only",
                                kind="impossible")
    return o


def _note(ctx: _Bind, *objs: SceneObject) -> None:
    for o in objs:
        if o.object_id not in ctx.named:
            ctx.named.append(o.object_id)


def bind(act: Act, ctx: _Bind) -> list[Frame]:
    """One symbolic act -> frames with ids (pronoun and last-named state in ``ctx``)."""
    k = act.kind
    if k == "home":
        return [Frame("home")]
    if k == "locate":  # names what "it" means next; moves nothing by itself
        assert act.obj is not None
        ctx.last_item = _item(act.obj, ctx)
        _note(ctx, ctx.last_item)
        return []
    if k == "grip":  # gripping a drawer's handle is how the next clause opens or closes it
        assert act.obj is not None
        ctx.last_container = resolve(act.obj, ctx, "drawer")
        return []
    if k == "sort":
        return [Frame("sort_by_colour", manner=act.manner)]
    if k == "clear":
        dest = (resolve(act.dest, ctx, "container") if act.dest is not None
                else resolve(Ref("the bin", shape="bin"), ctx, "container"))
        if dest.shape not in CONTAINER_SHAPES or dest.shape == "zone":
            raise ObjectNotResolved(f"{dest.object_id} is not a container", kind="impossible")
        ctx.last_container = dest
        return [Frame("clear_table", (("target", dest.object_id),), manner=act.manner)]
    if k in ("open", "close"):
        assert act.obj is not None
        d = resolve(act.obj, ctx, "drawer")
        if d.shape != "drawer":
            raise ObjectNotResolved(f"{d.object_id} cannot be opened or closed",
                                    kind="impossible")
        ctx.last_container = d
        return [Frame("open_drawer" if k == "open" else "close_drawer",
                      (("drawer", d.object_id),), manner=act.manner)]
    if k == "pick":
        assert act.obj is not None
        if act.obj.items:
            raise Refusal("the robot holds one block at a time", kind="impossible",
                          suggestion=f"pick up {act.obj.items[0].text}")
        o = _item(act.obj, ctx)
        ctx.last_item = o
        _note(ctx, o)
        return [Frame("pick_up", (("obj", o.object_id),), manner=act.manner)]
    if k == "tower":
        if len(act.tower) == 1:
            raise ObjectNotResolved(f"{act.tower[0].text!r}: in which order? name the block "
                                    "at the bottom, in the middle and on top", kind="ambiguous")
        objs = []
        named = [r for r in act.tower if not r.remaining]
        for r in named:
            o = _item(r, ctx)
            objs.append(o)
            _note(ctx, o)
        full = []
        it = iter(objs)
        for r in act.tower:
            full.append(_item(r, ctx) if r.remaining else next(it))
        ids = [o.object_id for o in full]
        if len(set(ids)) != len(ids):
            raise ObjectNotResolved(f"a tower needs distinct blocks, got {', '.join(ids)}",
                                    kind="impossible")
        ctx.last_item = full[-1]
        return [tower_frame(ids, act.manner)]
    if k in ("place", "push"):
        assert act.obj is not None and act.dest is not None
        objs = act.obj.items or (act.obj,)
        out: list[Frame] = []
        for r in objs:
            out += _bind_place(k, r, act, ctx)
        return out
    if k == "if":
        return [_bind_if(act, ctx)]
    raise InstructionNotUnderstood(f"unsupported act {k}")  # pragma: no cover


def _bind_place(k: str, ref: Ref, act: Act, ctx: _Bind) -> list[Frame]:
    assert act.dest is not None
    obj = _item(ref, ctx)
    _note(ctx, obj)
    dref = act.dest
    if dref.pronoun:
        prev = ctx.last_item
        if act.prep == "on" and prev is not None and prev.object_id != obj.object_id:
            target = prev
        else:
            target = resolve(dref, ctx, "container")
    elif act.prep == "on" and not dref.shape:
        target = resolve(dref, ctx, "item")
    else:
        role = "zone" if k == "push" and not dref.shape else (
            "item" if dref.shape in PICKABLE else "container")
        target = resolve(dref, ctx, role)
    if target.object_id == obj.object_id:
        raise ObjectNotResolved(f"cannot put {obj.object_id} on or in itself", kind="impossible")
    ctx.last_item = obj
    _note(ctx, obj, target)
    roles = (("obj", obj.object_id), ("target", target.object_id))
    if target.shape == "zone":
        return [Frame("push_to_zone", roles, manner=act.manner or "push")]
    if k == "push":
        raise ObjectNotResolved(
            f"the robot can push blocks into the zone only, not into {target.object_id}",
            kind="impossible", suggestion=f"put {_say(obj)} in {_say(target)}")
    if target.shape in PICKABLE:
        if act.prep == "in":
            raise ObjectNotResolved(f"{target.object_id} is a block, not a container: nothing "
                                    "goes in it", kind="impossible",
                                    suggestion=f"stack {_say(obj)} on {_say(target)}")
        return [Frame("stack", roles, manner=act.manner)]
    if target.shape not in CONTAINER_SHAPES:
        raise ObjectNotResolved(f"{target.object_id} ({target.shape}) is not a container",
                                kind="impossible")
    ctx.last_container = target
    return [Frame("put_in", roles, manner=act.manner)]


def _bind_if(act: Act, ctx: _Bind) -> Frame:
    assert act.cond is not None
    kind, subj, other, neg = act.cond
    then: list[Frame] = []
    if act.postfix:  # "put X in the bowl if it is empty": "it" is the bowl
        for a in act.then:
            then += bind(a, ctx)
    role = {"empty": "container", "drawer_open": "drawer"}.get(kind, "item")
    s = resolve(subj, ctx, role)
    if role in ("container", "drawer"):
        if s.shape not in CONTAINER_SHAPES:
            raise ObjectNotResolved(f"{s.object_id} cannot be empty or full", kind="impossible")
        ctx.last_container = s
    else:
        ctx.last_item = s
    args: tuple[str, ...] = (s.object_id,)
    if kind in ("in", "on") and other is not None:
        o = resolve(other, ctx, "container" if kind == "in" else "item")
        if kind == "in":
            ctx.last_container = o
        args = (s.object_id, o.object_id)
    if not act.postfix:
        for a in act.then:
            then += bind(a, ctx)
    otherwise: list[Frame] = []
    for a in act.otherwise:
        otherwise += bind(a, ctx)
    return Frame("if", condition=Condition(kind, args, neg), then=tuple(then),
                 otherwise=tuple(otherwise))


def _say(o: SceneObject) -> str:
    return f"the {o.label}" if o.label else o.object_id


def describe(frames: tuple[Frame, ...], scene: Scene) -> str:
    """Frames in plain words (the reading offered back in a refusal or by --explain)."""
    def name(oid: str) -> str:
        o = scene.get(oid)
        return _say(o) if o is not None else oid

    def one(f: Frame) -> str:
        r = dict(f.roles)
        if f.task == "pick_up":
            return f"pick up {name(r['obj'])}"
        if f.task == "put_in":
            return f"put {name(r['obj'])} in {name(r['target'])}"
        if f.task == "stack":
            return f"stack {name(r['obj'])} on {name(r['target'])}"
        if f.task == "push_to_zone":
            return f"push {name(r['obj'])} into {name(r['target'])}"
        if f.task == "tower":
            ids = [v for _k, v in f.roles]
            return "build a tower of " + ", ".join(name(i) for i in ids) + " (bottom first)"
        if f.task == "clear_table":
            return f"clear the table into {name(r['target'])}"
        if f.task == "sort_by_colour":
            return "sort the blocks into the bowls of their colour"
        if f.task in ("open_drawer", "close_drawer"):
            return f"{f.task.split('_')[0]} {name(r['drawer'])}"
        if f.task == "home":
            return "go home"
        if f.task == "if" and f.condition is not None:
            c = f.condition
            text = f"if {c.render()} then " + describe(f.then, scene)
            return text + (f", otherwise {describe(f.otherwise, scene)}" if f.otherwise else "")
        return f.render()

    return ", then ".join(one(f) for f in frames)


# ------------------------------------------------------------------------------ entry point


@dataclass(frozen=True)
class Understanding:
    """What an instruction was understood to ask, and how it was read."""

    instruction: str
    frames: tuple[Frame, ...]
    notes: tuple[str, ...] = ()
    seconds: float = 0.0

    def explain(self, scene: Scene) -> str:
        lines = [f"understood {len(self.frames)} frame{'s' if len(self.frames) != 1 else ''}:"]
        for i, f in enumerate(self.frames, 1):
            manner = f" [manner: {f.manner}]" if f.manner else ""
            lines.append(f"  {i}. {f.render()}{manner}")
        lines.append(f"  reading: {describe(self.frames, scene)}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def check_safety(text: str) -> None:
    s = " " + normalise(text) + " "
    for phrase in lx.UNSAFE_PHRASES:
        if f" {phrase} " in s:
            raise UnsafeInstruction(f"refused as unsafe: {phrase!r} asks for something the "
                                    "robot must not do")
    for w in re.findall(r"[a-z_]+", s):
        if w in lx.UNSAFE_WORDS:
            raise UnsafeInstruction(f"refused as unsafe: {w!r} is not something the robot "
                                    "will act on (no harm, no code, no overriding its limits)")
    if re.search(r"[{}]|__|\bos\.|\(\s*'|\bimport\s", text):
        raise UnsafeInstruction("refused as unsafe: the instruction contains code")


def _starts_with_before(sent: list[str]) -> bool:
    """Does the sentence start with "before that" (it then refers to the previous one)?"""
    return any(sent[:len(b.split())] == b.split() for b in lx.BEFORE_WORDS)


def _join_tower_sentences(sentences: list[list[str]]) -> list[list[str]]:
    """"Build a tower? The red block at the bottom, then ...": one instruction, two sentences."""
    out: list[list[str]] = []
    for s in sentences:
        if out and "tower" in out[-1] and _tower_is_empty(out[-1]):
            out[-1] = out[-1] + [","] + s
        else:
            out.append(s)
    return out


def _tower_is_empty(words: list[str]) -> bool:
    i = words.index("tower")
    return all(w in lx.DETERMINERS or w in ("of", "three", "blocks", "block", "with", ",")
               for w in words[i + 1:])


def parse(text: str, notes: list[str] | None = None) -> list[Act]:
    """Instruction -> symbolic acts in order (no scene yet). Raises Refusal."""
    if not isinstance(text, str) or not text.strip():
        raise InstructionNotUnderstood("empty instruction: say what the robot should do")
    check_safety(text)
    notes = notes if notes is not None else []
    toks = tokenise(text, notes)
    if len(toks) > MAX_WORDS:
        raise InstructionNotUnderstood(f"too long for the offline planner ({len(toks)} words)")
    words = _words(toks)
    sentences: list[list[str]] = [[]]
    for w in words:
        if w == ".":
            sentences.append([])
        else:
            sentences[-1].append(w)
    acts: list[Act] = []
    _PENDING.refusals = []
    sentences = _join_tower_sentences([s for s in sentences if s])
    sentence_start = 0
    for sent in sentences:
        if acts:
            sentence_start = len(acts) if not _starts_with_before(sent) else sentence_start
        cond = None
        try:
            cond = parse_conditional(sent)
        except _NotParsed:
            cond = None
        try:
            if cond is not None:
                new = [cond]
            else:
                # "before that, open the drawer" as its own sentence
                lead = next((b for b in sorted(lx.BEFORE_WORDS, key=lambda x: -len(x))
                             if sent[:len(b.split())] == b.split()), None)
                if lead is not None and acts:
                    body = sent[len(lead.split()):]
                    new = [_with_order(a, "before")
                           for a in parse_sequence(body, acts[-1])]
                    acts = acts[:sentence_start] + new + acts[sentence_start:]
                    continue
                new = parse_sequence(sent, acts[-1] if acts else None)
        except _NotParsed:
            pending = _PENDING.refusals
            if pending:
                raise pending[0] from None
            raise InstructionNotUnderstood(
                f"not understood: {text.strip()[:120]!r}. The offline planner knows: "
                f"{lx.OUT_OF_SCOPE_HINT}") from None
        acts += new
    if not acts:
        raise InstructionNotUnderstood(f"not understood: {text.strip()[:120]!r}")
    return acts


def understand(text: str, scene: Scene) -> Understanding:
    """Instruction + the scene's objects -> frames in order, or a Refusal that says why."""
    t0 = time.perf_counter()
    from frankenbot.planner.relative import relative_frame  # local: it uses this module

    relative = relative_frame(text, scene)  # "put X left of Y": before the general reading
    if relative is not None:
        return Understanding(text, (relative,), ("relative placement",),
                             time.perf_counter() - t0)
    notes: list[str] = list(tools().messages)
    try:
        acts = parse(text, notes)
    except InstructionNotUnderstood as e:
        if not e.suggestion:
            sugg = closest_reading(text, scene)
            if sugg:
                raise InstructionNotUnderstood(e.reason, suggestion=sugg) from None
        raise
    ctx = _Bind(scene)
    frames: list[Frame] = []
    for i, a in enumerate(acts):
        try:
            frames += bind(a, ctx)
        except ObjectNotResolved as e:
            # "close the drawer after putting X inside it": a clause done first may point at
            # what the clause after it names
            if "nothing mentioned before" not in e.reason or i + 1 >= len(acts):
                raise
            ahead = _Bind(scene)
            try:
                bind(acts[i + 1], ahead)
            except Refusal:
                raise e from None
            ctx.last_item = ctx.last_item or ahead.last_item
            ctx.last_container = ctx.last_container or ahead.last_container
            frames += bind(a, ctx)
    out: list[Frame] = []
    for f in frames:  # "pick up X and hold it": one pick
        if (out and out[-1].task == "pick_up" and f.task in ("put_in", "stack", "push_to_zone")
                and f.role("obj") == out[-1].role("obj")):
            out[-1] = f  # "pick up X and put it in Y": the placing picks it up
            continue
        if out and f == out[-1] and f.task in ("pick_up", "open_drawer", "close_drawer",
                                               "clear_table", "sort_by_colour", "home",
                                               "put_in", "stack", "push_to_zone"):
            # "get X over to Y and leave it there": the second clause restates the first
            continue
        out.append(f)
    if not out:
        first = scene.get(ctx.named[0]) if ctx.named else None
        raise InstructionNotUnderstood(
            f"nothing to do in {text.strip()[:120]!r}: finding or gripping is not a task by "
            "itself", suggestion=f"pick up {_say(first)}" if first is not None and (
                first.shape in PICKABLE) else "")
    return Understanding(text, chain_towers(tuple(out)), tuple(notes),
                         time.perf_counter() - t0)


def closest_reading(text: str, scene: Scene) -> str:
    """The task reading, among those this scene allows, whose words are nearest the instruction
    (rapidfuzz token-set similarity); "" when none is near. Offered in refusals only."""
    try:
        from rapidfuzz import fuzz
    except ImportError:
        return ""
    readings = _readings(scene)
    s = normalise(text)
    best, score = "", 0.0
    for r in readings:
        v = fuzz.token_set_ratio(s, r)
        if v > score:
            best, score = r, v
    return best if score >= 70 else ""


def _readings(scene: Scene) -> list[str]:
    objs = sorted(scene.objects, key=lambda o: o.object_id)
    blocks = [o for o in objs if o.shape in PICKABLE]
    conts = [o for o in objs if o.shape in ("bowl", "bin", "plate", "drawer")]
    out = ["sort the blocks by colour", "clear the table", "go home"]
    if any(o.shape == "drawer" for o in objs):
        out += ["open the drawer", "close the drawer"]
    for b in blocks:
        out.append(f"pick up {_say(b)}")
        out += [f"put {_say(b)} in {_say(c)}" for c in conts]
        out += [f"stack {_say(b)} on {_say(o)}" for o in blocks if o is not b]
        out += [f"push {_say(b)} into {_say(z)}" for z in objs if z.shape == "zone"]
    return out


def load_models() -> Any:
    """Load the language tools now (the benchmark excludes this from its timings)."""
    return tools()
