"""As a user would: `frankenbot up --sim --foxglove PORT --record DIR` with a plain WebSocket
client speaking the Foxglove protocol, then a task submitted and its MCAP recording read back;
and `frankenbot demo` leaving its recording and report."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

# foxglove-sdk 0.30 names the Foxglove WebSocket protocol v1 "foxglove.sdk.v1" and refuses the
# older name at the handshake; a client offers both, as current Foxglove apps do.
SUBPROTOCOLS = ["foxglove.websocket.v1", "foxglove.sdk.v1"]
ADVERTISE_DEADLINE_S = 30.0
MESSAGE_DEADLINE_S = 150.0  # the sim, perception and the executor must be up and publishing
WANTED = ("/frankenbot/scene", "/frankenbot/tree_state", "/camera/color/image")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _watch(port: int, t_start: float) -> dict:
    import websockets

    url = f"ws://127.0.0.1:{port}"
    while True:  # the server comes up with the command
        try:
            ws = await websockets.connect(url, subprotocols=SUBPROTOCOLS, max_size=None,
                                          open_timeout=5)
            break
        except OSError:
            if time.monotonic() - t_start > ADVERTISE_DEADLINE_S:
                raise
            await asyncio.sleep(0.3)
    out: dict = {"channels": {}, "messages": {}, "first": {}}
    async with ws:
        info = json.loads(await ws.recv())
        out["server_info"], out["server_info_s"] = info, time.monotonic() - t_start
        while len(out["channels"]) < 3 and time.monotonic() - t_start < ADVERTISE_DEADLINE_S:
            msg = json.loads(await asyncio.wait_for(ws.recv(), ADVERTISE_DEADLINE_S))
            if msg.get("op") == "advertise":
                out["channels"].update({c["id"]: c for c in msg["channels"]})
        out["advertised_s"] = time.monotonic() - t_start
        await asyncio.sleep(0.5)  # the rest of the adverts
        while True:
            try:
                msg = await asyncio.wait_for(ws.recv(), 0.5)
            except TimeoutError:
                break
            if isinstance(msg, str) and json.loads(msg).get("op") == "advertise":
                out["channels"].update({c["id"]: c for c in json.loads(msg)["channels"]})
        by_topic = {c["topic"]: cid for cid, c in out["channels"].items()}
        subs = {i: t for i, t in enumerate(WANTED) if t in by_topic}
        await ws.send(json.dumps({"op": "subscribe", "subscriptions": [
            {"id": i, "channelId": by_topic[t]} for i, t in subs.items()]}))
        deadline = time.monotonic() + MESSAGE_DEADLINE_S
        while time.monotonic() < deadline and not (
                set(subs.values()) <= set(out["messages"])
                and '"steps"' in out["first"].get("/frankenbot/tree_state", "")):
            try:
                msg = await asyncio.wait_for(ws.recv(), 5.0)
            except TimeoutError:
                continue
            if isinstance(msg, bytes) and msg[0] == 0x01:  # messageData
                topic = subs[int.from_bytes(msg[1:5], "little")]
                out["messages"][topic] = out["messages"].get(topic, 0) + 1
                if topic == "/frankenbot/tree_state":
                    text = msg[13:].decode(errors="replace")
                    if '"steps"' in text or topic not in out["first"]:
                        out["first"][topic] = text
    return out


def test_up_serves_the_foxglove_view_and_records_each_task(tmp_path):
    from frankenbot.bringup.ros_client import BrainClient
    from frankenbot.bringup.scenario import scenario_for
    from frankenbot.eval.recording import summarise_mcap

    port = _free_port()
    rec_dir = tmp_path / "recordings"
    log = (tmp_path / "up.log").open("w")
    t_start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "frankenbot.cli", "up", "--sim", "--foxglove", str(port),
         "--record", str(rec_dir), "--log-dir", str(tmp_path / "logs")],
        stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ), start_new_session=True)
    try:
        seen = asyncio.run(_watch(port, t_start))
        assert seen["server_info"]["op"] == "serverInfo"
        assert seen["advertised_s"] <= ADVERTISE_DEADLINE_S
        topics = {c["topic"] for c in seen["channels"].values()}
        assert len(topics) >= 3 and set(WANTED) <= topics, topics
        assert set(WANTED) <= set(seen["messages"]), seen["messages"]
        tree = json.loads(seen["first"]["/frankenbot/tree_state"])
        assert "steps" in tree and "phase" in tree  # the executor's own tree state
        # a task through the running brain is recorded into its own file
        instruction = "pick up the yellow block"
        scenario = scenario_for(instruction, first_seed=1)
        with BrainClient("live_view_test") as client:
            client.sim_reset(scenario.family, scenario.seed)
            client.wait_for_scene(after=client.sim_time(), required=scenario.objects,
                                  timeout=60.0)
            response = client.submit(instruction)
            assert response.accepted, response.message
            final = client.follow(response.task_id, timeout=240.0).status
        assert final.done
        deadline = time.monotonic() + 20
        while not list(rec_dir.glob("*.mcap")) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
    print((tmp_path / "up.log").read_text()[-3000:])
    (path,) = rec_dir.glob("*.mcap")
    assert path.name.endswith(f"-{response.task_id}.mcap")
    summary = summarise_mcap(path).topics
    for topic in ("/joint_states", "/frankenbot/tree_state", "/frankenbot/scene",
                  "/frankenbot/task_status", "/camera/camera/color/image_raw"):
        assert summary.get(topic, ("", 0))[1] >= 1, (topic, summary)
    assert "/frankenbot/events" in summary  # a channel even when no anomaly happened
    assert summary["/frankenbot_sim/scene_reset"][1] == 1  # primed: the file stands alone
    assert summary["/joint_states"][1] > 100  # the arm's motion, every state


def test_demo_records_the_episode_and_writes_its_report(tmp_path):
    from frankenbot.eval.recording import summarise_mcap

    run = subprocess.run(
        [sys.executable, "-m", "frankenbot.cli", "demo", "--record", "--out", str(tmp_path),
         "--instruction", "put the red block in the green bowl"],
        capture_output=True, text=True, timeout=600, env=dict(os.environ))
    print(run.stdout[-4000:], run.stderr[-2000:])
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    topics = summarise_mcap(run_dir / "episode.mcap").topics
    for topic, at_least in (("/joint_states", 100), ("/frankenbot/tree_state", 2),
                            ("/frankenbot/scene", 2), ("/camera/camera/color/image_raw", 2),
                            ("/frankenbot/task_status", 2), ("/frankenbot_sim/scene_reset", 1)):
        assert topics.get(topic, ("", 0))[1] >= at_least, (topic, topics)
    # every tapped topic has its channel, with messages or none (no anomaly, no event)
    assert topics["/frankenbot/events"][0] == "frankenbot_interfaces/msg/AnomalyEvent"
    assert topics["/frankenbot/annotated_image"][0] == "sensor_msgs/msg/Image"
    page = (run_dir / "report.html").read_text()
    assert "report: " in run.stdout and "recording: " in run.stdout
    assert "episode.mcap" in page and "/frankenbot/tree_state" in page
    # last, the demo's own promise: exit 0 on the oracle's success (and the page says so)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "oracle: SUCCESS" in page
