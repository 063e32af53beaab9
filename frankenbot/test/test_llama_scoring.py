"""Continuation scoring on llama.cpp (llm/scoring.py), on the packaged Gemma 3 270M:
the batched trie with a reused prompt must give the log-likelihoods that decoding each
candidate on its own gives (up to llama.cpp's batch-size numerics), in any order of requests;
and bad requests are refused without touching the context."""

from __future__ import annotations

import numpy as np
import pytest

from frankenbot.llm.server import llama_cpp_available

pytestmark = pytest.mark.skipif(not llama_cpp_available(),
                                reason="llama-cpp-python not installed (run `make setup-llm`)")

from frankenbot.llm import scoring as ls  # noqa: E402

PROMPT_A = ("<start_of_turn>user\nA robot arm hit a problem during a task. What is the best "
            "repair?\nTask: put the red block in the green bowl.\nProblem: the red block "
            "slipped out of the gripper.<end_of_turn>\n<start_of_turn>model\nBest repair:")
PROMPT_B = PROMPT_A.replace("slipped out of the gripper", "is no longer where it was seen")
CANDIDATES = [" look for the red block, then pick it up", " look for the red block",
              " try the grasp again", " ask the planner for a new plan", " stop the task",
              " wait a moment for things to settle", " skip this step and continue"]


@pytest.fixture(scope="module")
def llm():
    from llama_cpp import Llama

    from frankenbot.llm.server import packaged_model_path

    model = Llama(str(packaged_model_path()), n_ctx=512, n_threads=2, logits_all=True,
                  verbose=False)
    yield model
    model.close()


def _one_by_one(llm, prompt: str, continuations: list[str]) -> list[float]:
    """Reference: the prompt and one candidate decoded alone, every row's log-softmax."""
    tp = llm.tokenize(prompt.encode(), add_bos=True, special=True)
    out = []
    for c in continuations:
        ct = llm.tokenize(c.encode(), add_bos=False, special=False)
        llm.reset()
        llm.eval(tp + ct)
        total = 0.0
        for j, t in enumerate(ct):
            row = np.asarray(llm.scores[len(tp) + j - 1], dtype=np.float64)
            m = row.max()
            total += row[t] - m - np.log(np.exp(row - m).sum())
        out.append(total / len(ct))
    return out


def test_the_trie_shares_tokens_and_skips_last_tokens():
    roots = ls._trie([[1, 2, 3], [1, 2], [1, 4], [5]])
    assert set(roots) == {1, 5} and roots[1].seqs == [0, 1, 2]
    inner = ls._internal_nodes(roots)
    # decoded: 1 (for 2 and 4), 2 (for 3); never 3, 4 or 5 (nothing follows them)
    assert [(n.token, n.depth, n.seqs) for n in inner] == [(1, 0, [0, 1, 2]), (2, 1, [0, 1])]


def test_batched_scores_match_decoding_each_candidate_alone(llm):
    scorer = ls.ContinuationScorer(llm, n_ctx=512)
    try:
        ref_a = _one_by_one(llm, PROMPT_A, CANDIDATES)
        ref_b = _one_by_one(llm, PROMPT_B, CANDIDATES)
        # A, then B (reuses A's shared prefix), then A again: the cache never leaks
        got = [scorer.score(p, CANDIDATES) for p in (PROMPT_A, PROMPT_B, PROMPT_A)]
        for scores, ref in zip(got, (ref_a, ref_b, ref_a), strict=True):
            assert np.allclose(scores, ref, atol=0.15), (scores, ref)
            assert int(np.argmax(scores)) == int(np.argmax(ref))
        # the prompt matters (B's "grasp again" is 0.7 less likely than A's); the same prompt
        # with a differently split prefill moves scores only by batch numerics
        assert np.max(np.abs(np.subtract(got[0], got[1]))) > 0.4
        assert np.allclose(got[0], got[2], atol=0.1)
        # more candidates than sequences in one batch: scored in groups, same values
        many = [c + s for s in ("", ".", " now") for c in CANDIDATES]
        assert len(many) > ls.MAX_SEQUENCES
        grouped = scorer.score(PROMPT_A, many)
        assert np.allclose(grouped[:len(CANDIDATES)], got[0], atol=0.15)
    finally:
        scorer.close()


def test_bad_requests_are_refused_and_the_scorer_still_works(llm):
    scorer = ls.ContinuationScorer(llm, n_ctx=512)
    try:
        with pytest.raises(ls.ScoringError, match="no continuations"):
            scorer.score(PROMPT_A, [])
        with pytest.raises(ls.ScoringError, match="characters"):
            scorer.score("x" * (ls.MAX_CHARS + 1), [" a"])
        with pytest.raises(ls.ScoringError, match="tokens"):
            scorer.score(" word" * 600, [" a"])
        with pytest.raises(ls.ScoringError, match="at most"):
            scorer.score(PROMPT_A, [" a"] * (ls.MAX_CANDIDATES + 1))
        ok = scorer.score(PROMPT_A, CANDIDATES[:2])
        assert len(ok) == 2 and all(np.isfinite(ok)) and all(s < 0 for s in ok)
    finally:
        scorer.close()
    with pytest.raises(ls.ScoringError, match="closed"):
        scorer.score(PROMPT_A, CANDIDATES[:1])
