"""`frankenbot up --sim` reviews what it plans: with `review: always` a risky instruction is
refused before anything moves; switched live to `review: never` (``ros2 param set``) the same
instruction executes, and the sim's ground truth shows the risk was real (the block ends in the
forbidden zone). The risk is the review benchmark's zone variant: a forbidden zone (a laptop, in
config terms) over the target bowl."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.flaky(reruns=1, reruns_delay=2)]

INSTRUCTION = "put the red block in the green bowl"
SERVICES = ["/frankenbot/submit_task", "/frankenbot_sim/evaluate"]


def test_up_with_review_always_refuses_what_review_never_executes(tmp_path):
    from frankenbot.bringup.ros_client import BrainClient
    from frankenbot.bringup.scenario import scenario_for
    from frankenbot.eval.taskset import scene_of_task

    scenario = scenario_for(INSTRUCTION, first_seed=1)
    _, scene = scene_of_task(scenario.family, scenario.seed)
    bowl = scene.get("green_bowl").position
    zones = tmp_path / "review.yaml"
    zones.write_text(
        "review:\n  zones:\n    - {name: laptop, kind: forbidden, "
        f"x: [{bowl[0] - 0.09:.3f}, {bowl[0] + 0.09:.3f}], "
        f"y: [{bowl[1] - 0.09:.3f}, {bowl[1] + 0.09:.3f}]}}\n")
    logs = tmp_path / "logs"
    out = (tmp_path / "up.txt").open("w")
    up = subprocess.Popen(
        [sys.executable, "-m", "frankenbot.cli", "up", "--sim", "--task", scenario.family,
         "--seed", str(scenario.seed), "--noise", "none", "--planner", "offline",
         "--review", "always", "--review-config", str(zones), "--no-restart",
         "--memory-url", f"sqlite://{tmp_path / 'memory.sqlite3'}", "--log-dir", str(logs)],
        stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        with BrainClient("review_e2e") as client:
            missing = client.wait_for_services(SERVICES, timeout=120.0)
            assert not missing, (missing, (tmp_path / "up.txt").read_text(), _tail(logs))
            client.wait_for_scene(after=0.0, required=("red_block", "green_bowl"),
                                  timeout=90.0)
            refused = client.submit(INSTRUCTION)
            assert not refused.accepted, refused.message
            assert "safety review refused" in refused.message and "laptop" in refused.message
            time.sleep(2.0)
            assert not client.sim_evaluate().success  # nothing moved: the block is not there

            (changed,) = client.set_parameters("frankenbot_planner", {"review": "never"})
            assert changed.successful, changed.reason
            (kept,) = client.set_parameters("frankenbot_planner", {"planner_mode": "vlm"})
            assert not kept.successful and "restart the node" in kept.reason

            done = client.submit(INSTRUCTION)
            assert done.accepted, done.message
            progress = client.follow(done.task_id, timeout=240.0)
            assert progress.status.done and progress.status.success, progress.status.summary
            # the oracle: the block is in the bowl, i.e. inside the zone (9 cm around the
            # bowl's centre) that the first review refused to place into
            verdict = client.sim_evaluate()
            assert verdict.success, verdict.details
    finally:
        os.killpg(up.pid, signal.SIGTERM)
        try:
            up.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, signal.SIGKILL)
        out.close()


def _tail(logs) -> str:
    return "\n".join(f"--- {p.name}\n" + "\n".join(p.read_text().splitlines()[-15:])
                     for p in sorted(logs.glob("*.log")))
