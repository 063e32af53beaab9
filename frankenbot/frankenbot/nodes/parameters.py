"""ROS parameters generated from a component's settings schema (``frankenbot.settings``).

``NodeSettings(node, Schema)`` declares one parameter per setting with a ParameterDescriptor
(type, description with unit and "read at start-up" where it applies, range, choices), builds the
validated settings from their values (a bad value in a YAML file stops the node with a message
naming it), and keeps them current: a ``ros2 param set`` of a live setting is checked against the
schema and applied (``on_change``), anything else is refused with the reason.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Callable, Generic, TypeVar

from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    ParameterType,
    SetParametersResult,
)
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.node import Node

from frankenbot import settings
from frankenbot.errors import ConfigError
from frankenbot.settings import Setting

T = TypeVar("T")
INT64 = 2**63 - 1

_TYPES = {"bool": ParameterType.PARAMETER_BOOL, "int": ParameterType.PARAMETER_INTEGER,
          "float": ParameterType.PARAMETER_DOUBLE, "str": ParameterType.PARAMETER_STRING,
          "floats": ParameterType.PARAMETER_DOUBLE_ARRAY,
          "strings": ParameterType.PARAMETER_STRING_ARRAY}


def descriptor(s: Setting) -> ParameterDescriptor:
    """The ParameterDescriptor of one setting: type, description, range, choices."""
    text = s.description + (f" [{s.spec.unit}]" if s.spec.unit else "")
    if not s.live:
        text += " (read at start-up)"
    d = ParameterDescriptor(name=s.name, type=_TYPES[s.kind], description=text)
    low, high = s.spec.low, s.spec.high
    if s.kind == "float" and (low is not None or high is not None):
        d.floating_point_range = [FloatingPointRange(
            from_value=-math.inf if low is None else float(low),
            to_value=math.inf if high is None else float(high), step=0.0)]
    elif s.kind == "int" and (low is not None or high is not None):
        d.integer_range = [IntegerRange(from_value=-INT64 if low is None else int(low),
                                        to_value=INT64 if high is None else int(high), step=1)]
    if s.spec.choices:
        d.additional_constraints = "one of: " + ", ".join(s.spec.choices)
    return d


def _ros_value(s: Setting, value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


class NodeSettings(Generic[T]):
    """Declares ``schema``'s settings as ``node``'s parameters; ``value`` is the current,
    validated settings object. ``on_change(new)`` applies a live change that passed the schema;
    a ConfigError it raises refuses the change (with its message as the reason)."""

    def __init__(self, node: Node, schema: type[T], *,
                 on_change: Callable[[T], None] | None = None, **fixed: Any) -> None:
        self._node = node
        self._schema = schema
        self._on_change = on_change
        self._lock = threading.Lock()  # guards value (callbacks run on executor threads)
        self._settings = {s.name: s for s in settings.schema(schema)}
        where = node.get_name()
        values: dict[str, Any] = {}
        for s in self._settings.values():
            try:
                values[s.name] = node.declare_parameter(
                    s.name, _ros_value(s, s.default), descriptor(s)).value
            except InvalidParameterTypeException as e:
                raise ConfigError(f"{where} parameter {s.name}: expected {s.expected()} "
                                  f"({e})") from e
            except InvalidParameterValueException as e:
                raise ConfigError(f"{where} parameter {s.name}: expected {s.expected()} "
                                  f"({e})") from e
        self.value: T = settings.build(schema, values, where=where, **fixed)
        node.add_on_set_parameters_callback(self._on_set)

    def _on_set(self, params: list[Any]) -> SetParametersResult:
        changes = {p.name: p.value for p in params if p.name in self._settings}
        if not changes:
            return SetParametersResult(successful=True)
        fixed = sorted(n for n in changes if not self._settings[n].live)
        if fixed:
            return SetParametersResult(successful=False, reason=(
                f"{', '.join(fixed)} cannot change while {self._node.get_name()} runs (read at "
                "start-up): restart the node with the new value"))
        with self._lock:
            try:
                new = settings.update(self.value, changes, where=self._node.get_name())
                if self._on_change is not None:  # may refuse too (a file that cannot be read)
                    self._on_change(new)
            except ConfigError as e:
                return SetParametersResult(successful=False, reason=str(e))
            self.value = new
        return SetParametersResult(successful=True)
