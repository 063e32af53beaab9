"""`frankenbot perception ...` commands through the real CLI entry point."""

from __future__ import annotations

import json

import pytest

from frankenbot.cli import main

pytest.importorskip("frankenbot.sim.world")


def test_eval_json_reports_scores_and_passes_on_a_few_scenes(capsys):
    code = main(["perception", "eval", "--scenes", "3", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["frames"] == 3 and report["objects"] > 0
    assert code == (0 if report["passed"] else 1)
    for key in ("recall", "precision", "colour_accuracy", "position_error_median_mm",
                "position_error_p95_mm", "latency_median_ms"):
        assert key in report


def test_eval_rejects_a_bad_scene_count(capsys):
    assert main(["perception", "eval", "--scenes", "0"]) == 1
    assert "--scenes must be >= 1" in capsys.readouterr().err


def test_annotate_writes_the_set_of_mark_image(tmp_path, capsys):
    out = tmp_path / "scene.png"
    assert main(["perception", "annotate", "--task", "put_in_bowl", "--seed", "2",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert out.is_file() and out.stat().st_size > 1000
    assert "x_cm" in text and "bowl" in text
