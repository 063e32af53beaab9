"""Each server family gets its own constraint field with the grammar in its dialect, and only
that field; ``auto`` probes the endpoint once; a 400/422 for the field drops to text without a
planning call. A recording HTTP server stands in for each server, driven by the real ``openai``
client through the real planner."""

from __future__ import annotations

import pytest
from planner_fake_server import FakeServer, completion, error

from frankenbot.eval.taskset import standard_scene
from frankenbot.planner.planner import Planner, PlannerConfig, make_client
from frankenbot.planner.request import PlanImage, PlanRequest
from frankenbot.planner.vlm_client import (
    IMAGE_NOTE,
    ServerFamily,
    VlmConfig,
    flatten_for_text_model,
    identify_server,
)
from frankenbot.program import parse_program

PROGRAM = """task "put the red block in the green bowl" {
  main {
    pick(obj=red_block)
    place_in(obj=red_block, container=green_bowl)
  }
}"""
FIELDS = ("tools", "structured_outputs", "ebnf", "grammar", "guided_grammar", "format",
          "response_format")
EXPECTED_FIELD = {"openai": "tools", "vllm": "structured_outputs", "sglang": "ebnf",
                  "llamacpp": "grammar", "ollama": None}


@pytest.fixture
def server():
    s = FakeServer().start()
    yield s
    s.close()


def _planner(fake: FakeServer, **kw) -> Planner:
    cfg = PlannerConfig(planner_mode="vlm", vlm=VlmConfig(
        model="m", base_url=fake.url, retry_backoff=0.0, **kw))
    return Planner(cfg, make_client(cfg))


def _request(image: bool = False) -> PlanRequest:
    img = PlanImage(b"\x89PNG fake", "image/png") if image else None
    return PlanRequest("put the red block in the green bowl", standard_scene(), img)


def _answer(family: str):
    if family == "openai":
        return completion(tool_input=PROGRAM, tool_name="frankenbot_program")
    if family == "ollama":  # chat prose around a fenced program: extraction's job
        return completion(f"Sure! Here is the program:\n```\n{PROGRAM}\n```\nGood luck.")
    return completion(PROGRAM)


@pytest.mark.parametrize("family", ["openai", "vllm", "sglang", "llamacpp", "ollama"])
def test_each_family_sends_its_field_only_and_the_answer_plans(server, family):
    server.add(_answer(family))
    out = _planner(server, server=family).plan(_request())
    assert out.ok, out.message
    assert out.vlm_calls == 1 and out.first_call_valid
    body = server.requests[0]
    want = EXPECTED_FIELD[family]
    assert [f for f in FIELDS if f in body] == ([want] if want else [])
    assert server.gets == []  # a declared family is never probed
    if family == "openai":
        fmt = body["tools"][0]["custom"]["format"]
        assert fmt["grammar"]["syntax"] == "lark" and "task:" in fmt["grammar"]["definition"]
    elif family == "vllm":
        assert "task:" in body["structured_outputs"]["grammar"]  # Lark
    elif family == "sglang":
        assert body["ebnf"].startswith("root ::=") and "_" in body["ebnf"]  # xgrammar names
    elif family == "llamacpp":
        assert body["grammar"].startswith("root ::=")  # GBNF: dashes only in names
        assert "_" not in body["grammar"].split("\n")[1].split("::=")[0]


def test_llamacpp_requests_fold_the_system_prompt_and_drop_the_image(server):
    server.add(_answer("llamacpp"))
    out = _planner(server, server="llamacpp").plan(_request(image=True))
    assert out.ok, out.message
    messages = server.requests[0]["messages"]
    assert [m["role"] for m in messages] == ["user"]
    assert messages[0]["content"].startswith("You plan tasks for a UR5e")
    assert IMAGE_NOTE in messages[0]["content"] and "data:image" not in messages[0]["content"]


def test_other_families_keep_the_system_message_and_the_image(server):
    server.add(_answer("vllm"))
    _planner(server, server="vllm").plan(_request(image=True))
    messages = server.requests[0]["messages"]
    assert messages[0]["role"] == "system"
    assert messages[1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


@pytest.mark.parametrize("owner, header, family", [
    ("vllm", "", "vllm"), ("sglang", "", "sglang"), ("llamacpp", "", "llamacpp"),
    ("me", "", "llamacpp"), ("library", "", "ollama"), ("x", "llama.cpp", "llamacpp"),
    ("organization_owner", "", "ollama"),  # not identified (LM Studio): plain text
])
def test_auto_probes_once_and_keeps_the_family(server, owner, header, family):
    server.models_owner, server.server_header = owner, header
    server.add(_answer(family), _answer(family))
    planner = _planner(server)
    assert planner.plan(_request()).ok and planner.plan(_request()).ok
    assert server.gets == ["/v1/models"]
    want = EXPECTED_FIELD[family]
    for body in server.requests:
        assert [f for f in FIELDS if f in body] == ([want] if want else [])


def test_a_probe_that_gets_no_answer_is_tried_again_next_call(server):
    server.models_status = 503
    server.add(_answer("ollama"), _answer("vllm"))
    planner = _planner(server)
    assert planner.plan(_request()).ok  # plain text meanwhile
    assert not any(f in server.requests[0] for f in FIELDS)
    server.models_status = 200
    assert planner.plan(_request()).ok
    assert "structured_outputs" in server.requests[1]
    assert server.gets == ["/v1/models", "/v1/models"]


@pytest.mark.parametrize("family", ["openai", "vllm", "sglang", "llamacpp"])
@pytest.mark.parametrize("status", [400, 422])
def test_a_rejected_constraint_drops_to_text_without_a_planning_call(server, family, status):
    server.add(error(status, "unsupported field"), _answer("vllm"), _answer("vllm"))
    planner = _planner(server, server=family)
    first = planner.plan(_request())
    assert first.ok and first.vlm_calls == 1, first.message
    assert EXPECTED_FIELD[family] in server.requests[0]
    assert not any(f in server.requests[1] for f in FIELDS)
    assert planner.plan(_request()).ok  # the endpoint stays in text mode
    assert not any(f in server.requests[2] for f in FIELDS)
    assert planner.client.mode_fallbacks == 1


def test_identify_server_reads_owned_by_and_server_header():
    assert identify_server('{"data": [{"owned_by": "vllm"}]}', {}) == ServerFamily.VLLM
    assert identify_server("not json", {"server": "llama.cpp"}) == ServerFamily.LLAMACPP
    assert identify_server('{"data": []}', {"server": "uvicorn"}) is None


def test_bad_server_name_is_a_config_error():
    from frankenbot.errors import ConfigError

    with pytest.raises(ConfigError, match="vlm server='tgi': expected one of"):
        VlmConfig(server="tgi")


def test_flatten_keeps_turn_order_and_repair_messages():
    msgs = [{"role": "system", "content": "S"},
            {"role": "user", "content": [{"type": "text", "text": "U"}]},
            {"role": "assistant", "content": "A"}, {"role": "user", "content": "R"}]
    flat = flatten_for_text_model(msgs)
    assert flat == [{"role": "user", "content": "S\n\nU"}, {"role": "assistant", "content": "A"},
                    {"role": "user", "content": "R"}]


def test_the_program_in_the_answer_is_what_the_planner_returns(server):
    server.add(_answer("llamacpp"))
    out = _planner(server, server="llamacpp").plan(_request())
    assert parse_program(out.program_text).program == parse_program(PROGRAM).program


def _sent_grammar(family: str, body: dict) -> str:
    if family == "openai":
        return body["tools"][0]["custom"]["format"]["grammar"]["definition"]
    if family == "vllm":
        return body["structured_outputs"]["grammar"]
    return body["ebnf" if family == "sglang" else "grammar"]


@pytest.mark.parametrize("family", ["openai", "vllm", "sglang", "llamacpp"])
def test_the_request_carries_the_grammar_specialised_to_the_scene(server, family):
    """The constraint sent is the program grammar narrowed to this request: the scene's ids in
    object positions, the catalog's primitives and predicates; not the generic grammar."""
    from lark import Lark
    from lark.exceptions import UnexpectedInput

    from frankenbot.planner import language
    from frankenbot.program import default_catalog

    server.add(_answer(family))
    out = _planner(server, server=family).plan(_request())
    assert out.ok, out.message
    sent = _sent_grammar(family, server.requests[0])
    scene = standard_scene()
    dialect = {"openai": "llguidance", "vllm": "lark", "sglang": "ebnf", "llamacpp": "gbnf"}
    shapes = {o.object_id: o.shape for o in scene.objects}
    assert sent == language.RequestGrammars(default_catalog(), scene.ids(),
                                            shapes).get(dialect[family])
    assert sent != language.program_grammar(dialect[family])
    for obj in scene.ids():
        assert f'"{obj}"' in sent
    assert '"purple_bowl"' not in sent
    if family in ("openai", "vllm"):  # Lark text: parse with it
        parser = Lark(sent, parser="lalr", start="start")
        parser.parse(PROGRAM)
        with pytest.raises(UnexpectedInput):
            parser.parse(PROGRAM.replace("green_bowl", "purple_bowl"))


def test_a_scene_the_grammar_cannot_take_falls_back_to_the_generic_grammar(server):
    """Ids that are no plain names (the validator refuses them anyway) are left out; a request
    whose grammar cannot be specialised sends the generic one rather than none."""
    from frankenbot.planner import language
    from frankenbot.program import default_catalog

    grammars = language.RequestGrammars(default_catalog(), ["red block", "if"])
    assert '"red block"' not in grammars.get("lark") and grammars.problem == ""
    broken = language.RequestGrammars(default_catalog(), ["red_block"])
    broken._callees = ()  # nothing callable: cannot be specialised
    assert broken.get("gbnf") == "" and "no callee" in broken.problem
    server.add(completion(PROGRAM))
    planner = _planner(server, server="llamacpp")
    reply = planner.client.complete([{"role": "user", "content": "x"}], broken)
    assert reply.constrained
    assert server.requests[0]["grammar"] == language.program_grammar("gbnf")
