"""Checks a setup's parameter files against the nodes' settings schemas before anything starts.

ROS ignores a parameter a node never declares, so a misspelt key in ``config/sim.yaml`` would be
silently without effect; a wrong type or an out-of-range value stops the node at start-up, one
node at a time. ``check_params_file`` reports every such problem of a file at once, with the
file, the node, the key and what is expected (``frankenbot up`` runs it before it starts any
process; the tests run it on every shipped file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import yaml

from frankenbot import settings
from frankenbot.errors import ConfigError
from frankenbot.execution.settings import ExecutorNodeSettings
from frankenbot.memory.config import MemoryConfig
from frankenbot.perception.config import PerceptionNodeSettings
from frankenbot.planner.settings import PlannerNodeSettings
from frankenbot.sim.settings import SimNodeSettings

NODE_SCHEMAS: dict[str, type] = {
    "frankenbot_perception": PerceptionNodeSettings,
    "frankenbot_executor": ExecutorNodeSettings,
    "frankenbot_planner": PlannerNodeSettings,
    "frankenbot_memory": MemoryConfig,
    "frankenbot_sim": SimNodeSettings,
}
ROS_PARAMETERS = ("use_sim_time",)  # declared by rclpy itself on every node


def check_node_parameters(node: str, params: Mapping[str, Any], where: str = "") -> str:
    """'' when ``params`` (a node's ros__parameters, nested or flat) fit its schema, else the
    problem; nodes FrankenBot does not own (drivers, MoveIt) are not checked."""
    schema = NODE_SCHEMAS.get(node)
    if schema is None:
        return ""
    flat = {k: v for k, v in settings.nested_to_flat(params).items() if k not in ROS_PARAMETERS}
    try:
        settings.build(schema, flat, where=f"{where}{node}")
    except ConfigError as e:
        return str(e)
    return ""


def check_params_file(path: str | Path,
                      overrides: Mapping[str, Mapping[str, Any]] | None = None) -> list[str]:
    """Every problem of a ROS 2 parameter file (``/**/node: ros__parameters: ...``), with
    ``overrides`` ({executable: {name: value}}, as ``frankenbot up`` passes them) applied."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text())
    except (OSError, yaml.YAMLError) as e:
        return [f"{p}: cannot read: {e}"]
    if not isinstance(data, Mapping):
        return [f"{p}: not a mapping of node names"]
    problems = []
    for key, section in data.items():
        node = str(key).rsplit("/", 1)[-1]
        params = section.get("ros__parameters") if isinstance(section, Mapping) else None
        if not isinstance(params, Mapping):
            if node in NODE_SCHEMAS:
                problems.append(f"{p.name} {node}: no ros__parameters mapping")
            continue
        extra = (overrides or {}).get(node.removeprefix("frankenbot_"), {})
        merged = {**settings.nested_to_flat(params), **dict(extra)}
        problem = check_node_parameters(node, merged, where=f"{p.name} ")
        if problem:
            problems.append(problem)
    return problems


def require_valid(path: str | Path,
                  overrides: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """ConfigError listing every problem of the file (nothing to start with a broken file)."""
    problems = check_params_file(path, overrides)
    if problems:
        raise ConfigError("invalid parameter file:\n  " + "\n  ".join(problems))


def reference_markdown() -> str:
    """docs/PARAMETERS.md: every node's parameters from the schemas (name, type, default,
    unit, range or choices, live, description). Generated; a test keeps the file current."""
    lines = ["# Node parameters", "",
             "Generated from the settings schemas (`frankenbot/settings.py`; regenerate with",
             "`python -m frankenbot.bringup.config_check > docs/PARAMETERS.md`). Every parameter",
             "is declared with this type, range and description; **live** ones may be changed",
             "while the node runs (`ros2 param set`), the others are refused with the reason.",
             "The setup files (`config/sim.yaml`, `real_ur5e.yaml`, `gazebo.yaml`) hold only",
             "what a setup changes; `frankenbot up` checks them against these schemas first.", ""]
    for node, schema in NODE_SCHEMAS.items():
        lines += [f"## {node}", "", "| parameter | type | default | unit | range / choices | live "
                  "| description |", "|---|---|---|---|---|---|---|"]
        for s in settings.schema(schema):
            spec = s.spec
            if spec.choices:
                allowed = " \\| ".join(f"`{c}`" if c else "`''`" for c in spec.choices)
            elif spec.low is not None or spec.high is not None:
                lo = "" if spec.low is None else f"{spec.low:g}"
                hi = "" if spec.high is None else f"{spec.high:g}"
                allowed = f"[{lo}, {hi}]" if lo and hi else (f">= {lo}" if lo else f"<= {hi}")
            else:
                allowed = ""
            default = list(s.default) if isinstance(s.default, tuple) else s.default
            text = s.description.replace("|", "\\|")
            lines.append(f"| `{s.name}` | {s.kind} | `{default!r}` | {spec.unit} | {allowed} "
                         f"| {'yes' if s.live else ''} | {text} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(reference_markdown(), end="")
