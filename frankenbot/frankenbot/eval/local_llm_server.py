"""A small OpenAI-compatible chat server on a local transformers model, with grammar-guided
decoding through LLGuidance.

Why: to measure (and use, where no endpoint is reachable) what grammar constraints do to
first-call validity with a real model, through the same HTTP path and ``openai`` client as a
hosted VLM. It honours two constrained request shapes the planner's client sends: vLLM's
``structured_outputs: {grammar}`` (Lark; the pre-0.12 ``guided_grammar`` is read too), and a
forced custom tool whose format is a Lark grammar
(answered as a custom tool call). Decoding is greedy; one request runs at a time. Images are not
seen by text-only models: image parts are replaced by a note.

The benchmark runs it on the packaged Gemma 3 270M (``from_gemma_package``); tests use a tiny
random model built from a config.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from frankenbot.errors import PlannerError

MAX_NEW_TOKENS = 768


@dataclass(frozen=True)
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # stop | length
    seconds: float


class LocalModel:
    """Greedy generation with an optional Lark grammar constraint (LLGuidance token masks)."""

    def __init__(self, model: Any, tokenizer: Any, *, chat_format: str = "gemma",
                 stop_tokens: tuple[str, ...] = ("<end_of_turn>",)) -> None:
        from llguidance.hf import from_tokenizer

        self.model = model.eval()
        self.tokenizer = tokenizer
        self.chat_format = chat_format
        eos = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
        vocab = tokenizer.get_vocab()
        eos += [vocab[t] for t in stop_tokens if t in vocab]
        self.stop_ids = tuple(dict.fromkeys(eos))
        if not self.stop_ids:
            raise PlannerError("the local model's tokenizer has no end-of-sequence token")
        n_vocab = int(getattr(model.config, "vocab_size", len(vocab)))
        self._lltok = from_tokenizer(tokenizer, n_vocab=n_vocab, eos_token=list(self.stop_ids))
        self._lock = threading.Lock()  # one generation at a time

    @classmethod
    def from_gemma_package(cls, cache_dir: str | None = None) -> "LocalModel":
        """The packaged Gemma 3 270M instruct (de-quantising load takes ~1 min on 2 cores)."""
        from frankenbot.anomaly.local_expert import gemma_loader

        model, tok = gemma_loader(cache_dir)()
        return cls(model, tok)

    def prompt_text(self, messages: list[dict[str, Any]]) -> str:
        """Chat messages -> one prompt in the model's turn format (system joins the first turn)."""
        turns: list[tuple[str, str]] = []
        system = ""
        for m in messages:
            content = m.get("content")
            if isinstance(content, list):
                content = "\n".join(p.get("text", "") if p.get("type") == "text"
                                    else "[an image was attached; this model cannot see it]"
                                    for p in content if isinstance(p, dict))
            text = str(content or "")
            if m.get("role") == "system":
                system += text + "\n\n"
            else:
                role = "model" if m.get("role") == "assistant" else "user"
                if role == "user" and system:
                    text, system = system + text, ""
                turns.append((role, text))
        if self.chat_format != "gemma":
            return "".join(f"{r}: {t}\n" for r, t in turns) + "model: "
        body = "".join(f"<start_of_turn>{r}\n{t}<end_of_turn>\n" for r, t in turns)
        return body + "<start_of_turn>model\n"

    def generate(self, messages: list[dict[str, Any]], grammar: str = "",
                 max_new_tokens: int = MAX_NEW_TOKENS) -> Generation:
        import torch
        from llguidance import LLMatcher
        from llguidance.torch import (
            allocate_token_bitmask,
            apply_token_bitmask_inplace,
            fill_next_token_bitmask,
        )

        matcher = None
        if grammar:
            spec = LLMatcher.grammar_from_lark(grammar)
            err = LLMatcher.validate_grammar(spec, self._lltok)
            if err:
                raise PlannerError(f"grammar does not compile: {err}")
            matcher = LLMatcher(self._lltok, spec)
            if matcher.is_error():
                raise PlannerError(f"grammar does not compile: {matcher.get_error()}")
        t0 = time.monotonic()
        ids = self.tokenizer(self.prompt_text(messages), return_tensors="pt").input_ids
        out_ids: list[int] = []
        finish = "length"
        with self._lock, torch.inference_mode():
            mask = allocate_token_bitmask(1, self._lltok.vocab_size) if matcher else None
            out = self.model(input_ids=ids, use_cache=True)
            for _ in range(max(1, max_new_tokens)):
                logits = out.logits[0, -1].float().clone()
                if matcher is not None:
                    fill_next_token_bitmask(matcher, mask, 0)
                    apply_token_bitmask_inplace(logits, mask)
                tok = int(torch.argmax(logits))
                if matcher is not None:
                    matcher.consume_token(tok)
                if tok in self.stop_ids:
                    finish = "stop"
                    break
                out_ids.append(tok)
                if matcher is not None and matcher.is_stopped():
                    finish = "stop"  # the grammar is complete: nothing may follow
                    break
                cache = getattr(out, "cache", None) or out.past_key_values
                out = self.model(input_ids=torch.tensor([[tok]]), cache=cache, use_cache=True)
        text = self.tokenizer.decode(out_ids, skip_special_tokens=True)
        return Generation(text, int(ids.shape[1]), len(out_ids), finish,
                          time.monotonic() - t0)


class LocalChatServer:
    """``/v1/chat/completions`` over a LocalModel on 127.0.0.1; ``url`` ends in ``/v1``."""

    def __init__(self, model: LocalModel, port: int = 0) -> None:
        self.model = model
        self.requests = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "LocalChatServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """A request body -> (HTTP status, response body)."""
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, {"error": {"message": "messages must be a non-empty list"}}
        structured = body.get("structured_outputs")
        grammar = ((structured.get("grammar") if isinstance(structured, dict) else "")
                   or body.get("guided_grammar") or "")
        tool_name = ""
        for tool in body.get("tools") or ():
            fmt = (tool.get("custom") or {}).get("format") or {}
            if tool.get("type") == "custom" and fmt.get("type") == "grammar":
                grammar = fmt["grammar"]["definition"]
                tool_name = tool["custom"]["name"]
        limit = body.get("max_tokens") or body.get("max_completion_tokens") or MAX_NEW_TOKENS
        try:
            gen = self.model.generate(messages, str(grammar), min(int(limit), MAX_NEW_TOKENS))
        except PlannerError as e:
            return 400, {"error": {"message": str(e)}}
        self.requests += 1
        message: dict[str, Any] = {"role": "assistant", "content": gen.text}
        if tool_name:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{self.requests}", "type": "custom",
                 "custom": {"name": tool_name, "input": gen.text}}]}
        return 200, {
            "id": f"chatcmpl-local-{self.requests}", "object": "chat.completion",
            "created": int(time.time()), "model": str(body.get("model", "local")),
            "choices": [{"index": 0, "message": message, "finish_reason": gen.finish_reason}],
            "usage": {"prompt_tokens": gen.prompt_tokens,
                      "completion_tokens": gen.completion_tokens,
                      "total_tokens": gen.prompt_tokens + gen.completion_tokens},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    status, reply = 404, {"error": {"message": f"no route {self.path}"}}
                else:
                    length = int(self.headers.get("Content-Length", "0"))
                    try:
                        body = json.loads(self.rfile.read(length))
                        status, reply = owner.answer(body if isinstance(body, dict) else {})
                    except json.JSONDecodeError as e:
                        status, reply = 400, {"error": {"message": f"body is not JSON: {e}"}}
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        return Handler
