"""Errors a tool handler raises to give the agent an ``isError`` result it can act on."""

from __future__ import annotations

from collections.abc import Sequence

from ego_core.types import ScaffoldItem


class ToolError(Exception):
    """A domain error the agent should read and correct (unknown id, bad date, ...).

    ``message`` says what was wrong and the accepted form; never put private content or the caller's
    rejected value in it. ``scaffold`` lines follow after ``---`` like in any response.
    """

    def __init__(self, message: str, scaffold: Sequence[ScaffoldItem] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.scaffold = tuple(scaffold)


class InvalidArgumentError(ToolError):
    """An argument is outside its accepted form; ``parameter`` names it."""

    def __init__(self, parameter: str, expected: str, scaffold: Sequence[ScaffoldItem] = ()) -> None:
        super().__init__(f"Invalid argument `{parameter}`: {expected}.", scaffold)
        self.parameter = parameter
        self.expected = expected.rstrip(".")


class UsageError(Exception):
    """A CLI command was called wrongly: ``ego`` exits with code 2 and this message (raise it from a command)."""
