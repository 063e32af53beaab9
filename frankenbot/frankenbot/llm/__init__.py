"""FrankenBot's local model server: llama.cpp behind an OpenAI-compatible HTTP API.

Serving infrastructure, not brain: the planner and the tier-2 expert reach it over HTTP only
(``planner.vlm_client``, ``anomaly.local_expert.ServerExpert``), so no core module imports this
package (import contracts in ``.importlinter``).

Modules:
  server          supervises ``python -m frankenbot.llm.server_main`` (start, health, restart)
  server_main     llama-cpp-python's server with the two additions below installed
  grammar_sampler the fast grammar-constrained sampler (top-k first, full vocabulary last)
  scoring         ``POST /frankenbot/score``: continuation scoring in one llama.cpp batch
"""
