"""VLM client for any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, LM Studio).

One ``complete(messages)`` is one *planning call*. HTTP-level trouble (5xx, 429, timeouts, lost
connections, bodies that are not a chat completion) is retried here with backoff and counted in
``VlmReply.transport_retries``, never as a planning call, so the planner's call counts mean "answers
the model gave". Output modes:

- ``grammar``: a custom tool whose input format is the program grammar (``format: {type: grammar,
  syntax: lark, definition}``), forced with ``tool_choice``; the server guarantees the tool input
  parses (OpenAI GPT-5 family; the grammar is in LLGuidance's Lark dialect).
- ``guided``: vLLM-style ``extra_body`` with the Lark grammar (key ``guided_grammar`` by default).
- ``text``: a plain completion; the parser extracts the program from the chat text.
- ``auto`` (default): ``grammar`` for api.openai.com, ``guided`` for other servers, and when the
  server rejects the constrained request (HTTP 400/422) the client drops to ``text`` for the rest
  of its life (recorded in ``mode_fallbacks``; not a planning call either).
"""

from __future__ import annotations

import enum
import json
import os
import time
from dataclasses import dataclass
from typing import Any, Callable

from frankenbot.errors import ConfigError, PlannerError

OPENAI_HOST = "api.openai.com"


class VlmMode(str, enum.Enum):
    AUTO = "auto"
    GRAMMAR = "grammar"
    GUIDED = "guided"
    TEXT = "text"


class VlmError(PlannerError):
    """The endpoint gave no usable answer (after transport retries) or refused the request."""


class _Transient(Exception):
    """A failure worth retrying (not a planning call)."""


@dataclass(frozen=True)
class VlmConfig:
    """Endpoint and call settings. Empty ``api_key``/``base_url`` fall back to the environment
    (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``)."""

    model: str = "gpt-5-mini"
    api_key: str = ""
    base_url: str = ""
    mode: str = VlmMode.AUTO.value
    timeout: float = 60.0  # seconds for one HTTP request
    connect_timeout: float = 10.0
    transport_retries: int = 2  # extra HTTP attempts per planning call
    retry_backoff: float = 1.0  # seconds, doubled per attempt
    max_output_tokens: int = 4096  # reasoning models spend part of it thinking
    temperature: float | None = None  # None: not sent (reasoning models reject it)
    reasoning_effort: str = ""  # "" = not sent; minimal | low | medium | high (reasoning models)
    image_detail: str = "auto"
    guided_key: str = "guided_grammar"
    tool_name: str = "frankenbot_program"

    def __post_init__(self) -> None:
        if self.mode not in {m.value for m in VlmMode}:
            raise ConfigError(f"vlm mode must be one of auto, grammar, guided, text; "
                              f"got {self.mode!r}")
        if self.timeout <= 0 or self.connect_timeout <= 0:
            raise ConfigError(f"vlm timeouts must be > 0, got {self.timeout}, "
                              f"{self.connect_timeout}")
        if self.transport_retries < 0 or self.retry_backoff < 0:
            raise ConfigError("vlm transport_retries and retry_backoff must be >= 0")
        if not self.model:
            raise ConfigError("vlm model name is empty")

    def resolved_api_key(self) -> str:
        return self.api_key or os.environ.get("OPENAI_API_KEY", "")

    def resolved_base_url(self) -> str:
        return self.base_url or os.environ.get("OPENAI_BASE_URL", "")

    def is_configured(self) -> bool:
        """A key, or a base URL of a local server (which usually needs no key)."""
        return bool(self.resolved_api_key() or self.resolved_base_url())

    def auto_mode(self) -> VlmMode:
        url = self.resolved_base_url()
        return VlmMode.GRAMMAR if (not url or OPENAI_HOST in url) else VlmMode.GUIDED


@dataclass(frozen=True)
class VlmReply:
    """One planning call's answer and its costs."""

    text: str
    tokens_in: int
    tokens_out: int
    latency: float  # seconds, including transport retries
    mode: str  # the mode that produced the answer
    transport_retries: int = 0
    finish_reason: str = ""


class VlmClient:
    """Chat-completions client with planning-call semantics. ``close()`` releases the HTTP pool.

    ``grammar`` is the program grammar in LLGuidance's Lark dialect (grammar mode) and
    ``guided_grammar`` in plain Lark (guided mode); without them those modes fall back to text.
    """

    def __init__(self, config: VlmConfig, grammar: str = "", guided_grammar: str = "",
                 sleep: Callable[[float], None] = time.sleep) -> None:
        import openai

        self.config = config
        self._grammar = grammar
        self._guided_grammar = guided_grammar or grammar
        self._sleep = sleep
        self._openai = openai
        key = config.resolved_api_key()
        url = config.resolved_base_url() or None
        if not key and not url:
            raise ConfigError("no VLM endpoint: set OPENAI_API_KEY (and optionally "
                              "OPENAI_BASE_URL) or the planner's api_key/base_url parameters")
        self._client = openai.OpenAI(
            api_key=key or "not-needed", base_url=url, max_retries=0,
            timeout=openai.Timeout(config.timeout, connect=config.connect_timeout))
        mode = VlmMode(config.mode)
        self.mode = config.auto_mode() if mode == VlmMode.AUTO else mode
        if self.mode == VlmMode.GRAMMAR and not grammar:
            self.mode = VlmMode.TEXT
        self.mode_fallbacks = 0

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> "VlmClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- request -----------------------------------------------------------------------------

    def _request(self, messages: list[dict[str, Any]], mode: VlmMode) -> dict[str, Any]:
        cfg = self.config
        kwargs: dict[str, Any] = {"model": cfg.model, "messages": messages}
        if cfg.temperature is not None:
            kwargs["temperature"] = cfg.temperature
        if cfg.reasoning_effort:
            kwargs["reasoning_effort"] = cfg.reasoning_effort
        if mode == VlmMode.GRAMMAR:
            kwargs["max_completion_tokens"] = cfg.max_output_tokens
            kwargs["tools"] = [{"type": "custom", "custom": {
                "name": cfg.tool_name,
                "description": "Submit the complete FrankenBot program for the task.",
                "format": {"type": "grammar", "grammar": {
                    "syntax": "lark", "definition": self._grammar}}}}]
            kwargs["tool_choice"] = {"type": "custom", "custom": {"name": cfg.tool_name}}
        else:
            kwargs["max_tokens"] = cfg.max_output_tokens
            if mode == VlmMode.GUIDED:
                kwargs["extra_body"] = {cfg.guided_key: self._guided_grammar}
        return kwargs

    def complete(self, messages: list[dict[str, Any]]) -> VlmReply:
        """One planning call; raises VlmError when no usable answer arrives."""
        if self._client is None:
            raise VlmError("the VLM client is closed")
        oa = self._openai
        cfg = self.config
        start = time.monotonic()
        retries = 0
        last = ""
        attempt = 0
        while True:
            mode = self.mode
            try:
                raw = self._client.chat.completions.with_raw_response.create(
                    **self._request(messages, mode))
                text, tin, tout, finish = _decode(raw.http_response.text, cfg.tool_name)
                return VlmReply(text, tin, tout, time.monotonic() - start, mode.value,
                                retries, finish)
            except (oa.BadRequestError, oa.UnprocessableEntityError) as e:
                if VlmMode(cfg.mode) == VlmMode.AUTO and mode != VlmMode.TEXT:
                    self.mode = VlmMode.TEXT  # the server does not take constrained requests
                    self.mode_fallbacks += 1
                    continue
                raise VlmError(f"the VLM endpoint rejected the request: {_status_text(e)}") from e
            except (oa.AuthenticationError, oa.PermissionDeniedError, oa.NotFoundError) as e:
                raise VlmError(f"the VLM endpoint refused: {_status_text(e)} "
                               f"(check api key, base URL and model {cfg.model!r})") from e
            except oa.APITimeoutError:
                last = f"timed out after {cfg.timeout:g} s"
            except oa.APIConnectionError as e:
                last = f"connection failed: {e}"
            except oa.APIStatusError as e:
                if e.status_code < 500 and e.status_code != 429:
                    raise VlmError(f"the VLM endpoint answered {_status_text(e)}") from e
                last = _status_text(e)
            except _Transient as e:
                last = str(e)
            if attempt >= cfg.transport_retries:
                raise VlmError(f"no answer from the VLM endpoint after {attempt + 1} attempts: "
                               f"{last}")
            attempt += 1
            retries += 1
            self._sleep(cfg.retry_backoff * (2 ** (attempt - 1)))


def _status_text(e: Any) -> str:
    msg = str(getattr(e, "message", "") or e)
    return f"HTTP {getattr(e, 'status_code', '?')}: {msg[:300]}"


def _decode(body: str, tool_name: str) -> tuple[str, int, int, str]:
    """A chat-completion body -> (text, prompt tokens, completion tokens, finish reason).

    Raises _Transient when the body is not a chat completion (so it is retried, not counted).
    """
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, TypeError) as e:
        raise _Transient(f"malformed response body (not JSON): {body[:80]!r}") from e
    if not isinstance(data, dict):
        raise _Transient("malformed response body (not a JSON object)")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _Transient("malformed response body (no choices)")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise _Transient("malformed response body (choice without message)")
    text = ""
    for call in message.get("tool_calls") or ():
        if isinstance(call, dict) and call.get("type") == "custom":
            custom = call.get("custom") or {}
            if custom.get("name") == tool_name and isinstance(custom.get("input"), str):
                text = custom["input"]
                break
    if not text and isinstance(message.get("content"), str):
        text = message["content"]
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    tin = usage.get("prompt_tokens", 0)
    tout = usage.get("completion_tokens", 0)
    finish = choices[0].get("finish_reason") or ""
    return (text, tin if isinstance(tin, int) else 0, tout if isinstance(tout, int) else 0,
            str(finish))
