"""Where a number came from: date, commit, machine and the conditions it was measured under.

Every benchmark result file carries a ``meta`` block made here, and the README's measured table
is regenerated from those files (``frankenbot report``), so each row can say when, on which
commit and machine, and under which conditions (scene source, noise, seeds, planner, what a
latency is measured from and to) it was measured.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from frankenbot.resources import package_root


def git_commit() -> str:
    """Short commit of the source tree, with ``+dirty`` when it has uncommitted changes."""
    root = package_root().parent
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                             capture_output=True, text=True, timeout=10)
        if sha.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=root, capture_output=True, text=True, timeout=10)
        return sha.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {"cpus": os.cpu_count(), "arch": platform.machine(),
            "python": platform.python_version(), "load_avg_1min_at_start": round(load[0], 2)}


def provenance(**conditions: Any) -> dict[str, Any]:
    """The ``meta`` block of a result file; ``conditions`` are the benchmark's own settings."""
    return {"date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": git_commit(), "machine": machine(), "conditions": conditions}


def write_result(out_dir: Path, name: str, results: Any, meta: dict[str, Any]) -> Path:
    """``<out_dir>/<name>.json`` with ``{"meta": ..., "results": ...}``; returns the path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"meta": meta, "results": results}, indent=2, default=str))
    tmp.replace(path)  # never a half-written result file
    return path
