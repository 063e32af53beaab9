"""The local OpenAI-compatible server: a tiny random model, grammar-guided through LLGuidance.

A random model writes noise; only the grammar makes its answers valid, which is exactly what
these tests check (through real HTTP and the real openai client).
"""

from __future__ import annotations

import pytest

from frankenbot.planner.vlm_client import VlmClient, VlmConfig

torch = pytest.importorskip("torch")
pytest.importorskip("llguidance")

TINY_GRAMMAR = 'start: "go " NAME "!"\nNAME: /[a-z]{1,6}/\n'
MESSAGES = [{"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "say it"},
                                         {"type": "image_url",
                                          "image_url": {"url": "data:image/png;base64,AA=="}}]}]


@pytest.fixture(scope="module")
def tiny_model():
    from tokenizers import Tokenizer, decoders, models
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from frankenbot.eval.local_llm_server import LocalModel

    alphabet = sorted(ByteLevel.alphabet())
    vocab = {c: i for i, c in enumerate(alphabet)}
    vocab["<eos>"] = len(vocab)
    raw = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    raw.pre_tokenizer = ByteLevel(add_prefix_space=False, use_regex=False)
    raw.decoder = decoders.ByteLevel()
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<eos>")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=4096, eos_token_id=vocab["<eos>"])
    return LocalModel(LlamaForCausalLM(config), tok, chat_format="plain")


@pytest.fixture
def server(tiny_model):
    from frankenbot.eval.local_llm_server import LocalChatServer

    with LocalChatServer(tiny_model) as s:
        yield s


def _client(server, mode: str) -> VlmClient:
    return VlmClient(VlmConfig(model="tiny", base_url=server.url, mode=mode,
                               max_output_tokens=40, retry_backoff=0.0),
                     grammar=TINY_GRAMMAR, guided_grammar=TINY_GRAMMAR)


def test_guided_answers_match_the_grammar(server):
    import re

    with _client(server, "guided") as client:
        reply = client.complete(MESSAGES)
    assert re.fullmatch(r"go [a-z]{1,6}!", reply.text), reply.text
    assert reply.tokens_in > 0 and reply.tokens_out == len(reply.text.encode())


def test_grammar_tool_answers_come_back_as_custom_tool_calls(server):
    import re

    with _client(server, "grammar") as client:
        reply = client.complete(MESSAGES)
    assert re.fullmatch(r"go [a-z]{1,6}!", reply.text), reply.text


def test_unconstrained_random_model_does_not_follow_the_grammar(server):
    import re

    with _client(server, "text") as client:
        reply = client.complete(MESSAGES)
    assert not re.fullmatch(r"go [a-z]{1,6}!", reply.text)
    assert reply.tokens_out == 40  # ran into the token limit


def test_bad_grammar_is_a_400_and_a_clear_client_error(server):
    import json
    import urllib.error
    import urllib.request

    body = json.dumps({"model": "tiny", "messages": MESSAGES,
                       "structured_outputs": {"grammar": "start: nothing_here"}}).encode()
    req = urllib.request.Request(f"{server.url}/chat/completions", body,
                                 {"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=30)
    assert e.value.code == 400 and b"grammar does not compile" in e.value.read()


def test_the_client_never_sends_a_grammar_that_does_not_compile(server):
    client = VlmClient(VlmConfig(model="tiny", base_url=server.url, mode="guided",
                                 max_output_tokens=8, retry_backoff=0.0),
                       guided_grammar="start: nothing_here")
    with client:
        reply = client.complete(MESSAGES)
    assert not reply.constrained and reply.mode == "text"
    assert "vllm" in client.grammar_problems


def test_image_parts_are_replaced_by_a_note(tiny_model):
    text = tiny_model.prompt_text(MESSAGES)
    assert "be brief" in text and "say it" in text and "cannot see it" in text


def test_program_grammar_compiles_for_the_model_tokenizer(tiny_model):
    from frankenbot.program.parser import grammar_text

    gen = tiny_model.generate(MESSAGES, grammar_text("llguidance"), max_new_tokens=30)
    assert gen.text.startswith("task"), gen.text
