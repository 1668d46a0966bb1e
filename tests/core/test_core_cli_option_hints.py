"""An unknown option is answered with the options of the command it was given to, under that command's usage."""

from __future__ import annotations

import importlib.metadata
from typing import TYPE_CHECKING

import pytest

from ego_core.mcp.cli import unknown_option

if TYPE_CHECKING:
    from collections.abc import Callable

    from conftest import CliRun

    Run = Callable[..., CliRun]

REAL = sorted({ep.name for ep in importlib.metadata.entry_points(group="ego")})
NO_REAL = ["--disable", ",".join(REAL)] if REAL else []


@pytest.mark.parametrize(
    "argv",
    [
        ["doctor", "--bogus"],
        ["doctor", "--out", "x"],
        ["doctor", "--output", "x"],
        ["doctor", "--port", "1"],  # serve's option: not doctor's
        ["doctor", "--json"],  # plugins' option
    ],
)
def test_an_option_of_another_command_is_never_suggested(run_cli: Run, argv: list[str]) -> None:
    """A user found: `ego doctor --bogus` said `did you mean --out?`, an option of another plugin's command, and
    `ego doctor --output x` said `unknown option --output (did you mean --output?)`."""
    result = run_cli(*argv, *NO_REAL)
    assert result.code == 2
    assert result.out == ""
    assert f"ego: error: unknown option {argv[1]}\n" in result.err
    assert "did you mean" not in result.err
    assert result.err.startswith("usage: ego doctor ")


@pytest.mark.parametrize(
    ("argv", "usage", "said"),
    [
        (["plugins", "--jsn"], "usage: ego plugins ", "unknown option --jsn (did you mean --json?)"),
        (["doctor", "--data-di", "x"], "usage: ego doctor ", "unknown option --data-di (did you mean --data-dir?)"),
        (
            ["plugin", "new", "thing", "--dri", "x"],
            "usage: ego plugin new ",
            "unknown option --dri (did you mean --dir?)",
        ),
    ],
)
def test_the_suggestion_is_an_option_of_the_command_used(run_cli: Run, argv: list[str], usage: str, said: str) -> None:
    result = run_cli(*argv, *NO_REAL)
    assert result.code == 2
    assert result.out == ""
    assert result.err.startswith(usage)
    assert result.err.endswith(f"ego: error: {said}\n")


def test_an_unknown_word_after_a_command_is_named_under_its_usage(run_cli: Run) -> None:
    result = run_cli("doctor", "stray", *NO_REAL)
    assert result.code == 2
    assert result.err.startswith("usage: ego doctor ")
    assert result.err.endswith("ego: error: unrecognized arguments: stray\n")


def test_the_option_given_is_never_its_own_suggestion() -> None:
    assert (
        unknown_option("--output=x", {"--output", "--outputs"}) == "unknown option --output (did you mean --outputs?)"
    )
    assert unknown_option("--output", {"--output"}) == "unknown option --output"
