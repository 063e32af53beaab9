"""Launch files: `launch` is not installable here, so they are compiled and checked statically:
every executable they start is one of the package's console scripts, every config file they name
exists, and every included launch file is the documented one of its package."""

from __future__ import annotations

import ast
import re

import pytest
from conftest import PACKAGE_ROOT

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
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str)]


def test_the_three_setups_have_launch_files():
    assert {p.name for p in LAUNCH_FILES} >= {"sim.launch.py", "real_ur5e.launch.py",
                                               "gazebo.launch.py"}


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_compiles_and_defines_entry_point(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    compile(tree, str(path), "exec")
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "generate_launch_description" in names


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_names_only_existing_executables_and_configs(path):
    tree = ast.parse(path.read_text())
    frankenbot_exes: set[str] = set()
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        kwargs = {k.arg: k.value for k in call.keywords if k.arg}
        pkg = kwargs.get("package")
        if isinstance(pkg, ast.Constant) and pkg.value == "frankenbot":
            exe = kwargs["executable"]
            if isinstance(exe, ast.Constant):
                frankenbot_exes.add(exe.value)
            else:  # executable=exe inside a comprehension over a tuple of names
                assert isinstance(exe, ast.Name)
    for tup in (n for n in ast.walk(tree) if isinstance(n, ast.Assign)
                and isinstance(n.value, ast.Tuple) and getattr(n.targets[0], "id", "")
                == "BRAIN_NODES"):
        frankenbot_exes |= {e.value for e in tup.value.elts}
    assert frankenbot_exes, "starts no frankenbot node"
    assert frankenbot_exes <= NODE_SCRIPTS, frankenbot_exes - NODE_SCRIPTS
    for const in _constants(tree):
        for name in re.findall(r"[\w-]+\.(?:yaml|sdf)\b", const):
            assert (PACKAGE_ROOT / "config" / name).is_file(), f"{path.name} names missing {name}"


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_included_launch_files_are_the_documented_ones(path):
    text = path.read_text()
    for package, launch_file in re.findall(r'_include\("([\w]+)", "([\w.]+)"', text):
        assert (package, launch_file) in KNOWN_INCLUDES
    for package in re.findall(r'get_package_share_directory\("(\w+)"\)', text):
        assert package in {"frankenbot"} | {p for p, _ in KNOWN_INCLUDES}
