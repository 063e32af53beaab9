"""`frankenbot doctor`: the verdicts (pure) and the whole command against the running sim stack
(real processes over DDS): everything present, then a node stopped, then the sim stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import types

import pytest
from robot_description_support import robotiq_urdf

from frankenbot import tcp, ur_driver
from frankenbot.bringup.doctor import (
    BRAIN,
    COLOR_TOPIC,
    DEPTH_TOPIC,
    INFO_TOPIC,
    Expectations,
    Observations,
    Status,
    evaluate,
    tf_chain,
)
from frankenbot.motion.kinematics import JOINT_NAMES


def _real_system(**changes) -> Observations:
    """Observations of a complete real setup (driver, camera via TF, Robotiq under /robotiq)."""
    js = types.SimpleNamespace(name=list(JOINT_NAMES))
    gripper_js = types.SimpleNamespace(name=["robotiq_85_left_knuckle_joint"])
    seen = Observations(
        nodes={f"/{n}" for n in BRAIN},
        publishers={"/frankenbot/scene": 1, ur_driver.JOINT_STATES_TOPIC: 1,
                    ur_driver.SPEED_SCALING_TOPIC: 1, COLOR_TOPIC: 1, DEPTH_TOPIC: 1,
                    INFO_TOPIC: 1},
        services={"/frankenbot/memory/get_context", "/frankenbot/submit_task",
                  "/frankenbot/execute_program/_action/send_goal",
                  ur_driver.FOLLOW_ACTION + "/_action/send_goal",
                  "/robotiq/robotiq_gripper_controller/gripper_cmd/_action/send_goal"},
        messages={ur_driver.JOINT_STATES_TOPIC: js, "/robotiq/joint_states": gripper_js,
                  ur_driver.SPEED_SCALING_TOPIC: types.SimpleNamespace(data=30.0),
                  ur_driver.PROGRAM_RUNNING_TOPIC: types.SimpleNamespace(data=True),
                  ur_driver.SAFETY_MODE_TOPIC: types.SimpleNamespace(mode=1),
                  COLOR_TOPIC: object(), DEPTH_TOPIC: object(),
                  INFO_TOPIC: types.SimpleNamespace(header=types.SimpleNamespace(
                      frame_id="camera_color_optical_frame"))},
        controllers={c: "active" for c in ur_driver.ACTIVE_CONTROLLERS},
        tf_edges={"camera_color_optical_frame": "base_link", "tool0": "flange",
                  "flange": "wrist_3_link"},
        gripper_description=robotiq_urdf(),
        executor_tcp_offset=tcp.tcp_offset_from_description(robotiq_urdf()))
    for key, value in changes.items():
        setattr(seen, key, value)
    return seen


def _missing(checks) -> dict[str, str]:
    return {c.name: c.detail for c in checks if c.status == Status.MISSING}


def test_complete_real_setup_has_nothing_missing():
    expect = Expectations.from_setup("real_ur5e")
    assert expect.gripper_mode == "parallel" and expect.real_driver
    checks = evaluate(expect, _real_system())
    assert _missing(checks) == {}
    # with the safety mode, the gripper's activation (skipped) and the TCP offset
    assert len(checks) == 21


def test_program_not_running_and_other_gaps_are_named():
    expect = Expectations.from_setup("real_ur5e")
    seen = _real_system()
    seen.messages[ur_driver.PROGRAM_RUNNING_TOPIC] = types.SimpleNamespace(data=False)
    seen.controllers["scaled_joint_trajectory_controller"] = "inactive"
    seen.tf_edges = {"tool0": "flange"}  # nobody publishes the camera's pose
    seen.messages[ur_driver.SPEED_SCALING_TOPIC] = types.SimpleNamespace(data=0.0)
    del seen.messages["/robotiq/joint_states"]
    missing = _missing(evaluate(expect, seen))
    assert missing["External Control program"] == ur_driver.PROGRAM_NOT_RUNNING
    assert missing["controller scaled_joint_trajectory_controller"] == "state inactive"
    assert "base_link <- camera_color_optical_frame" in missing["camera pose"]
    assert "will not move" in missing["speed scaling"]
    assert "gripper joint" in missing
    assert len(missing) == 5


def test_real_setup_with_the_sim_grippers_tcp_is_named():
    """An executor left on safety.yaml's sim offset (tcp_offset parameter unset) on the real
    2F-85: doctor names both numbers."""
    missing = _missing(evaluate(Expectations.from_setup("real_ur5e"),
                                _real_system(executor_tcp_offset=-1.0)))
    assert list(missing) == ["TCP offset"]
    assert "0.1450 m (config/safety.yaml), description 0.1528" in missing["TCP offset"]


def test_tf_chain_walks_child_to_parent():
    edges = {"c": "b", "b": "a"}
    assert tf_chain(edges, "c", "a") == ["c", "b", "a"]
    assert tf_chain(edges, "c", "x") is None
    assert tf_chain({"a": "b", "b": "a"}, "a", "z") is None  # a loop ends


# --- against the running sim stack ------------------------------------------------------------
def _doctor(timeout: float = 6.0) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "frankenbot.cli", "doctor", "--setup", "sim",
                           "--timeout", str(timeout)], capture_output=True, text=True,
                          timeout=120, env=os.environ.copy())
    return proc.returncode, proc.stdout + proc.stderr


def _stop(group, executable: str) -> None:
    proc = next(p for p in group.processes if p.executable == executable).process
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(timeout=15)


@pytest.mark.ros
@pytest.mark.slow
def test_doctor_against_the_sim_stack(tmp_path):
    from frankenbot.bringup.processes import NODE_EXECUTABLES, NodeGroup
    from frankenbot.bringup.ros_client import BrainClient

    params = {"sim": {"task": "put_in_bowl", "seed": 0},
              "memory": {"db_path": str(tmp_path / "memory.sqlite3"), "use_embeddings": False},
              "planner": {"planner_mode": "offline"}}
    with NodeGroup(setup="sim", log_dir=tmp_path / "logs", parameters=params) as group:
        group.start(NODE_EXECUTABLES)
        with BrainClient("doctor_test_client") as client:
            missing = client.wait_for_services(
                ["/frankenbot/submit_task", "/frankenbot/memory/get_context",
                 "/frankenbot_sim/reset"], timeout=120.0)
            client.wait_for_scene(after=0.0, timeout=60.0)
        group.check_alive()
        assert not missing, missing
        code, out = _doctor()
        assert code == 0, out
        assert "14 of 14 present" in out, out

        _stop(group, "memory")  # a node removed
        code, out = _doctor()
        assert code == 1, out
        assert "MISSING  node frankenbot_memory: not running" in out, out
        assert "missing: node frankenbot_memory\n" in out, out

        _stop(group, "sim")  # the robot's and the camera's topics removed
        code, out = _doctor()
        assert code == 1
        for name in ("node frankenbot_sim", "arm joint states", "arm trajectory topic",
                     "speed scaling", "camera colour", "camera depth", "camera info",
                     "gripper joint", "gripper command"):
            assert f"MISSING  {name}:" in out, (name, out)
        assert "ok  node frankenbot_planner" in out
