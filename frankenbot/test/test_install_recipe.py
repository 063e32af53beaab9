"""The install recipe for a plain ROS 2 Jazzy image (docker/Dockerfile, requirements/robot*.txt)
checked statically: Docker and the ROS apt repository are not available here, so these tests
hold the recipe to the facts it depends on (read from the upstream sources), not a build."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
import yaml
from conftest import PACKAGE_ROOT

REPO = PACKAGE_ROOT.parent
XACRO_NS = "{http://wiki.ros.org/xacro}"
MACROS = yaml.safe_load((PACKAGE_ROOT / "test" / "fixtures" / "robot" / "robotiq_macros.yaml")
                        .read_text())


def _pins(path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line and not line.startswith("-"):
            name, version = line.split("==")
            pins[name.strip().lower()] = version.strip()
    return pins


def test_robot_requirements_keep_apts_numpy_1():
    """apt's ROS Python extensions are built against numpy 1.x (Ubuntu 24.04: 1.26.4); a
    numpy 2 in the venv that sees them breaks their import."""
    pins = _pins(REPO / "requirements" / "robot.txt")
    assert pins["numpy"].startswith("1."), pins["numpy"]
    major, minor = (int(v) for v in pins["opencv-python-headless"].split(".")[:2])
    assert (major, minor) <= (4, 11), "opencv-python-headless >= 4.12 requires numpy >= 2"


def test_robot_requirements_pin_what_is_tested_here():
    """Same versions as base.txt (the tested set), except numpy (apt's) and torch's CPU
    build; nothing the robot needs is missing from them."""
    base = _pins(REPO / "requirements" / "base.txt")
    robot = {**_pins(REPO / "requirements" / "robot.txt"),
             **_pins(REPO / "requirements" / "robot-ml.txt")}
    for name, version in robot.items():
        if name == "numpy":
            continue
        expected = base[name] + ("+cpu" if name == "torch" else "")
        assert version == expected, (name, version, base[name])
    wanted = {"mujoco", "open3d-cpu", "opencv-python-headless", "ur-analytic-ik", "lark",
              "torch", "transformers", "openai"}
    assert wanted <= set(robot)


def test_dockerfile_builds_the_robotiq_revision_the_description_is_written_for():
    text = (REPO / "docker" / "Dockerfile").read_text()
    commit = re.search(r"ARG ROBOTIQ_COMMIT=([0-9a-f]{40})", text).group(1)
    assert commit == MACROS["pinned"]["commit"]
    assert 'checkout --detach "${ROBOTIQ_COMMIT}"' in text
    # robotiq_driver links the 'serial' library, which only the repository's .repos file names
    assert re.search(r"vcs import src < src/ros2_robotiq_gripper/\S+\.repos", text)
    assert "ros-jazzy-robotiq-" not in text  # apt's 0.0.1 does not fit (next test)
    # colcon with the system Python, before the venv (whose pip may bring a newer setuptools)
    assert text.index("colcon build") < text.index("python3 -m venv")


def _calls(macro: str) -> list[ET.Element]:
    root = ET.parse(PACKAGE_ROOT / "urdf" / "robotiq_on_tool0.urdf.xacro").getroot()
    return list(root.iter(f"{XACRO_NS}{macro}"))


def _fits(call: ET.Element, params: list[str]) -> list[str]:
    """Why a macro call does not fit a parameter list ([] = it fits)."""
    names = {p.rstrip(":=").lstrip("*") for p in params}
    required = {p for p in params if not p.endswith(":=") and not p.startswith("*")}
    problems = [f"unknown parameter {a}" for a in call.attrib if a not in names]
    problems += [f"missing {r}" for r in sorted(required - set(call.attrib))]
    blocks = [p.lstrip("*") for p in params if p.startswith("*")]
    if blocks and len(list(call)) != len(blocks):
        problems.append(f"needs {len(blocks)} block(s)")
    return problems


@pytest.mark.parametrize("macro", ["ur_to_robotiq", "robotiq_gripper"])
def test_gripper_description_fits_the_pinned_macros_not_the_released_ones(macro):
    """robotiq_on_tool0.urdf.xacro calls the macros of the pinned revision; the released
    0.0.1 (apt) takes ur_to_robotiq(prefix connected_to) and no grip-force parameters."""
    (call,) = _calls(macro)
    assert _fits(call, MACROS["pinned"][macro]) == []
    assert _fits(call, MACROS["released_0_0_1"][macro]) != []
