"""docs/organising.md stays in step with the CLI: every command it shows exists, with
every option it gives."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.test_cli import tavolo

DOC = Path(__file__).resolve().parent.parent / "docs" / "organising.md"
SUBCOMMANDS = {"tournament", "seed", "match"}
"""Commands whose second word is a subcommand."""


def shown_commands() -> list[list[str]]:
    """The words of each ``$ tavolo ...`` line of the page, comments cut."""
    out = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("$ tavolo "):
            words = shlex.split(line[2:].split(" #", 1)[0].split(" > ", 1)[0])
            out.append(words[1:])
    return out


def test_the_page_shows_the_organisers_commands() -> None:
    shown = {" ".join(w[:2]) for w in shown_commands()}
    for command in (
        "seed new", "seed check", "tournament run", "tournament keys", "tournament rerun",
        "tournament export", "tournament table",
    ):  # fmt: skip
        assert command in shown, command


def test_every_command_and_option_it_shows_exists() -> None:
    for words in shown_commands():
        depth = 2 if words[0] in SUBCOMMANDS else 1
        command = words[:depth]
        result = tavolo(*command, "--help")
        assert result.exit_code == 0, (command, result.output)
        for option in [w for w in words[depth:] if w.startswith("--")]:
            name = option.split("=", 1)[0]
            assert re.search(rf"{re.escape(name)}\b", result.output), (command, name)
