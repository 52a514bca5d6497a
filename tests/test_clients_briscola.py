"""Every SDK's example bot plays Briscola, for two and for four, through the real referee.

Each plays one duplicate set of one deal against the built-in random bot over gRPC, as an
unconfined command: the sandbox is tests/test_clients.py's business. A client that is not
built is skipped with the reason, as there, unless ``TAVOLO_REQUIRE_CLIENTS=1``.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from referee.records import verify_lines
from tests.test_cli import tavolo
from tests.test_clients import LANGS, require

PYTHON_BOTS = ("random", "heuristic")
"""The Python SDK's example bots (``python -m tavolo_bot.bots.<name>``)."""

GAMES = ("briscola", "briscola-a-quattro")


def command_of(bot: str) -> str:
    """The ``tavolo play`` entry that runs ``bot`` (a client's language, or ``python-<name>``)."""
    if bot.startswith("python-"):
        name = bot.removeprefix("python-")
        return "cmd:" + shlex.join([sys.executable, "-m", f"tavolo_bot.bots.{name}"])
    return "cmd:" + shlex.join([str(require(bot))])


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("bot", [*LANGS, *(f"python-{name}" for name in PYTHON_BOTS)])
def test_example_bot_plays_briscola(bot: str, game: str, tmp_path: Path) -> None:
    """A short match without a fault, and a record that verifies with no rejected action."""
    record = tmp_path / "match.jsonl"
    args = ["--game", game, "--seed", f"sdk-{bot}", "--deals", "1", "--sets", "1"]
    args += ["--sandbox", "off", "--record", str(record), "--json"]
    result = tavolo("play", command_of(bot), "random", *args)
    assert result.exit_code == 0, result.output
    played = json.loads(result.stdout)
    assert [g["termination"] for g in played["games"]] == ["deals_played"] * 2, result.output
    faults = {e["name"]: (e["timeouts"], e["illegal"], e["crashes"]) for e in played["entries"]}
    assert all(f == (0, 0, 0) for f in faults.values()), faults
    lines = record.read_text(encoding="utf-8").splitlines()
    verify_lines(lines, f"{bot} in {game}")
    assert json.loads(lines[0])["game"] == game
    faulty = [line for line in lines if '"type":"rejected"' in line or '"type":"incident"' in line]
    assert not faulty, faulty[:3]
