"""Typed settings: one schema per component, and everything else generated from it.

A component's settings are a frozen dataclass whose fields are declared with ``setting(...)``
(type from the annotation, default, description, unit, range or choices, and whether it may
change while the component runs) or ``section(...)`` (a nested settings dataclass). From that
one declaration come:

* the defaults (the dataclass's own; no other file repeats them),
* ``build(cls, mapping)``: a validated instance from YAML or ROS parameter values, with errors
  that name the setting, the value received and what was expected; unknown names are errors,
* ``schema(cls)``: the flat list of settings (``vlm.timeout``, ``handler_retries``) that the ROS
  adapter (``nodes/parameters.py``) turns into ParameterDescriptors with types and ranges and an
  on-set-parameters callback that accepts live settings and refuses the rest with the reason,
* ``update(instance, changes)``: a new instance with live changes applied and validated.

Cross-field rules stay in the dataclass's ``__post_init__`` (raising ConfigError), so they hold
for instances built in code too. Pure Python: no ROS here.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Mapping, TypeVar

from frankenbot.errors import ConfigError

T = TypeVar("T")

_SETTING = "frankenbot.setting"
_SECTION = "frankenbot.section"
KINDS = ("bool", "int", "float", "str", "floats", "strings")


@dataclass(frozen=True)
class Spec:
    """What ``setting(...)`` records about one field."""

    description: str
    unit: str = ""
    low: float | None = None  # inclusive bounds of a number (of each number of a list)
    high: float | None = None
    choices: tuple[str, ...] = ()
    live: bool = False  # may change while the component runs


def setting(default: Any, description: str, *, unit: str = "", low: float | None = None,
            high: float | None = None, choices: tuple[str, ...] = (),
            live: bool = False) -> Any:
    """A dataclass field that is a setting (see the module docstring)."""
    spec = Spec(description, unit, low, high, tuple(choices), live)
    if isinstance(default, list):
        default = tuple(default)
    return field(default=default, metadata={_SETTING: spec})


def section(factory: Any, prefix: str | None = None) -> Any:
    """A nested settings dataclass. Its settings are named ``<prefix>.<name>``; ``prefix``
    None uses the field's name, "" flattens them into the parent's names."""
    return field(default_factory=factory, metadata={_SECTION: prefix})


@dataclass(frozen=True)
class Setting:
    """One setting of a schema, as the ROS adapter and the YAML checks see it."""

    name: str  # "vlm.timeout", "handler_retries"
    path: tuple[str, ...]  # attribute path from the schema's root
    kind: str  # one of KINDS
    length: int | None  # fixed tuple length, None = any
    default: Any
    spec: Spec

    @property
    def description(self) -> str:
        return self.spec.description

    @property
    def live(self) -> bool:
        return self.spec.live

    def expected(self) -> str:
        what = {"bool": "true or false", "int": "an integer", "float": "a number",
                "str": "a string", "strings": "a list of strings",
                "floats": (f"a list of {self.length} numbers" if self.length
                           else "a list of numbers")}[self.kind]
        s = self.spec
        if s.choices:
            what = "one of " + " | ".join(repr(c) for c in s.choices)
        if s.low is not None and s.high is not None:
            what += f" in [{s.low:g}, {s.high:g}]"
        elif s.low is not None:
            what += f" >= {s.low:g}"
        elif s.high is not None:
            what += f" <= {s.high:g}"
        return what + (f" ({s.unit})" if s.unit else "")

    def check(self, value: Any, where: str = "") -> Any:
        """``value`` as this setting's type, or ConfigError naming what was wrong."""
        def bad(why: str = "") -> ConfigError:
            prefix = f"{where} " if where else ""
            return ConfigError(f"{prefix}{self.name}={value!r}: expected {self.expected()}"
                               + (f" ({why})" if why else "") + f" - {self.description}")

        k = self.kind
        if k == "bool":
            if not isinstance(value, bool):
                raise bad()
            return value
        if k == "str":
            if not isinstance(value, str):
                raise bad()
            if self.spec.choices and value not in self.spec.choices:
                raise bad()
            return value
        if k == "strings":
            if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(
                    isinstance(v, str) for v in value):
                raise bad()
            return tuple(value)
        if k in ("int", "float"):
            return self._number(value, bad)
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise bad()
        out = tuple(self._number(v, bad) for v in value)
        if self.length is not None and len(out) != self.length:
            raise bad(f"got {len(out)}")
        return out

    def _number(self, value: Any, bad: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad()
        if self.kind == "int":
            if isinstance(value, float):
                if not value.is_integer():
                    raise bad()
                value = int(value)
        else:
            value = float(value)
            if math.isnan(value):
                raise bad("NaN")
        s = self.spec
        if (s.low is not None and value < s.low) or (s.high is not None and value > s.high):
            raise bad("out of range")
        return value


def _kind(tp: Any) -> tuple[str, int | None]:
    if tp is bool:
        return "bool", None
    if tp is int:
        return "int", None
    if tp is float:
        return "float", None
    if tp is str:
        return "str", None
    if typing.get_origin(tp) is tuple:
        args = typing.get_args(tp)
        variadic = len(args) == 2 and args[1] is Ellipsis
        elem = args[0] if args else float
        if elem is str:
            return "strings", None if variadic else len(args)
        if elem in (float, int):
            return "floats", None if variadic else len(args)
    if isinstance(tp, types.UnionType):
        raise TypeError(f"a setting cannot be optional ({tp}); use a sentinel value")
    raise TypeError(f"unsupported setting type {tp!r}")


_SCHEMAS: dict[type, tuple[Setting, ...]] = {}


def schema(cls: type) -> tuple[Setting, ...]:
    """Every setting of ``cls`` (nested sections flattened), in declaration order."""
    found = _SCHEMAS.get(cls)
    if found is None:
        found = _SCHEMAS[cls] = _schema(cls)
    return found


def _schema(cls: type) -> tuple[Setting, ...]:
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    hints = typing.get_type_hints(cls)
    out: list[Setting] = []
    for f in dataclasses.fields(cls):
        if _SECTION in f.metadata:
            prefix = f.metadata[_SECTION]
            prefix = f.name if prefix is None else prefix
            for s in schema(hints[f.name]):
                name = f"{prefix}.{s.name}" if prefix else s.name
                out.append(dataclasses.replace(s, name=name, path=(f.name, *s.path)))
        elif _SETTING in f.metadata:
            kind, length = _kind(hints[f.name])
            out.append(Setting(f.name, (f.name,), kind, length, f.default, f.metadata[_SETTING]))
    names = [s.name for s in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise TypeError(f"{cls.__name__}: settings named twice: {sorted(dup)}")
    return tuple(out)


def names(cls: type) -> tuple[str, ...]:
    return tuple(s.name for s in schema(cls))


def _construct(cls: type, values: Mapping[tuple[str, ...], Any], fixed: Mapping[str, Any],
               depth: int = 0) -> Any:
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if _SECTION in f.metadata:
            sub = {p[1:]: v for p, v in values.items() if len(p) > 1 and p[0] == f.name}
            if sub or depth == 0 and f.name in fixed:
                kwargs[f.name] = (fixed[f.name] if depth == 0 and f.name in fixed
                                  else _construct(hints[f.name], sub, {}, depth + 1))
        elif (f.name,) in values:
            kwargs[f.name] = values[(f.name,)]
        elif depth == 0 and f.name in fixed:
            kwargs[f.name] = fixed[f.name]
    return cls(**kwargs)


def build(cls: type[T], values: Mapping[str, Any] | None = None, *, where: str = "",
          **fixed: Any) -> T:
    """An instance of ``cls`` from ``{setting name: value}`` (names as in ``schema``; missing
    ones keep their defaults); ``fixed`` passes fields that are not settings (zones, a drawer).
    ConfigError on an unknown name, a wrong type, a value out of range or a broken rule."""
    by_name = {s.name: s for s in schema(cls)}
    values = dict(values or {})
    unknown = sorted(set(values) - set(by_name))
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, list(by_name), n=1, cutoff=0.75)
            hints.append(f"{name} (did you mean {close[0]}?)" if close else name)
        known = "" if all("did you mean" in h for h in hints) else (
            f"; known: {', '.join(sorted(by_name))}")
        raise ConfigError(f"{where + ': ' if where else ''}unknown setting"
                          f"{'s' if len(unknown) > 1 else ''} {', '.join(hints)}{known}")
    checked = {by_name[n].path: by_name[n].check(v, where) for n, v in values.items()}
    try:
        return typing.cast(T, _construct(cls, checked, fixed))
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}" if where else str(e)) from e
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where + ': ' if where else ''}{e}") from e


def nested_to_flat(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A YAML mapping with nested sections (``vlm: {timeout: 60}``) as flat setting names."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(nested_to_flat(value, name + "."))
        else:
            out[name] = value
    return out


def validate(obj: Any, where: str = "") -> None:
    """Check every setting of ``obj`` (not of its sections: they check themselves) against its
    type, range and choices; schema dataclasses call this from ``__post_init__``, so an instance
    built in code obeys the same ranges as one built from YAML or ROS parameters."""
    for s in schema(type(obj)):
        if len(s.path) == 1:
            s.check(getattr(obj, s.name), where or type(obj).__name__)


def value_at(obj: Any, s: Setting) -> Any:
    for part in s.path:
        obj = getattr(obj, part)
    return obj


def values_of(obj: Any) -> dict[str, Any]:
    """``{setting name: value}`` of an instance (lists for tuples, as ROS and YAML take them)."""
    out = {}
    for s in schema(type(obj)):
        v = value_at(obj, s)
        out[s.name] = list(v) if isinstance(v, tuple) else v
    return out


def update(obj: T, changes: Mapping[str, Any], *, where: str = "") -> T:
    """A new instance with ``changes`` (setting name -> value) applied and checked."""
    cls = type(obj)
    instance: Any = obj  # a settings dataclass (``schema`` checks)
    fixed = {f.name: getattr(obj, f.name) for f in dataclasses.fields(instance)
             if _SETTING not in f.metadata and _SECTION not in f.metadata}
    merged = {**values_of(obj), **dict(changes)}
    return build(cls, merged, where=where, **fixed)
