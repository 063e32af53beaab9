"""What `frankenbot soak` measures: per-node RSS, threads and descriptors over many tasks.

The soak itself (``frankenbot.bringup.soak``) runs every node as a process and many tasks in a
row. After every task each node's resident memory, thread count and open descriptors are
sampled here (its process and its children: the sim's render process counts with the sim),
with psutil when installed, else from /proc. Growth is measured from the sample after a
warm-up (10 tasks by default: caches, the Python heap and DDS discovery settle there).
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path

WARMUP_TASKS = 10
# samples at each end of the run whose medians give the trend: a leak grows steadily, while a
# node's RSS also swings with what it holds at the moment (perception: +-5% with frames in flight)
TREND_WINDOW = 20


@dataclass(frozen=True)
class ProcSample:
    rss_mb: float
    threads: int
    fds: int


def sample_process(pid: int) -> ProcSample:
    """RSS (MiB), threads and open descriptors of ``pid`` plus all its descendants."""
    try:
        import psutil
    except ImportError:
        return _sample_proc_fs(pid)
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return ProcSample(0.0, 0, 0)
    rss = threads = fds = 0
    for p in procs:
        try:
            with p.oneshot():
                rss += p.memory_info().rss
                threads += p.num_threads()
                fds += p.num_fds()
        except psutil.Error:  # a child that just exited
            continue
    return ProcSample(rss / 2**20, threads, fds)


def _sample_proc_fs(pid: int) -> ProcSample:
    """The same from /proc (no psutil): descendants found through /proc/*/stat's ppid."""
    parents: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
                parents[int(d)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    tree, frontier = {pid}, [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parents.items() if pp == p and c not in tree]
        tree.update(kids)
        frontier.extend(kids)
    rss = threads = fds = 0
    for p in tree:
        try:
            status = Path(f"/proc/{p}/status").read_text().splitlines()
            fields = dict(line.split(":", 1) for line in status if ":" in line)
            rss += int(fields.get("VmRSS", "0 kB").split()[0]) * 1024
            threads += int(fields.get("Threads", "0").strip())
            fds += len(os.listdir(f"/proc/{p}/fd"))
        except (OSError, ValueError):
            continue
    return ProcSample(rss / 2**20, threads, fds)


@dataclass
class TaskRow:
    index: int
    family: str
    seed: int
    outcome: str
    success: bool  # the oracle's verdict
    hung: bool  # no result within the task timeout
    seconds: float


@dataclass
class SoakReport:
    tasks: int
    warmup: int
    rows: list[TaskRow] = field(default_factory=list)
    samples: dict[str, list[ProcSample]] = field(default_factory=dict)
    restarts: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0
    interrupted: bool = False

    def node_growth(self, node: str) -> dict[str, float]:
        s = self.samples.get(node, [])
        base_i = min(self.warmup, len(s)) - 1
        if base_i < 0:
            return {}
        base, after = s[base_i], s[base_i:]
        return {"rss_mb_at_warmup": round(base.rss_mb, 1),
                "rss_mb_last": round(s[-1].rss_mb, 1),
                "max_rss_growth_pct": round(100.0 * (max(x.rss_mb for x in after) - base.rss_mb)
                                            / max(base.rss_mb, 1e-9), 2),
                "rss_trend_growth_pct": _trend_growth([x.rss_mb for x in after[1:]]),
                "max_threads": max(x.threads for x in s),
                "threads_at_warmup": base.threads, "threads_last": s[-1].threads,
                "max_fds": max(x.fds for x in s), "fds_at_warmup": base.fds,
                "fds_last": s[-1].fds}

    def summary(self) -> dict[str, object]:
        nodes = {n: self.node_growth(n) for n in self.samples}
        growth = [g["max_rss_growth_pct"] for g in nodes.values() if g]
        trend = [g["rss_trend_growth_pct"] for g in nodes.values()
                 if g and g["rss_trend_growth_pct"] is not None]
        durations = [r.seconds for r in self.rows]
        return {
            "tasks": len(self.rows), "succeeded": sum(r.success for r in self.rows),
            "hung": sum(r.hung for r in self.rows), "warmup": self.warmup,
            "max_rss_growth_pct": max(growth) if growth and len(self.rows) > self.warmup
            else None,
            "max_rss_trend_growth_pct": max(trend) if trend else None,
            "max_threads": max((g["max_threads"] for g in nodes.values() if g), default=0),
            "max_fds": max((g["max_fds"] for g in nodes.values() if g), default=0),
            "median_task_s": round(statistics.median(durations), 1) if durations else None,
            "max_task_s": round(max(durations), 1) if durations else None,
            "wall_s": round(self.wall_s, 1), "restarts": self.restarts,
            "interrupted": self.interrupted,
            "outcomes": _count(r.outcome for r in self.rows),
            "per_family": {f: f"{sum(r.success for r in self.rows if r.family == f)}/"
                              f"{sum(1 for r in self.rows if r.family == f)}"
                           for f in dict.fromkeys(r.family for r in self.rows)},
            "nodes": nodes,
        }


def _trend_growth(rss: list[float]) -> float | None:
    """% from the median of the first TREND_WINDOW samples after the warm-up to the median of
    the last TREND_WINDOW (None: too few samples for two separate windows)."""
    if len(rss) < 2 * TREND_WINDOW:
        return None
    first = statistics.median(rss[:TREND_WINDOW])
    last = statistics.median(rss[-TREND_WINDOW:])
    return round(100.0 * (last - first) / max(first, 1e-9), 2)


def report_from_json(data: dict) -> SoakReport:
    """A written soak report (``frankenbot soak --out``) read back, to summarise it again."""
    s = data["summary"]
    return SoakReport(int(s["tasks"]), int(s["warmup"]),
                      rows=[TaskRow(**r) for r in data["rows"]],
                      samples={n: [ProcSample(**x) for x in xs]
                               for n, xs in data["samples"].items()},
                      restarts=dict(s.get("restarts", {})), wall_s=float(s.get("wall_s", 0)),
                      interrupted=bool(s.get("interrupted", False)))


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return out
