"""A remote bot that is gone forfeits its later games of the match at once, until it is back.

Before, each remaining game of the match waited the whole grace period for it before it
forfeited: 82 games of a killed bot took an organiser's table 7 minutes. Real referee,
real gRPC; the remote entrant's two bots are the scripted bot run in this process.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from referee.engine.rules import Rules
from referee.entries import parse_entry
from referee.match.config import MatchConfig
from referee.match.match import Match
from referee.match.results import MatchResult
from tests.bots.harness import BotLog, limits, run, serving
from tests.bots.scripted import Options, run_bot

GRACE = 1.0


def test_a_lost_remote_bot_forfeits_at_once_until_it_reconnects(tmp_path: Path) -> None:
    notices: list[str] = []
    tickets: dict[str, str] = {}
    record = tmp_path / "match.jsonl"

    async def scenario() -> MatchResult:
        async with serving() as referee:
            logs = [BotLog(), BotLog()]
            bots: list[asyncio.Task[Any]] = []

            def start_bots() -> None:
                for k, label in enumerate(("remote#1", "remote#2")):
                    logs[k] = BotLog()
                    bots.append(
                        asyncio.ensure_future(
                            run_bot(referee.address, tickets[label], Options(), logs[k].add)
                        )
                    )

            games = 1

            async def before_game() -> None:
                nonlocal games
                games += 1
                if games == 4:  # the entrant's bots come back for the last set
                    start_bots()
                    while not all(log.slot is not None for log in logs):
                        await asyncio.sleep(0.01)

            config = MatchConfig(
                Rules(), "lost", (parse_entry("remote"), parse_entry("random")), deals=1,
                sets=3, limits=limits(grace=GRACE, connect_timeout=10, deadline_ms=2000),
            )  # fmt: skip
            with record.open("w", encoding="utf-8") as stream:
                match = Match(
                    referee, config, record=stream, workdir=tmp_path / "work",
                    on_ticket=tickets.__setitem__, on_notice=notices.append,
                    before_game=before_game, place="match 7",
                )  # fmt: skip
                task = asyncio.ensure_future(match.run())
                while len(tickets) < 2:
                    await asyncio.sleep(0.01)
                start_bots()
                # Killed once game 1 has asked them something: their streams go.
                while not any(log.requests() for log in logs):
                    await asyncio.sleep(0.01)
                for bot in bots:
                    bot.cancel()
                result = await task
            for bot in bots:
                bot.cancel()
            return result

    result = run(scenario(), timeout=120)
    lines = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    games: list[list[dict[str, Any]]] = []
    for line in lines:
        if line["type"] == "game":
            games.append([])
        games[-1].append(line)
    ends = [o.termination.value for o in result.outcomes]
    assert ends[:3] == ["crash"] * 3, ends
    assert ends[3:] == ["deals_played"] * 3, ends
    # Each slot waited out one grace, in the game it was lost in; no game after that did.
    waited = [g for g in games if any(x.get("kind") == "disconnect" for x in g)]
    assert 1 <= len(waited) <= 2, [[x for x in g if x["type"] == "incident"] for g in games]
    forfeits = [x for g in games[1:3] for x in g if x["type"] == "forfeit"]
    assert any("not back since" in x["detail"] for x in forfeits), forfeits
    # One line when each slot went, one when it came back.
    gone = [n for n in notices if "disconnected" in n]
    back = [n for n in notices if "reconnected" in n]
    assert sorted(n.split("'")[1] for n in gone) == ["remote#1", "remote#2"], notices
    assert all(n.endswith("; its games forfeit until it reconnects") for n in gone)
    assert all(", game " in n and n.split("' disconnected at ")[1].startswith("match 7, game ")
               for n in gone)  # fmt: skip
    assert sorted(n.split("'")[1] for n in back) == ["remote#1", "remote#2"], notices
    assert all("reconnected at match 7, game 4; it plays again" in n for n in back)
