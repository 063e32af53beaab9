"""Per-task benchmark tables: aggregation of episode outcomes, JSON and Markdown output."""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from frankenbot.eval.stats import wilson_interval


@dataclass(frozen=True)
class EpisodeOutcome:
    """One benchmark episode, judged by the sim's oracle (never the brain's own opinion)."""

    family: str
    seed: int
    instruction: str
    success: bool  # oracle verdict
    program_ok: bool  # the program itself exited with success
    vlm_calls: int
    wall_time: float  # seconds
    program_lines: int = 0
    anomalies: int = 0
    tiers: tuple[int, ...] = ()  # tier that handled each anomaly
    detail: str = ""
    injected: str = ""  # injected anomaly kind, "" when none
    anomaly_classes: tuple[str, ...] = ()  # class of each detected anomaly (same order as tiers)
    latencies: tuple[float, ...] = ()  # s from detection to recovery command; -1 when none
    # each anomaly as "kind at node: detail -> tier N action (outcome)", to read a failure back
    anomaly_notes: tuple[str, ...] = ()
    # what the planner wrote (library skill definitions it carries not counted), estimated
    # tokens of it, and planner invocations (1 + repair calls)
    program_tokens: int = 0
    planning_calls: int = 0


@dataclass(frozen=True)
class TaskRow:
    family: str
    trials: int
    successes: int
    rate: float
    ci_low: float
    ci_high: float
    mean_vlm_calls: float
    mean_wall_time: float
    mean_program_lines: float
    failures: tuple[str, ...] = field(default_factory=tuple)


def summarise(outcomes: Iterable[EpisodeOutcome]) -> list[TaskRow]:
    by_family: dict[str, list[EpisodeOutcome]] = {}
    for o in outcomes:
        by_family.setdefault(o.family, []).append(o)
    rows = []
    for family, eps in by_family.items():
        n = len(eps)
        k = sum(1 for e in eps if e.success)
        ci = wilson_interval(k, n)
        rows.append(TaskRow(
            family=family, trials=n, successes=k, rate=k / n if n else 0.0, ci_low=ci.low,
            ci_high=ci.high, mean_vlm_calls=statistics.fmean(e.vlm_calls for e in eps),
            mean_wall_time=statistics.fmean(e.wall_time for e in eps),
            mean_program_lines=statistics.fmean(e.program_lines for e in eps),
            failures=tuple(f"seed {e.seed}: {e.detail}" for e in eps if not e.success)))
    return rows


def overall(rows: Sequence[TaskRow]) -> TaskRow:
    n = sum(r.trials for r in rows)
    k = sum(r.successes for r in rows)
    ci = wilson_interval(k, n)

    def weighted(attr: str) -> float:
        return sum(getattr(r, attr) * r.trials for r in rows) / n if n else 0.0

    return TaskRow("ALL", n, k, k / n if n else 0.0, ci.low, ci.high, weighted("mean_vlm_calls"),
                   weighted("mean_wall_time"), weighted("mean_program_lines"))


def markdown_table(rows: Sequence[TaskRow], title: str = "") -> str:
    lines = [f"### {title}", ""] if title else []
    lines += ["| task | trials | successes | success rate | Wilson 95% CI | mean VLM calls | "
              "mean wall time (s) | mean program lines |",
              "|---|---|---|---|---|---|---|---|"]
    for r in [*rows, overall(rows)]:
        name = f"**{r.family}**" if r.family == "ALL" else r.family
        lines.append(f"| {name} | {r.trials} | {r.successes} | {r.rate:.0%} | "
                     f"[{r.ci_low:.0%}, {r.ci_high:.0%}] | {r.mean_vlm_calls:.2f} | "
                     f"{r.mean_wall_time:.1f} | {r.mean_program_lines:.1f} |")
    return "\n".join(lines) + "\n"


def write_results(out_dir: Path, name: str, outcomes: Sequence[EpisodeOutcome],
                  meta: dict) -> tuple[Path, Path]:
    """Write ``<name>.json`` (every episode + summary) and ``<name>.md``; returns both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = summarise(outcomes)
    payload = {"meta": meta, "summary": [asdict(r) for r in rows],
               "overall": asdict(overall(rows)), "episodes": [asdict(o) for o in outcomes]}
    json_path = out_dir / f"{name}.json"
    md_path = out_dir / f"{name}.md"
    json_path.write_text(json.dumps(payload, indent=2))
    md_path.write_text(markdown_table(rows, title=meta.get("title", name)))
    return json_path, md_path
