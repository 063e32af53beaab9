"""``frankenbot llm serve``: llama.cpp's OpenAI-compatible server on the packaged Gemma 3 270M,
under the supervisor of ``frankenbot.llm.server`` (restarted if it dies)."""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    llm = subparsers.add_parser("llm", help="the local LLM server (llama.cpp)",
                                description="Run a local OpenAI-compatible LLM server.")
    sub = llm.add_subparsers(dest="llm_command", metavar="SUBCOMMAND")
    serve = sub.add_parser(
        "serve", help="serve the packaged Gemma 3 270M through llama.cpp (needs make setup-llm)",
        description="Start llama.cpp's OpenAI-compatible server (llama-cpp-python) on a GGUF "
        "model, restart it if it dies, and stop it on Ctrl-C. Point the planner at it with "
        "`frankenbot plan --vlm --vlm-server llamacpp` (or planner_mode: vlm, vlm.server: "
        "llamacpp, vlm.base_url: the printed URL).")
    serve.add_argument("--port", type=int, default=8080, help="listen port (0: any free one)")
    serve.add_argument("--host", default="127.0.0.1", help="listen address")
    serve.add_argument("--model", type=Path, default=None,
                       help="GGUF file (default: the packaged Gemma 3 270M)")
    serve.add_argument("--threads", type=int, default=0, help="CPU threads (default: cores)")
    serve.add_argument("--ctx", type=int, default=8192, help="context size in tokens")
    serve.add_argument("--logprobs", action="store_true",
                       help="keep logits of every prompt token (OpenAI-style echo+logprobs; the "
                       "tier-2 expert does not need it: it uses /frankenbot/score; "
                       "slower prompts and n_ctx x 1 MB of memory)")
    serve.add_argument("--grammar-top-k", type=int, default=64,
                       help="check this many top candidates against a request's grammar before "
                       "the whole vocabulary (exact for greedy decoding; 0: llama-cpp-python's "
                       "stock full-vocabulary grammar sampler)")
    serve.set_defaults(func=_serve)
    llm.set_defaults(func=lambda _a: (llm.print_help(), 2)[1])


def _serve(args: argparse.Namespace) -> int:
    from frankenbot.llm.server import LlmServer, LlmServerConfig

    cfg = LlmServerConfig(model_path=str(args.model or ""), host=args.host, port=args.port,
                          n_ctx=args.ctx, threads=args.threads, logits_all=args.logprobs,
                          grammar_top_k=args.grammar_top_k)
    server = LlmServer(cfg)
    print("llm: starting llama.cpp's server (model load takes a few seconds)...", flush=True)
    server.start()
    print(f"llm: serving at {server.url} (pid {server.pid}, started in "
          f"{server.startup_seconds:.1f} s; log {server.log_path})", flush=True)
    print(f"llm: plan with: frankenbot plan \"...\" --vlm --vlm-server llamacpp "
          f"--base-url {server.url}", flush=True)
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_a: done.set())
    seen = 0
    try:
        while not done.wait(1.0):
            if len(server.crashes) > seen:
                for c in server.crashes[seen:]:
                    print(f"llm: server exited (code {c.returncode}); "
                          f"{'restarting' if c.restarted else 'restart limit reached'}",
                          flush=True)
                seen = len(server.crashes)
                if not server.crashes[-1].restarted:
                    return 1
    finally:
        server.stop()
        print("llm: stopped", flush=True)
    return 0
