"""The episode report: built from a demo folder, and looked at in a real (headless) browser."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest

from frankenbot.common import NodeStatus
from frankenbot.errors import FrankenbotError
from frankenbot.eval.episode_report import (
    line_statuses,
    render_report,
    spans_of,
    write_episode_report,
)
from frankenbot.program.trace import TraceEntry, trace_to_json

PROGRAM = """task "put the red block in the green bowl" {
  main {
    start:
    pick(obj=red_block)
    place_in(obj=red_block, container=green_bowl)
    if not in(red_block, green_bowl) { goto start max 2 }
    exit success
  }
}
"""
SUCCESS_ROW = (0xDF, 0xF0, 0xD8)  # a program line that ran and succeeded
SUCCESS_BAR = (0x66, 0xBB, 0x6A)  # a timeline bar of a node that succeeded
PREEMPT_BAR = (0xFF, 0xCA, 0x28)


def _trace() -> str:
    S, R, P = NodeStatus.SUCCESS, NodeStatus.RUNNING, NodeStatus.PREEMPTED
    entries = [
        TraceEntry(100.0, "main/0", "start:", 3, "enter", S),
        TraceEntry(100.0, "main/1", "pick(obj=red_block)", 4, "enter", R),
        TraceEntry(102.0, "main/1", "pick(obj=red_block)", 4, "preempt", P,
                   "builtin:grasp_lost: grasp_lost"),
        TraceEntry(102.05, "main/1", "pick(obj=red_block)", 4, "escalate", R,
                   "grasp_lost (builtin:grasp_lost)"),
        TraceEntry(102.1, "main/1", "pick(obj=red_block)", 4, "handler", R, "regrasp"),
        TraceEntry(102.2, "main/1", "pick(obj=red_block)", 4, "enter", R),
        TraceEntry(105.0, "main/1", "pick(obj=red_block)", 4, "leave", S),
        TraceEntry(105.0, "main/2", "place_in(obj=red_block, container=green_bowl)", 5,
                   "enter", R),
        TraceEntry(109.0, "main/2", "place_in(obj=red_block, container=green_bowl)", 5,
                   "leave", S),
        TraceEntry(109.0, "main/3", "if not in(red_block, green_bowl)", 6, "enter", R),
        TraceEntry(109.01, "main/3", "if not in(red_block, green_bowl)", 6, "leave", S),
        TraceEntry(109.01, "main/4", "exit success", 7, "enter", R),
    ]
    # the label is passed again when the program jumps back to it
    entries.insert(6, TraceEntry(104.0, "main/0", "start:", 3, "enter", S))
    return trace_to_json(entries)


@pytest.fixture
def episode(tmp_path):
    from PIL import Image

    d = tmp_path / "20260101-120000"
    d.mkdir()
    (d / "program.fb").write_text(PROGRAM)
    (d / "trace.json").write_text(json.dumps(json.loads(_trace()), indent=2))
    summary = {
        "instruction": "put the red block in the green bowl", "family": "put_in_bowl",
        "seed": 3, "oracle_success": True,
        "oracle_details": "SUCCESS: move the red block to the green bowl",
        "program_success": True, "outcome": "success", "summary": "exit success",
        "vlm_calls": 0, "repair_calls": 0, "replans": 0, "first_call_valid": True,
        "duration_s": 9.0, "planner": "planner: offline",
        "anomalies": [{"event_id": "1", "kind": "grasp_lost", "tier": 1, "action": "regrasp",
                       "outcome": "pending", "latency": 0.0071, "detail": "lost red_block"},
                      {"event_id": "1", "kind": "grasp_lost", "tier": 1, "action": "regrasp",
                       "outcome": "recovered", "latency": 0.0071, "detail": "lost red_block"}],
    }
    (d / "summary.json").write_text(json.dumps(summary))
    frame = np.zeros((120, 160, 3), dtype=np.uint8)
    frame[:, :, 2] = 180
    Image.fromarray(frame).save(d / "first_frame.png")
    Image.fromarray(frame[::-1]).save(d / "last_frame.png")
    frames = [Image.fromarray(np.roll(frame, 10 * i, axis=1)) for i in range(3)]
    frames[0].save(d / "episode.gif", save_all=True, append_images=frames[1:], duration=250)
    return d


def test_spans_pair_enter_with_leave_and_handlers_become_marks():
    spans, marks = spans_of(json.loads(_trace()))
    picks = [s for s in spans if s.path == "main/1"]
    assert [(s.start, s.end, s.status) for s in picks] == [(100.0, 102.0, "preempted"),
                                                            (102.2, 105.0, "success")]
    assert [(m.path, m.event) for m in marks] == [("main/1", "escalate"), ("main/1", "handler")]
    exit_span = next(s for s in spans if s.path == "main/4")
    assert exit_span.status == "running" and exit_span.end == 109.01  # open at the end
    labels = [(s.start, s.end, s.status) for s in spans if s.path == "main/0"]
    assert labels == [(100.0, 100.0, "success"), (104.0, 104.0, "success")]  # instants
    statuses = line_statuses(spans)
    assert statuses[4] == "success" and statuses[5] == "success" and 1 not in statuses


def test_report_is_self_contained_with_program_timeline_and_verdict(episode):
    path = write_episode_report(episode)
    assert path == episode / "report.html"
    page = path.read_text()
    assert "oracle: SUCCESS" in page and "put the red block in the green bowl" in page
    assert '<tr class="ran ok"><td class=ln>4</td>' in page  # pick ran and succeeded last
    assert '<tr><td class=ln>2</td>' in page  # "main {" did not run
    assert page.count('class="bar ') == 7 and page.count('class="mark handler"') == 1
    assert "recovered" in page and "pending" not in page  # the latest report of the event
    assert "7.1 ms" in page and "tier 1 (coded handler)" in page
    assert "class=tier>T1 7 ms</text>" in page  # the anomaly's tier and latency on the timeline
    assert page.count("data:image/png;base64,") == 2 and "data:image/gif;base64," in page
    assert "src=\"http" not in page and "src=\"file" not in page  # nothing to fetch


def test_report_refuses_a_folder_that_is_not_an_episode(tmp_path):
    with pytest.raises(FrankenbotError, match="no summary.json"):
        render_report(tmp_path)
    with pytest.raises(FrankenbotError, match="no episode folder"):
        write_episode_report(tmp_path / "missing")


def test_report_command_writes_the_page(episode, capsys):
    from frankenbot.cli import main

    assert main(["report", str(episode)]) == 0
    assert "report.html" in capsys.readouterr().out
    assert "oracle: SUCCESS" in (episode / "report.html").read_text()
    assert main(["report", str(episode / "nope")]) == 1


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("headless browser test needs Debian's chromium package (make apt installs "
                    "it); not found on PATH")
    return exe


def _browser(args: list[str], tmp_path) -> subprocess.CompletedProcess:
    exe = _chromium()
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", f"--user-data-dir={tmp_path / 'chromium-profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_browser_shows_the_program_and_the_timeline(episode, tmp_path):
    """Open the page in headless Chromium like a person would: the rendered DOM has the program
    and the timeline, and the screenshot shows highlighted lines and timeline bars."""
    from PIL import Image

    url = write_episode_report(episode).as_uri()
    dom = _browser(["--dump-dom", url], tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "place_in(obj=red_block, container=green_bowl)" in dom.stdout
    assert 'id="timeline"' in dom.stdout and "<svg" in dom.stdout
    shot = tmp_path / "report.png"
    run = _browser([f"--screenshot={shot}", "--window-size=1200,1300", url], tmp_path)
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    img = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    assert img.shape[:2] == (1300, 1200)

    def rows_with(colour: tuple[int, int, int]) -> np.ndarray:
        hit = (np.abs(img - np.array(colour)).sum(axis=2) <= 6)
        return np.flatnonzero(hit.sum(axis=1) > 40)  # rows with a band of that colour

    program_rows = rows_with(SUCCESS_ROW)
    bar_rows = rows_with(SUCCESS_BAR)
    assert len(program_rows) >= 30, "no highlighted program lines in the screenshot"
    assert len(bar_rows) >= 10, "no timeline bars in the screenshot"
    assert len(rows_with(PREEMPT_BAR)) >= 5, "the preempted pick is not on the timeline"
    assert program_rows.min() < bar_rows.min()  # the program comes first, then the timeline
    dark_text = (img.sum(axis=2) < 200).sum()
    assert dark_text > 2000  # text was rendered, not a blank page
