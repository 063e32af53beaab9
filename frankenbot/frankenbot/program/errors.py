"""The program language's error type: a syntax error with position, message and repair hint."""

from __future__ import annotations

from frankenbot.errors import ProgramError


class ProgramSyntaxError(ProgramError):
    """The text does not parse. ``line``/``column`` are 1-based positions in the text given to
    the parser (after length-preserving normalisation, so they match what the author wrote)."""

    def __init__(self, message: str, line: int = 0, column: int = 0, hint: str = "") -> None:
        self.message = message
        self.line = line
        self.column = column
        self.hint = hint
        where = f"line {line}, column {column}: " if line else ""
        super().__init__(f"{where}{message}" + (f" (hint: {hint})" if hint else ""))
