"""One demo episode as a self-contained HTML page (``frankenbot report EPISODE_DIR``).

The page holds the instruction, the oracle's verdict, the program with the lines that ran marked
(by how they ended), a timeline of tree nodes with the anomalies on it and their tier and
latency, the first and last camera frames, the latest set-of-mark image, the episode GIF and
what the MCAP recording holds. Images are embedded (data URIs), so the one file can be mailed or
attached to an issue.

It reads only what ``frankenbot demo`` writes (summary.json, program.fb, trace.json, images,
episode.mcap) and needs no ROS; it lives in ``eval/`` beside the recordings' reader, below the
bring-up layer whose demo writes it at the end of every run, and ``frankenbot report
EPISODE_DIR`` (``eval/readme_report.py``) calls it.
"""

from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frankenbot.errors import FrankenbotError

REPORT_NAME = "report.html"
STATUS_CLASSES = {"success": "ok", "failure": "bad", "running": "run", "preempted": "warn",
                  "skipped": "skip", "idle": "skip"}
TIER_NAMES = {0: "not handled", 1: "tier 1 (coded handler)", 2: "tier 2 (local expert)",
              3: "tier 3 (VLM replan)"}


@dataclass(frozen=True)
class Span:
    """One run of one tree node: from its ``enter`` to the trace event that ended it."""

    path: str
    node: str
    line: int
    start: float
    end: float
    status: str


@dataclass(frozen=True)
class Mark:
    """A handler or escalation in the trace: where an anomaly met the tree."""

    t: float
    path: str
    event: str
    detail: str
    status: str = ""


def _read_json(path: Path, default: Any) -> Any:
    if not path.is_file():
        return default
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise FrankenbotError(f"{path} is not valid JSON: {e}") from e


def spans_of(trace: list[dict[str, Any]]) -> tuple[list[Span], list[Mark]]:
    """Pair each node's ``enter`` with its ``leave``/``preempt``; open spans end at the last
    event. Handler and escalation entries become marks."""
    spans: list[Span] = []
    marks: list[Mark] = []
    open_: dict[str, dict[str, Any]] = {}
    t_end = max((float(e.get("t", 0.0)) for e in trace), default=0.0)
    for e in trace:
        event, path = str(e.get("event", "")), str(e.get("path", ""))
        if event == "enter":
            previous = open_.pop(path, None)
            if previous is not None:  # entered again (a label passed twice, a jump back)
                spans.append(_unclosed(previous, float(e["t"])))
            open_[path] = e
        elif event in ("leave", "preempt") and path in open_:
            s = open_.pop(path)
            spans.append(Span(path, str(s.get("node", "")), int(s.get("line", 0)),
                              float(s["t"]), float(e["t"]), str(e.get("status", ""))))
        elif event in ("handler", "escalate"):
            marks.append(Mark(float(e.get("t", 0.0)), path, event, str(e.get("detail", "")),
                              str(e.get("status", ""))))
    for s in open_.values():  # labels, exits, the node running when the task ended
        spans.append(_unclosed(s, t_end))
    spans.sort(key=lambda s: (s.start, s.path))
    return spans, marks


def _unclosed(enter: dict[str, Any], until: float) -> Span:
    """A node entered with no leave: done on entry (a label) is an instant, one still running
    lasts ``until`` (the next entry of the node, or the end of the trace)."""
    status = str(enter.get("status", ""))
    running = status in ("", "idle", "running")
    t = float(enter["t"])
    return Span(str(enter.get("path", "")), str(enter.get("node", "")), int(enter.get("line", 0)),
                t, until if running else t, "running" if running else status)


def line_statuses(spans: list[Span]) -> dict[int, str]:
    """Source line -> how the last run of a node on it ended."""
    out: dict[int, str] = {}
    for s in sorted(spans, key=lambda s: s.end):
        if s.line > 0:
            out[s.line] = s.status
    return out


def _data_uri(path: Path, mime: str) -> str | None:
    if not path.is_file():
        return None
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode()}"


def _program_html(program: str, statuses: dict[int, str]) -> str:
    rows = []
    for i, text in enumerate(program.rstrip("\n").splitlines(), start=1):
        status = statuses.get(i)
        cls = f' class="ran {STATUS_CLASSES.get(status, "run")}"' if status else ""
        mark = html.escape(status) if status else ""
        rows.append(f"<tr{cls}><td class=ln>{i}</td><td class=st>{mark}</td>"
                    f"<td><code>{html.escape(text) or '&nbsp;'}</code></td></tr>")
    return "<table class=program>" + "".join(rows) + "</table>"


def _timeline_svg(spans: list[Span], marks: list[Mark], labels: dict[int, str]) -> str:
    if not spans:
        return "<p>No tree node ran (the trace is empty).</p>"
    t0 = min(s.start for s in spans)
    t1 = max([s.end for s in spans] + [m.t for m in marks])
    total = max(t1 - t0, 1e-3)
    rows: list[str] = []
    for s in spans:
        if s.path not in rows:
            rows.append(s.path)
    label_w, width, row_h = 330, 1000, 22
    plot_w = width - label_w - 40
    height = row_h * len(rows) + 40

    def x(t: float) -> float:
        return label_w + (t - t0) / total * plot_w

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class=timeline width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}">']
    for i, path in enumerate(rows):
        y = 10 + i * row_h
        node = next(s.node for s in spans if s.path == path)
        label = f"{path}  {node}"
        parts.append(f'<text x="4" y="{y + 15}" class=lbl>{html.escape(label[:48])}</text>')
    for s in spans:
        y = 10 + rows.index(s.path) * row_h
        w = max(x(s.end) - x(s.start), 2.0)
        parts.append(f'<rect x="{x(s.start):.1f}" y="{y + 3}" width="{w:.1f}" height="16" '
                     f'class="bar {STATUS_CLASSES.get(s.status, "run")}"><title>'
                     f'{html.escape(s.node)} (line {s.line}): {html.escape(s.status)}, '
                     f'{s.end - s.start:.2f} s</title></rect>')
    for k, m in enumerate(marks):
        y = 10 + (rows.index(m.path) if m.path in rows else 0) * row_h
        cx = x(m.t)
        label = labels.get(k, "")
        parts.append(f'<path d="M{cx:.1f},{y + 1} l6,10 l-6,10 l-6,-10 z" class="mark {m.event}">'
                     f'<title>{html.escape(m.event)} at {html.escape(m.path)}: '
                     f'{html.escape(m.detail[:200])}{" (" + label + ")" if label else ""}'
                     f'</title></path>')
        if label:
            parts.append(f'<text x="{cx + 7:.1f}" y="{y + 9}" class=tier>{html.escape(label)}'
                         f'</text>')
    axis_y = 10 + len(rows) * row_h + 14
    for k in range(6):
        t = t0 + total * k / 5
        parts.append(f'<text x="{x(t):.1f}" y="{axis_y}" text-anchor="middle" class=axis>'
                     f'{t - t0:.1f} s</text>')
    parts.append("</svg>")
    return "".join(parts)


def latest_events(anomalies: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Event id -> its latest report (the same event is reported again as it changes), in the
    order the events first appeared."""
    latest: dict[str, dict[str, Any]] = {}
    for a in anomalies:
        latest[str(a.get("event_id", len(latest)))] = a
    return latest


def tier_labels(marks: list[Mark], anomalies: list[dict[str, Any]]) -> dict[int, str]:
    """Mark index -> "T<tier>, <latency>" for the escalations that opened each event.

    The executor logs one ``escalate`` entry (status running) when an anomaly is handed to the
    tiers, in the order the events are created; when the counts agree, the k-th such entry is
    the k-th event. When they do not (an event that never escalated), no label is guessed."""
    opening = [i for i, m in enumerate(marks) if m.event == "escalate" and m.status == "running"]
    events = list(latest_events(anomalies).values())
    if len(opening) != len(events):
        return {}
    out = {}
    for i, e in zip(opening, events, strict=True):
        latency = float(e.get("latency", -1.0))
        out[i] = f"T{int(e.get('tier', 0))}" + (f" {latency * 1000:.0f} ms" if latency >= 0
                                                 else "")
    return out


def _anomalies_html(anomalies: list[dict[str, Any]]) -> str:
    if not anomalies:
        return "<p>No anomaly was detected.</p>"
    latest = latest_events(anomalies)
    rows = ["<tr><th>#</th><th>kind</th><th>detail</th><th>tier</th><th>action</th>"
            "<th>outcome</th><th>latency</th></tr>"]
    for event_id, a in latest.items():
        latency = float(a.get("latency", -1.0))
        rows.append(
            f"<tr><td>{html.escape(event_id)}</td><td>{html.escape(str(a.get('kind', '')))}</td>"
            f"<td>{html.escape(str(a.get('detail', '')))}</td>"
            f"<td>{html.escape(TIER_NAMES.get(int(a.get('tier', 0)), str(a.get('tier'))))}</td>"
            f"<td>{html.escape(str(a.get('action', '')))}</td>"
            f"<td>{html.escape(str(a.get('outcome', '')))}</td>"
            f"<td>{f'{latency * 1000:.1f} ms' if latency >= 0 else '-'}</td></tr>")
    return "<table class=events>" + "".join(rows) + "</table>"


def _recording_html(run_dir: Path) -> str:
    path = run_dir / "episode.mcap"
    if not path.is_file():
        return "<p>No recording (run the demo with --record).</p>"
    from frankenbot.eval.recording import summarise_mcap

    try:
        summary = summarise_mcap(path)
    except Exception as e:  # a broken file is reported, not fatal to the page
        return f"<p>episode.mcap could not be read: {html.escape(str(e))}</p>"
    rows = ["<tr><th>topic</th><th>type</th><th>messages</th></tr>"]
    for topic, (schema, n) in sorted(summary.topics.items()):
        rows.append(f"<tr><td>{html.escape(topic)}</td><td>{html.escape(schema)}</td>"
                    f"<td>{n}</td></tr>")
    return (f"<p><code>episode.mcap</code>: {summary.duration_s:.1f} s; open it in Foxglove or "
            f"with <code>ros2 bag play episode.mcap</code>.</p><table class=events>"
            + "".join(rows) + "</table>")


def _image(run_dir: Path, name: str, caption: str, mime: str = "image/png") -> str:
    uri = _data_uri(run_dir / name, mime)
    if uri is None:
        return f"<figure><figcaption>{html.escape(caption)}: not recorded</figcaption></figure>"
    return (f'<figure><img src="{uri}" alt="{html.escape(caption)}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


_CSS = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}
.verdict{display:inline-block;padding:6px 14px;border-radius:6px;font-weight:bold;color:#fff}
.verdict.ok{background:#2e7d32}.verdict.bad{background:#c62828}
table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;vertical-align:top}
table.events td,table.events th{border:1px solid #ddd}
table.program{font-size:13px;background:#fafafa;border:1px solid #ddd;width:100%}
table.program td.ln{color:#888;text-align:right;width:3em}
table.program td.st{width:6em;font-size:11px;color:#555}
tr.ran.ok{background:#dff0d8}tr.ran.bad{background:#f8d7da}tr.ran.warn{background:#fff3cd}
tr.ran.run{background:#d9edf7}tr.ran.skip{background:#eee}
.bar.ok{fill:#66bb6a}.bar.bad{fill:#ef5350}.bar.warn{fill:#ffca28}.bar.run{fill:#42a5f5}
.bar.skip{fill:#bbb}.mark{fill:#d500f9;stroke:#000;stroke-width:.5}
.lbl{font:12px monospace}.axis{font:11px sans-serif;fill:#555}
.tier{font:bold 10px sans-serif;fill:#6a1b9a}
figure{display:inline-block;margin:0 12px 12px 0}img{max-width:480px;border:1px solid #ccc}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px}dt{font-weight:bold}
"""


def render_report(run_dir: Path) -> str:
    """The HTML page for one demo folder."""
    run_dir = Path(run_dir)
    summary = _read_json(run_dir / "summary.json", None)
    if summary is None:
        raise FrankenbotError(f"{run_dir} has no summary.json: not a folder written by "
                              f"`frankenbot demo`")
    trace = _read_json(run_dir / "trace.json", [])
    if not isinstance(trace, list):
        trace = []
    program_path = run_dir / "program.fb"
    program = program_path.read_text() if program_path.is_file() else ""
    spans, marks = spans_of(trace)
    anomalies = [a for a in summary.get("anomalies", []) if isinstance(a, dict)]
    ok = bool(summary.get("oracle_success"))
    facts = [("instruction", summary.get("instruction", "")),
             ("scene", f"sim task family {summary.get('family', '?')}, seed "
                       f"{summary.get('seed', '?')}"),
             ("planner", summary.get("planner", "")),
             ("program outcome", f"{summary.get('outcome', '')}: {summary.get('summary', '')}"),
             ("VLM calls", f"{summary.get('vlm_calls', 0)} (repairs "
                           f"{summary.get('repair_calls', 0)}, replans "
                           f"{summary.get('replans', 0)})"),
             ("task time", f"{float(summary.get('duration_s', 0.0)):.1f} s"),
             ("tree nodes run", str(len(spans)))]
    facts_html = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(str(v))}</dd>"
                         for k, v in facts)
    details = html.escape(str(summary.get("oracle_details", "")))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>FrankenBot episode: {html.escape(str(summary.get('instruction', '')))}</title>
<style>{_CSS}</style></head><body>
<h1 id="instruction">{html.escape(str(summary.get('instruction', '')))}</h1>
<p><span id="verdict" class="verdict {'ok' if ok else 'bad'}">oracle: {'SUCCESS' if ok else
 'FAILURE'}</span></p>
<pre id="oracle-details">{details}</pre>
<dl>{facts_html}</dl>
<h2>Program</h2>
<p>Lines that ran are coloured by how their node last ended (green success, red failure,
yellow preempted, blue entered with no end recorded: the node that was running when
the task ended).</p>
<div id="program">{_program_html(program, line_statuses(spans))}</div>
<h2>Timeline</h2>
<p>One row per tree node; diamonds mark handlers and escalations (anomalies), labelled with the
tier that handled the anomaly and its latency from detection to recovery command.</p>
<div id="timeline">{_timeline_svg(spans, marks, tier_labels(marks, anomalies))}</div>
<h2>Anomalies</h2>
<div id="anomalies">{_anomalies_html(anomalies)}</div>
<h2>Camera</h2>
<div id="frames">{_image(run_dir, 'first_frame.png', 'first frame')}
{_image(run_dir, 'last_frame.png', 'last frame')}
{_image(run_dir, 'annotated_last.png', 'latest set-of-mark image')}
{_image(run_dir, 'episode.gif', 'the episode', 'image/gif')}</div>
<h2>Recording</h2>
<div id="recording">{_recording_html(run_dir)}</div>
</body></html>
"""


def write_episode_report(run_dir: Path, out: Path | None = None) -> Path:
    """Write ``report.html`` (or ``out``) for a demo folder; returns its path."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FrankenbotError(f"no episode folder {run_dir}")
    path = Path(out) if out is not None else run_dir / REPORT_NAME
    path.write_text(render_report(run_dir))
    return path
