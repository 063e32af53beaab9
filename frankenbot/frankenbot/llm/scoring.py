"""Continuation scoring for llama-cpp-python: the log-likelihood of candidate texts after a prompt,
in one batch that shares every common token, served as ``POST /frankenbot/score``.

The tier-2 expert ranks repairs by the mean log-probability of each candidate's description
after the situation prompt. An OpenAI-style server can only do that with ``echo`` and prompt
``logprobs``, which llama-cpp-python computes for every prompt token over the whole 262,144-token
Gemma vocabulary in Python (a ten-candidate decision did not finish in 15 minutes here). This
module does the same arithmetic the in-process transformers expert does, with llama.cpp's batch
API, on a context of its own next to the server's (same weights, its own KV cache):

- the prompt's tokens are shared by every sequence and reused from the previous request's
  prompt as far as they agree (a decision in the same task keeps its task and scene lines);
- the candidates form a token trie: a token that several candidates share is decoded once, with
  all of their sequence ids, and only tokens whose next-token distribution is needed ask for
  logits (a candidate's last token asks for none and is not decoded at all);
- log-softmax rows are computed once per needed row, in numpy.

Nothing here generates text; the result is a list of floats. ``install_route(app)`` adds the
route to llama-cpp-python's FastAPI app (``llm.server_main`` does it).
"""

# no ``from __future__ import annotations``: FastAPI reads the route's annotations at run time,
# and the request model is local to install_route
import threading
from dataclasses import dataclass, field
from typing import Any, Sequence

from frankenbot.errors import FrankenbotError

ROUTE = "/frankenbot/score"
MAX_SEQUENCES = 16  # candidates decoded in one batch (more are scored in further batches)
MAX_CANDIDATES = 64
MAX_CHARS = 16_000  # a request longer than this is refused (the situation prompt is ~500)


class ScoringError(FrankenbotError, ValueError):
    """A request the scorer refuses (empty, too long, or more than the context holds)."""


@dataclass
class _Node:
    token: int
    depth: int  # 0 = the candidate's first token
    seqs: list[int] = field(default_factory=list)
    children: dict[int, "_Node"] = field(default_factory=dict)
    batch_index: int = -1  # where this node's logits are in the batch (when asked for)


def _trie(candidates: Sequence[Sequence[int]]) -> dict[int, _Node]:
    roots: dict[int, _Node] = {}
    for seq, toks in enumerate(candidates):
        level = roots
        for d, t in enumerate(toks):
            node = level.setdefault(t, _Node(t, d))
            node.seqs.append(seq)
            level = node.children
    return roots


def _internal_nodes(roots: dict[int, _Node]) -> list[_Node]:
    """Nodes with children, breadth first (a parent is always decoded before its children)."""
    out: list[_Node] = []
    level = [n for n in roots.values() if n.children]
    while level:
        out += level
        level = [c for n in level for c in n.children.values() if c.children]
    return out


class ContinuationScorer:
    """Scores continuations with a llama.cpp context of its own on a loaded model.

    ``model`` is llama-cpp-python's ``LlamaModel`` wrapper (``Llama._model``), which the server
    already loaded; the scorer adds a context with ``MAX_SEQUENCES`` sequences and a unified KV
    cache, so shared tokens are stored once."""

    def __init__(self, llama: Any, *, n_ctx: int = 2048, n_batch: int = 512,
                 n_threads: int | None = None) -> None:
        import llama_cpp

        self._lib = llama_cpp
        self._llama = llama
        model = llama._model.model
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = n_ctx
        params.n_batch = params.n_ubatch = n_batch
        params.n_seq_max = MAX_SEQUENCES
        params.kv_unified = True
        threads = n_threads or llama.context_params.n_threads
        params.n_threads = params.n_threads_batch = threads
        ctx = llama_cpp.llama_init_from_model(model, params)
        if ctx is None:
            raise RuntimeError("llama.cpp could not create the scoring context")
        self._ctx = ctx
        self._mem = llama_cpp.llama_get_memory(ctx)
        self._vocab = llama_cpp.llama_model_get_vocab(model)
        self._n_vocab = llama_cpp.llama_vocab_n_tokens(self._vocab)
        self.n_ctx = n_ctx
        self.n_batch = n_batch
        self._batch = llama_cpp.llama_batch_init(n_batch, 0, MAX_SEQUENCES)
        self._cached: list[int] = []  # prompt tokens in the KV cache (every sequence)
        self._lock = threading.Lock()
        # the context must be freed before the model: llama-cpp-python closes its stack first
        llama._model._exit_stack.callback(self.close)

    def close(self) -> None:
        if self._ctx is not None:
            self._lib.llama_batch_free(self._batch)
            self._lib.llama_free(self._ctx)
            self._ctx = None

    # ---- the arithmetic ----------------------------------------------------------------------
    def tokenize(self, text: str, *, bos: bool) -> list[int]:
        return list(self._llama.tokenize(text.encode("utf-8"), add_bos=bos, special=bos))

    def score(self, prompt: str, continuations: Sequence[str]) -> list[float]:
        """Mean log-probability per token of each continuation after ``prompt``."""
        if not continuations:
            raise ScoringError("no continuations to score")
        if len(continuations) > MAX_CANDIDATES:
            raise ScoringError(f"at most {MAX_CANDIDATES} continuations, got {len(continuations)}")
        if len(prompt) + sum(len(c) for c in continuations) > MAX_CHARS:
            raise ScoringError(f"the request is longer than {MAX_CHARS} characters")
        tp = self.tokenize(prompt, bos=True)
        conts = [self.tokenize(c, bos=False) or [self._lib.llama_vocab_eos(self._vocab)]
                 for c in continuations]
        if len(tp) + max(len(c) for c in conts) > self.n_ctx:
            raise ScoringError(f"prompt and continuation need more than {self.n_ctx} tokens")
        with self._lock:
            if self._ctx is None:
                raise ScoringError("the scorer is closed")
            first = self._prefill(tp)
            scores: list[float] = []
            for g in range(0, len(conts), MAX_SEQUENCES):
                scores += self._score_group(len(tp), first, conts[g:g + MAX_SEQUENCES])
            self._lib.llama_memory_seq_rm(self._mem, -1, len(tp), -1)  # candidates out
        return scores

    def _prefill(self, tp: list[int]) -> "Any":
        """Decode the prompt's new tokens (for every sequence); its last row's log-softmax."""
        import numpy as np

        n = self._lib.Llama.longest_token_prefix(tp, self._cached)
        n = min(n, len(tp) - 1)  # the last prompt token is decoded again: its row is needed
        self._cached = []
        self._lib.llama_memory_seq_rm(self._mem, -1, n, -1)
        all_seqs = list(range(MAX_SEQUENCES))
        row = None
        for s in range(n, len(tp), self.n_batch):
            chunk = tp[s:s + self.n_batch]
            self._fill([(t, s + i, all_seqs, s + i == len(tp) - 1) for i, t in enumerate(chunk)])
            self._decode()
            if s + len(chunk) == len(tp):
                row = self._log_softmax(len(chunk) - 1)
        self._cached = list(tp)
        assert row is not None
        return np.asarray(row)

    def _score_group(self, n_prompt: int, first: Any, conts: list[list[int]]) -> list[float]:
        roots = _trie(conts)
        nodes = _internal_nodes(roots)
        rows: dict[int, Any] = {}  # id(node) -> log-softmax row
        for s in range(0, len(nodes), self.n_batch):
            part = nodes[s:s + self.n_batch]
            for i, node in enumerate(part):
                node.batch_index = i
            self._fill([(nd.token, n_prompt + nd.depth, nd.seqs, True) for nd in part])
            self._decode()
            for nd in part:
                rows[id(nd)] = self._log_softmax(nd.batch_index)
        out = []
        for toks in conts:
            total = float(first[toks[0]])
            node = roots[toks[0]]
            for t in toks[1:]:
                total += float(rows[id(node)][t])
                node = node.children[t]
            out.append(total / len(toks))
        self._lib.llama_memory_seq_rm(self._mem, -1, n_prompt, -1)
        return out

    # ---- llama.cpp calls ---------------------------------------------------------------------
    def _fill(self, entries: list[tuple[int, int, list[int], bool]]) -> None:
        b = self._batch
        b.n_tokens = len(entries)
        for i, (tok, pos, seqs, logits) in enumerate(entries):
            b.token[i] = tok
            b.pos[i] = pos
            b.n_seq_id[i] = len(seqs)
            for j, sq in enumerate(seqs):
                b.seq_id[i][j] = sq
            b.logits[i] = logits

    def _decode(self) -> None:
        rc = self._lib.llama_decode(self._ctx, self._batch)
        if rc != 0:
            self._cached = []
            raise RuntimeError(f"llama_decode returned {rc}")

    def _log_softmax(self, i: int) -> Any:
        import numpy as np

        ptr = self._lib.llama_get_logits_ith(self._ctx, i)
        row = np.ctypeslib.as_array(ptr, shape=(self._n_vocab,))
        m = row.max()
        lse = float(m) + float(np.log(np.exp(row - m).sum(dtype=np.float64)))
        return row - np.float32(lse)  # a copy: the logits buffer is reused by the next decode


_scorers: dict[int, ContinuationScorer] = {}
_scorers_lock = threading.Lock()


def scorer_for(llama: Any) -> ContinuationScorer:
    """One scorer per loaded model (made on first use)."""
    with _scorers_lock:
        sc = _scorers.get(id(llama))
        if sc is None:
            sc = _scorers[id(llama)] = ContinuationScorer(llama)
        return sc


def install_route(app: Any) -> None:
    """Add ``POST /frankenbot/score`` to llama-cpp-python's FastAPI app.

    Body: ``{"prompt": str, "continuations": [str, ...], "model": str?}``; answer:
    ``{"scores": [float, ...], "prompt_tokens": int}``. The server's model lock is held while
    scoring, as for its own completions."""
    from fastapi import Depends, HTTPException
    from llama_cpp.server.app import get_llama_proxy
    from pydantic import BaseModel
    from starlette.concurrency import run_in_threadpool

    class ScoreRequest(BaseModel):
        prompt: str
        continuations: list[str]
        model: str | None = None

    async def score(request: ScoreRequest, llama_proxy: Any = Depends(get_llama_proxy)
                    ) -> dict[str, Any]:
        llama = llama_proxy(request.model)

        def run() -> dict[str, Any]:
            sc = scorer_for(llama)
            return {"scores": sc.score(request.prompt, request.continuations)}

        try:
            return await run_in_threadpool(run)
        except ScoringError as e:
            raise HTTPException(status_code=400, detail=str(e)) from e

    app.add_api_route(ROUTE, score, methods=["POST"])
