"""Launch files: `launch` / `launch_ros` do not install here, so they are checked two ways.

1. Statically (all files): they compile, define generate_launch_description, start only the
   package's console scripts and name only existing config files.
2. Executed (real_ur5e, gazebo) against TEST-ONLY fakes of the few launch API names they use
   (LaunchDescription, DeclareLaunchArgument, OpaqueFunction, LaunchConfiguration.perform,
   IncludeLaunchDescription, PythonLaunchDescriptionSource, launch_ros Node) and of
   get_package_share_directory, which knows only frankenbot and records every lookup. The fakes
   check nothing of launch's own semantics; what they show is what our code asks for: which
   packages it looks up (so which must be installed) for given arguments, and what it starts.
   One rule of launch's is modelled on purpose (``configurations_seen_by_includes``): how launch
   configurations reach included files, because a wrong scope there aborted the real launch.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from conftest import PACKAGE_ROOT
from robot_description_support import robotiq_urdf

from frankenbot.bringup import launch_plan
from frankenbot.errors import ConfigError

LAUNCH_FILES = sorted((PACKAGE_ROOT / "launch").glob("*.launch.py"))
NODE_SCRIPTS = {"planner", "executor", "perception", "memory", "sim"}
# documented upstream launch files (../shared/ROBOT_FACTS.md)
KNOWN_INCLUDES = {
    ("ur_robot_driver", "ur_control.launch.py"),
    ("realsense2_camera", "rs_launch.py"),
    ("ur_moveit_config", "ur_moveit.launch.py"),
    ("ur_simulation_gz", "ur_sim_control.launch.py"),
}


def _constants(tree: ast.AST) -> list[str]:
    """String constants in code (docstrings, which show example paths, left out)."""
    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and id(n) not in docs]


def test_the_three_setups_have_launch_files():
    assert {p.name for p in LAUNCH_FILES} >= {"sim.launch.py", "real_ur5e.launch.py",
                                               "gazebo.launch.py"}


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_compiles_and_defines_entry_point(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    compile(tree, str(path), "exec")
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "generate_launch_description" in names


def test_sim_launch_names_only_existing_executables_and_configs():
    path = PACKAGE_ROOT / "launch" / "sim.launch.py"
    tree = ast.parse(path.read_text())
    frankenbot_exes: set[str] = set()
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        kwargs = {k.arg: k.value for k in call.keywords if k.arg}
        pkg = kwargs.get("package")
        if isinstance(pkg, ast.Constant) and pkg.value == "frankenbot":
            exe = kwargs["executable"]
            if isinstance(exe, ast.Constant):
                frankenbot_exes.add(exe.value)
    for tup in (n for n in ast.walk(tree) if isinstance(n, ast.Assign)
                and isinstance(n.value, ast.Tuple) and getattr(n.targets[0], "id", "")
                == "BRAIN_NODES"):
        frankenbot_exes |= {e.value for e in tup.value.elts}
    assert frankenbot_exes and frankenbot_exes <= NODE_SCRIPTS


@pytest.mark.parametrize("path", [*LAUNCH_FILES, Path(launch_plan.__file__)],
                         ids=lambda p: p.name)
def test_launch_file_names_only_existing_configs(path):
    for const in _constants(ast.parse(path.read_text())):
        for name in re.findall(r"[\w-]+\.(?:yaml|sdf)\b", const):
            assert (PACKAGE_ROOT / "config" / name).is_file(), f"{path.name} names missing {name}"


# --- executing the launch files against fakes ------------------------------------------------
class PackageNotFoundError(KeyError):
    pass


class FakeLaunch:
    """TEST-ONLY stand-ins for the launch API names the launch files use (see module doc)."""

    def __init__(self, installed: set[str]) -> None:
        self.lookups: list[str] = []
        self.installed = installed

    def share(self, package: str) -> str:
        self.lookups.append(package)
        if package == "frankenbot":
            return str(PACKAGE_ROOT)
        if package in self.installed:
            return f"/opt/ros/jazzy/share/{package}"
        raise PackageNotFoundError(f"package '{package}' not found")

    def modules(self) -> dict[str, types.ModuleType]:
        def record(kind: str):
            def make(*args: Any, **kwargs: Any) -> dict:
                return {"kind": kind, "args": args, **kwargs}
            return make

        class LaunchConfiguration:
            def __init__(self, name: str) -> None:
                self.name = name

            def perform(self, context: Any) -> str:
                return context.launch_configurations[self.name]

        launch = types.ModuleType("launch")
        launch.LaunchDescription = lambda entities: {"kind": "description",
                                                     "entities": list(entities)}
        actions = types.ModuleType("launch.actions")
        actions.DeclareLaunchArgument = record("argument")
        actions.OpaqueFunction = record("opaque")
        actions.IncludeLaunchDescription = record("include")
        actions.GroupAction = record("group")
        substitutions = types.ModuleType("launch.substitutions")
        substitutions.LaunchConfiguration = LaunchConfiguration
        sources = types.ModuleType("launch.launch_description_sources")
        sources.PythonLaunchDescriptionSource = lambda path: {"kind": "source", "path": path}
        launch_ros = types.ModuleType("launch_ros")
        ros_actions = types.ModuleType("launch_ros.actions")
        ros_actions.Node = record("node")
        ament = types.ModuleType("ament_index_python")
        ament_packages = types.ModuleType("ament_index_python.packages")
        ament_packages.get_package_share_directory = self.share
        xacro = types.ModuleType("xacro")  # the gripper's URDF as xacro would render it
        xacro.process_file = lambda path, mappings: types.SimpleNamespace(
            toxml=lambda: robotiq_urdf({"file": path, **mappings}))
        return {"launch": launch, "launch.actions": actions,
                "launch.substitutions": substitutions,
                "launch.launch_description_sources": sources, "launch_ros": launch_ros,
                "launch_ros.actions": ros_actions, "ament_index_python": ament,
                "ament_index_python.packages": ament_packages, "xacro": xacro}


def run_launch_file(monkeypatch, name: str, installed: set[str] = frozenset(),
                    **overrides: str) -> tuple[FakeLaunch, list[dict]]:
    """generate_launch_description() and its OpaqueFunction, with ``overrides`` as arguments,
    on a machine where only frankenbot and ``installed`` are installed."""
    fake = FakeLaunch(set(installed))
    for module_name, module in fake.modules().items():
        monkeypatch.setitem(sys.modules, module_name, module)
    path = PACKAGE_ROOT / "launch" / name
    spec = importlib.util.spec_from_file_location(f"launch_under_test_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    entities = description["entities"]
    declared = {e["args"][0]: e["default_value"] for e in entities if e["kind"] == "argument"}
    unknown = set(overrides) - set(declared)
    assert not unknown, f"{name} declares no argument {unknown}"
    context = types.SimpleNamespace(launch_configurations={**declared, **overrides})
    actions = []
    for e in entities:
        if e["kind"] == "opaque":
            actions += e["function"](context)
    return fake, actions


EVERYTHING = frozenset({p for p, _ in KNOWN_INCLUDES})


def test_a_package_that_is_needed_and_missing_fails_the_launch(monkeypatch):
    with pytest.raises(PackageNotFoundError, match="ur_moveit_config"):
        run_launch_file(monkeypatch, "real_ur5e.launch.py", motion_backend="moveit",
                        launch_driver="false", launch_camera="false", launch_gripper="false")


def _nodes(actions: list[dict]) -> list[dict]:
    return [a for a in actions if a["kind"] == "node"]


def _flatten(actions: list[dict]) -> list[dict]:
    out = []
    for a in actions:
        out.append(a)
        if a["kind"] == "group":
            out += _flatten(list(a["args"][0]))
    return out


def _includes(actions: list[dict]) -> dict[str, dict[str, str]]:
    return {Path(a["args"][0]["path"]).name: dict(a["launch_arguments"])
            for a in _flatten(actions) if a["kind"] == "include"}


def test_real_launch_builds_with_jtc_and_no_driver_without_those_packages(monkeypatch):
    """motion_backend:=jtc launch_driver:=false: ur_moveit_config, ur_robot_driver and the
    camera / gripper packages are never looked up, so they need not be installed."""
    fake, actions = run_launch_file(monkeypatch, "real_ur5e.launch.py", motion_backend="jtc",
                                    launch_driver="false", launch_camera="false",
                                    launch_gripper="false")
    assert set(fake.lookups) == {"frankenbot"}
    assert _includes(actions) == {}
    nodes = _nodes(actions)
    assert sorted(n["executable"] for n in nodes) == sorted(launch_plan.BRAIN_NODES)
    executor = next(n for n in nodes if n["executable"] == "executor")
    assert {"motion_backend": "jtc"} in executor["parameters"]
    assert executor["parameters"][0].endswith("config/real_ur5e.yaml")


def test_real_launch_full_setup_passes_what_the_real_arm_needs(monkeypatch, tmp_path):
    calibration = tmp_path / "ur5e_calibration.yaml"
    calibration.write_text("kinematics: {}\n")  # ur_calibration's output (content: driver's)
    camera = PACKAGE_ROOT / "config" / "camera.yaml"
    fake, actions = run_launch_file(
        monkeypatch, "real_ur5e.launch.py", installed=EVERYTHING,
        robot_ip="192.168.56.101", motion_backend="moveit",
        kinematics_params_file=str(calibration), camera_calibration=str(camera))
    assert set(fake.lookups) >= {"ur_robot_driver", "realsense2_camera", "ur_moveit_config"}
    includes = _includes(actions)
    driver = includes["ur_control.launch.py"]
    assert driver["initial_joint_controller"] == "scaled_joint_trajectory_controller"
    assert driver["kinematics_params_file"] == str(calibration)
    assert driver["robot_ip"] == "192.168.56.101"
    assert includes["rs_launch.py"]["publish_tf"] == "false"  # our static TF is the only one
    assert includes["ur_moveit.launch.py"]["ur_type"] == "ur5e"
    nodes = _nodes(actions)
    # the camera pose: one static transform base_link -> optical frame, from the file's numbers
    tf = next(n for n in nodes if n["executable"] == "static_transform_publisher")
    args = tf["arguments"]
    cam = yaml.safe_load(camera.read_text())["camera"]
    values = {args[i]: args[i + 1] for i in range(0, len(args), 2)}
    assert values["--frame-id"] == "base_link"
    assert values["--child-frame-id"] == "camera_color_optical_frame"
    assert [float(values[k]) for k in ("--x", "--y", "--z")] == pytest.approx(cam["translation"])
    assert [float(values[k]) for k in ("--qx", "--qy", "--qz", "--qw")] == pytest.approx(
        cam["quaternion"], abs=1e-8)
    # the gripper: its own controller manager, namespaced so nothing clashes with the driver's
    gripper = [n for n in nodes if n.get("namespace") == launch_plan.GRIPPER_NAMESPACE]
    assert {n["executable"] for n in gripper} == {"ros2_control_node", "robot_state_publisher",
                                                  "spawner"}
    spawned = [n["arguments"] for n in gripper if n["executable"] == "spawner"]
    assert all(a[-1] == "/robotiq/controller_manager" for a in spawned)
    assert {a[0] for a in spawned} == set(launch_plan.GRIPPER_CONTROLLERS)
    assert not [n for n in nodes if n["executable"] in ("ros2_control_node",
                                                         "robot_state_publisher")
                and not n.get("namespace")]  # nothing un-namespaced next to the UR driver's
    control = next(n for n in gripper if n["executable"] == "ros2_control_node")
    assert "robotiq_on_tool0.urdf.xacro" in control["parameters"][0]["robot_description"]
    assert control["parameters"][1].endswith("config/robotiq_controllers.yaml")


def test_real_launch_refuses_missing_robot_ip_and_calibration_files(monkeypatch, tmp_path):
    with pytest.raises(ConfigError, match="robot_ip"):
        run_launch_file(monkeypatch, "real_ur5e.launch.py", installed=EVERYTHING)
    with pytest.raises(ConfigError, match="kinematics_params_file"):
        run_launch_file(monkeypatch, "real_ur5e.launch.py", installed=EVERYTHING,
                        robot_ip="10.0.0.2",
                        kinematics_params_file=str(tmp_path / "none.yaml"))
    with pytest.raises(ConfigError, match="calibrate camera"):
        run_launch_file(monkeypatch, "real_ur5e.launch.py", launch_driver="false",
                        camera_calibration=str(tmp_path / "none.yaml"))
    stale = tmp_path / "stale.yaml"
    stale.write_text(yaml.safe_dump({"camera": {"translation": [0, 0, 1],
                                                "quaternion": [0, 0, 0, 1],
                                                "T_base_optical": [[1, 0, 0, 0]] * 4}}))
    with pytest.raises(ConfigError, match="stale pose key"):
        run_launch_file(monkeypatch, "real_ur5e.launch.py", launch_driver="false",
                        camera_calibration=str(stale))


def test_mock_hardware_smoke_setup_needs_no_robot_ip(monkeypatch):
    _, actions = run_launch_file(monkeypatch, "real_ur5e.launch.py", installed=EVERYTHING,
                                 use_mock_hardware="true", launch_camera="false")
    driver = _includes(actions)["ur_control.launch.py"]
    assert driver["use_mock_hardware"] == "true"
    control = next(n for n in _nodes(actions) if n["executable"] == "ros2_control_node")
    assert "'use_fake_hardware': 'true'" in control["parameters"][0]["robot_description"]


def test_gazebo_launch_passes_the_initial_controller_explicitly(monkeypatch):
    fake, actions = run_launch_file(monkeypatch, "gazebo.launch.py", installed=EVERYTHING,
                                    planner="offline")
    assert set(fake.lookups) == {"frankenbot", "ur_simulation_gz"}
    sim = _includes(actions)["ur_sim_control.launch.py"]
    assert sim["initial_joint_controller"] == "scaled_joint_trajectory_controller"
    assert sim["world_file"].endswith("config/gazebo_tabletop.sdf")
    planner = next(n for n in _nodes(actions) if n["executable"] == "planner")
    assert {"planner_mode": "offline"} in planner["parameters"]
    assert {"use_sim_time": True} in planner["parameters"]


def test_every_package_a_plan_can_start_is_an_exec_depend(tmp_path):
    from catkin_pkg.package import parse_package

    declared = {d.name for d in parse_package(str(PACKAGE_ROOT / "package.xml")).exec_depends}
    camera = str(PACKAGE_ROOT / "config" / "camera.yaml")
    full = launch_plan.real_robot_plan({
        "robot_ip": "10.0.0.2", "motion_backend": "moveit", "launch_driver": "true",
        "launch_camera": "true", "launch_gripper": "true", "camera_calibration": camera},
        PACKAGE_ROOT)
    packages = full.packages() | launch_plan.gazebo_plan({}, PACKAGE_ROOT).packages()
    assert packages - declared == set(), packages - declared
    for inc in full.includes:
        assert (inc.package, inc.launch_file) in KNOWN_INCLUDES
    assert {"robotiq_description", "robotiq_controllers", "tf2_ros_py"} <= declared


# --- launch-configuration scoping ------------------------------------------------------------
# The launch arguments each included upstream file declares (with a default) or reads from the
# configurations it inherits, from the jazzy sources: ur_robot_driver/launch/ur_control.launch.py
# together with ur_rsp.launch.py, which it includes passing only robot_ip and ur_type (so rsp
# sees everything ur_control's scope holds); realsense2_camera/launch/rs_launch.py;
# ur_moveit_config/launch/ur_moveit.launch.py.
UPSTREAM_ARGUMENTS = {
    "ur_control.launch.py": {
        "ur_type", "robot_ip", "safety_limits", "safety_pos_margin", "safety_k_position",
        "controllers_file", "description_launchfile", "tf_prefix", "use_mock_hardware",
        "mock_sensor_commands", "headless_mode", "controller_spawner_timeout",
        "initial_joint_controller", "activate_joint_controller", "launch_rviz",
        "rviz_config_file", "launch_dashboard_client", "use_tool_communication", "tool_parity",
        "tool_baud_rate", "tool_stop_bits", "tool_rx_idle_chars", "tool_tx_idle_chars",
        "tool_device_name", "tool_tcp_port", "tool_voltage", "reverse_ip",
        "script_command_port", "reverse_port", "script_sender_port", "trajectory_port",
        "update_rate_config_file", "verify_robot_model", "joint_limit_params_file",
        "kinematics_params_file", "physical_params_file", "visual_params_file",
        "description_file"},
    "rs_launch.py": {
        "camera_name", "camera_namespace", "serial_no", "usb_port_id", "device_type",
        "config_file", "json_file_path", "initial_reset", "log_level", "output",
        "enable_color", "rgb_camera.color_profile", "enable_depth", "depth_module.depth_profile",
        "enable_sync", "publish_tf", "tf_publish_rate", "pointcloud.enable",
        "align_depth.enable", "wait_for_device_timeout", "reconnect_timeout"},
    "ur_moveit.launch.py": {"launch_rviz", "ur_type", "warehouse_sqlite_path", "launch_servo",
                            "use_sim_time", "publish_robot_description_semantic"},
}


def configurations_seen_by_includes(actions: list[dict], parent: dict[str, str]
                                    ) -> dict[str, dict[str, str]]:
    """The launch configurations each included file starts with, by ros2/launch's rules
    (jazzy): an IncludeLaunchDescription sets its arguments into the configurations in force
    and does not scope them (include_launch_description.py); a GroupAction with scoped=True
    pushes a copy, and with forwarding=False clears it first, keeping only its own
    launch_configurations (group_action.py, reset_launch_configurations.py)."""
    seen: dict[str, dict[str, str]] = {}

    def walk(items: list[dict], context: dict[str, str]) -> None:
        for a in items:
            if a["kind"] == "group":
                scoped = a.get("scoped", True)
                inner = context if not scoped else (dict(context) if a.get("forwarding", True)
                                                     else {})
                inner.update(a.get("launch_configurations") or {})
                walk(list(a["args"][0]), inner)
            elif a["kind"] == "include":
                context.update(dict(a["launch_arguments"]))
                seen[Path(a["args"][0]["path"]).name] = dict(context)

    walk(actions, dict(parent))
    return seen


@pytest.mark.parametrize("overrides", [
    {"robot_ip": "192.168.56.101", "motion_backend": "moveit"},
    {"use_mock_hardware": "true", "launch_camera": "false"},  # docker/smoke_mock_hardware.sh
], ids=["robot", "mock-smoke"])
def test_included_files_get_their_own_defaults_not_ours(monkeypatch, overrides):
    """Every argument an upstream file declares is either passed by us on purpose or left to
    its own default: none of our declared arguments (kinematics_params_file "" above all, which
    made xacro fail on ``kinematics_params:=``) may reach it by launch's global scope."""
    _, actions = run_launch_file(monkeypatch, "real_ur5e.launch.py", installed=EVERYTHING,
                                 **overrides)
    path = PACKAGE_ROOT / "launch" / "real_ur5e.launch.py"
    parent = {name: default for name, (default, _) in _declared_arguments(monkeypatch, path)}
    parent.update(overrides)
    seen = configurations_seen_by_includes(actions, parent)
    assert seen, "no includes evaluated"
    passed = _includes(actions)
    for name, context in seen.items():
        leaked = {k: context[k] for k in UPSTREAM_ARGUMENTS[name] & set(context)
                  if k not in passed[name]}
        assert not leaked, f"{name} would see our {leaked} instead of its own defaults"


def _declared_arguments(monkeypatch, path: Path) -> list[tuple[str, tuple[str, str]]]:
    fake = FakeLaunch(set(EVERYTHING))
    for module_name, module in fake.modules().items():
        monkeypatch.setitem(sys.modules, module_name, module)
    spec = importlib.util.spec_from_file_location(f"declared_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.ARGUMENTS.items())


# --- the gripper controller against what the Robotiq hardware exports ---------------------------
@pytest.mark.parametrize("hardware", ["hardware", "mock"])
def test_gripper_controller_claims_only_exported_interfaces(hardware):
    """robotiq_controllers.yaml activates on the real driver and on mock hardware: every
    interface parallel_gripper_action_controller claims is one the hardware exports."""
    from frankenbot import robotiq

    data = yaml.safe_load((PACKAGE_ROOT / "config" / "robotiq_controllers.yaml").read_text())
    assert robotiq.controller_interface_problems(data, hardware) == []


def test_gripper_controller_check_names_upstreams_effort_interface():
    """Upstream's robotiq_controllers.yaml (ros2_robotiq_gripper main) claims
    robotiq_85_left_knuckle_joint/effort and /velocity, which neither hardware exports; the
    driver's real names pass on the hardware but not on the mock."""
    from frankenbot import robotiq

    def controllers(effort: str, velocity: str) -> dict:
        return {"controller_manager": {"ros__parameters": {"robotiq_gripper_controller": {
                    "type": robotiq.PARALLEL_GRIPPER_TYPE}}},
                "robotiq_gripper_controller": {"ros__parameters": {
                    "joint": robotiq.KNUCKLE_JOINT, "max_effort_interface": effort,
                    "max_velocity_interface": velocity}}}

    upstream = controllers(f"{robotiq.KNUCKLE_JOINT}/effort", f"{robotiq.KNUCKLE_JOINT}/velocity")
    for hardware in ("hardware", "mock"):
        problems = robotiq.controller_interface_problems(upstream, hardware)
        assert len(problems) == 2 and "/effort" in problems[0], problems
    driver = controllers(f"{robotiq.KNUCKLE_JOINT}/set_gripper_max_effort",
                         f"{robotiq.KNUCKLE_JOINT}/set_gripper_max_velocity")
    assert robotiq.controller_interface_problems(driver, "hardware") == []
    assert len(robotiq.controller_interface_problems(driver, "mock")) == 2


def test_launch_refuses_a_gripper_controller_that_cannot_activate(monkeypatch, tmp_path):
    bad = tmp_path / "robotiq_controllers.yaml"
    text = (PACKAGE_ROOT / "config" / "robotiq_controllers.yaml").read_text()
    bad.write_text(text.replace("    state_interfaces:", "    max_effort_interface: "
                                "robotiq_85_left_knuckle_joint/effort\n    state_interfaces:"))
    with pytest.raises(ConfigError, match="effort"):
        launch_plan.check_gripper_controllers(bad, mock=False)
    launch_plan.check_gripper_controllers(PACKAGE_ROOT / "config" / "robotiq_controllers.yaml",
                                          mock=True)


# --- a gripper on the wrist's tool connector ---------------------------------------------------
def _gripper_com_port(actions: list[dict]) -> str:
    control = next(n for n in _nodes(actions) if n["executable"] == "ros2_control_node")
    description = control["parameters"][0]["robot_description"]
    match = re.search(r"'com_port': '([^']*)'", description)
    assert match, description
    return match.group(1)


def test_wrist_wired_gripper_gets_the_drivers_tool_communication(monkeypatch):
    """The e-Series 2F-85 kit plugs into the wrist: the driver must forward the tool's RS-485
    (use_tool_communication, 24 V, the Robotiq's line settings) to a local device, and the
    gripper's hardware must open that device, not /dev/ttyUSB0."""
    _, actions = run_launch_file(monkeypatch, "real_ur5e.launch.py", installed=EVERYTHING,
                                 robot_ip="192.168.56.101")
    driver = _includes(actions)["ur_control.launch.py"]
    assert driver["use_tool_communication"] == "true"
    assert driver["tool_voltage"] == "24"
    assert driver["tool_device_name"] == "/tmp/ttyUR"
    assert (driver["tool_baud_rate"], driver["tool_parity"], driver["tool_stop_bits"]) == (
        "115200", "0", "1")
    assert _gripper_com_port(actions) == "/tmp/ttyUR"
    _, actions = run_launch_file(monkeypatch, "real_ur5e.launch.py", installed=EVERYTHING,
                                 robot_ip="192.168.56.101", tool_device_name="/tmp/ttyTool")
    assert _gripper_com_port(actions) == "/tmp/ttyTool"
    assert _includes(actions)["ur_control.launch.py"]["tool_device_name"] == "/tmp/ttyTool"


def test_usb_gripper_and_mock_hardware_leave_tool_communication_off(monkeypatch):
    _, actions = run_launch_file(monkeypatch, "real_ur5e.launch.py", installed=EVERYTHING,
                                 robot_ip="192.168.56.101", gripper_connection="usb",
                                 gripper_com_port="/dev/ttyUSB1")
    assert "use_tool_communication" not in _includes(actions)["ur_control.launch.py"]
    assert _gripper_com_port(actions) == "/dev/ttyUSB1"
    _, actions = run_launch_file(monkeypatch, "real_ur5e.launch.py", installed=EVERYTHING,
                                 use_mock_hardware="true", launch_camera="false")
    assert "use_tool_communication" not in _includes(actions)["ur_control.launch.py"]


def test_wrist_wired_gripper_arguments_are_checked(monkeypatch):
    with pytest.raises(ConfigError, match="gripper_connection"):
        run_launch_file(monkeypatch, "real_ur5e.launch.py", installed=EVERYTHING,
                        robot_ip="10.0.0.2", gripper_connection="bluetooth")
    with pytest.raises(ConfigError, match="24"):
        run_launch_file(monkeypatch, "real_ur5e.launch.py", installed=EVERYTHING,
                        robot_ip="10.0.0.2", tool_voltage="12")


# --- Gazebo: the camera's frame is published ---------------------------------------------------
def test_gazebo_publishes_the_camera_frame_its_images_carry(monkeypatch):
    """gazebo.yaml takes the camera pose from TF (camera_config ""): the frame the bridged
    images are stamped with (the sensor's gz_frame_id) must be published, base_link -> it,
    at the SDF's camera pose turned into an optical frame (z along the link's x)."""
    import xml.etree.ElementTree as ET

    from frankenbot.transforms import QuatXYZW

    cfg = yaml.safe_load((PACKAGE_ROOT / "config" / "gazebo.yaml").read_text())
    assert cfg["/**/frankenbot_perception"]["ros__parameters"]["camera_config"] == ""
    _, actions = run_launch_file(monkeypatch, "gazebo.launch.py", installed=EVERYTHING)
    tf = next(n for n in _nodes(actions) if n["executable"] == "static_transform_publisher")
    args = tf["arguments"]
    values = {args[i]: args[i + 1] for i in range(0, len(args), 2)}
    root = ET.parse(PACKAGE_ROOT / "config" / "gazebo_tabletop.sdf").getroot()
    sensor_frame = root.find(".//model[@name='rgbd_camera']//sensor/gz_frame_id").text
    assert values["--frame-id"] == "base_link" and values["--child-frame-id"] == sensor_frame
    pose = [float(v) for v in root.find(".//model[@name='rgbd_camera']/pose").text.split()]
    assert [float(values[k]) for k in ("--x", "--y", "--z")] == pytest.approx(pose[:3])
    rot = QuatXYZW(*(float(values[k]) for k in ("--qx", "--qy", "--qz", "--qw"))).matrix()
    roll, pitch, yaw = pose[3:]
    view = np.array([np.cos(yaw) * np.cos(pitch), np.sin(yaw) * np.cos(pitch), -np.sin(pitch)])
    assert rot[:, 2] == pytest.approx(view, abs=1e-6)  # optical z = where the camera looks
    assert rot[2, 0] == pytest.approx(0.0, abs=1e-6)  # no roll: image x stays horizontal
    assert {"use_sim_time": True} in tf["parameters"]


def test_executor_gets_the_tcp_offset_of_the_gripper_description(monkeypatch):
    """One source for the TCP: the launch computes tcp_offset from the gripper's rendered
    description and gives it to the executor (without a gripper, the executor's default)."""
    from frankenbot import tcp

    _, actions = run_launch_file(monkeypatch, "real_ur5e.launch.py", installed=EVERYTHING,
                                 robot_ip="192.168.56.101")
    executor = next(n for n in _nodes(actions) if n["executable"] == "executor")
    offsets = [p["tcp_offset"] for p in executor["parameters"]
               if isinstance(p, dict) and "tcp_offset" in p]
    assert offsets == [pytest.approx(tcp.tcp_offset_from_description(robotiq_urdf()))]
    _, actions = run_launch_file(monkeypatch, "real_ur5e.launch.py", installed=EVERYTHING,
                                 robot_ip="192.168.56.101", launch_gripper="false")
    executor = next(n for n in _nodes(actions) if n["executable"] == "executor")
    assert not [p for p in executor["parameters"] if isinstance(p, dict) and "tcp_offset" in p]
