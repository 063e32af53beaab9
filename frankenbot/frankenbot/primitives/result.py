"""The typed result of every primitive, and the port the interpreter calls primitives through."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Mapping, Protocol, Union

from frankenbot.common import FailureCode

Value = Union[str, float]  # an object id / string, or a number


@dataclass(frozen=True)
class PrimitiveResult:
    """Outcome of one primitive call. ``code`` is OK on success."""

    code: FailureCode = FailureCode.OK
    detail: str = ""
    data: Mapping[str, object] = field(default_factory=dict)  # e.g. {"grasp_width": 0.039}

    @property
    def ok(self) -> bool:
        return self.code == FailureCode.OK

    @classmethod
    def success(cls, detail: str = "", **data: object) -> "PrimitiveResult":
        return cls(FailureCode.OK, detail, data)

    @classmethod
    def failure(cls, code: FailureCode, detail: str, **data: object) -> "PrimitiveResult":
        if code == FailureCode.OK:
            raise ValueError("failure() needs a failure code, got OK")
        return cls(code, detail, data)


class CancelToken:
    """Set from another thread (monitor loop, cancel, e-stop) to preempt a running primitive.

    Primitives poll ``cancelled`` between and during motions and stop the arm when it is set.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._reason = ""
        self._reason_lock = threading.Lock()

    def cancel(self, reason: str = "") -> None:
        with self._reason_lock:
            if not self._event.is_set():
                self._reason = reason
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> str:
        with self._reason_lock:
            return self._reason

    def wait(self, timeout: float) -> bool:
        """Sleep up to ``timeout`` seconds; return True early if cancelled."""
        return self._event.wait(timeout)


class PrimitiveExecutor(Protocol):
    """What the interpreter calls to run one whitelisted primitive.

    ``args`` are already validated against the catalog (names, types, ranges) and defaults are
    filled in. Implementations must return a PrimitiveResult (never raise for robot failures) and
    must return promptly with FailureCode.PREEMPTED once ``cancel`` is set.
    """

    def execute(self, name: str, args: Mapping[str, Value], cancel: CancelToken) -> PrimitiveResult:
        ...
