"""Lark -> GBNF (llama.cpp) and EBNF (xgrammar/SGLang): the exported grammars accept and reject
the same texts as the Lark parser, over every example program, a seeded fuzz corpus and a
garbage corpus.

The exported text is matched character by character by an Earley parser built from the GBNF
text alone (a mechanical notation translation below, independent of the exporter's logic), and
its syntax is checked by LLGuidance's GBNF reader (llama.cpp's notation). LLGuidance is not the
matcher: its GBNF import turns terminal-only rules into greedy lexemes, which changes what a
lexer-free grammar accepts."""

from __future__ import annotations

import functools
import random
import re
from pathlib import Path

import pytest
from lark import Lark

from frankenbot.eval import fuzz
from frankenbot.planner import language
from frankenbot.program.grammar_export import (
    GrammarExportError,
    check_gbnf,
    ebnf,
    export_grammar,
    gbnf,
    regex_to_bnf,
)
from frankenbot.program.parser import _lark

llguidance = pytest.importorskip("llguidance")

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "program"
EXAMPLES = [p.read_text() for p in sorted(FIXTURES.glob("*.fb"))]
GARBAGE = [
    "", "hello there", "{}", "task", "```\n```", 'task "x" { }', "task 'x' { main { } }",
    'task "x" { main { pick("red_block") } }', 'task "x" { main { if holding(x): home() } }',
    'task "x" { main { pick(obj=x) }', 'task "x" { monitor m when gripper_open { } }',
    'task"x"{main{goto start max2}}', 'task "x" { main { gotostart } }',
    'task "x" { main { repeat3 { home() } } }', 'task "x" { main { home() } } trailing',
    'task "x" { main { exit successs } }', 'task "x" { main { x = 1 } }',
    'task "x" { main { home() } monitor m when notholding(a) { then resume } }',
]
# tight spacing Lark accepts: a word next to punctuation needs no space
TIGHT = [
    'task"x"{main{pick(obj=a)home()start:goto start max 2}}',
    'task "x" {main {if(holding(a)){home()}else if not(gripper_open){home()}}}',
    'task "x" { main { home() } monitor m when holding(a)during pick(obj=a),home{then resume} }',
    'task "x"{main{wait(seconds=-0.5)exit failure"why"}}',
]


class _ByteTokenizer:
    eos_token_id = 256
    bos_token_id = None
    tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
    special_token_ids = [256]

    def __call__(self, s):
        return list(s.encode() if isinstance(s, str) else s)


@pytest.fixture(scope="module")
def tokenizer():
    return llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokenizer()))


def _lark_accepts(text: str) -> bool:
    try:
        _lark().parse(text, start="start")
        return True
    except Exception:
        return False


# --- GBNF notation -> a character-level Lark Earley grammar (test oracle) ---------------------

_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|(\[(?:[^\]\\]|\\.)*\])'
                    r'|([A-Za-z0-9_-]+)|(::=|[()|?*+]|\{\d+,\d+\}))')
_ESC = re.compile(r'\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|.)')
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "[": "[", "]": "]"}

def _unescape(s: str) -> str:
    def one(m: re.Match) -> str:
        e = m.group(1)
        return chr(int(e[1:], 16)) if e[0] in "xu" and len(e) > 1 else _SIMPLE[e]
    return _ESC.sub(one, s)

def _e(c: str) -> str:
    if c.isalnum() or c == "_":
        return c
    return {"\n": "\\n", "\t": "\\t", "\r": "\\r", "/": "\\/"}.get(c, "\\" + c)

def _cls(body: str) -> str:
    neg = body.startswith("^")
    chars = _unescape(body[1:] if neg else body)
    out, i = [], 0
    while i < len(chars):
        if i + 2 < len(chars) and chars[i + 1] == "-":
            out.append(_e(chars[i]) + "-" + _e(chars[i + 2]))
            i += 3
        else:
            out.append(_e(chars[i]))
            i += 1
    return "/[" + ("^" if neg else "") + "".join(out) + "]/"

def gbnf_to_lark(text: str) -> str:
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        name, body = line.split("::=", 1)
        parts, pos, body = [], 0, body.strip()
        while pos < len(body):
            m = _TOKEN.match(body, pos)
            if not m:
                raise ValueError(f"cannot read {body[pos:pos+20]!r}")
            pos = m.end()
            lit, cls, ref, op = m.groups()
            if lit is not None:
                parts.append("/" + "".join(_e(c) for c in _unescape(lit[1:-1])) + "/")
            elif cls is not None:
                parts.append(_cls(cls[1:-1]))
            elif ref is not None:
                parts.append("r_" + ref.replace("-", "_").lower())
            elif op.startswith("{"):  # bounded repetition {m,n}: Lark's `~ m..n`
                lo, hi = op[1:-1].split(",")
                parts.append(f"~ {lo}..{hi}")
            else:
                parts.append(op)
        out.append(f"r_{name.strip().replace('-', '_').lower()}: " + " ".join(parts))
    return "\n".join(out)


@functools.lru_cache(maxsize=4)
def _earley(grammar: str) -> Lark:
    return Lark(gbnf_to_lark(grammar), start="r_root", parser="earley", lexer="dynamic")


def _bnf_accepts(_tokenizer, grammar: str, text: str) -> bool:
    try:
        _earley(grammar).parse(text)
        return True
    except Exception:
        return False


def _fuzz_corpus(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    kinds = [k for k, w in fuzz.WEIGHTS.items() for _ in range(w)]
    out = []
    for _ in range(n):
        kind = rng.choice(kinds)
        if kind in ("deep", "big"):
            continue  # sizes a byte-level check does not need; covered by examples
        text = fuzz.GENERATORS[kind](rng, fuzz.SEED_PROGRAMS)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: no model can emit them
            continue
        out.append(text)
    return out


def _body(text: str) -> str:
    m = re.search(r'^task "', text, re.M)
    return text[m.start():] if m else text


CORPUS = ([_body(t) for t in EXAMPLES] + list(fuzz.SEED_PROGRAMS[:1]) + GARBAGE + TIGHT
          + _fuzz_corpus(300, 7))


@pytest.mark.parametrize("dialect", ["gbnf", "ebnf"])
def test_exported_grammars_are_well_formed(dialect):
    text = export_grammar(dialect)
    assert check_gbnf(text) == ""
    names = re.findall(r"^(\S+) ::=", text, re.M)
    assert len(names) == len(set(names)) and names[0] == "root"
    if dialect == "gbnf":  # llama.cpp: rule names are letters, digits and dashes only
        assert all(re.fullmatch(r"[a-zA-Z0-9-]+", n) for n in names)
    else:
        assert all(re.fullmatch(r"[a-zA-Z0-9_]+", n) for n in names)


def test_gbnf_accepts_and_rejects_the_same_corpus_as_lark(tokenizer):
    grammar = gbnf()
    disagree = [(t[:120], _lark_accepts(t)) for t in CORPUS
                if _lark_accepts(t) != _bnf_accepts(tokenizer, grammar, t)]
    accepted = sum(_lark_accepts(t) for t in CORPUS)
    assert accepted >= len(EXAMPLES) + len(TIGHT)  # the corpus has both kinds
    assert disagree == []


def test_ebnf_accepts_the_examples_like_gbnf(tokenizer):
    grammar = ebnf()
    for text in [_body(t) for t in EXAMPLES] + TIGHT:
        assert _bnf_accepts(tokenizer, grammar, text)
    for text in GARBAGE:  # (`notholding(a)` is one predicate name to both: valid syntax)
        assert _bnf_accepts(tokenizer, grammar, text) == _lark_accepts(text)


def test_the_grammar_sent_to_servers_has_no_comments_but_keeps_every_example(tokenizer):
    sent = gbnf(lark_text=language.program_grammar("lark"))
    assert check_gbnf(sent) == ""
    for text in [_body(t) for t in EXAMPLES]:
        stripped = "\n".join(line.split("#")[0].rstrip() for line in text.splitlines()).strip()
        assert _bnf_accepts(tokenizer, sent, stripped)
    assert not _bnf_accepts(tokenizer, sent, 'task "x" { main { home() # hi\n } }')


def test_keywords_as_names_are_the_known_difference_and_the_validator_rejects_them(tokenizer):
    """A lexer never reads a keyword as a name; lexer-free BNF cannot say that. Such a text is
    accepted by the BNF only; the program checker still refuses it."""
    from frankenbot.program import ProgramSyntaxError, check_text, default_catalog

    text = 'task "x" { main { if(obj=red_block) } }'
    assert _bnf_accepts(tokenizer, gbnf(), text) and not _lark_accepts(text)
    try:
        result = check_text(text, default_catalog(), ("red_block",))
        assert not result.ok
    except ProgramSyntaxError:
        pass


def test_regex_translation_and_its_limits():
    assert regex_to_bnf("[A-Za-z_][A-Za-z0-9_]*") == "[A-Za-z_] [A-Za-z0-9_]*"
    assert regex_to_bnf("-?[0-9]+") == '"\\x2D"? [0-9]+'
    assert regex_to_bnf("(?:ab|cd)") == '("ab" | "cd")'
    with pytest.raises(GrammarExportError):
        regex_to_bnf("a(?=b)")  # lookahead: no BNF equivalent
    with pytest.raises(ValueError):
        export_grammar("yaml")


def test_malformed_gbnf_is_refused_before_sending():
    assert check_gbnf('root ::= "a" | (') != ""
    assert check_gbnf('start ::= "a"') == "no root rule"
    assert check_gbnf('root ::= "a" undefined-rule') != ""


# --- the grammar specialised to one request (scene ids, catalog, memory skills) --------------

from frankenbot.program import default_catalog  # noqa: E402
from frankenbot.program.catalog import Param, ParamType, Signature, SignatureKind  # noqa: E402
from frankenbot.program.grammar_export import specialise_lark  # noqa: E402

SCENE_IDS = ("green_block", "red_block", "blue_bowl", "green_bowl", "drawer")
SKILL = Signature("pick_then_place_in", SignatureKind.SKILL,
                  (Param("obj", ParamType.OBJECT), Param("container", ParamType.OBJECT)),
                  "pick obj and place it in container")
USES_SCENE = [
    'task "x" {\n  main {\n    pick(obj=green_block)\n    place_in(obj=green_block, '
    'container=blue_bowl)\n  }\n}',
    'task "x" { main { s1: pick(obj=green_block) place_in(obj=green_block, container=blue_bowl)'
    ' if not in(green_block, blue_bowl) { goto s1 max 2 } } monitor lost when not '
    'holding(green_block) during place_in(obj=green_block), pick { then retry s1 max 1 } }',
    'task "x" { main { move_above(obj=red_block) move_above(obj=red_block, height=0.2) '
    'repeat 2 { wait(seconds=0.5) } while not drawer_open(drawer) max 3 { open_drawer('
    'drawer=drawer) } if near(red_block, green_bowl, 0.1) and gripper_open { home() } else '
    'if gripper_open() { exit failure "no" } } }',
    'task "x" { main { pick_then_place_in(obj=red_block, container=green_bowl) exit success } }',
]
NOT_IN_SCENE = [
    USES_SCENE[0].replace("blue_bowl", "purple_bowl"),  # an id the scene does not have
    USES_SCENE[0].replace("pick(", "grab("),  # a primitive the catalog does not have
    USES_SCENE[0].replace("container=", "target="),  # place_in has no parameter `target`
    USES_SCENE[0].replace("obj=green_block)", "obj=0.5)"),  # an object position takes an id
    USES_SCENE[1].replace("not in(", "not inside("),  # an unknown predicate
    USES_SCENE[0].replace("}\n}", '}\n  skill s(a: object) { pick(obj=a) }\n}'),  # local skill
]


@functools.lru_cache(maxsize=4)
def _specialised(ids: tuple[str, ...] = SCENE_IDS) -> str:
    cat = default_catalog().with_skills([SKILL])
    return specialise_lark(ids, cat.primitives + cat.skills, cat.predicates,
                           language.program_grammar("lark"))


@functools.lru_cache(maxsize=8)
def _special_parser(grammar: str) -> Lark:
    return Lark(grammar, parser="lalr", start="start")


def _special_lark_accepts(grammar: str, text: str) -> bool:
    try:
        _special_parser(grammar).parse(text)
        return True
    except Exception:
        return False


def test_specialised_grammar_takes_the_scene_ids_and_refuses_others_in_every_dialect(tokenizer):
    lark_text = _specialised()
    assert llguidance.LLMatcher.validate_grammar(
        llguidance.grammar_from("lark", lark_text), None) == ""  # OpenAI's tool reads it
    bnfs = [export_grammar(d, "task", lark_text, max_space=language.GENERATION_MAX_SPACE)
            for d in ("gbnf", "ebnf")]
    assert all(check_gbnf(g) == "" for g in bnfs)
    for i, text in enumerate(USES_SCENE):
        assert _lark_accepts(text)  # the language's own parser takes it
        assert _special_lark_accepts(lark_text, text), text
        assert _bnf_accepts(tokenizer, bnfs[i % 2], text), text
    for i, text in enumerate(NOT_IN_SCENE):
        assert not _special_lark_accepts(lark_text, text), text
        assert not _bnf_accepts(tokenizer, bnfs[i % 2], text), text
    # the generic grammar takes them all: the difference is the specialisation's
    assert all(_lark_accepts(t) for t in NOT_IN_SCENE)


def test_specialised_grammar_only_narrows_the_language():
    """Every corpus text the specialised grammar accepts, the generic parser accepts."""
    lark_text = _specialised(("a", "b", "c", "red_block", "green_bowl", "blue_block"))
    taken = [t for t in CORPUS if _special_lark_accepts(lark_text, t)]
    assert taken  # the corpus has programs that only use these ids
    assert [t[:80] for t in taken if not _lark_accepts(t)] == []


def test_offline_programs_for_a_scene_fit_its_specialised_grammar(tokenizer):
    """What the offline planner writes for a scene (catalog primitives, scene ids) is inside the
    grammar specialised to that scene, and a program naming another scene's id is not."""
    from frankenbot.eval.taskset import scene_of_task
    from frankenbot.planner.offline import plan_offline

    cat = default_catalog()
    for family, seed in (("put_in_bowl", 2), ("stack", 3), ("put_in_drawer", 1),
                         ("push_to_zone", 4), ("place_relative", 5), ("conditional", 6)):
        instruction, scene = scene_of_task(family, seed)
        text = language.print_text(language.check(plan_offline(instruction, scene), cat,
                                                  scene.ids()).program)
        grammar = language.RequestGrammars(cat, scene.ids(),
                                           {o.object_id: o.shape for o in scene.objects})
        assert _special_lark_accepts(grammar.get("lark"), _body(text)), (family, text)
        if family == "put_in_bowl":  # (the character-level oracle is slow on big grammars)
            assert _bnf_accepts(tokenizer, grammar.get("gbnf"), _body(text).strip())
        other = re.sub(r"obj=(\w+)", "obj=not_in_this_scene", text, count=1)
        assert not _special_lark_accepts(grammar.get("lark"), _body(other))


def test_a_grammar_that_cannot_be_specialised_says_why():
    with pytest.raises(GrammarExportError, match="rule 'call' changed"):
        specialise_lark(SCENE_IDS, default_catalog().primitives, default_catalog().predicates,
                        language.program_grammar("lark").replace(
                            'call: NAME "(" [arg ("," arg)*] ")"', 'call: NAME "(" arg* ")"'))
    # an empty scene: only callees and predicates without object arguments remain
    empty = specialise_lark((), default_catalog().primitives, default_catalog().predicates)
    assert _special_lark_accepts(empty, 'task "x" { main { if gripper_open { home() } } }')
    assert not _special_lark_accepts(empty, USES_SCENE[0])


def test_shapes_narrow_each_parameter_to_the_objects_it_takes():
    """With the scene's shapes, ``pick`` takes only graspable things (or unknown shapes; a bowl
    is graspable since the new world, a bin is not), ``place_in``'s container only containers,
    and a primitive no scene object fits is not offered."""
    shapes = {"green_block": "block", "blue_bowl": "bowl", "thing": "unknown",
              "gray_bin": "bin"}
    cat = default_catalog()
    lark_text = specialise_lark(shapes, cat.primitives, cat.predicates,
                                language.program_grammar("lark"))
    ok = ('task "x" { main { pick(obj=green_block) place_in(obj=green_block, '
          'container=blue_bowl) } }')
    assert _special_lark_accepts(lark_text, ok)
    assert _special_lark_accepts(lark_text, ok.replace("pick(obj=green_block)",
                                                       "pick(obj=thing)"))
    assert _special_lark_accepts(lark_text, ok.replace("pick(obj=green_block)",
                                                       "pick(obj=blue_bowl)"))
    assert not _special_lark_accepts(lark_text, ok.replace("pick(obj=green_block)",
                                                           "pick(obj=gray_bin)"))
    assert not _special_lark_accepts(lark_text, ok.replace("container=blue_bowl",
                                                           "container=green_block"))
    # in(obj, container) is a predicate without shapes: any scene object in either place
    assert _special_lark_accepts(lark_text, ok.replace(
        "} }", "if in(blue_bowl, green_block) { home() } } }"))
    # no drawer in the scene: open_drawer is not offered (`thing` has an unknown shape, so it
    # is; without it, not)
    no_drawer = specialise_lark({"green_block": "block"}, cat.primitives, cat.predicates)
    assert not _special_lark_accepts(
        no_drawer, 'task "x" { main { open_drawer(drawer=green_block) } }')
    assert _special_lark_accepts(lark_text, 'task "x" { main { open_drawer(drawer=thing) } }')
