"""Grammar-constrained sampling for llama-cpp-python that checks few tokens, not the vocabulary.

llama-cpp-python 0.3.36 puts llama.cpp's grammar sampler in its sampler chain, so every token
the grammar is matched against all 262,144 Gemma tokens (measured here: ~0.5 tokens/s
constrained against ~5.7 unconstrained on the loaded 2-core machine). llama.cpp's own common
sampler (``common/sampling.cpp``) samples first and checks only the chosen token, resampling
over the whole vocabulary when the grammar rejects it. ``FastGrammarSampler`` does the
equivalent in the chain, through llama.cpp's sampler API (``llama_sampler_*``):

0. greedy decoding: if the grammar allows the highest-logit token, that is the token;
1. take the ``k`` candidates with the highest logits and let the grammar sampler judge only
   those (``llama_sampler_apply`` on a small token array);
2. if at least ``need`` of them are allowed, only those go on down the chain; else the grammar
   judges the whole vocabulary, as the stock chain does.

``need`` makes it exact: greedy decoding (temperature 0) needs 1, because the allowed token
with the highest logit in the whole vocabulary is then among the ``k`` checked (any allowed one
there has a logit at least as high as every token left out); top-k sampling needs ``top_k``,
so the top-k allowed tokens are the same set; samplers that read the whole distribution (plain
``dist`` at temperature < 0, mirostat) get the full check every token (``need`` 0).

Robustness: the grammar state advances exactly once per token, in the chain's ``accept``, and
only with a token the last ``apply`` allowed (llama.cpp aborts the process when its grammar is
fed a token it does not allow, or end-of-generation before the grammar is complete). When
nothing is allowed, or anything goes wrong inside the callback, only the end-of-generation
token is left: the answer stops short (the planner's parser reports it) and the server lives.
A grammar llama.cpp cannot parse raises ``ValueError`` (the stock chain adds a null sampler
and crashes on the first token).

``install(k)`` patches ``Llama._init_sampler`` / ``LlamaSampler.add_grammar`` in this process
only; ``python -m frankenbot.llm.server_main`` installs it and runs llama-cpp-python's
server. ``FRANKENBOT_GRAMMAR_TOP_K=0`` keeps the stock full-vocabulary chain.
"""

from __future__ import annotations

import contextvars
import ctypes
import inspect
import sys
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

DEFAULT_TOP_K = 64  # candidates checked first; Gemma's allowed token is nearly always there
_PENDING: contextvars.ContextVar[tuple[int, int] | None] = contextvars.ContextVar(
    "frankenbot_fast_grammar", default=None)
_INSTALLED: dict[str, Any] = {}
_INSTALL_LOCK = threading.Lock()


@dataclass
class SamplerStats:
    """How each token was decided (for tests and the benchmark)."""

    first: int = 0  # greedy: the highest-logit token was allowed
    fast: int = 0  # decided among the top-k candidates
    full: int = 0  # the grammar judged the whole vocabulary
    none_allowed: int = 0  # nothing allowed: generation was ended
    errors: int = 0  # an exception inside the callback (generation was ended)
    refused_accepts: int = 0  # a token the grammar had not allowed reached accept


LAST_STATS: list[SamplerStats] = []  # the stats of the samplers made in this process (bounded)


def need_for(temp: float, top_k: int, mirostat_mode: int) -> int:
    """How many allowed candidates make the top-k check exact for this sampler chain
    (0: only the whole vocabulary will do)."""
    if mirostat_mode or temp < 0.0:
        return 0
    if temp == 0.0:
        return 1
    return top_k if top_k > 0 else 0


class FastGrammarSampler:
    """A llama.cpp sampler (``llama_sampler`` with a Python interface) wrapping the grammar
    sampler; see the module docstring. ``pointer`` goes into a sampler chain."""

    def __init__(self, vocab: Any, grammar: str, root: str = "root", need: int = 1,
                 k: int = DEFAULT_TOP_K) -> None:
        import llama_cpp

        self._ll = llama_cpp
        self.grammar = llama_cpp.llama_sampler_init_grammar(
            vocab, grammar.encode("utf-8"), root.encode("utf-8"))
        if not self.grammar:
            raise ValueError("llama.cpp could not parse the grammar (see its log)")
        self.vocab = vocab
        self.eog = int(llama_cpp.llama_vocab_eos(vocab))
        self.need = max(0, int(need))
        self.k = max(int(k), 4 * self.need) if self.need else 0
        self.stats = SamplerStats()
        self._allowed: frozenset[int] = frozenset()
        self._dead = False  # the grammar state can no longer follow the text
        self._small = (llama_cpp.llama_token_data * max(1, self.k))()
        self._small_np = np.ctypeslib.as_array(self._small)
        self._small_arr = llama_cpp.llama_token_data_array(
            self._small, len(self._small), -1, False)
        # the interface: Python callbacks kept alive as long as this object
        iface = llama_cpp.llama_sampler_i()
        self._cb_apply = llama_cpp.llama_sampler_i_apply(self._apply_cb)
        self._cb_accept = llama_cpp.llama_sampler_i_accept(self._accept_cb)
        self._cb_reset = llama_cpp.llama_sampler_i_reset(self._reset_cb)
        iface.apply = self._cb_apply
        iface.accept = self._cb_accept
        iface.reset = self._cb_reset
        iface.name = llama_cpp.llama_sampler_i_name(0)
        iface.clone = llama_cpp.llama_sampler_i_clone(0)
        iface.free = llama_cpp.llama_sampler_i_free(0)  # the chain never frees it: close()
        self._iface = iface
        self._sampler = llama_cpp.llama_sampler()
        self._sampler.iface = ctypes.pointer(iface)
        self._sampler.ctx = None
        self.pointer = ctypes.pointer(self._sampler)
        LAST_STATS.append(self.stats)
        del LAST_STATS[:-32]

    def close(self) -> None:
        grammar, self.grammar = self.grammar, None
        if grammar:
            self._ll.llama_sampler_free(grammar)

    # -- the sampler interface ------------------------------------------------------------

    def _apply_cb(self, _smpl: Any, cur_p: Any) -> None:
        try:
            self.apply(cur_p.contents)
        except BaseException as e:  # never let an exception leave a C callback unhandled
            self.stats.errors += 1
            print(f"frankenbot grammar sampler: {type(e).__name__}: {e}; ending the answer",
                  file=sys.stderr)
            try:
                self._only_eog(cur_p.contents)
            except BaseException:
                pass

    def _accept_cb(self, _smpl: Any, token: int) -> None:
        try:
            self.accept(int(token))
        except BaseException as e:
            self.stats.errors += 1
            self._dead = True
            print(f"frankenbot grammar sampler: {type(e).__name__}: {e}", file=sys.stderr)

    def _reset_cb(self, _smpl: Any) -> None:
        if self.grammar:
            self._ll.llama_sampler_reset(self.grammar)
        self._allowed = frozenset()
        self._dead = False

    # -- the logic ------------------------------------------------------------------------

    def apply(self, arr: Any) -> None:
        """Leave in ``arr`` (a ``llama_token_data_array``) only tokens the grammar allows,
        highest logits first: from the top ``k`` when enough are allowed there, else from the
        whole vocabulary; only end-of-generation when nothing is allowed."""
        self._allowed = frozenset()
        if self._dead or not self.grammar:
            self._only_eog(arr)
            return
        n = int(arr.size)
        data = np.ctypeslib.as_array(arr.data, shape=(n,))
        if self.need == 1 and n > 1:  # greedy: the best token alone first (as common/sampling)
            logits = data["logit"]
            best = int(np.argmax(logits))
            small = self._small_np
            small[0] = data[best]
            self._small_arr.size = 1
            self._small_arr.selected = -1
            self._small_arr.sorted = True
            self._ll.llama_sampler_apply(self.grammar, ctypes.byref(self._small_arr))
            if small[0]["logit"] != -np.inf:
                self._keep(arr, data, small[:1].copy())
                self.stats.first += 1
                return
        if self.need and n > self.k:
            logits = data["logit"]
            top = np.argpartition(-logits, self.k - 1)[: self.k]
            top = top[np.argsort(-logits[top], kind="stable")]
            small = self._small_np
            small[:] = data[top]
            self._small_arr.size = self.k
            self._small_arr.selected = -1
            self._small_arr.sorted = False
            self._ll.llama_sampler_apply(self.grammar, ctypes.byref(self._small_arr))
            ok = small["logit"] != -np.inf
            if int(ok.sum()) >= self.need:
                keep = small[ok]
                self._keep(arr, data, keep)
                self.stats.fast += 1
                return
        self._ll.llama_sampler_apply(self.grammar, ctypes.byref(arr))
        ok = data["logit"] != -np.inf
        if not ok.any():
            self.stats.none_allowed += 1
            self._only_eog(arr)
            return
        keep = data[ok].copy()
        self._keep(arr, data, keep)
        self.stats.full += 1

    def _keep(self, arr: Any, data: np.ndarray, keep: np.ndarray) -> None:
        m = len(keep)
        data[:m] = keep
        arr.size = m
        arr.selected = -1
        arr.sorted = False
        self._allowed = frozenset(int(t) for t in keep["id"])

    def _only_eog(self, arr: Any) -> None:
        data = np.ctypeslib.as_array(arr.data, shape=(max(1, int(arr.size)),))
        data[0] = (self.eog, 0.0, 1.0)
        arr.size = 1
        arr.selected = -1
        arr.sorted = True
        self._allowed = frozenset()

    def accept(self, token: int) -> None:
        """Advance the grammar by ``token`` once, and only if the last apply allowed it."""
        if self._dead or not self.grammar:
            return
        if token not in self._allowed:
            self.stats.refused_accepts += 1
            self._dead = True  # its state no longer matches the text: end the answer
            return
        self._ll.llama_sampler_accept(self.grammar, token)


# ------------------------------------------------------------------------------ install

def install(k: int = DEFAULT_TOP_K) -> bool:
    """Make llama-cpp-python's ``Llama`` use ``FastGrammarSampler`` for grammars in this
    process (``k`` <= 0: leave the stock chain). Returns whether it is installed."""
    if k <= 0:
        return False
    from llama_cpp import _internals
    from llama_cpp.llama import Llama

    with _INSTALL_LOCK:
        if _INSTALLED:
            _INSTALLED["k"] = k
            return True
        orig_init = Llama._init_sampler
        orig_add = _internals.LlamaSampler.add_grammar
        signature = inspect.signature(orig_init)

        def _init_sampler(self: Any, *args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            a = bound.arguments
            if a.get("grammar") is None:
                return orig_init(self, *args, **kwargs)
            need = need_for(float(a["temp"]), int(a["top_k"]), int(a["mirostat_mode"]))
            token = _PENDING.set((need, int(_INSTALLED["k"])))
            try:
                return orig_init(self, *args, **kwargs)
            finally:
                _PENDING.reset(token)

        def add_grammar(sampler: Any, model: Any, grammar: Any) -> None:
            pending = _PENDING.get()
            if pending is None:
                return orig_add(sampler, model, grammar)
            need, top_k = pending
            fast = FastGrammarSampler(model.vocab, grammar._grammar, grammar._root, need, top_k)
            import llama_cpp

            llama_cpp.llama_sampler_chain_add(sampler.sampler, fast.pointer)
            # the chain must not free it (LlamaSampler removes these before freeing the chain)
            sampler.custom_samplers.append(
                (llama_cpp.llama_sampler_chain_n(sampler.sampler) - 1, fast))
            sampler._exit_stack.callback(fast.close)

        Llama._init_sampler = _init_sampler
        _internals.LlamaSampler.add_grammar = add_grammar
        _INSTALLED.update(k=k, init=orig_init, add=orig_add)
    return True


def uninstall() -> None:
    """Restore the stock chain (tests compare the two in one process)."""
    from llama_cpp import _internals
    from llama_cpp.llama import Llama

    with _INSTALL_LOCK:
        if not _INSTALLED:
            return
        Llama._init_sampler = _INSTALLED["init"]
        _internals.LlamaSampler.add_grammar = _INSTALLED["add"]
        _INSTALLED.clear()
