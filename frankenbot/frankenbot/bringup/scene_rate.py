"""``frankenbot bench --component scene-rate``: camera -> scene speed with the whole stack over
ROS (issue 16).

The sim node and every brain node run as separate processes, started by ``NodeGroup`` with the
parameters ``frankenbot up --sim`` uses (``up_parameters``; realistic sensor noise, the offline
planner, a throw-away memory database). A probe (``frankenbot.eval.scene_rate_bench``) listens
for two windows: idle (the arm still), then while a task runs (put_in_bowl through
/frankenbot/run_task; the window ends with the task or after its length). For each it prints
the scene rate against the camera rate, the frame-stamp -> scene-arrival latency (median, p95,
max), the largest gap between fresh scenes, stale messages, scene_stale anomalies and each
node's CPU use. Lives in bring-up because it starts node processes (like ``faults``).
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

WINDOW_S = 60.0
QUICK_WINDOW_S = 15.0
SETTLE_S = 5.0  # after the first scene: the nodes finish starting (model loads, discovery)
TASK = ("put_in_bowl", 1)
SERVICES = ["/frankenbot/submit_task", "/frankenbot_sim/reset", "/frankenbot_sim/evaluate"]


def _window_s(quick: bool) -> float:
    env = os.environ.get("FRANKENBOT_SCENE_RATE_WINDOW_S", "")
    return float(env) if env else (QUICK_WINDOW_S if quick else WINDOW_S)


def run_benchmark(quick: bool = False, *, noise: str = "realistic",
                  task_window: bool = True) -> dict[str, Any]:
    from frankenbot.bringup.processes import NODE_EXECUTABLES, NodeGroup, up_parameters
    from frankenbot.bringup.ros_client import BrainClient
    from frankenbot.errors import FrankenbotError
    from frankenbot.eval.scene_rate_bench import CpuMeter, SceneProbe, format_line, measure_window

    window = _window_s(quick)
    results: dict[str, Any] = {"window_s": window, "noise": noise, "cores": os.cpu_count(),
                               "what": "stamp_to_scene = scene arrival at the probe - the "
                               "frame's stamp (sim time drawn) in wall time via /clock"}
    with tempfile.TemporaryDirectory(prefix="fb-scene-rate-") as tmp:
        params = up_parameters(task=TASK[0], seed=0, noise=noise, planner="offline",
                               db_path=str(Path(tmp) / "memory.sqlite3"))
        log_dir = Path(os.environ.get("FRANKENBOT_SCENE_RATE_LOG_DIR", "") or Path(tmp) / "logs")
        with NodeGroup(setup="sim", log_dir=log_dir, parameters=params) as group, \
                BrainClient("frankenbot_scene_rate") as client:
            group.start(NODE_EXECUTABLES)
            missing = client.wait_for_services(SERVICES, timeout=180.0)
            group.check_alive()
            if missing:
                raise FrankenbotError(f"services missing after start-up: {missing}")
            probe = SceneProbe(client.node)
            client.wait_for_scene(after=0.0, min_objects=1, timeout=120.0)
            time.sleep(SETTLE_S)
            pids = {p.executable: p.process.pid for p in group.processes}
            cpu = CpuMeter({**pids, "bench": os.getpid()}, alone=("bench",))  # + the probe
            idle = measure_window(probe, window, cpu)
            print(format_line("idle", idle), flush=True)
            results["idle"] = idle
            if task_window:
                results["task"] = _task_window(client, probe, cpu, window * 2)
                print(format_line("task", results["task"]), flush=True)
            group.check_alive()
            probe.close()
    return results


def _task_window(client: Any, probe: Any, cpu: Any, limit_s: float) -> dict[str, Any]:
    """Measure while one task runs (from the goal's sending to its result, at most limit_s)."""
    from frankenbot.eval.scene_rate_bench import measure_window

    response = client.sim_reset(*TASK, timeout=120.0)
    client.wait_for_scene(after=client.sim_time(), timeout=60.0)
    time.sleep(2.0)  # the planner's own subscription takes in the new scene too
    done = threading.Event()
    outcome: list[str] = []

    def go() -> None:
        try:
            result = client.run_task(response.instruction, timeout=limit_s + 60.0)
            outcome.append(f"{result.outcome}: {result.summary}")
        except Exception as e:  # reported, never fatal to the measurement
            outcome.append(f"error: {e}")
        done.set()

    threading.Thread(target=go, name="scene-rate-task", daemon=True).start()
    out = measure_window(probe, limit_s, cpu, until=done.is_set)
    done.wait(5.0)
    out["task"] = response.instruction
    out["task_outcome"] = outcome[0] if outcome else "still running at the window's end"
    try:
        out["oracle_success"] = bool(client.sim_evaluate().success)
    except Exception as e:  # the sim may be busy; the speed numbers stand anyway
        out["oracle_success"] = f"not evaluated: {e}"
    return out


def _burn(stop: Any) -> None:  # pragma: no cover - runs in a child process
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x += 1


def compare_spin(kinds: tuple[str, ...], loads: tuple[int, ...], *, window_s: float,
                 noise: str = "realistic") -> dict[str, Any]:
    """The scene-rate benchmark once per (spin loop, background load): ``kinds`` from
    ``nodes.spin.SPIN_KINDS`` (set through ``FRANKENBOT_SPIN`` for every node process),
    ``loads`` = extra processes that each keep one core busy with a Python loop while the
    stack runs (0 = none beyond the machine's own). Idle window only (the arm still)."""
    import multiprocessing

    from frankenbot.nodes.spin import SPIN_ENV

    os.environ["FRANKENBOT_SCENE_RATE_WINDOW_S"] = str(window_s)
    runs = []
    for load in loads:
        for kind in kinds:
            os.environ[SPIN_ENV] = kind
            stop = multiprocessing.Event()
            burners = [multiprocessing.Process(target=_burn, args=(stop,), daemon=True)
                       for _ in range(load)]
            for b in burners:
                b.start()
            load_before = os.getloadavg()[0]
            try:
                result = run_benchmark(noise=noise, task_window=False)
            finally:
                stop.set()
                for b in burners:
                    b.join(5.0)
            runs.append({"spin": kind, "extra_busy_processes": load,
                         "loadavg_1min_at_start": round(load_before, 2),
                         "loadavg_1min_at_end": round(os.getloadavg()[0], 2),
                         "idle": result["idle"]})
            print(f"  spin={kind} load+{load}: {runs[-1]['idle']}", flush=True)
    os.environ.pop(SPIN_ENV, None)
    return {"window_s": window_s, "noise": noise, "cores": os.cpu_count(), "runs": runs}


if __name__ == "__main__":  # pragma: no cover
    import argparse
    import json

    ap = argparse.ArgumentParser(description="scene rate per spin loop and background load")
    ap.add_argument("--kinds", nargs="+", default=["yielding", "events"])
    ap.add_argument("--loads", nargs="+", type=int, default=[0, 1])
    ap.add_argument("--window", type=float, default=30.0)
    ap.add_argument("--out", type=Path, default=Path("docs/results/spin-compare.json"))
    a = ap.parse_args()
    from frankenbot.eval.provenance import provenance, write_result

    data = compare_spin(tuple(a.kinds), tuple(a.loads), window_s=a.window)
    path = write_result(a.out.parent, a.out.stem, data,
                        provenance(component="spin-compare", kinds=a.kinds, loads=a.loads))
    print(f"results: {path}\n{json.dumps(data, indent=1)[:4000]}")
