"""Benchmark of the program language against its targets (issue #3).

- parse + validate of a 60-line program: median, target <= 2 ms;
- interpreter overhead per node, primitive time excluded: target <= 20 us;
- monitor predicate evaluation per monitor (compiled, as the monitor loop uses it): <= 20 us.

Each number is a median of wall-clock time and of this thread's CPU time. On a shared machine
(the load average is printed) wall time includes waiting for a core; CPU time is the cost of the
code itself, and the targets are judged on it, with wall time reported beside it.

    python -c "from frankenbot.eval.program_bench import run_benchmark; run_benchmark()"
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Callable, Mapping

from frankenbot.ports import CancelToken, PrimitiveResult, Value
from frankenbot.program.catalog import default_catalog
from frankenbot.program.check import check_text
from frankenbot.program.interpreter import Interpreter
from frankenbot.program.parser import parse_program
from frankenbot.program.predicates import compile_condition, evaluate_predicate
from frankenbot.program.validator import validate
from frankenbot.state import RobotSnapshot, Scene, SceneObject, WorldSnapshot

TARGET_PARSE_MS = 2.0
TARGET_NODE_US = 20.0
TARGET_PREDICATE_US = 20.0

OBJECT_IDS = ("red_block", "green_block", "blue_block", "yellow_block", "orange_block",
              "purple_block", "green_bowl", "blue_bowl", "red_bowl", "white_plate", "gray_bin",
              "drawer", "zone")

# A realistic 60-line program: sorting with checks, loops, handlers and a local skill.
PROGRAM_60 = '''task "sort the blocks by colour and tidy up" {
  main {
    start:
    detect(obj=red_block)
    put(obj=red_block, bowl=red_bowl)
    if not in(red_block, red_bowl) {
      goto start max 2
    }
    greens:
    put(obj=green_block, bowl=green_bowl)
    if not in(green_block, green_bowl) {
      goto greens max 2
    }
    blues:
    detect(obj=blue_block)
    put(obj=blue_block, bowl=blue_bowl)
    if not in(blue_block, blue_bowl) {
      goto blues max 2
    }
    while not holding(yellow_block) max 3 {
      detect(obj=yellow_block)
      pick(obj=yellow_block)
    }
    place_in(obj=yellow_block, container=gray_bin)
    if on(orange_block, white_plate) or near(orange_block, white_plate, 0.05) {
      pick(obj=orange_block)
      place_in(obj=orange_block, container=gray_bin)
    } else {
      push_to(obj=orange_block, target=zone)
    }
    wait(seconds=0.2)
    if not drawer_open(drawer) {
      open_drawer(drawer=drawer)
    }
    put(obj=purple_block, bowl=drawer)
    close_drawer(drawer=drawer)
    home()
    exit success "sorted and tidied"
  }
  monitor dropped when not holding(red_block) during place_in {
    pick(obj=red_block)
    then resume
  }
  monitor bowl_moved when not visible(green_bowl) {
    detect(obj=green_bowl)
    then retry greens max 1
  }
  monitor bin_gone when not visible(gray_bin) during place_in {
    detect(obj=gray_bin)
    then escalate
  }
  skill put(obj: object, bowl: object) "pick an object and put it in a container" {
    again:
    pick(obj=obj)
    place_in(obj=obj, container=bowl)
    if not in(obj, bowl) {
      goto again max 1
    }
  }
}
'''

MONITOR_CONDITIONS = (
    "not holding(red_block)",
    "not visible(green_bowl)",
    "not in(red_block, green_bowl) and gripper_open",
    "not on(blue_block, red_block) or not near(blue_block, red_block, 0.05)",
    "not empty(gray_bin) and not drawer_open(drawer)",
)


def _scene() -> WorldSnapshot:
    objs = []
    for i, oid in enumerate(OBJECT_IDS):
        size = (0.16, 0.16, 0.06) if "bowl" in oid else (0.04, 0.04, 0.04)
        objs.append(SceneObject(oid, oid.replace("_", " "), oid.split("_")[-1],
                                oid.split("_")[0], (0.3 + 0.03 * i, -0.2 + 0.03 * i, 0.02),
                                size, 0.1 * i, last_seen=9.9))
    robot = RobotSnapshot(gripper_width=0.04, held_object="red_block")
    return WorldSnapshot(robot, Scene.of(objs, stamp=10.0), {"drawer_open:drawer": False})


class _TimedNoop:
    """Returns success at once and accumulates the time spent inside execute()."""

    def __init__(self) -> None:
        self.inside = 0.0
        self.calls = 0

    def execute(self, name: str, args: Mapping[str, Value],
                cancel: CancelToken) -> PrimitiveResult:
        t0 = time.perf_counter()
        self.calls += 1
        r = PrimitiveResult.success()
        self.inside += time.perf_counter() - t0
        return r


def _median_us(fn: Callable[[], object], repeats: int, inner: int = 1) -> tuple[float, float]:
    """(wall, cpu) medians in microseconds per call."""
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.thread_time()
        for _ in range(inner):
            fn()
        cpu.append((time.thread_time() - c0) / inner * 1e6)
        wall.append((time.perf_counter() - t0) / inner * 1e6)
    return statistics.median(wall), statistics.median(cpu)


def bench_parse(repeats: int) -> dict[str, float]:
    catalog = default_catalog()
    lines = sum(1 for ln in PROGRAM_60.splitlines() if ln.strip())
    program = parse_program(PROGRAM_60).program
    assert not [d for d in validate(program, catalog, OBJECT_IDS) if d.is_error]
    check_text(PROGRAM_60, catalog, OBJECT_IDS)  # warm-up: builds the parser once
    parse = _median_us(lambda: parse_program(PROGRAM_60), repeats)
    valid = _median_us(lambda: validate(program, catalog, OBJECT_IDS), repeats)
    both = _median_us(lambda: check_text(PROGRAM_60, catalog, OBJECT_IDS), repeats)
    return {"program_lines": float(lines),
            "parse_ms": parse[1] / 1e3, "validate_ms": valid[1] / 1e3,
            "parse_validate_ms": both[1] / 1e3, "parse_validate_wall_ms": both[0] / 1e3}


def bench_interpreter(repeats: int) -> dict[str, float]:
    text = ('task "overhead" { main { start: repeat 40 { pick(obj=red_block) '
            'if holding(red_block) { place_in(obj=red_block, container=green_bowl) } '
            'else { home() } wait(seconds=0.1) } goto start max 1 } '
            'monitor m when not visible(green_bowl) during pick { then resume } }')
    program = parse_program(text).program
    catalog = default_catalog()
    snap = _scene()
    wall, cpu = [], []
    nodes = 0
    for _ in range(repeats):
        ex = _TimedNoop()
        interp = Interpreter(program, catalog, ex, snapshot=lambda: snap, step_budget=10_000)
        t0, c0 = time.perf_counter(), time.thread_time()
        result = interp.run()
        c1, t1 = time.thread_time(), time.perf_counter()
        nodes = result.steps
        # the executor's own time is measured in wall time; it runs on this thread, so it is
        # an upper bound of its CPU time too
        cpu.append((c1 - c0 - ex.inside) / nodes * 1e6)
        wall.append((t1 - t0 - ex.inside) / nodes * 1e6)
    return {"nodes_per_run": float(nodes), "node_overhead_us": statistics.median(cpu),
            "node_overhead_wall_us": statistics.median(wall)}


def bench_predicates(repeats: int) -> dict[str, float]:
    snap = _scene()
    conds = [parse_program(f'task "p" {{ main {{ if {c} {{ home() }} }} }}')
             .program.main.body[0].cond for c in MONITOR_CONDITIONS]
    compiled = [compile_condition(c) for c in conds]
    per = [_median_us(lambda f=f: f(snap), repeats, inner=200) for f in compiled]
    uncompiled = [_median_us(lambda c=c: evaluate_predicate(c, snap), repeats, inner=50)
                  for c in conds]
    return {"predicate_us_median": statistics.median(p[1] for p in per),
            "predicate_us_max": max(p[1] for p in per),
            "predicate_wall_us_max": max(p[0] for p in per),
            "predicate_uncompiled_us_max": max(p[1] for p in uncompiled)}


def run_benchmark(quick: bool = False) -> dict[str, object]:
    """Measure and print the three targets; returns the numbers."""
    repeats = 30 if quick else 200
    out: dict[str, object] = {}
    out.update(bench_parse(repeats))
    out.update(bench_interpreter(5 if quick else 30))
    out.update(bench_predicates(10 if quick else 50))
    ok = {
        "parse_validate": out["parse_validate_ms"] <= TARGET_PARSE_MS,  # type: ignore[operator]
        "node_overhead": out["node_overhead_us"] <= TARGET_NODE_US,  # type: ignore[operator]
        "predicate": out["predicate_us_max"] <= TARGET_PREDICATE_US,  # type: ignore[operator]
    }
    out["targets_met"] = ok

    def mark(key: str) -> str:
        return "met" if ok[key] else "MISSED"

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    out["load_average_1min"] = load
    print("program language benchmark" + (" (quick)" if quick else "")
          + f"  [CPU-time medians; wall in brackets; load average {load:.1f} "
          f"on {os.cpu_count()} cores]")
    print(f"  parse + validate, {out['program_lines']:.0f}-line program: "
          f"{out['parse_validate_ms']:.3f} ms (wall {out['parse_validate_wall_ms']:.3f} ms)  "
          f"[target <= {TARGET_PARSE_MS} ms: {mark('parse_validate')}]")
    print(f"    of which parse {out['parse_ms']:.3f} ms, validate {out['validate_ms']:.3f} ms")
    print(f"  interpreter overhead per node, primitives excluded ({out['nodes_per_run']:.0f} "
          f"nodes per run): {out['node_overhead_us']:.2f} us "
          f"(wall {out['node_overhead_wall_us']:.2f} us)  "
          f"[target <= {TARGET_NODE_US} us: {mark('node_overhead')}]")
    print(f"  monitor predicate evaluation per monitor, compiled: median "
          f"{out['predicate_us_median']:.2f} us, worst of {len(MONITOR_CONDITIONS)} "
          f"{out['predicate_us_max']:.2f} us (wall {out['predicate_wall_us_max']:.2f} us)  "
          f"[target <= {TARGET_PREDICATE_US} us: {mark('predicate')}]")
    print(f"    (uncompiled evaluate_predicate, worst: "
          f"{out['predicate_uncompiled_us_max']:.2f} us)")
    return out


if __name__ == "__main__":  # pragma: no cover
    run_benchmark()
