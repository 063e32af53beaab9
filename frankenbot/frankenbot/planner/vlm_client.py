"""VLM client for OpenAI-compatible chat endpoints: OpenAI, vLLM, SGLang, llama.cpp, Ollama,
LM Studio.

One ``complete(messages)`` is one *planning call*. HTTP-level trouble (5xx, 429, timeouts, lost
connections, a server that died, bodies that are not a chat completion) is retried here with
backoff and counted in ``VlmReply.transport_retries``, never as a planning call; when the retries
run out the call raises ``VlmTransportError`` (no answer came, so the planner does not count it).

Each server family constrains output with its own request field, and the program grammar goes in
the dialect that field takes (all generated from grammar.lark):

- ``openai``: a custom tool whose input format is the grammar (``format: {type: grammar,
  syntax: lark, definition}``, LLGuidance's Lark subset), forced with ``tool_choice``;
- ``vllm`` (>= 0.12): ``structured_outputs: {"grammar": <Lark>}``;
- ``sglang``: ``ebnf: <xgrammar EBNF>``;
- ``llamacpp`` (llama.cpp's server and llama-cpp-python's): ``grammar: <GBNF>``; the system
  message is folded into the first user message and images become a note (Gemma-style chat
  formats drop system messages; the packaged model reads no images);
- ``ollama``: no grammar field exists (``format`` takes JSON only): plain text, and the parser
  cuts the program out of the chat text;
- ``auto`` (default): api.openai.com is ``openai``; any other endpoint is probed once (``GET
  /models``: ``owned_by`` and the ``Server`` header) and the family found is kept; an endpoint it
  cannot identify gets plain text.

Modes: ``auto`` (default) sends the family's constraint and, when the server answers 400/422 to
it, drops to text for this endpoint and asks again at once (recorded in ``mode_fallbacks``; not a
planning call); ``text`` never constrains; ``grammar``/``guided`` constrain with no fallback
(legacy names: with ``server=auto`` they mean ``openai``/``vllm``). Every grammar is checked
before it is first sent (Lark and LLGuidance compile it, GBNF/EBNF are read back), because a
malformed grammar can kill a server; one that fails is not sent and the call is text-only.
"""

from __future__ import annotations

import enum
import json
import os
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable

from frankenbot import settings
from frankenbot.errors import ConfigError, PlannerError
from frankenbot.settings import setting

OPENAI_HOST = "api.openai.com"
# where `frankenbot llm serve` listens by default (llama.cpp's server on the packaged Gemma)
LLAMACPP_DEFAULT_URL = "http://127.0.0.1:8080/v1"
LLAMACPP_DEFAULT_MODEL = "gemma-3-270m"
LLAMACPP_MAX_TOKENS = 400  # a small local model: bound the time one call can take


class VlmMode(str, enum.Enum):
    AUTO = "auto"
    GRAMMAR = "grammar"
    GUIDED = "guided"
    TEXT = "text"


class ServerFamily(str, enum.Enum):
    AUTO = "auto"
    OPENAI = "openai"
    VLLM = "vllm"
    SGLANG = "sglang"
    LLAMACPP = "llamacpp"
    OLLAMA = "ollama"


SERVER_FAMILIES = tuple(f.value for f in ServerFamily)
# what each family's constraint field is called (for messages and docs)
CONSTRAINT_FIELD = {
    ServerFamily.OPENAI: "tools[custom grammar, lark]", ServerFamily.VLLM: "structured_outputs",
    ServerFamily.SGLANG: "ebnf", ServerFamily.LLAMACPP: "grammar", ServerFamily.OLLAMA: "",
}
# the grammar dialect each family's constraint field takes (planner.language.RequestGrammars)
FAMILY_DIALECT = {ServerFamily.OPENAI: "llguidance", ServerFamily.VLLM: "lark",
                  ServerFamily.SGLANG: "ebnf", ServerFamily.LLAMACPP: "gbnf"}
IMAGE_NOTE = "(An image of the table exists but this model reads text only; use the table.)"


class VlmError(PlannerError):
    """The endpoint refused the request or gave no usable answer."""


class VlmTransportError(VlmError):
    """No answer came at all (connection refused, server died, timeouts, 5xx) after the
    transport retries: not a planning call."""


class _Transient(Exception):
    """A failure worth retrying (not a planning call)."""


@dataclass(frozen=True)
class VlmConfig:
    """Endpoint and call settings. Empty ``api_key``/``base_url`` fall back to the environment
    (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``)."""

    model: str = setting("gpt-5-mini", "model name at the OpenAI-compatible endpoint")
    api_key: str = setting("", "API key; empty = OPENAI_API_KEY from the environment")
    base_url: str = setting("", "endpoint base URL; empty = OPENAI_BASE_URL or api.openai.com")
    mode: str = setting(VlmMode.AUTO.value, "auto (the server's constraint, text if refused) | "
                        "grammar (OpenAI custom tool with our Lark grammar) | guided (vLLM "
                        "guided grammar) | text", choices=tuple(m.value for m in VlmMode))
    timeout: float = setting(60.0, "one HTTP request", unit="s", low=0.1)
    connect_timeout: float = setting(10.0, "connecting to the endpoint", unit="s", low=0.1)
    transport_retries: int = setting(2, "extra HTTP attempts per planning call (5xx, timeouts); "
                                     "never counted as planning calls", low=0)
    retry_backoff: float = setting(1.0, "wait before a retry, doubled per attempt", unit="s",
                                   low=0.0)
    max_output_tokens: int = setting(4096, "completion token limit per call (reasoning models "
                                     "spend part of it thinking)", low=1)
    temperature: float = setting(-1.0, "sampling temperature; < 0 = not sent (reasoning models "
                                 "reject it)", high=2.0)
    reasoning_effort: str = setting("", "'' = not sent; minimal | low | medium | high "
                                    "(reasoning models)",
                                    choices=("", "minimal", "low", "medium", "high"))
    image_detail: str = setting("auto", "image detail for the VLM", choices=("low", "high",
                                                                             "auto"))
    tool_name: str = setting("frankenbot_program", "name of the grammar tool (grammar mode)")
    server: str = setting(ServerFamily.AUTO.value, "auto (probe) | openai | vllm | sglang | "
                          "llamacpp | ollama: which constraint field and grammar dialect to "
                          "send", choices=SERVER_FAMILIES)
    probe_timeout: float = setting(5.0, "the one GET /models of server=auto", unit="s",
                                   low=0.1)

    def __post_init__(self) -> None:
        settings.validate(self, "vlm")
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
        """Legacy: the mode ``auto`` stands for at this endpoint before any probe."""
        url = self.resolved_base_url()
        return VlmMode.GRAMMAR if (not url or OPENAI_HOST in url) else VlmMode.GUIDED

    def declared_family(self) -> ServerFamily | None:
        """The family known without asking the server (None: probe it)."""
        if self.server != ServerFamily.AUTO.value:
            return ServerFamily(self.server)
        if self.mode == VlmMode.GRAMMAR.value:
            return ServerFamily.OPENAI
        if self.mode == VlmMode.GUIDED.value:
            return ServerFamily.VLLM
        url = self.resolved_base_url()
        if not url or OPENAI_HOST in url:
            return ServerFamily.OPENAI
        return None


def identify_server(models_body: str, headers: dict[str, str]) -> ServerFamily | None:
    """The server family from a ``GET /models`` answer (None when it does not say).

    vLLM and SGLang name themselves in ``owned_by``; llama.cpp's server says ``llamacpp`` and
    ``Server: llama.cpp``, llama-cpp-python's says ``me``; Ollama says ``library``/``ollama``."""
    server = headers.get("server", "").lower()
    if "llama.cpp" in server or "llama-cpp" in server:
        return ServerFamily.LLAMACPP
    if "ollama" in server:
        return ServerFamily.OLLAMA
    try:
        data = json.loads(models_body)
    except (json.JSONDecodeError, TypeError):
        return None
    owners = {str(m.get("owned_by", "")).lower() for m in (data.get("data") or [])
              if isinstance(m, dict)} if isinstance(data, dict) else set()
    for owner, family in (("vllm", ServerFamily.VLLM), ("sglang", ServerFamily.SGLANG),
                          ("llamacpp", ServerFamily.LLAMACPP), ("llama.cpp", ServerFamily.LLAMACPP),
                          ("me", ServerFamily.LLAMACPP), ("ollama", ServerFamily.OLLAMA),
                          ("library", ServerFamily.OLLAMA), ("openai", ServerFamily.OPENAI),
                          ("system", ServerFamily.OPENAI)):
        if owner in owners:
            return family
    return None


def vlm_config_for(server: str = "auto", *, model: str = "", base_url: str = "",
                   max_tokens: int = 0, **kw: Any) -> VlmConfig:
    """A VlmConfig for a server family with that family's sensible defaults: ``llamacpp``
    without a base URL (flag or OPENAI_BASE_URL) means the local ``frankenbot llm serve``, its
    model alias, greedy decoding and a 400-token limit."""
    fields: dict[str, Any] = {"server": server, **kw}
    if model:
        fields["model"] = model
    if base_url:
        fields["base_url"] = base_url
    if max_tokens:
        fields["max_output_tokens"] = max_tokens
    if server == ServerFamily.LLAMACPP.value:
        if not base_url and not os.environ.get("OPENAI_BASE_URL"):
            fields["base_url"] = LLAMACPP_DEFAULT_URL
        fields.setdefault("model", LLAMACPP_DEFAULT_MODEL)
        fields.setdefault("max_output_tokens", LLAMACPP_MAX_TOKENS)
        fields.setdefault("temperature", 0.0)
        fields.setdefault("timeout", 600.0)  # CPU decoding of a whole program
    return VlmConfig(**fields)


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
    server: str = ""  # the server family the request was shaped for
    constrained: bool = False  # the request carried the family's grammar


class VlmClient:
    """Chat-completions client with planning-call semantics. ``close()`` releases the HTTP pool.

    Grammars, one per dialect (a missing one means that family gets text): ``grammar`` is the
    program grammar in LLGuidance's Lark subset (OpenAI's tool), ``guided_grammar`` plain Lark
    (vLLM), ``gbnf`` (llama.cpp) and ``ebnf`` (SGLang)."""

    def __init__(self, config: VlmConfig, grammar: str = "", guided_grammar: str = "", *,
                 gbnf: str = "", ebnf: str = "",
                 sleep: Callable[[float], None] = time.sleep) -> None:
        import openai

        self.config = config
        self._grammars = {ServerFamily.OPENAI: grammar,
                          ServerFamily.VLLM: guided_grammar or grammar,
                          ServerFamily.SGLANG: ebnf, ServerFamily.LLAMACPP: gbnf,
                          ServerFamily.OLLAMA: ""}
        self._checked: dict[tuple, str] = {}  # (family, text hash, length) -> problem
        self._sleep = sleep
        self._openai = openai
        key = config.resolved_api_key()
        url = config.resolved_base_url() or None
        if not key and not url:
            raise ConfigError("no VLM endpoint: set OPENAI_API_KEY (and optionally "
                              "OPENAI_BASE_URL) or the planner's api_key/base_url parameters")
        self._client: Any = openai.OpenAI(
            api_key=key or "not-needed", base_url=url, max_retries=0,
            timeout=openai.Timeout(config.timeout, connect=config.connect_timeout))
        self._lock = threading.Lock()  # guards family/mode (a node may plan from two threads)
        self.family: ServerFamily | None = config.declared_family()
        self.mode = VlmMode.TEXT if config.mode == VlmMode.TEXT.value else VlmMode.AUTO
        self.mode_fallbacks = 0
        self.probe_note = ""
        self.grammar_problems: dict[str, str] = {}

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> "VlmClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- which server ------------------------------------------------------------------------

    def resolve_family(self) -> ServerFamily:
        """The server family, probing the endpoint once when ``server=auto`` left it open.

        A probe that gets no answer is not cached (the server may be starting) and this call
        is shaped as plain text."""
        with self._lock:
            if self.family is not None:
                return self.family
        found, note = self._probe()
        with self._lock:
            self.probe_note = note
            if found is not None and self.family is None:
                self.family = found
            return self.family or ServerFamily.OLLAMA  # unknown: plain text, like Ollama

    def _probe(self) -> tuple[ServerFamily | None, str]:
        base = (self.config.resolved_base_url() or "").rstrip("/")
        req = urllib.request.Request(f"{base}/models")
        key = self.config.resolved_api_key()
        if key:
            req.add_header("Authorization", f"Bearer {key}")
        try:
            with urllib.request.urlopen(req, timeout=self.config.probe_timeout) as resp:
                body = resp.read(1 << 20).decode("utf-8", "replace")
                headers = {k.lower(): v for k, v in resp.headers.items()}
        except urllib.error.HTTPError as e:
            headers = {k.lower(): v for k, v in (e.headers or {}).items()}
            fam = identify_server("", headers)
            return (fam if fam is not None else None), f"GET /models answered {e.code}"
        except (OSError, ValueError) as e:
            return None, f"GET /models failed: {e}"
        fam = identify_server(body, headers)
        if fam is None:
            return ServerFamily.OLLAMA, "server not identified; plain text with extraction"
        return fam, f"identified as {fam.value}"

    # -- grammars ----------------------------------------------------------------------------

    def _grammar_for(self, family: ServerFamily, grammars: Any = None) -> str:
        """The grammar to send ``family``: the request's specialised one (``grammars``, an
        object with ``get(dialect)`` such as ``language.RequestGrammars``) when it exists and
        passes its check, else the client's generic one if that passes ("" otherwise)."""
        if grammars is not None and family in FAMILY_DIALECT:
            text = grammars.get(FAMILY_DIALECT[family])
            if text and not self._check(family, text):
                return text
        text = self._grammars.get(family, "")
        if not text:
            return ""
        return "" if self._check(family, text) else text

    def _check(self, family: ServerFamily, text: str) -> str:
        """The problem with sending ``text`` to ``family`` ("" = none), checked once per text."""
        key = (family, hash(text), len(text))
        with self._lock:
            if key in self._checked:
                return self._checked[key]
        problem = check_grammar(family, text)
        with self._lock:
            if len(self._checked) > 64:  # per-request grammars: keep the cache bounded
                self._checked.clear()
            self._checked[key] = problem
            if problem:
                self.grammar_problems[family.value] = problem
        return problem

    # -- request -----------------------------------------------------------------------------

    def _request(self, messages: list[dict[str, Any]], family: ServerFamily,
                 constrained: bool, grammars: Any = None) -> dict[str, Any]:
        cfg = self.config
        if family == ServerFamily.LLAMACPP:
            messages = flatten_for_text_model(messages)
        kwargs: dict[str, Any] = {"model": cfg.model, "messages": messages}
        if cfg.temperature >= 0:
            kwargs["temperature"] = cfg.temperature
        if cfg.reasoning_effort:
            kwargs["reasoning_effort"] = cfg.reasoning_effort
        grammar = self._grammar_for(family, grammars) if constrained else ""
        if family == ServerFamily.OPENAI and grammar:
            kwargs["max_completion_tokens"] = cfg.max_output_tokens
            kwargs["tools"] = [{"type": "custom", "custom": {
                "name": cfg.tool_name,
                "description": "Submit the complete FrankenBot program for the task.",
                "format": {"type": "grammar", "grammar": {
                    "syntax": "lark", "definition": grammar}}}}]
            kwargs["tool_choice"] = {"type": "custom", "custom": {"name": cfg.tool_name}}
            return kwargs
        kwargs["max_tokens"] = cfg.max_output_tokens
        if grammar and family == ServerFamily.VLLM:
            kwargs["extra_body"] = {"structured_outputs": {"grammar": grammar}}
        elif grammar and family == ServerFamily.SGLANG:
            kwargs["extra_body"] = {"ebnf": grammar}
        elif grammar and family == ServerFamily.LLAMACPP:
            kwargs["extra_body"] = {"grammar": grammar}
        return kwargs

    def constrained_now(self, family: ServerFamily, grammars: Any = None) -> bool:
        """Whether the next request to ``family`` carries a grammar."""
        return (self.mode != VlmMode.TEXT and family != ServerFamily.OLLAMA
                and bool(self._grammar_for(family, grammars)))

    def complete(self, messages: list[dict[str, Any]], grammars: Any = None) -> VlmReply:
        """One planning call; raises VlmTransportError when no answer arrives, VlmError when the
        endpoint refuses. ``grammars`` (``get(dialect) -> text``): the grammar specialised to
        this request (scene ids, catalog, skills), sent instead of the generic one when it
        exists and passes its check."""
        if self._client is None:
            raise VlmError("the VLM client is closed")
        oa = self._openai
        cfg = self.config
        start = time.monotonic()
        retries = 0
        last = ""
        attempt = 0
        while True:
            family = self.resolve_family()
            constrained = self.constrained_now(family, grammars)
            mode = (VlmMode.GRAMMAR if family == ServerFamily.OPENAI else VlmMode.GUIDED) \
                if constrained else VlmMode.TEXT
            try:
                raw = self._client.chat.completions.with_raw_response.create(
                    **self._request(messages, family, constrained, grammars))
                text, tin, tout, finish = _decode(raw.http_response.text, cfg.tool_name)
                return VlmReply(text, tin, tout, time.monotonic() - start, mode.value,
                                retries, finish, family.value, constrained)
            except (oa.BadRequestError, oa.UnprocessableEntityError) as e:
                if constrained and cfg.mode == VlmMode.AUTO.value:
                    with self._lock:  # the server does not take this constraint: text from now
                        self.mode = VlmMode.TEXT
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
                raise VlmTransportError(f"no answer from the VLM endpoint after {attempt + 1} "
                                        f"attempts: {last}")
            attempt += 1
            retries += 1
            self._sleep(cfg.retry_backoff * (2 ** (attempt - 1)))


def flatten_for_text_model(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages for a text-only chat template: the system text leads the first user message
    (Gemma-style templates drop system messages) and image parts become a short note."""
    system = "\n\n".join(_text_of(m) for m in messages if m.get("role") == "system")
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.get("role") == "system":
            continue
        text = _text_of(m)
        if system and m.get("role") == "user" and not any(o["role"] == "user" for o in out):
            text = f"{system}\n\n{text}"
        out.append({"role": m.get("role", "user"), "content": text})
    if system and not any(o["role"] == "user" for o in out):
        out.insert(0, {"role": "user", "content": system})
    return out


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for part in content or ():
        if isinstance(part, dict) and part.get("type") == "text":
            parts.append(str(part.get("text", "")))
        elif isinstance(part, dict) and part.get("type") == "image_url":
            parts.append(IMAGE_NOTE)
    return "\n".join(parts)


def check_grammar(family: ServerFamily, text: str) -> str:
    """"" when ``text`` is a grammar ``family``'s server can take, else the problem.

    Lark grammars compile in Lark (vLLM) or LLGuidance (OpenAI's tool is LLGuidance); GBNF and
    EBNF are read back by LLGuidance's GBNF reader."""
    try:
        if family in (ServerFamily.LLAMACPP, ServerFamily.SGLANG):
            from frankenbot.program.grammar_export import check_gbnf

            return check_gbnf(text)
        if family == ServerFamily.VLLM:
            from lark import Lark

            Lark(text, parser="lalr")
            return ""
        if family == ServerFamily.OPENAI:
            import llguidance

            return llguidance.LLMatcher.validate_grammar(
                llguidance.grammar_from("lark", text), None) or ""
    except ImportError:
        return ""
    except Exception as e:  # any compile error: do not send it
        return f"{type(e).__name__}: {str(e)[:200]}"
    return ""


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
    usage = data.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    tin = usage.get("prompt_tokens", 0)
    tout = usage.get("completion_tokens", 0)
    finish = choices[0].get("finish_reason") or ""
    return (text, tin if isinstance(tin, int) else 0, tout if isinstance(tout, int) else 0,
            str(finish))
