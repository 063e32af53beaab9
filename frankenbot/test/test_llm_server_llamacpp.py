"""The real local server: llama.cpp's OpenAI-compatible server (llama-cpp-python, built by
`make setup-llm`) on the packaged Gemma 3 270M, driven by the real ``openai`` client and the
planner. One server per module (the model loads once); a free port; killed at the end.

Supervision: a killed server (kill -9) or one a grammar crashes is a transport error, never a
planning call; the supervisor restarts it and the next task plans again."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest

from frankenbot.eval.taskset import standard_scene
from frankenbot.llm.server import LlmServer, LlmServerConfig, llama_cpp_available
from frankenbot.planner.planner import Planner, PlannerConfig, make_client
from frankenbot.planner.request import PlanRequest
from frankenbot.planner.vlm_client import VlmClient, vlm_config_for
from frankenbot.program import parse_program

pytestmark = pytest.mark.skipif(not llama_cpp_available(),
                                reason="llama-cpp-python not installed (run `make setup-llm`)")
INSTRUCTION = "put the red block in the green bowl"


@pytest.fixture(scope="module")
def server():
    srv = LlmServer(LlmServerConfig(port=0, n_ctx=4096, startup_timeout=300.0,
                                    restart_backoff=0.2)).start()
    yield srv
    srv.stop()
    assert not srv.alive()


def _planner(server: LlmServer, **kw) -> Planner:
    vlm = vlm_config_for("llamacpp", base_url=server.url, retry_backoff=0.2, **kw)
    cfg = PlannerConfig(planner_mode="vlm", max_repairs=0, vlm=vlm)
    return Planner(cfg, make_client(cfg))


def test_the_server_answers_the_real_openai_client(server):
    import openai

    client = openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=300)
    r = client.chat.completions.create(
        model="gemma-3-270m", max_tokens=8, temperature=0,
        messages=[{"role": "user", "content": "Name a colour."}])
    assert r.choices[0].message.content
    assert r.usage.prompt_tokens > 0 and 0 < r.usage.completion_tokens <= 8
    models = json.loads(urllib.request.urlopen(f"{server.url}/models", timeout=30).read())
    assert models["data"], models


def test_auto_identifies_llama_cpp_by_probing(server):
    vlm = vlm_config_for("auto", base_url=server.url)
    client = VlmClient(vlm)
    with client:
        assert client.resolve_family().value == "llamacpp"


def test_the_tier2_expert_ranks_through_the_scoring_route(server):
    """The tier-2 expert against the real server: one /frankenbot/score request per decision
    (the route llm/server_main.py adds), the same pick for the same situation, and a request
    the route refuses is an HTTP 400 that leaves the server up."""
    from frankenbot.anomaly.candidates import generate_candidates
    from frankenbot.anomaly.local_expert import ServerExpert
    from frankenbot.eval.llm_bench import FIXTURE_SITUATIONS
    from frankenbot.eval.situations import load_situations

    expert = ServerExpert(server.url, timeout=120)
    assert expert.wait_ready(timeout=120), expert.error
    assert expert.scoring_endpoint
    items = load_situations(FIXTURE_SITUATIONS)[:2]
    picks = []
    for it in (*items, items[0]):
        cands = generate_candidates(it.situation)
        r = expert.rank(it.situation, cands)
        assert len(r.scores) == len(cands) and all(s < 0 for s in r.scores)
        assert abs(sum(r.probs) - 1) < 1e-6
        picks.append(r.choice.key)
    assert picks[0] == picks[2]
    before = len(server.crashes)
    body = json.dumps({"prompt": "a", "continuations": []}).encode()
    req = urllib.request.Request(server.url[:-3] + "/frankenbot/score", body,
                                 {"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(req, timeout=60)
    assert refused.value.code == 400 and b"no continuations" in refused.value.read()
    assert server.alive() and len(server.crashes) == before


@pytest.mark.timeout(1200)
def test_constrained_answer_parses_and_unconstrained_is_measured(server):
    """Under the GBNF constraint (specialised to the scene) the model can only write the
    language with the scene's ids: the answer parses (unless cut off at the token limit, which
    the reply says) and names no object the scene lacks. The unconstrained answer of the same
    prompt is recorded, not asserted: a 270M model rarely writes a valid program. (Fast since
    the server checks the grammar on the top candidates first; 0.5 tokens/s before.)"""
    constrained = _planner(server, max_tokens=160).plan(PlanRequest(INSTRUCTION,
                                                                     standard_scene()))
    assert constrained.vlm_calls == 1 and constrained.tokens_out > 0
    text = constrained.program_text or constrained.diagnostics
    if constrained.ok:
        parse_program(constrained.program_text)
    else:  # only a cut-off answer may fail to parse under the grammar
        assert "cut off at the output token limit" in text or "error syntax" not in text, text
    assert "unknown-object" not in constrained.diagnostics
    assert "unknown-callee" not in constrained.diagnostics
    free = _planner(server, max_tokens=48, mode="text").plan(PlanRequest(INSTRUCTION,
                                                                         standard_scene()))
    assert free.vlm_calls == 1 and free.tokens_out > 0
    print(f"constrained ok={constrained.ok} tokens={constrained.tokens_out}; "
          f"unconstrained ok={free.ok} tokens={free.tokens_out}")


def test_a_killed_server_is_a_transport_error_then_it_restarts(server):
    planner = _planner(server, max_tokens=4, mode="text", transport_retries=0)
    before = len(server.crashes)
    server.kill_for_test()
    t0 = time.monotonic()
    down = planner.plan(PlanRequest(INSTRUCTION, standard_scene()))
    assert time.monotonic() - t0 < 30  # never hangs
    assert not down.ok and down.program is None and down.vlm_calls == 0
    assert "no answer from the VLM endpoint" in down.message
    assert server.wait_restarted(timeout=300)
    assert len(server.crashes) == before + 1 and server.crashes[-1].restarted
    up = planner.plan(PlanRequest(INSTRUCTION, standard_scene()))
    assert up.vlm_calls == 1  # an answer came (a 4-token one does not make a program)


def test_a_grammar_that_crashes_the_server_costs_no_planning_call(server):
    """llama.cpp's grammar engine cannot take left recursion: sent raw (bypassing our client's
    check), such a grammar killed llama-cpp-python's stock server (a null grammar sampler in the
    chain). Our server entry refuses it with an HTTP error and lives; if a server dies anyway,
    the supervisor brings it back; our client refuses to send it in the first place."""
    bad = 'root ::= root "a" | "a"\n'
    body = json.dumps({"model": "m", "max_tokens": 4, "grammar": bad,
                       "messages": [{"role": "user", "content": "a"}]}).encode()
    req = urllib.request.Request(f"{server.url}/chat/completions", body,
                                 {"Content-Type": "application/json"})
    before = len(server.crashes)
    refused = False
    try:
        urllib.request.urlopen(req, timeout=120).read()
        crashed = False
    except urllib.error.HTTPError as e:  # an answer: the server refused the grammar
        assert e.code >= 400
        crashed, refused = False, True
    except (urllib.error.URLError, ConnectionError, OSError):
        crashed = True
    if refused:  # the fast grammar sampler's entry: no crash, no restart
        time.sleep(1.0)
        assert server.alive() and len(server.crashes) == before
    if crashed:
        assert server.wait_restarted(timeout=300)
        assert len(server.crashes) == before + 1
    # through the planner: a transport error at worst, and the planner never counts it
    planner = _planner(server, max_tokens=4, mode="text")
    out = planner.plan(PlanRequest(INSTRUCTION, standard_scene()))
    assert out.vlm_calls in (0, 1)
    assert server.alive() or server.wait_restarted(timeout=300)
