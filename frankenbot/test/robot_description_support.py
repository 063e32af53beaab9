"""TEST-ONLY: the URDF that xacro renders from urdf/robotiq_on_tool0.urdf.xacro.

xacro and robotiq_description do not install here. The upstream joints come from
fixtures/robot/robotiq_2f85_joints.yaml (read from ros2_robotiq_gripper); our own joints (the
pad frames) are taken from the xacro file itself, so a change there is seen by the tests.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

TEST_DIR = Path(__file__).resolve().parent
PACKAGE = TEST_DIR.parent


def robotiq_urdf(mappings: dict | None = None) -> str:
    joints = yaml.safe_load((TEST_DIR / "fixtures" / "robot" / "robotiq_2f85_joints.yaml")
                            .read_text())
    robot = ET.Element("robot", name="frankenbot_robotiq")
    links = set()
    for name, (parent, child, kind, xyz, axis) in joints.items():
        j = ET.SubElement(robot, "joint", name=name, type=kind)
        ET.SubElement(j, "parent", link=parent)
        ET.SubElement(j, "child", link=child)
        ET.SubElement(j, "origin", xyz=" ".join(map(str, xyz)), rpy="0 0 0")
        if axis is not None:
            ET.SubElement(j, "axis", xyz=" ".join(map(str, axis)))
        links |= {parent, child}
    ours = ET.parse(PACKAGE / "urdf" / "robotiq_on_tool0.urdf.xacro").getroot()
    for j in ours.findall("joint"):
        robot.append(j)
        links |= {j.find("parent").get("link"), j.find("child").get("link")}
    for link in sorted(links):
        ET.SubElement(robot, "link", name=link)
    text = ET.tostring(robot, encoding="unicode")
    return text if mappings is None else f"<!-- {mappings} -->{text}"
