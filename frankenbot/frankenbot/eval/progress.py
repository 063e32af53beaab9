"""Progress of long measurements: a tqdm bar on a terminal, plain lines everywhere else.

CI logs and pipes get one line per step ("suite: 12/55 (22%), 3.1 min, about 11 min left"), never
carriage-return animations; a person at a terminal gets tqdm's bar with the latest result beside
it. Lines the caller prints go through ``write`` so they never tear the bar.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any, Callable


class Progress:
    """``with Progress(total, "suite") as p: ...; p.step("put_in_bowl seed 3 ok")``."""

    def __init__(self, total: int, desc: str, *, log: Callable[[str], None] | None = None,
                 stream: IO[str] | None = None, bar: bool | None = None) -> None:
        """``stream`` (stderr) gets the bar when it is a terminal (or ``bar`` says so);
        otherwise lines go to ``log`` (default: the stream)."""
        self.total = max(0, int(total))
        self.desc = desc
        self.done = 0
        self._stream = stream or sys.stderr
        self._log = log
        self._t0 = time.monotonic()
        use_bar = bar if bar is not None else _is_terminal(self._stream)
        self._bar: Any = None
        if use_bar:
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, desc=desc, file=self._stream, leave=True,
                             dynamic_ncols=True)

    def step(self, status: str = "", n: int = 1) -> None:
        """``n`` more steps done; ``status`` is the latest result, shown beside the count."""
        self.done += n
        if self._bar is not None:
            if status:
                self._bar.set_postfix_str(status[:60], refresh=False)
            self._bar.update(n)
            return
        self._plain(self.line(status))

    def _plain(self, text: str) -> None:
        if self._log is not None:
            self._log(text)
        else:
            self._stream.write(text + "\n")
            self._stream.flush()

    def line(self, status: str = "") -> str:
        elapsed = time.monotonic() - self._t0
        text = f"{self.desc}: {self.done}/{self.total}"
        if self.total:
            text += f" ({self.done / self.total:.0%})"
        text += f", {_duration(elapsed)}"
        if 0 < self.done < self.total:
            text += f", about {_duration(elapsed / self.done * (self.total - self.done))} left"
        return text + (f" - {status}" if status else "")

    def write(self, text: str) -> None:
        """Print a line without breaking the bar."""
        if self._bar is not None:
            self._bar.write(text, file=self._stream)
        else:
            self._plain(text)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"
