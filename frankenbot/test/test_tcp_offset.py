"""The TCP offset has one source, the gripper's description (frankenbot.tcp), and doctor
checks the executor's value against the description that is running."""

from __future__ import annotations

import numpy as np
import pytest
from robot_description_support import robotiq_urdf

from frankenbot import robotiq, tcp
from frankenbot.bringup.doctor import Status, tcp_check
from frankenbot.errors import ConfigError, SimError
from frankenbot.motion.config import load_arm_config


def test_description_tcp_is_the_pad_centre_at_the_reference_grip():
    urdf = robotiq_urdf()
    offset = tcp.tcp_offset_from_description(urdf)
    low, high = tcp.tcp_range(urdf)
    # the 2F-85's fingertips rise on their linkage as they close: 14 mm over the stroke
    assert low < offset < high and 0.012 < high - low < 0.016
    assert offset == pytest.approx(0.1527, abs=0.001)
    # the pad frames are where the pads are: their gap is the commanded finger gap
    joints = tcp.parse_joints(urdf)
    for width in (0.0, tcp.REFERENCE_WIDTH, robotiq.STROKE):
        knuckle = robotiq.width_to_position(width)
        positions = {name: f * knuckle for name, f in tcp.LINKAGE.items()}
        left, right = (tcp.link_pose(joints, pad, positions)[:3, 3] for pad in tcp.PAD_LINKS)
        assert np.linalg.norm(left - right) == pytest.approx(width, abs=0.004), width


def test_sim_gripper_offset_differs_from_the_real_grippers():
    """safety.yaml's 0.145 m is the sim gripper's; a real executor left on it would put the
    pads 8 mm lower than planned, a third of the 24 mm table clearance."""
    sim = load_arm_config().kinematics.tcp_offset
    assert abs(sim - tcp.tcp_offset_from_description(robotiq_urdf())) > tcp.TOLERANCE


def test_doctor_tcp_check_compares_the_executor_with_the_description():
    urdf = robotiq_urdf()
    described = tcp.tcp_offset_from_description(urdf)
    assert tcp_check(described + 0.001, urdf).status == Status.OK
    wrong = tcp_check(0.15 + 0.01, urdf)
    assert wrong.status == Status.MISSING and "description 0.1528" in wrong.detail
    fallback = tcp_check(-1.0, urdf)  # parameter unset: safety.yaml's sim value is used
    assert fallback.status == Status.MISSING and "config/safety.yaml" in fallback.detail
    assert tcp_check(described, None).status == Status.MISSING
    assert tcp_check(None, urdf).status == Status.MISSING
    assert tcp_check(described, "<robot/>").status == Status.MISSING  # no pad frames


def test_a_description_without_the_chain_is_refused():
    with pytest.raises(ConfigError, match="no chain"):
        tcp.tcp_offset_from_description("<robot><link name='tool0'/></robot>")
    with pytest.raises(ConfigError, match="not valid XML"):
        tcp.parse_joints("<robot")


def test_the_twins_gripper_description_is_the_sim_gripper_the_executor_assumes():
    """The driver twin serves the sim gripper's URDF on /robotiq/robot_description: its pad
    centre is the sim's TCP (safety.yaml's tcp_offset, the twin executor's), the pads are the
    commanded gap apart, and doctor's TCP check passes for the executor's default (-1)."""
    pytest.importorskip("mujoco")
    from frankenbot.sim import model

    closed = 0.7929  # the twin's knuckle at closed (config/real_ur5e.yaml)
    urdf = model.gripper_description(closed)
    assert tcp.tcp_offset_from_description(urdf) == pytest.approx(model.TCP_OFFSET, abs=1e-6)
    assert model.TCP_OFFSET == pytest.approx(load_arm_config().kinematics.tcp_offset)
    joints = tcp.parse_joints(urdf)
    for width in (0.0, tcp.REFERENCE_WIDTH, robotiq.STROKE):
        knuckle = {robotiq.KNUCKLE_JOINT: robotiq.width_to_position(width, closed)}
        left, right = (tcp.link_pose(joints, pad, knuckle)[:3, 3] for pad in tcp.PAD_LINKS)
        assert np.linalg.norm(left - right) == pytest.approx(width, abs=1e-6), width
    assert tcp_check(-1.0, urdf).status == Status.OK
    with pytest.raises(SimError, match="closed knuckle"):
        model.gripper_description(0.0)
