"""``python -m frankenbot.llm.server_main [llama_cpp.server options]``: llama-cpp-python's
OpenAI-compatible server with the fast grammar sampler installed (``llm.grammar_sampler``).

``FRANKENBOT_GRAMMAR_TOP_K`` (default 64) is how many top candidates are checked against the
grammar before the whole vocabulary; 0 runs the stock sampler. The server also answers
``POST /frankenbot/score`` (``llm.scoring``: log-likelihoods of candidate continuations, for the
tier-2 expert). ``LlmServer`` starts this module instead of ``llama_cpp.server``.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    from frankenbot.llm.grammar_sampler import DEFAULT_TOP_K, install

    raw = os.environ.get("FRANKENBOT_GRAMMAR_TOP_K", str(DEFAULT_TOP_K))
    try:
        k = int(raw)
    except ValueError:
        print(f"FRANKENBOT_GRAMMAR_TOP_K must be an integer, got {raw!r}", file=sys.stderr)
        raise SystemExit(2) from None
    installed = install(k)
    how = f"top-{k} first" if installed else "stock (full vocabulary)"
    print(f"frankenbot: grammar sampler {how}", file=sys.stderr, flush=True)
    import llama_cpp.server.__main__ as server_module

    from frankenbot.llm.scoring import install_route

    create_app = server_module.create_app

    def create_app_with_scoring(*args: object, **kwargs: object) -> object:
        app = create_app(*args, **kwargs)
        install_route(app)
        return app

    server_module.create_app = create_app_with_scoring
    server_main = server_module.main
    sys.argv = ["llama_cpp.server", *(sys.argv[1:] if argv is None else argv)]
    server_main()


if __name__ == "__main__":
    main()
