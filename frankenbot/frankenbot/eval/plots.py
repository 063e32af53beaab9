"""Plots of benchmark results, written next to their JSON (matplotlib, Agg: no display needed).

From a task-suite JSON (``bench/report.py:write_results``):

* ``<name>-success.png``: oracle success rate per task family with its Wilson 95% interval;
* ``<name>-anomaly-classes.png``: success per anomaly class: the injected anomaly's class when
  the suite injected one, else the class of each anomaly the brain detected (an episode counts
  once in every class it met; "none" for episodes without anomalies);
* ``<name>-latency.png``: histograms of detection-to-recovery-command latency per tier and of
  episode wall time.

From the anomaly benchmark's JSON (``bench-anomaly.json``): ``bench-anomaly-tier1.png``,
histograms of the three tier-1 latencies (true onset -> detection, detection -> recovery
command, true onset -> first recovery motion) and the oracle success per injected kind with its
Wilson interval.

``python -m frankenbot.eval.plots RESULTS.json...`` redraws them for stored results.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence

from frankenbot.errors import FrankenbotError
from frankenbot.eval.stats import wilson_interval

TIER_LABELS = {0: "not handled", 1: "tier 1", 2: "tier 2", 3: "tier 3"}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only; never a window
    import matplotlib.pyplot as plt

    return plt


def rates_with_intervals(groups: dict[str, list[bool]]) -> list[tuple[str, int, int, float,
                                                                     float, float]]:
    """(group, successes, trials, rate, Wilson low, Wilson high) per group, in key order."""
    out = []
    for name, results in groups.items():
        k, n = sum(results), len(results)
        ci = wilson_interval(k, n)
        out.append((name, k, n, k / n if n else 0.0, ci.low, ci.high))
    return out


def class_groups(episodes: Sequence[dict[str, Any]]) -> dict[str, list[bool]]:
    """Oracle outcomes grouped by anomaly class (see the module docstring)."""
    from frankenbot.sim.anomalies import KINDS

    groups: dict[str, list[bool]] = defaultdict(list)
    for e in episodes:
        success = bool(e["success"])
        injected = e.get("injected") or ""
        if injected:
            spec = KINDS.get(injected)
            groups[f"injected {spec.anomaly_class.value if spec else injected}"].append(success)
            continue
        classes = {c or "unknown" for c in e.get("anomaly_classes", [])}
        for c in sorted(classes) or ["none"]:
            groups[c].append(success)
    return dict(groups)


def _bar_plot(path: Path, rows: list[tuple[str, int, int, float, float, float]], title: str,
              xlabel: str) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.8 * len(rows) + 2), 4.2))
    names = [r[0] for r in rows]
    rates = [r[3] * 100 for r in rows]
    # Wilson bounds hold the rate up to float rounding: clamp so a 100% bar is drawable
    low = [max(0.0, (r[3] - r[4]) * 100) for r in rows]
    high = [max(0.0, (r[5] - r[3]) * 100) for r in rows]
    bars = ax.bar(names, rates, color="#4c9a2a", yerr=[low, high], capsize=4,
                  error_kw={"ecolor": "#333"})
    for bar, r in zip(bars, rows, strict=True):
        ax.annotate(f"{r[1]}/{r[2]}", (bar.get_x() + bar.get_width() / 2, 2), ha="center",
                    color="white", fontsize=8)
    ax.set_ylim(0, 105)
    ax.set_ylabel("oracle success (%), Wilson 95% interval")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.tick_params(axis="x", rotation=35)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _latency_plot(path: Path, episodes: Sequence[dict[str, Any]], title: str) -> Path:
    plt = _pyplot()
    by_tier: dict[int, list[float]] = defaultdict(list)
    for e in episodes:
        for tier, latency in zip(e.get("tiers", []), e.get("latencies", []), strict=False):
            if latency >= 0:
                by_tier[int(tier)].append(latency * 1000)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    if by_tier:
        ax1.hist([by_tier[t] for t in sorted(by_tier)], bins=20, stacked=True,
                 label=[f"{TIER_LABELS.get(t, t)} (n={len(by_tier[t])})" for t in sorted(by_tier)])
        ax1.legend()
    else:
        ax1.text(0.5, 0.5, "no recovery was commanded", ha="center", va="center",
                 transform=ax1.transAxes)
    ax1.set_xlabel("detection -> recovery command (ms)")
    ax1.set_ylabel("anomalies")
    ax1.set_title("anomaly handling latency")
    walls = [float(e["wall_time"]) for e in episodes]
    ax2.hist(walls, bins=min(20, max(1, len(walls))), color="#3a7bd5")
    ax2.set_xlabel("episode wall time (s)")
    ax2.set_ylabel("episodes")
    ax2.set_title(f"episode time (n={len(walls)})")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_suite(json_path: Path) -> list[Path]:
    """Write the suite's plots next to ``json_path``; returns their paths."""
    json_path = Path(json_path)
    try:
        data = json.loads(json_path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise FrankenbotError(f"cannot read benchmark results {json_path}: {e}") from e
    episodes = data.get("episodes")
    if not isinstance(episodes, list) or not episodes:
        raise FrankenbotError(f"{json_path} has no episodes to plot")
    title = str(data.get("meta", {}).get("title", json_path.stem))
    stem = json_path.with_suffix("")
    families: dict[str, list[bool]] = defaultdict(list)
    for e in episodes:
        families[str(e["family"])].append(bool(e["success"]))
    return [
        _bar_plot(Path(f"{stem}-success.png"), rates_with_intervals(dict(families)),
                  f"{title}: success per task family", "task family"),
        _bar_plot(Path(f"{stem}-anomaly-classes.png"),
                  rates_with_intervals(class_groups(episodes)),
                  f"{title}: success per anomaly class", "anomaly class"),
        _latency_plot(Path(f"{stem}-latency.png"), episodes, title),
    ]


TIER1_MEASURES = (("onset_to_detection_ms", "true onset -> detection"),
                  ("detect_to_command_ms", "detection -> recovery command"),
                  ("onset_to_first_motion_ms", "true onset -> first recovery motion"))


def plot_anomaly_bench(json_path: Path) -> list[Path]:
    """The anomaly benchmark's tier-1 plot next to its JSON; [] when it has no tier-1 part."""
    json_path = Path(json_path)
    try:
        data = json.loads(json_path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise FrankenbotError(f"cannot read benchmark results {json_path}: {e}") from e
    tier1 = (data.get("results") or {}).get("tier1")
    if not isinstance(tier1, dict) or "per_kind" not in tier1:
        return []
    plt = _pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(17, 4))
    for ax, (key, label) in zip(axes[:3], TIER1_MEASURES, strict=True):
        stats = tier1.get(key) or {}
        samples = stats.get("samples") or []
        if samples:
            ax.hist(samples, bins=min(20, max(1, len(samples))), color="#8e44ad")
            ax.axvline(stats["median"], color="#000", linestyle="--", linewidth=1)
            ax.set_title(f"{label}\nmedian {stats['median']:.1f} ms, n={len(samples)}",
                         fontsize=9)
        else:
            ax.text(0.5, 0.5, "no samples", ha="center", va="center", transform=ax.transAxes)
            ax.set_title(label, fontsize=9)
        ax.set_xlabel("ms")
    rows = rates_with_intervals({kind: [True] * int(v["task_success"])
                                 + [False] * (int(v["runs"]) - int(v["task_success"]))
                                 for kind, v in tier1["per_kind"].items() if int(v["runs"])})
    ax = axes[3]
    ax.bar([r[0] for r in rows], [r[3] * 100 for r in rows], color="#4c9a2a",
           yerr=[[(r[3] - r[4]) * 100 for r in rows], [(r[5] - r[3]) * 100 for r in rows]],
           capsize=3)
    ax.set_ylim(0, 105)
    ax.set_ylabel("oracle success (%), Wilson 95%")
    ax.set_title("injected predictable anomalies", fontsize=9)
    ax.tick_params(axis="x", rotation=40, labelsize=7)
    fig.suptitle(f"tier 1 ({tier1.get('scene', '')} scene, RTF {tier1.get('realtime_factor')})")
    fig.tight_layout()
    out = json_path.with_name(f"{json_path.stem}-tier1.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return [out]


def plots_for(json_path: Path) -> list[Path]:
    """Whatever plots a result file supports (the suite's, the anomaly benchmark's)."""
    data = json.loads(Path(json_path).read_text())
    if isinstance(data.get("episodes"), list):
        return plot_suite(json_path)
    return plot_anomaly_bench(json_path)


def main(argv: Sequence[str] | None = None) -> int:
    paths = list(sys.argv[1:] if argv is None else argv)
    if not paths:
        print("usage: python -m frankenbot.eval.plots RESULTS.json...", file=sys.stderr)
        return 2
    for p in paths:
        for out in plots_for(Path(p)):
            print(out)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
