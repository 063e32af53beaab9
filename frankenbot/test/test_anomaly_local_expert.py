"""The local expert with a tiny config-built Gemma 3: loading, KV-reuse scoring, confidence."""

from __future__ import annotations

import math
import time

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from frankenbot.anomaly.candidates import Call, Situation, generate_candidates  # noqa: E402
from frankenbot.anomaly.local_expert import (  # noqa: E402
    ExpertNotReady,
    LocalExpert,
    build_prompt,
    softmax,
)
from frankenbot.anomaly.tiny_model import build_tiny_loader  # noqa: E402
from frankenbot.common import AnomalyClass, AnomalyKind  # noqa: E402

SIT = Situation(AnomalyKind.TARGET_OCCUPIED, AnomalyClass.SEMI_PREDICTABLE,
                "green block sits on blue block", "stack the red block on the blue block",
                Call("place_on", {"obj": "red_block", "target": "blue_block"}), "main/1",
                ("start",), "red_block", ("red_block", "blue_block", "green_block"),
                ("blue_block", "green_block"))


@pytest.fixture(scope="module")
def expert() -> LocalExpert:
    e = LocalExpert(build_tiny_loader(), torch_threads=1)
    e.start()
    assert e.wait_ready(60), e.error
    return e


def test_prompt_uses_gemma_turns_and_lists_options_only_on_request():
    cands = generate_candidates(SIT)
    p = build_prompt(SIT, cands)
    assert p.startswith("<start_of_turn>user\n")
    assert p.endswith("<start_of_turn>model\nBest repair:")
    assert "putting the red block on the blue block" in p and "green block sits" in p
    assert "Options:" not in p
    listed = build_prompt(SIT, cands, list_options=True)
    for c in cands:
        assert c.description in listed


def test_rank_matches_a_full_forward_pass_without_cache(expert):
    cands = generate_candidates(SIT)
    r = expert.rank(SIT, cands)
    tok, model = expert._tok, expert._model
    prefix = tok(build_prompt(SIT, cands)).input_ids
    for i in (0, len(cands) - 1):
        cont = tok(" " + cands[i].description, add_special_tokens=False).input_ids
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([prefix + cont])).logits[0].float()
        logp = torch.log_softmax(logits, -1)
        ref = sum(float(logp[len(prefix) - 1 + j, cont[j]]) for j in range(len(cont))) / len(cont)
        assert r.scores[i] == pytest.approx(ref, abs=1e-4)


def test_probabilities_are_a_softmax_and_best_is_the_argmax(expert):
    cands = generate_candidates(SIT)
    r = expert.rank(SIT, cands)
    assert math.isclose(sum(r.probs), 1.0, rel_tol=1e-9)
    assert r.scores[r.best] == max(r.scores)
    assert r.confidence == max(r.probs)
    assert expert.rank(SIT, cands).scores == r.scores  # frozen model: deterministic


def test_prior_from_experience_can_change_the_choice(expert):
    cands = generate_candidates(SIT)
    r0 = expert.rank(SIT, cands)
    target = next(c for c in cands if c is not r0.choice)
    r1 = expert.rank(SIT, cands, prior={target.key: 10.0})
    assert r1.choice.key == target.key and r1.confidence > 0.9


def test_not_ready_until_loaded_and_load_errors_are_kept():
    def slow():
        time.sleep(0.3)
        return build_tiny_loader()()

    e = LocalExpert(slow)
    with pytest.raises(ExpertNotReady):
        e.rank(SIT, generate_candidates(SIT))
    e.start()
    assert e.wait_ready(30)

    def broken():
        raise OSError("weights missing")

    bad = LocalExpert(broken)
    bad.start()
    assert not bad.wait_ready(5)
    assert isinstance(bad.error, OSError)
    with pytest.raises(ExpertNotReady, match="weights missing"):
        bad.rank(SIT, generate_candidates(SIT))


def test_softmax_is_stable_and_temperature_sharpens():
    p = softmax([1000.0, 999.0])
    assert p[0] > p[1] and math.isclose(sum(p), 1.0)
    assert softmax([1.0, 0.0], 0.1)[0] > softmax([1.0, 0.0], 1.0)[0]


def _fake_completions_server(score_route: bool):
    """An HTTP server with /v1/models and either /frankenbot/score or only echo+logprobs
    completions (each token one character; log-probability -1 for 'a', -3 otherwise)."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_a):
            pass

        def _send(self, code: int, obj: object) -> None:
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self._send(200, {"data": [{"id": "m"}]})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(self.path)
            if self.path == "/frankenbot/score" and score_route:
                return self._send(200, {"scores": [-len(c) / 10 for c in body["continuations"]]})
            if self.path == "/v1/completions":
                text = body["prompt"] + "x"  # echo, plus the sampled token
                return self._send(200, {"choices": [{"logprobs": {
                    "text_offset": list(range(len(text))),
                    "token_logprobs": [-1.0 if ch == "a" else -3.0 for ch in text]}}]})
            return self._send(404, {"detail": "Not Found"})

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, seen


@pytest.mark.parametrize("score_route", [True, False])
def test_server_expert_uses_the_scoring_route_or_falls_back_to_echo(score_route):
    from frankenbot.anomaly.local_expert import ServerExpert

    httpd, seen = _fake_completions_server(score_route)
    try:
        e = ServerExpert(f"http://127.0.0.1:{httpd.server_port}/v1", timeout=10)
        assert e.wait_ready(10), e.error
        assert e.scoring_endpoint is score_route
        cands = generate_candidates(SIT)
        seen.clear()
        r = e.rank(SIT, cands)
        if score_route:  # one request for every candidate; the shortest description wins
            assert seen == ["/frankenbot/score"]
            assert len(r.choice.description) == min(len(c.description) for c in cands)
        else:  # one request per candidate; the share of 'a' characters decides
            assert seen == ["/v1/completions"] * len(cands)
            share = [(" " + c.description).count("a") / (len(c.description) + 1) for c in cands]
            assert r.choice == cands[max(range(len(cands)), key=share.__getitem__)]
    finally:
        httpd.shutdown()
        httpd.server_close()
    with pytest.raises(ExpertNotReady):  # the server is gone: tier 2 escalates
        e.rank(SIT, cands)
