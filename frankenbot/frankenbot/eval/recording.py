"""MCAP recordings in ROS 2 message encoding: what ``ros2 bag play`` and Foxglove open.

One file per task. Every message is CDR, its schema the ROS 2 ``.msg`` definition with the
definitions it depends on (the ``ros2msg`` schema encoding rosbag2's own MCAP plugin writes), so
a recording made here plays back on a ROS install as if ``ros2 bag record`` had made it. The
writer takes CDR bytes: the ROS tap (``bringup/tap.py``) hands over the serialised message it
received, unparsed; the in-process benchmark serialises the messages it builds.

No rclpy here: definitions come from the packages' installed ``share/<pkg>/msg`` folders.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from frankenbot.errors import ConfigError, FrankenbotError

PRIMITIVES = frozenset({"bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16",
                        "uint16", "int32", "uint32", "int64", "uint64", "string", "wstring"})
_SEPARATOR = "=" * 80
_TYPE_RE = re.compile(r"^([A-Za-z0-9_/]+?)(?:<=\d+)?(?:\[[^\]]*\])?$")


def _split_datatype(datatype: str) -> tuple[str, str]:
    """``pkg/msg/Type`` or ``pkg/Type`` -> (pkg, Type)."""
    parts = datatype.split("/")
    if len(parts) == 3 and parts[1] == "msg":
        return parts[0], parts[2]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise ConfigError(f"not a ROS 2 message type: {datatype!r} (expected pkg/msg/Type)")


@cache
def _msg_text(package: str, name: str) -> str:
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    try:
        share = Path(get_package_share_directory(package))
    except PackageNotFoundError as e:
        raise ConfigError(f"message package {package!r} is not installed (source env.sh?)") from e
    path = share / "msg" / f"{name}.msg"
    if not path.is_file():
        raise ConfigError(f"no message definition {path}")
    return path.read_text()


def _dependencies(package: str, text: str) -> list[tuple[str, str]]:
    """The complex field types of a definition, in order of first use."""
    out: list[tuple[str, str]] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if len(words) < 2 or "=" in words[1]:  # constants have primitive types only
            continue
        match = _TYPE_RE.match(words[0])
        if match is None:
            raise ConfigError(f"cannot read the field type in {raw!r}")
        base = match.group(1)
        if base in PRIMITIVES:
            continue
        dep = ("std_msgs", "Header") if base == "Header" else (
            _split_datatype(base) if "/" in base else (package, base))
        if dep not in out:
            out.append(dep)
    return out


@cache
def message_definition(datatype: str) -> str:
    """The full ``ros2msg`` definition of ``datatype``: its own text, then each message it uses
    (transitively, each once) after a line of 80 ``=`` and ``MSG: pkg/msg/Type``: rosbag2's
    ``ros2msg`` message-definition encoding."""
    package, name = _split_datatype(datatype)
    root = _msg_text(package, name)
    parts = [root.rstrip("\n")]
    seen = {(package, name)}
    queue = _dependencies(package, root)
    while queue:
        dep = queue.pop(0)
        if dep in seen:
            continue
        seen.add(dep)
        text = _msg_text(*dep)
        parts.append(f"{_SEPARATOR}\nMSG: {dep[0]}/msg/{dep[1]}\n{text.rstrip(chr(10))}")
        queue.extend(d for d in _dependencies(dep[0], text) if d not in seen)
    return "\n".join(parts) + "\n"


@dataclass
class McapRecorder:
    """A ROS 2 MCAP file being written; thread-safe (subscription callbacks call ``write``)."""

    path: Path
    counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from mcap.writer import CompressionType, Writer

        self.path = Path(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("wb")
        self._writer = Writer(self._file, compression=CompressionType.ZSTD)
        self._writer.start(profile="ros2", library="frankenbot")
        self._schemas: dict[str, int] = {}
        self._channels: dict[str, int] = {}
        self._lock = threading.Lock()
        self._closed = False

    def _channel_locked(self, topic: str, datatype: str) -> int:
        channel = self._channels.get(topic)
        if channel is None:
            schema = self._schemas.get(datatype)
            if schema is None:
                schema = self._writer.register_schema(
                    datatype, "ros2msg", message_definition(datatype).encode())
                self._schemas[datatype] = schema
            channel = self._writer.register_channel(topic, "cdr", schema)
            self._channels[topic] = channel
            self.counts.setdefault(topic, 0)
        return channel

    def add_channel(self, topic: str, datatype: str) -> None:
        """Declare a topic up front, so the file lists it even if no message comes (an episode
        without anomalies still has /frankenbot/events, as ``ros2 bag record`` would)."""
        with self._lock:
            if not self._closed:
                self._channel_locked(topic, datatype)

    def write(self, topic: str, datatype: str, cdr: bytes, log_time_ns: int | None = None,
              publish_time_ns: int | None = None) -> None:
        """Append one CDR-serialised message (``datatype`` like ``sensor_msgs/msg/Image``)."""
        log_time = time.time_ns() if log_time_ns is None else int(log_time_ns)
        with self._lock:
            if self._closed:
                return
            channel = self._channel_locked(topic, datatype)
            self._writer.add_message(channel, log_time=log_time,
                                     publish_time=publish_time_ns or log_time,
                                     data=bytes(cdr), sequence=self.counts.get(topic, 0))
            self.counts[topic] = self.counts.get(topic, 0) + 1

    def add_metadata(self, name: str, data: dict[str, str]) -> None:
        with self._lock:
            if not self._closed:
                self._writer.add_metadata(name, {k: str(v) for k, v in data.items()})

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._writer.finish()
            self._file.close()

    def __enter__(self) -> "McapRecorder":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class McapSummary:
    """What a recording holds: per topic its message type and message count."""

    path: Path
    topics: dict[str, tuple[str, int]]  # topic -> (schema name, messages)
    start_ns: int
    end_ns: int

    @property
    def duration_s(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e9

    def lines(self) -> list[str]:
        out = [f"{self.path}: {sum(n for _, n in self.topics.values())} messages, "
               f"{self.duration_s:.1f} s"]
        out += [f"  {t:52s} {s:36s} {n}" for t, (s, n) in sorted(self.topics.items())]
        return out


def summarise_mcap(path: Path) -> McapSummary:
    """Read an MCAP file's summary section (or scan it when the summary is missing)."""
    from mcap.reader import make_reader

    path = Path(path)
    if not path.is_file():
        raise FrankenbotError(f"no recording at {path}")
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        if summary is None or summary.statistics is None:
            raise FrankenbotError(f"{path} has no MCAP summary (was the recording finished?)")
        stats = summary.statistics
        topics = {}
        for cid, channel in summary.channels.items():
            schema = summary.schemas.get(channel.schema_id)
            topics[channel.topic] = (schema.name if schema else "",
                                     int(stats.channel_message_counts.get(cid, 0)))
        return McapSummary(path, topics, int(stats.message_start_time),
                           int(stats.message_end_time))
