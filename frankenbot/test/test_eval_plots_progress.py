"""Benchmark plots (from suite JSON) and progress that degrades to plain lines off a terminal."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from frankenbot.errors import FrankenbotError
from frankenbot.eval.plots import class_groups, plot_suite, rates_with_intervals
from frankenbot.eval.progress import Progress
from frankenbot.eval.tables import EpisodeOutcome, write_results


def _outcomes() -> list[EpisodeOutcome]:
    out = []
    for seed in range(4):
        out.append(EpisodeOutcome("put_in_bowl", seed, "put it", seed != 3, True, 0, 8.0 + seed,
                                  anomalies=1 if seed < 2 else 0, tiers=(1,) if seed < 2 else (),
                                  anomaly_classes=("predictable",) if seed < 2 else (),
                                  latencies=(0.006 + seed * 0.001,) if seed < 2 else ()))
        out.append(EpisodeOutcome("stack", seed, "stack it", True, True, 0, 12.0))
    return out


def test_groups_and_intervals():
    episodes = [json.loads(json.dumps(o.__dict__)) for o in _outcomes()]
    groups = class_groups(episodes)
    assert groups == {"predictable": [True, True], "none": [True, True, True, True, False, True]}
    (name, k, n, rate, low, high), = rates_with_intervals({"x": [True, True, False]})
    assert (name, k, n) == ("x", 2, 3) and rate == pytest.approx(2 / 3)
    assert 0.0 < low < rate < high < 1.0
    injected = [{"success": True, "injected": "drop_in_transport", "anomaly_classes": []}]
    assert class_groups(injected) == {"injected predictable": [True]}


def test_suite_plots_are_written_next_to_the_json(tmp_path):
    from PIL import Image

    json_path, _ = write_results(tmp_path, "suite-offline", _outcomes(), {"title": "T"})
    plots = plot_suite(json_path)
    assert [p.name for p in plots] == ["suite-offline-success.png",
                                       "suite-offline-anomaly-classes.png",
                                       "suite-offline-latency.png"]
    for p in plots:
        img = np.asarray(Image.open(p).convert("L"))
        assert img.shape[0] > 300 and (img < 128).mean() > 0.005  # something was drawn
    with pytest.raises(FrankenbotError, match="no episodes"):
        (tmp_path / "empty.json").write_text(json.dumps({"episodes": []}))
        plot_suite(tmp_path / "empty.json")


def test_progress_off_a_terminal_prints_plain_lines():
    stream = io.StringIO()
    with Progress(3, "suite", stream=stream) as p:
        p.step("a ok")
        p.write("  ok   a")
        p.step("b ok")
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("suite: 1/3 (33%), ") and lines[0].endswith("left - a ok")
    assert lines[1] == "  ok   a" and lines[2].startswith("suite: 2/3 (67%)")
    assert "\r" not in stream.getvalue()
    logged: list[str] = []
    Progress(1, "perception eval", log=logged.append, stream=stream).step()
    assert logged and logged[0].startswith("perception eval: 1/1 (100%)")


def test_progress_on_a_terminal_draws_a_bar():
    stream = io.StringIO()
    with Progress(4, "suite", stream=stream, bar=True) as p:
        p.step("x")
        p.write("line")
    text = stream.getvalue()
    assert "\r" in text and "1/4" in text and "line" in text


def test_anomaly_benchmark_tier1_plot(tmp_path):
    from frankenbot.eval.plots import plots_for

    tier1 = {"scene": "perceived", "realtime_factor": 1.0,
             "per_kind": {"drop_in_transport": {"runs": 3, "task_success": 3},
                          "nudge_before_grasp": {"runs": 3, "task_success": 2},
                          "never_ran": {"runs": 0, "task_success": 0}},
             "onset_to_detection_ms": {"median": 40.0, "n": 3, "samples": [30.0, 40.0, 60.0]},
             "detect_to_command_ms": {"median": 6.0, "n": 3, "samples": [5.0, 6.0, 9.0]},
             "onset_to_first_motion_ms": {"median": 0.0, "n": 0, "samples": []}}
    path = tmp_path / "bench-anomaly.json"
    path.write_text(json.dumps({"meta": {}, "results": {"tier1": tier1}}))
    (plot,) = plots_for(path)
    assert plot.name == "bench-anomaly-tier1.png" and plot.stat().st_size > 10000
    other = tmp_path / "bench-program.json"
    other.write_text(json.dumps({"meta": {}, "results": {"parse_ms": 1.0}}))
    assert plots_for(other) == []
