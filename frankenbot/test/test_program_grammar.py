"""The grammar compiles in Lark and in LLGuidance, and LLGuidance accepts exactly our programs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from frankenbot.program import grammar_text, parse_program, parse_skills, print_program, print_skill

llguidance = pytest.importorskip("llguidance")

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "program"
PROGRAMS = sorted(FIXTURES.glob("*.fb"))


class _ByteTokenizer:
    """One token per byte (+ EOS), enough to drive LLGuidance's matcher without a model."""

    eos_token_id = 256
    bos_token_id = None
    tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
    special_token_ids = [256]

    def __call__(self, s):
        return list(s.encode() if isinstance(s, str) else s)


@pytest.fixture(scope="module")
def tokenizer():
    return llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokenizer()))


def _accepts(tokenizer, grammar: str, text: str) -> bool:
    matcher = llguidance.LLMatcher(tokenizer, llguidance.grammar_from("lark", grammar))
    return matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()


def test_grammar_compiles_in_llguidance_for_tasks_and_libraries(tokenizer):
    for start in ("task", "library"):
        text = grammar_text("llguidance", start=start)
        assert llguidance.LLMatcher.validate_grammar(
            llguidance.grammar_from("lark", text), tokenizer) == ""


def test_grammar_text_rejects_unknown_dialects():
    assert grammar_text("lark") == grammar_text("llguidance")
    with pytest.raises(ValueError):
        grammar_text("gbnf")
    with pytest.raises(ValueError):
        grammar_text("lark", start="main")


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.name)
def test_llguidance_accepts_every_example_program(tokenizer, path):
    program = parse_program(path.read_text()).program
    assert _accepts(tokenizer, grammar_text("llguidance"), print_program(program).strip())
    # comments between tokens are fine too
    body = path.read_text().strip()
    start = re.search(r'^task "', body, re.M).start()
    assert _accepts(tokenizer, grammar_text("llguidance"), body[start:])


def test_llguidance_accepts_a_skill_library(tokenizer):
    lib = parse_skills('skill a(obj: object) "x" { pick(obj=obj) }\n'
                       "skill b(n: number) { wait(seconds=n) }")
    text = "\n".join(print_skill(s) for s in lib).strip()
    assert _accepts(tokenizer, grammar_text("llguidance", start="library"), text)


@pytest.mark.parametrize("text", [
    'task "x" { main { pick("red_block") } }',
    'task "x" { main { if holding(x): home() } }',
    'task "x" { main { pick(obj=x) }',
    "task 'x' { main { } }",
    'task "x" { monitor m when gripper_open { } }',
])
def test_llguidance_and_lark_both_reject_malformed_programs(tokenizer, text):
    assert not _accepts(tokenizer, grammar_text("llguidance"), text)
    from frankenbot.program import ProgramSyntaxError

    with pytest.raises(ProgramSyntaxError):
        parse_program(text)


def test_fast_lexer_agrees_with_larks_contextual_lexer():
    """Differential check: the same grammar with Lark's own contextual lexer accepts the same
    texts and builds the same trees as the fast lexer the parser uses."""
    import random

    from lark import Lark
    from lark.exceptions import LarkError

    from frankenbot.eval.fuzz import GENERATORS, SEED_PROGRAMS
    from frankenbot.program import parser as parser_module

    reference = Lark.open("grammar.lark", rel_to=parser_module.__file__, parser="lalr",
                          lexer="contextual", start=["start", "library"], keep_all_tokens=True,
                          maybe_placeholders=True, transformer=parser_module._Builder())
    fast = parser_module._lark()
    seeds = SEED_PROGRAMS + tuple(p.read_text() for p in PROGRAMS)

    def outcome(p, text, start):
        try:
            return "ok", p.parse(text, start=start)
        except LarkError:
            return "error", None

    rng = random.Random(5)
    texts = [p.read_text() for p in PROGRAMS] + [
        GENERATORS[rng.choice(["mutant", "mutant", "soup", "random"])](rng, seeds)
        for _ in range(600)]
    agreed_ok = 0
    for text in texts:
        for start in ("start", "library"):
            ref, got = outcome(reference, text, start), outcome(fast, text, start)
            assert ref == got, text[:300]
            agreed_ok += ref[0] == "ok"
    assert agreed_ok >= len(PROGRAMS)
