"""The workspace: package metadata, the colcon install, console scripts, set-up checks, lint."""

from __future__ import annotations

import configparser
import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PACKAGE_ROOT, REPO_ROOT

INSTALL = REPO_ROOT / "install"
NODES = ("planner", "executor", "perception", "memory", "sim")


@pytest.mark.parametrize("package", ["frankenbot", "frankenbot_interfaces"])
def test_package_xml_is_valid_format_3(package):
    from catkin_pkg.package import parse_package

    pkg = parse_package(str(REPO_ROOT / package / "package.xml"))
    pkg.validate()
    assert pkg.package_format == 3
    assert pkg.name == package
    build_type = pkg.get_build_type()
    assert build_type == ("ament_python" if package == "frankenbot" else "ament_cmake")


def test_frankenbot_package_declares_its_ros_imports():
    """Every ROS package the Python code imports is an exec_depend (one dependency per import)."""
    from catkin_pkg.package import parse_package

    pkg = parse_package(str(PACKAGE_ROOT / "package.xml"))
    declared = {d.name for d in pkg.exec_depends}
    # Python module -> the ROS package that installs it (where the names differ)
    module_package = {"tf2_ros": "tf2_ros_py", "moveit": "moveit_py", "xacro": "xacro",
                      "moveit_configs_utils": "moveit_configs_utils"}
    ros_imports = set()
    for path in (PACKAGE_ROOT / "frankenbot").rglob("*.py"):
        for line in path.read_text().splitlines():
            words = line.strip().split()
            if len(words) >= 2 and words[0] in ("import", "from"):
                root = words[1].split(".")[0]
                if root.endswith(("_msgs", "_srvs", "_interfaces")) or root in (
                        "rclpy", "ament_index_python", "launch", "launch_ros"):
                    ros_imports.add(root)
                elif root in module_package:
                    ros_imports.add(module_package[root])
    assert ros_imports - declared == set(), f"undeclared ROS imports: {ros_imports - declared}"


def test_colcon_install_holds_share_files():
    share = INSTALL / "frankenbot" / "share" / "frankenbot"
    assert (share / "package.xml").is_file()
    for folder, pattern in (("launch", "*.launch.py"), ("config", "*.yaml"), ("skills", "*.fb"),
                            ("urdf", "*.xacro")):
        source = sorted(p.name for p in (PACKAGE_ROOT / folder).glob(pattern))
        installed = sorted(p.name for p in (share / folder).glob(pattern))
        assert installed == source, f"{folder}: installed {installed} != source {source}"
    assert (share / "config" / "sim.yaml").exists()
    marker = INSTALL / "frankenbot" / "share" / "ament_index" / "resource_index" / "packages"
    assert (marker / "frankenbot").exists()
    assert (INSTALL / "frankenbot_interfaces" / "share" / "frankenbot_interfaces" / "msg"
            / "AnomalyEvent.msg").exists()


def test_setup_cfg_puts_scripts_where_ros2_run_finds_them():
    cfg = configparser.ConfigParser()
    cfg.read(PACKAGE_ROOT / "setup.cfg")
    assert cfg["develop"]["script_dir"] == "$base/lib/frankenbot"
    assert cfg["install"]["install_scripts"] == "$base/lib/frankenbot"
    lib = INSTALL / "frankenbot" / "lib" / "frankenbot"
    for exe in NODES + ("frankenbot",):
        assert (lib / exe).is_file(), f"ros2 run frankenbot {exe} would not find {lib / exe}"


@pytest.mark.parametrize("script", NODES + ("frankenbot",))
def test_console_scripts_resolve_to_callables(script):
    from importlib.metadata import entry_points

    eps = {ep.name: ep for ep in entry_points(group="console_scripts") if
           ep.value.startswith("frankenbot.")}
    assert script in eps, f"console script {script!r} not declared"
    module_name, _, attr = eps[script].value.partition(":")
    module = importlib.import_module(module_name)
    assert callable(getattr(module, attr))


def test_frankenbot_help_runs_without_traceback():
    out = subprocess.run([sys.executable, "-m", "frankenbot.cli", "--help"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "usage: frankenbot" in out.stdout
    assert "Traceback" not in out.stderr


def _tool_dir_without(tmp_path: Path, missing: str) -> Path:
    """A PATH folder holding links to the tools check_prereqs.sh uses, except ``missing``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "dpkg-query", "grep", "id", "cc", "c++", "cmake", "make", "python3.11",
                 "env", "cat", "dirname"):
        found = shutil.which(tool)
        if found and tool != missing:
            (bin_dir / tool).symlink_to(found)
    return bin_dir


@pytest.mark.parametrize("missing", ["cmake", "cc"])
def test_setup_names_a_missing_prerequisite(tmp_path, missing):
    if shutil.which("dpkg-query") is None:
        pytest.skip("not a Debian system")
    bin_dir = _tool_dir_without(tmp_path, missing)
    env = dict(os.environ, PATH=str(bin_dir))
    out = subprocess.run([str(bin_dir / "bash"), str(REPO_ROOT / "scripts" / "check_prereqs.sh")],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode != 0
    assert f"missing prerequisite: '{missing}'" in out.stdout
    assert "Traceback" not in out.stdout + out.stderr


def test_setup_passes_prerequisite_check_here():
    out = subprocess.run(["bash", str(REPO_ROOT / "scripts" / "check_prereqs.sh")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_ruff_is_clean():
    ruff = Path(sys.executable).parent / "ruff"
    out = subprocess.run([str(ruff), "check", str(PACKAGE_ROOT)], capture_output=True, text=True,
                         cwd=REPO_ROOT, timeout=120)
    assert out.returncode == 0, out.stdout[-4000:]
