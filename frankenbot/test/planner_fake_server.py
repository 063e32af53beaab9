"""A scripted OpenAI-compatible chat-completions server for planner tests (real HTTP).

Built on the standard library's http.server in a background thread. Each POST to
``/v1/chat/completions`` consumes the next scripted ``Reply`` (status, body, optional delay) and
records the request's JSON body and headers, so tests can assert what the real ``openai`` client
sent (image data URL, grammar tool, guided grammar) and how many HTTP requests were made.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: str = ""
    delay: float = 0.0  # seconds before answering (to provoke client timeouts)
    content_type: str = "application/json"


def completion(text: str = "", *, tool_input: str | None = None, tool_name: str = "",
               prompt_tokens: int = 100, completion_tokens: int = 50) -> Reply:
    """A well-formed chat completion with ``text`` as content, or a custom tool call."""
    message: dict[str, Any] = {"role": "assistant", "content": text if tool_input is None else None}
    if tool_input is not None:
        message["tool_calls"] = [{"id": "call_1", "type": "custom",
                                  "custom": {"name": tool_name, "input": tool_input}}]
    body = {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "test-model",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "stop" if tool_input is None else "tool_calls"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }
    return Reply(200, json.dumps(body))


def error(status: int, message: str = "boom") -> Reply:
    return Reply(status, json.dumps({"error": {"message": message, "type": "server_error"}}))


@dataclass
class FakeServer:
    """Start with ``start()``; ``url`` is the base URL to give the client (ends in /v1)."""

    script: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    # GET /v1/models: who the server says it is (``owned_by`` and the Server header), so tests
    # can impersonate vLLM, SGLang, llama.cpp, Ollama; ``models_status`` != 200 refuses
    models_owner: str = "vllm"
    server_header: str = ""
    models_status: int = 200
    gets: list[str] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def add(self, *replies: Reply) -> None:
        with self._lock:
            self.script.extend(replies)

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if not self.script:
                return error(500, "script exhausted")
            return self.script.pop(0)

    def start(self) -> "FakeServer":
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.gets.append(self.path)
                body = json.dumps({"object": "list", "data": [
                    {"id": "test-model", "object": "model", "owned_by": owner.models_owner}]})
                data = body.encode()
                self.send_response(owner.models_status if self.path.endswith("/models")
                                   else 404)
                if owner.server_header:
                    self.send_header("Server", owner.server_header)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def version_string(self) -> str:  # the Server header (default: Python's)
                return owner.server_header or "FakeServer/1.0"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode(errors="replace")}
                reply = owner._next(body, {k.lower(): v for k, v in self.headers.items()})
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.body.encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
