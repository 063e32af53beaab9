"""The VLM client against a real local HTTP server with the real openai package."""

from __future__ import annotations

import pytest
from planner_fake_server import FakeServer, Reply, completion, error

from frankenbot.errors import ConfigError
from frankenbot.planner.vlm_client import VlmClient, VlmConfig, VlmError, VlmMode

MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
GRAMMAR = 'start: "x"\n'


@pytest.fixture
def server():
    s = FakeServer().start()
    yield s
    s.close()


def _client(server: FakeServer, **kw) -> VlmClient:
    cfg = VlmConfig(model="test-model", api_key="sk-test", base_url=server.url,
                    retry_backoff=0.0, **kw)
    return VlmClient(cfg, grammar=kw.pop("grammar", GRAMMAR), guided_grammar=GRAMMAR)


def test_text_mode_returns_content_and_usage(server):
    server.add(completion("hello program", prompt_tokens=123, completion_tokens=45))
    with _client(server, mode="text") as client:
        reply = client.complete(MESSAGES)
    assert reply.text == "hello program"
    assert (reply.tokens_in, reply.tokens_out, reply.transport_retries) == (123, 45, 0)
    assert reply.mode == "text"
    body = server.requests[0]
    assert body["model"] == "test-model" and body["messages"] == MESSAGES
    assert "tools" not in body and "guided_grammar" not in body
    assert server.headers[0]["authorization"] == "Bearer sk-test"


def test_grammar_mode_sends_custom_tool_with_lark_grammar_and_reads_tool_input(server):
    server.add(completion(tool_input="the program", tool_name="frankenbot_program"))
    with _client(server, mode="grammar") as client:
        reply = client.complete(MESSAGES)
    assert reply.text == "the program"
    body = server.requests[0]
    tool = body["tools"][0]
    assert tool["type"] == "custom"
    assert tool["custom"]["name"] == "frankenbot_program"
    assert tool["custom"]["format"] == {"type": "grammar",
                                        "grammar": {"syntax": "lark", "definition": GRAMMAR}}
    assert body["tool_choice"] == {"type": "custom", "custom": {"name": "frankenbot_program"}}


def test_guided_mode_sends_vllm_structured_outputs(server):
    server.add(completion("p"))
    with _client(server, mode="guided") as client:
        client.complete(MESSAGES)
    assert server.requests[0]["structured_outputs"] == {"grammar": GRAMMAR}
    assert "guided_grammar" not in server.requests[0]  # removed in vLLM 0.12


def test_auto_mode_is_guided_for_local_servers_and_grammar_for_openai(server):
    assert VlmConfig(base_url=server.url).auto_mode() == VlmMode.GUIDED
    assert VlmConfig(base_url="https://api.openai.com/v1").auto_mode() == VlmMode.GRAMMAR


def test_auto_mode_falls_back_to_text_when_the_server_rejects_constraints(server):
    server.add(error(400, "unknown field structured_outputs"), completion("p1"),
               completion("p2"))
    with _client(server, mode="auto") as client:
        first = client.complete(MESSAGES)
        second = client.complete(MESSAGES)
        assert client.mode_fallbacks == 1
    assert first.text == "p1" and first.mode == "text" and second.mode == "text"
    assert "structured_outputs" in server.requests[0]  # the probe found vLLM
    assert "structured_outputs" not in server.requests[1]
    assert "structured_outputs" not in server.requests[2]


def test_explicit_grammar_mode_rejected_is_a_clear_error(server):
    server.add(error(400, "tools not supported"))
    with _client(server, mode="grammar") as client, pytest.raises(VlmError, match="400"):
        client.complete(MESSAGES)
    assert len(server.requests) == 1


def test_http_500_is_retried_and_counted_as_transport_retry(server):
    server.add(error(500), error(503), completion("ok"))
    with _client(server, mode="text", transport_retries=2) as client:
        reply = client.complete(MESSAGES)
    assert reply.text == "ok" and reply.transport_retries == 2
    assert len(server.requests) == 3


def test_http_500_beyond_the_retry_budget_fails_cleanly(server):
    server.add(error(500), error(500), error(500))
    with _client(server, mode="text", transport_retries=1) as client:
        with pytest.raises(VlmError, match="after 2 attempts.*500"):
            client.complete(MESSAGES)
    assert len(server.requests) == 2


def test_timeout_is_retried(server):
    server.add(Reply(200, completion("late").body, delay=1.5), completion("fast"))
    with _client(server, mode="text", timeout=0.5, transport_retries=1) as client:
        reply = client.complete(MESSAGES)
    assert reply.text == "fast" and reply.transport_retries == 1


def test_timeouts_exhausting_retries_raise_with_reason(server):
    server.add(Reply(200, completion("late").body, delay=1.5))
    with _client(server, mode="text", timeout=0.4, transport_retries=0) as client:
        with pytest.raises(VlmError, match="timed out"):
            client.complete(MESSAGES)


@pytest.mark.parametrize("body", [
    "this is not json", "[1, 2]", '{"choices": []}', '{"choices": [{"index": 0}]}',
    '{"id": "x"}',
])
def test_malformed_bodies_are_retried_then_fail_cleanly(server, body):
    server.add(Reply(200, body), Reply(200, body))
    with _client(server, mode="text", transport_retries=1) as client:
        with pytest.raises(VlmError, match="malformed"):
            client.complete(MESSAGES)
    assert len(server.requests) == 2


def test_malformed_body_then_good_body_recovers(server):
    server.add(Reply(200, "{not json"), completion("good"))
    with _client(server, mode="text", transport_retries=1) as client:
        reply = client.complete(MESSAGES)
    assert reply.text == "good" and reply.transport_retries == 1


def test_missing_usage_counts_zero_tokens(server):
    server.add(Reply(200, '{"choices": [{"index": 0, "message": {"role": "assistant", '
                          '"content": "x"}, "finish_reason": "stop"}]}'))
    with _client(server, mode="text") as client:
        reply = client.complete(MESSAGES)
    assert (reply.text, reply.tokens_in, reply.tokens_out) == ("x", 0, 0)


def test_authentication_error_is_not_retried(server):
    server.add(error(401, "bad key"), completion("never"))
    with _client(server, mode="text", transport_retries=3) as client:
        with pytest.raises(VlmError, match="api key"):
            client.complete(MESSAGES)
    assert len(server.requests) == 1


def test_no_endpoint_configured_is_a_config_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    cfg = VlmConfig()
    assert not cfg.is_configured()
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        VlmClient(cfg)


def test_environment_supplies_key_and_base_url(monkeypatch, server):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    server.add(completion("from env"))
    with VlmClient(VlmConfig(mode="text", retry_backoff=0.0)) as client:
        assert client.complete(MESSAGES).text == "from env"
    assert server.headers[0]["authorization"] == "Bearer sk-env"


@pytest.mark.parametrize("kw, match", [
    ({"mode": "magic"}, "mode"), ({"timeout": 0}, "timeout=0"),
    ({"transport_retries": -1}, "retries"), ({"model": ""}, "model"),
])
def test_bad_config_values_are_rejected(kw, match):
    with pytest.raises(ConfigError, match=match):
        VlmConfig(**kw)


def test_optional_sampling_settings_are_sent_only_when_set(server):
    server.add(completion("a"), completion("b"))
    with _client(server, mode="text") as client:
        client.complete(MESSAGES)
    with _client(server, mode="text", temperature=0.0, reasoning_effort="low") as client:
        client.complete(MESSAGES)
    assert "temperature" not in server.requests[0]
    assert "reasoning_effort" not in server.requests[0]
    assert server.requests[1]["temperature"] == 0.0
    assert server.requests[1]["reasoning_effort"] == "low"
