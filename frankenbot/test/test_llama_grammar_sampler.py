"""The fast grammar sampler (llm/grammar_sampler.py) against llama.cpp's own grammar
engine: on token arrays built by hand (the top-k stage, the full-vocabulary fallback, nothing
allowed, a token the grammar never allowed) and on the packaged Gemma 3 270M, where greedy
constrained answers must be the same tokens with and without the fast path."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from frankenbot.llm.server import llama_cpp_available

pytestmark = pytest.mark.skipif(not llama_cpp_available(),
                                reason="llama-cpp-python not installed (run `make setup-llm`)")

from frankenbot.llm import grammar_sampler as fgs  # noqa: E402


@pytest.fixture(scope="module")
def vocab_model():
    from llama_cpp import Llama

    from frankenbot.llm.server import packaged_model_path

    llm = Llama(str(packaged_model_path()), vocab_only=True, verbose=False)
    yield llm
    llm.close()


def _tok(llm, text: str) -> int:
    ids = llm.tokenize(text.encode(), add_bos=False, special=False)
    assert len(ids) == 1, (text, ids)
    return ids[0]


def _array(items: list[tuple[int, float]]):
    import llama_cpp

    buf = (llama_cpp.llama_token_data * len(items))()
    for i, (tok, logit) in enumerate(items):
        buf[i].id, buf[i].logit, buf[i].p = tok, logit, 0.0
    return buf, llama_cpp.llama_token_data_array(buf, len(items), -1, False)


def _left(arr) -> list[int]:
    return [arr.data[i].id for i in range(arr.size)]


def _stock_allowed(vocab, grammar: str, items: list[tuple[int, float]]) -> set[int]:
    import llama_cpp

    g = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode(), b"root")
    _buf, arr = _array(items)
    llama_cpp.llama_sampler_apply(g, ctypes.byref(arr))
    llama_cpp.llama_sampler_free(g)
    return {arr.data[i].id for i in range(arr.size) if arr.data[i].logit != -np.inf}


def test_need_makes_the_top_k_check_exact_for_each_sampler():
    assert fgs.need_for(0.0, 40, 0) == 1  # greedy
    assert fgs.need_for(0.8, 40, 0) == 40  # top-k sampling
    assert fgs.need_for(0.8, 0, 0) == 0  # no top-k: the whole distribution matters
    assert fgs.need_for(-1.0, 40, 0) == 0 and fgs.need_for(0.8, 40, 2) == 0


def test_top_candidates_first_then_the_whole_vocabulary(vocab_model):
    llm = vocab_model
    vocab = llm._model.vocab
    yes, no1, no2 = _tok(llm, "yes"), _tok(llm, "no"), _tok(llm, "maybe")
    grammar = 'root ::= "yes"\n'
    n_vocab = llm.n_vocab()
    # greedy, the best token allowed: decided by the first check
    s = fgs.FastGrammarSampler(vocab, grammar, need=1, k=8)
    logits = [(t, -5.0) for t in range(n_vocab)]
    logits[yes] = (yes, 3.0)
    _buf, arr = _array(logits)
    s.apply(arr)
    assert _left(arr) == [yes] and s.stats.first == 1
    # the best two rejected, the allowed one ranked 3rd: among the top k
    s2 = fgs.FastGrammarSampler(vocab, grammar, need=1, k=8)
    logits[no1], logits[no2], logits[yes] = (no1, 9.0), (no2, 8.0), (yes, 1.0)
    _buf, arr = _array(logits)
    s2.apply(arr)
    assert _left(arr) == [yes] and s2.stats.fast == 1
    # the allowed token far down the list: the whole vocabulary is checked
    s3 = fgs.FastGrammarSampler(vocab, grammar, need=1, k=8)
    logits = [(t, float(t % 997)) for t in range(n_vocab)]
    logits[yes] = (yes, -50.0)
    _buf, arr = _array(logits)
    s3.apply(arr)
    # llama.cpp's own verdict on the whole vocabulary: "yes" and its prefixes ("y", "ye", ...)
    assert set(_left(arr)) == _stock_allowed(vocab, grammar, logits) and s3.stats.full == 1
    assert yes in _left(arr) and len(_left(arr)) < 50
    s3.accept(yes)  # the grammar is now complete: only the end of generation is allowed
    _buf, arr = _array([(t, 0.0) for t in range(n_vocab)])
    s3.apply(arr)
    import llama_cpp

    assert arr.size >= 1 and all(llama_cpp.llama_vocab_is_eog(vocab, t) for t in _left(arr))
    for x in (s, s2, s3):
        x.close()


def test_nothing_allowed_or_a_foreign_token_ends_the_answer_without_a_crash(vocab_model):
    llm = vocab_model
    vocab = llm._model.vocab
    s = fgs.FastGrammarSampler(vocab, 'root ::= "yes"\n', need=1, k=4)
    no1, no2 = _tok(llm, "no"), _tok(llm, "maybe")
    _buf, arr = _array([(no1, 2.0), (no2, 1.0)])  # none of these can start "yes"
    s.apply(arr)
    assert _left(arr) == [s.eog] and s.stats.none_allowed == 1
    s.accept(s.eog)  # not allowed by the grammar: must not reach llama.cpp (it aborts)
    assert s.stats.refused_accepts == 1
    _buf, arr = _array([(_tok(llm, "yes"), 5.0), (no1, 1.0)])
    s.apply(arr)  # the state no longer follows the text: only the end of generation
    assert _left(arr) == [s.eog]
    s.close()
    with pytest.raises(ValueError, match="could not parse"):
        fgs.FastGrammarSampler(vocab, 'root ::= "a" | (\n')


def test_an_exception_inside_the_callback_ends_the_answer(vocab_model, monkeypatch):
    llm = vocab_model
    s = fgs.FastGrammarSampler(llm._model.vocab, 'root ::= "yes"\n', need=1, k=4)
    monkeypatch.setattr(s, "apply", lambda arr: 1 / 0)
    _buf, arr = _array([(_tok(llm, "yes"), 5.0)])
    s._apply_cb(None, ctypes.pointer(arr))
    assert s.stats.errors == 1 and _left(arr) == [s.eog]
    s.close()


PROMPTS = [
    "Write a FrankenBot program that puts the green block in the blue bowl.",
    "Write a FrankenBot program: pick up the red block, then go home.",
    "Write a FrankenBot program that opens the drawer if it is closed.",
]


@pytest.mark.timeout(900)
def test_greedy_constrained_answers_are_the_same_with_and_without_the_fast_path():
    from llama_cpp import Llama, LlamaGrammar

    from frankenbot.llm.server import packaged_model_path
    from frankenbot.planner import language
    from frankenbot.program import default_catalog

    grammar = language.RequestGrammars(
        default_catalog(), ["green_block", "red_block", "blue_bowl", "drawer"]).get("gbnf")
    llm = Llama(str(packaged_model_path()), n_ctx=512, n_threads=2, n_threads_batch=2,
                verbose=False, chat_format="gemma")

    def answers() -> list[str]:
        out = []
        for p in PROMPTS:
            r = llm.create_completion(llm.tokenize(p.encode()), max_tokens=16, temperature=0.0,
                                      grammar=LlamaGrammar.from_string(grammar, verbose=False),
                                      logprobs=None)
            out.append(r["choices"][0]["text"])
        return out

    try:
        fgs.uninstall()
        stock = answers()
        assert fgs.install(64)
        fast = answers()
        stats = fgs.LAST_STATS[-len(PROMPTS):]
    finally:
        fgs.uninstall()
        llm.close()
    assert fast == stock and all(fast)
    assert all(s.errors == 0 and s.refused_accepts == 0 for s in stats)
    assert sum(s.first + s.fast for s in stats) > sum(s.full for s in stats)  # mostly fast
