"""`make demo` / `frankenbot demo`: the sim and every node as separate processes, one task.

What a new user sees: which planner is used (a VLM when OPENAI_API_KEY or OPENAI_BASE_URL is set,
otherwise the offline planner), the scene being set up, live progress of the task (phase, active
tree node, anomaly events, VLM calls), the sim oracle's verdict, and a folder of artifacts:
program, trace, summary, annotated camera frames and an animated GIF of the episode.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

import numpy as np

from frankenbot.errors import FrankenbotError

BRAIN_SERVICES = ["frankenbot/submit_task", "frankenbot/replan",
                  "frankenbot/memory/get_context", "frankenbot_sim/reset",
                  "frankenbot_sim/evaluate"]
STARTUP_TIMEOUT_S = 180.0
SCENE_WAIT_S = 60.0  # wall seconds for perception to publish the freshly reset scene


def planner_banner() -> str:
    base_url = os.environ.get("OPENAI_BASE_URL", "")
    if os.environ.get("OPENAI_API_KEY") or base_url:
        return f"planner: VLM at {base_url or 'api.openai.com'} (OPENAI_API_KEY set)"
    return "planner: offline (rule-based; set OPENAI_API_KEY to plan with a VLM)"


def _save_png(path: Path, image: np.ndarray) -> None:
    from PIL import Image

    Image.fromarray(image).save(path)


def _save_gif(path: Path, frames: list[np.ndarray], fps: float = 4.0) -> None:
    from PIL import Image

    images = [Image.fromarray(f) for f in frames]
    images[0].save(path, save_all=True, append_images=images[1:],
                   duration=int(1000 / fps), loop=0, optimize=True)


def run_demo(*, instruction: str, seed: int, out_dir: Path, timeout: float,
             record: bool = True, foxglove_port: int | None = None,
             noise: str = "realistic") -> int:
    """The demo; ``record`` writes ``episode.mcap``, ``foxglove_port`` serves the live view."""
    with contextlib.ExitStack() as stack:
        view = None
        if foxglove_port is not None:
            from frankenbot.bringup.live_view import LiveView

            view = LiveView(foxglove_port)
            stack.callback(view.close)
            print(f"Foxglove live view on {view.url} (layout: "
                  f"frankenbot/config/foxglove_layout.json)", flush=True)
        return _run_demo(instruction=instruction, seed=seed, out_dir=out_dir, timeout=timeout,
                         record=record, view=view, noise=noise)


def _run_demo(*, instruction: str, seed: int, out_dir: Path, timeout: float, record: bool,
              view: object | None, noise: str = "realistic") -> int:
    from frankenbot.bringup.processes import NODE_EXECUTABLES, NodeGroup
    from frankenbot.bringup.progress import EventView, ProgressPrinter
    from frankenbot.bringup.ros_client import BrainClient, FrameRecorder
    from frankenbot.bringup.scenario import scenario_for
    from frankenbot.bringup.tap import RecordingSink, TopicTap, topics_for
    from frankenbot.eval.episode_report import write_episode_report
    from frankenbot.eval.recording import summarise_mcap

    run_dir = Path(out_dir) / time.strftime("%Y%m%d-%H%M%S")
    run_dir.mkdir(parents=True, exist_ok=True)
    print(f"FrankenBot demo: {instruction!r}")
    print(planner_banner())
    scenario = scenario_for(instruction, first_seed=seed)
    print(f"scene: sim task family {scenario.family}, seed {scenario.seed}")
    print(f"sim camera: sensor noise {noise}")
    params = {"sim": {"task": scenario.family, "seed": scenario.seed, "sensor_noise": noise},
              "memory": {"db_path": str(run_dir / "memory.sqlite3")}}
    t_start = time.monotonic()
    with NodeGroup(setup="sim", log_dir=run_dir / "logs", parameters=params) as group:
        group.start(NODE_EXECUTABLES)
        print(f"started nodes {', '.join(NODE_EXECUTABLES)} as separate processes "
              f"(logs: {run_dir / 'logs'})")
        with BrainClient("frankenbot_demo") as client:
            tap = TopicTap(client.node, [view] if view is not None else [],
                           topics_for(live_view=view is not None))
            missing = client.wait_for_services(BRAIN_SERVICES, STARTUP_TIMEOUT_S)
            group.check_alive()
            if missing:
                raise FrankenbotError(f"nodes did not come up within {STARTUP_TIMEOUT_S:.0f} s; "
                                      f"missing {', '.join(missing)}")
            print(f"all nodes up after {time.monotonic() - t_start:.1f} s")
            # the recording holds the episode from the scene's reset on
            recording = RecordingSink(run_dir / "episode.mcap") if record else None
            if recording is not None:
                tap.sinks.append(recording)
            try:  # a finished file even when the task fails to finish
                client.sim_reset(scenario.family, scenario.seed)
                recorder = FrameRecorder(client)
                seen = client.wait_for_scene(after=client.sim_time(),
                                             required=scenario.objects, timeout=SCENE_WAIT_S)
                print(f"perception sees {seen} objects and fixtures")
                printer = ProgressPrinter(write=lambda line: print(line, flush=True))
                events: list = []

                def on_feedback(fb) -> None:
                    events.extend(EventView.of(e) for e in fb.events)
                    printer.update(phase=fb.phase, active_path=fb.active_path,
                                   active_node=fb.active_node, active_line=fb.active_line,
                                   vlm_calls=fb.vlm_calls, events=events)

                result = client.run_task(instruction, timeout=timeout, on_feedback=on_feedback)
                group.check_alive()
                verdict = client.sim_evaluate()
            finally:
                if recording is not None:
                    tap.sinks.remove(recording)
                    recording.close()
                tap.close()
            frames, annotated = recorder.snapshot()
    ok = bool(verdict.success)
    print(f"program: {'success' if result.success else result.outcome} — {result.summary}")
    print(f"VLM calls: {result.vlm_calls} (repairs {result.repair_calls}, replans "
          f"{result.replans}); anomalies: {len(events)}; task time {result.duration:.1f} s")
    print(f"oracle: {'SUCCESS' if ok else 'FAILURE'}\n  " + verdict.details.replace("\n", "\n  "))
    _write_artifacts(run_dir, instruction, scenario, result, verdict, events, frames, annotated)
    if recording is not None:
        print("recording: " + "\n  ".join(summarise_mcap(recording.recorder.path).lines()))
    print(f"report: {write_episode_report(run_dir)}")
    print(f"artifacts: {run_dir}")
    return 0 if ok else 1


def _write_artifacts(run_dir: Path, instruction: str, scenario, result, verdict, events,
                     frames: list[np.ndarray], annotated: list[np.ndarray]) -> None:
    (run_dir / "program.fb").write_text(result.program + "\n")
    try:
        trace = json.loads(result.trace_json or "[]")
    except json.JSONDecodeError:
        trace = {"unparsed": result.trace_json}
    (run_dir / "trace.json").write_text(json.dumps(trace, indent=2))
    summary = {
        "instruction": instruction, "family": scenario.family, "seed": scenario.seed,
        "oracle_success": bool(verdict.success), "oracle_details": verdict.details,
        "program_success": bool(result.success), "outcome": result.outcome,
        "summary": result.summary, "vlm_calls": int(result.vlm_calls),
        "repair_calls": int(result.repair_calls), "replans": int(result.replans),
        "first_call_valid": bool(result.first_call_valid), "duration_s": float(result.duration),
        "anomalies": [e.__dict__ for e in events], "planner": planner_banner(),
    }
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    if annotated:
        _save_png(run_dir / "annotated_last.png", annotated[-1])
    if frames:
        _save_png(run_dir / "first_frame.png", frames[0])
        _save_png(run_dir / "last_frame.png", frames[-1])
        _save_gif(run_dir / "episode.gif", frames)
