"""A bot process that crashes is started again before the next game (``restart_crashed``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from referee.entries import parse_entry
from tests.bots.harness import (
    SCRIPTED,
    BotLog,
    Table,
    limits,
    play,
    read_log,
    run,
    scripted,
    serving,
)
from tournaments.cli.main import app


def _crashing_match(tmp_path: Path, *, restart: bool, entry: Any = None) -> Table:
    """One set (2 games) of one deal; slot 0 exits at its third request, once ever."""
    if entry is None:
        once = tmp_path / "crashed-once"
        entry = scripted("exit", tmp_path / "logs", "--slot", 0, "--at", 3, "--once", once)

    async def scenario() -> Table:
        async with serving() as referee:
            return await play(
                referee,
                (entry, parse_entry("random")),
                tmp_path / "record.jsonl",
                seed="restart",
                deals=1,
                limits=limits(restart_crashed=restart, connect_timeout=5),
            )

    return run(scenario())


def _logs(log_dir: Path) -> list[BotLog]:
    """Every scripted bot process's log (a slot restarted has two)."""
    return [read_log(path) for path in log_dir.glob("*.jsonl")]


def _events(log: BotLog) -> list[Any]:
    return [event for response in log.received for event in response.events]


def _of(game: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [line for line in game if line["type"] == kind]


def test_a_crashed_bot_is_started_again_for_the_next_game(tmp_path: Path) -> None:
    table = _crashing_match(tmp_path, restart=True)
    table.verify()
    game1, game2 = table.games()
    # The crash loses the game it happened in...
    [forfeit] = _of(game1, "forfeit")
    assert (forfeit["seat"], forfeit["reason"]) == (table.seat_of(0, 1), "crash")
    assert "exit status 3" in forfeit["detail"]
    # ...and only that one: a new process plays slot 0 in game 2, said so in the record.
    assert [o.termination.value for o in table.result.outcomes] == ["crash", "deals_played"]
    [restart] = _of(game2, "incident")
    assert (restart["seat"], restart["kind"]) == (table.seat_of(0, 2), "restart")
    assert restart["detail"] == "the bot process was started again (after: exit status 3)"
    assert table.result.stats[0].crashes == 1
    # Three processes for entry 0: slot 0, slot 1, and slot 0 again.
    logs = _logs(tmp_path / "logs")
    assert sorted(log.slot for log in logs) == [0, 0, 1]
    # The new process hears the match start and its game, nothing its predecessor missed.
    [new] = [
        log for log in logs if log.slot == 0 and any(e.HasField("match_over") for e in _events(log))
    ]
    events = _events(new)
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[:4] == ["welcome", "match_started", "game_started", "hand_dealt"]
    assert events[2].game_started.game == 2
    assert kinds.count("game_started") == 1
    # Its own folder, so the crashed process's logs stay as they were.
    work = tmp_path / "record.work"
    assert (work / "0-0" / "stderr.log").is_file()
    assert (work / "0-0-restart-1" / "stderr.log").is_file()


def test_without_restarts_a_crash_loses_the_rest_of_the_match(tmp_path: Path) -> None:
    table = _crashing_match(tmp_path, restart=False)
    table.verify()
    assert [o.termination.value for o in table.result.outcomes] == ["crash", "crash"]
    assert not [line for line in table.lines() if line.get("kind") == "restart"]
    assert table.result.stats[0].crashes == 2


def test_a_bot_that_never_connected_is_not_started_again(tmp_path: Path) -> None:
    # It exits at once, every time: starting it again would only cost connect_timeout a game.
    broken = parse_entry(f"cmd:{sys.executable} -c 'raise SystemExit(5)'")
    table = _crashing_match(tmp_path, restart=True, entry=broken)
    table.verify()
    assert [o.termination.value for o in table.result.outcomes] == ["crash", "crash"]
    incidents = [line for line in table.lines() if line["type"] == "incident"]
    assert {line["kind"] for line in incidents} == {"never_connected"}
    assert not list((tmp_path / "record.work").glob("*-restart-*"))


@pytest.mark.parametrize(
    ("flag", "crashes", "status"), [((), "0/0/1", 0), (("--no-restart-crashed",), "0/0/2", 1)]
)
def test_tavolo_play_restarts_unless_told_not_to(
    tmp_path: Path, flag: tuple[str, ...], crashes: str, status: int
) -> None:
    once = tmp_path / "crashed-once"
    bot = f"cmd:{sys.executable} {SCRIPTED} --mode exit --slot 0 --at 3 --once {once}"
    # Unconfined: its --once file must outlive the process (a sandbox wipes it with it).
    args = ["play", bot, "random", "--seed", "restart", "--deals", "1", "--quiet", *flag]
    args += ["--sandbox", "off"]
    result = CliRunner().invoke(app, [*args, "--record", str(tmp_path / "m.jsonl")])
    # Not started again, it crashed in both games: the command fails, after the table.
    assert result.exit_code == status, result.output
    # The table's first row is the scripted entry (its name comes from the command).
    header, _, row, other = result.stdout.splitlines()[:4]
    assert header.split()[-1] == "timeouts/illegal/crashes"
    assert (row.split()[-1], other.split()[-1]) == (crashes, "0/0/0")
