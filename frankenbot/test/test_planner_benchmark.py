"""The benchmark's VLM arm counts what the endpoint did (scripted local HTTP server)."""

from __future__ import annotations

import pytest
from planner_fake_server import FakeServer, completion

from frankenbot.eval.planner_bench import run_benchmark
from frankenbot.eval.taskset import sim_cases
from frankenbot.planner.offline import plan_offline


@pytest.fixture
def server():
    s = FakeServer().start()
    yield s
    s.close()


def test_vlm_arm_reports_first_call_validity_repairs_and_tokens(server, monkeypatch, capsys):
    cases = sim_cases(seeds_per_template=1)[:6]  # the quick benchmark's VLM cases
    bad = 'task "x" { main { fly(obj=red_block) } }'
    server.add(completion(bad, prompt_tokens=1000, completion_tokens=10))
    for case in cases:
        server.add(completion(plan_offline(case.instruction, case.scene), prompt_tokens=1000,
                              completion_tokens=100))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    report = run_benchmark(quick=True)
    vlm = report["vlm"]
    assert vlm["tasks"] == 6 and vlm["valid"] == 6
    assert vlm["first_call_valid_rate"] == pytest.approx(5 / 6)
    assert vlm["calls_per_task"] == pytest.approx(7 / 6) and vlm["repairs"] == 1
    assert vlm["tokens_in_per_task"] == pytest.approx(7000 / 6)
    assert vlm["tokens_out_per_task"] == pytest.approx(610 / 6)
    assert len(server.requests) == 7
    assert "first-call valid 83.3%" in capsys.readouterr().out
