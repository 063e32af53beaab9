"""The README's LIBERO rows (``frankenbot report``): ours per suite, beside published anchors.

Read from the ``libero-*.json`` result files that ``frankenbot bench --suite libero...`` writes;
the anchors are other systems' published numbers under their own conditions, and the table says
plainly what differs.
"""

from __future__ import annotations

import json
from pathlib import Path

from frankenbot.eval.libero.bench import ANCHORS, suite_cell

DIFFERS = (
    "What differs: LIBERO's tasks (its words, objects, regions and goals, read from its BDDL "
    "files) on our table: our UR5e and gripper, our fixed D435-like camera and our MuJoCo "
    "world, with procedural stand-ins for LIBERO's scanned objects (a can for the alphabet "
    "soup, a box for the cream cheese) named with LIBERO's words, our cabinet, stove and "
    "microwave at fixed slots, and layouts scaled into our arm's reach; no LIBERO asset, "
    "demonstration or trained policy is used. Tasks we cannot represent are not set up (listed "
    "in the result file). The anchors ran in LIBERO's own simulator or on another robot; the "
    "numbers are not paired with ours.")


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("libero*.json") if "planner-probe" not in p.name)


def libero_section(folder: Path) -> str:
    """Markdown: one row per suite of each LIBERO result file, then the anchors."""
    lines = ["### LIBERO's tasks on our table", "",
             "| suite | result | conditions | measured |", "|---|---|---|---|"]
    files = _files(folder)
    for path in files:
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            lines.append(f"| {path.stem} | not readable | | `{path.name}` |")
            continue
        meta, r = data.get("meta", {}), data.get("results", {})
        c = meta.get("conditions", {})
        seeds = c.get("seeds", [])
        cond = (f"{c.get('planner', '?')} planner, {len(seeds)} seed(s) per task from "
                f"{min(seeds) if seeds else '?'}, sensor noise {c.get('sensor_noise', '?')}, "
                f"LIBERO's {c.get('language', '?')} wording, perceived scene, judged by the "
                f"BDDL goal in our sim")
        machine = meta.get("machine", {}) if isinstance(meta.get("machine"), dict) else {}
        when = (f"{meta.get('date', '?')}, {meta.get('commit', '?')}, "
                f"{machine.get('cpus', '?')} CPUs; `{path.name}`")
        for suite, s in r.get("per_suite", {}).items():
            lines.append(f"| {suite} | {suite_cell(s)} | {cond} | {when} |")
        if len(r.get("per_suite", {})) > 1:
            o = r.get("overall", {})
            lines.append(f"| all {r.get('tasks_total', '?')} | "
                         f"{o.get('successes', '?')}/{o.get('episodes', '?')} episodes of "
                         f"{r.get('tasks_set_up', '?')} tasks set up "
                         f"({100 * r.get('success_rate', 0):.1f}%) | {cond} | {when} |")
        mem = r.get("memory")
        if mem:
            m = mem["mean"]
            lines.append(f"| {c.get('suite', '?')}, memory | program lines "
                         f"{m['lines'][0]:.1f} -> {m['lines'][1]:.1f}, tokens "
                         f"{m['tokens'][0]:.1f} -> {m['tokens'][1]:.1f}, planning calls "
                         f"{m['planning_calls'][0]:.2f} -> {m['planning_calls'][1]:.2f} (without "
                         f"-> with a memory grown in the same run) | {cond} | {when} |")
    if not files:
        lines.append("| LIBERO-Spatial, -Object, -Goal, -10, -90 | not measured yet (no "
                     "`libero-*.json`; `frankenbot bench --suite libero --seeds 3 --noise "
                     "realistic --out docs/results`) | | |")
    for who, number, how in ANCHORS:
        lines.append(f"| published: {who} | {number} | {how} | not ours, not rerun here |")
    return "\n".join(lines) + "\n\n" + DIFFERS + "\n"
