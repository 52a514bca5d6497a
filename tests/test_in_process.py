"""``tavolo play --in-process``: the built-in players, in this process, play the match gRPC plays.

The same games (duplicate sets, each once per arrangement of the entries), the same deals,
seats and seeds, and the same decisions: ``heuristic`` is the SDK's heuristic bot asked
with the referee's own messages, ``random`` draws as the SDK's random bot draws. So the
record and the table are those of the same match over gRPC with bot processes.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from referee.engine.registry import preset
from referee.local_play import play_bots
from referee.match.table import arrangements, rotations
from referee.players import BUILT_IN, SdkPlayer
from referee.records import dumps, verify_file, without_think_times
from tests.sandboxing import require_sandbox
from tests.test_cli import assert_one_error
from tournaments.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
RUNNER = CliRunner()


def tavolo(*args: str | Path) -> Result:
    return RUNNER.invoke(app, [str(a) for a in args])


def lines(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]


def games(record: Path) -> list[list[dict[str, Any]]]:
    """The record's games, each a list of its lines from its ``game`` line."""
    out: list[list[dict[str, Any]]] = []
    for line in lines(record):
        if line["type"] == "game":
            out.append([])
        out[-1].append(line)
    return out


def hands(game: list[dict[str, Any]]) -> list[Any]:
    return [line["hands"] for line in game if line["type"] == "deal"]


def test_heuristic_plays_whole_games_in_process(tmp_path: Path) -> None:
    record = tmp_path / "whole.jsonl"
    result = tavolo(
        "play", "heuristic", "random", "--seed", "whole", "--in-process",
        "--record", record,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    outcomes = verify_file(record).outcomes
    assert [o.termination.value for o in outcomes] == ["target_reached"] * 2
    assert all(o.deals > 1 for o in outcomes)
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()[2:4]}
    assert set(rows) == {"heuristic", "random"}
    assert rows["heuristic"][1] == "2" and rows["heuristic"][-1] == "0/0/0"
    assert "game 1: heuristic vs random: " in result.stdout
    assert "game 2: random vs heuristic: " in result.stdout
    assert f"record: {record}" in result.stdout


def test_the_in_process_heuristic_is_the_sdks_bot() -> None:
    from tavolo_bot.bots.heuristic import HeuristicBot

    player = BUILT_IN["heuristic"]("seed")
    assert isinstance(player, SdkPlayer)
    assert isinstance(player._bot, HeuristicBot)


@pytest.mark.parametrize(
    ("game", "entries"),
    [
        ("tressette", ["heuristic", "random"]),
        ("tressette-a-tre", ["random", "heuristic", "random"]),
    ],
)
def test_sets_play_every_arrangement_of_the_same_deals(
    tmp_path: Path, game: str, entries: list[str]
) -> None:
    record = tmp_path / "sets.jsonl"
    result = tavolo(
        "play", *entries, "--game", game, "--seed", "sets", "--deals", "2", "--sets", "2",
        "--in-process", "--quiet", "--record", record,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rules = preset(game)
    per_set = rotations(rules)
    played = games(record)
    assert len(played) == 2 * per_set == len(verify_file(record).outcomes)
    headers = [g[0] for g in played]
    # Set 1 deals from the match seed, set 2 from "<seed>:2", as over gRPC.
    assert [h["seed"] for h in headers] == ["sets"] * per_set + ["sets:2"] * per_set
    names = ["random", "heuristic", "random-2"] if len(entries) == 3 else entries
    orders = arrangements(rules)
    for number, header in enumerate(headers):
        order = orders[number % per_set]  # the side of each entry
        expected = [names[order.index(rules.side_of(seat))] for seat in range(rules.players)]
        assert header["seats"] == expected, number + 1
        assert "sandbox" not in header  # no bot process ran under anything
    for first in range(0, len(played), per_set):
        dealt = [hands(g) for g in played[first : first + per_set]]
        assert all(d == dealt[0] for d in dealt), "a set's games deal the same cards"
    assert hands(played[0]) != hands(played[per_set]), "the next set deals other cards"
    for name in names:
        row = next(line.split() for line in result.stdout.splitlines() if line.startswith(name))
        assert row[1] == str(2 * per_set), result.stdout


@pytest.mark.parametrize(
    "entry",
    ["bogus", "remote", "cmd:python3 bot.py", "bot.toml"],
)
def test_in_process_refuses_what_is_no_built_in_player(tmp_path: Path, entry: str) -> None:
    record = tmp_path / "never.jsonl"
    result = tavolo(
        "play", "random", entry, "--seed", "s", "--quiet", "--in-process", "--record", record
    )
    assert_one_error(result, f"unknown built-in player {entry!r}", "random, heuristic")
    assert not record.exists()


def without_sandbox(record: Path) -> list[str]:
    """The record's lines, without what only a referee writes: the ``sandbox`` field of its
    game lines and the think times (``ms``) of the answers."""
    out = []
    for line in lines(record):
        if line["type"] == "game":
            line.pop("sandbox")
        out.append(dumps(line))
    return without_think_times(out)


def _table(result: Result) -> list[str]:
    return [line for line in result.stdout.splitlines() if not line.startswith("record: ")]


@pytest.mark.parametrize(
    ("game", "entries", "extra", "sandbox"),
    [
        ("tressette", ["heuristic", "random"], ["--rule", "target=11", "--rule", "call_out=true"],
         "bwrap"),
        ("tressette", ["random", "heuristic"], ["--deals", "2"], "off"),
        ("tressette-a-tre", ["random", "heuristic", "random"], ["--deals", "1"], "bwrap"),
        ("calabresella", ["heuristic", "random", "heuristic"], ["--deals", "2"], "bwrap"),
    ],
    ids=["tressette-call-out", "tressette-unconfined", "tressette-a-tre", "calabresella"],
)  # fmt: skip
def test_in_process_plays_the_match_grpc_plays(
    tmp_path: Path, game: str, entries: list[str], extra: list[str], sandbox: str
) -> None:
    """Bot processes over gRPC, and the players in this process: the same record and table.

    Sandboxed, each arrangement has processes of its own; unconfined, one process per slot
    plays every game; in this process one player per slot does. All give the same match.
    """
    if sandbox == "bwrap":
        require_sandbox()
    args = ["play", *entries, "--game", game, "--seed", f"same-{game}", *extra, "--quiet"]
    over_grpc, in_process = tmp_path / "grpc.jsonl", tmp_path / "local.jsonl"
    played = tavolo(*args, "--sandbox", sandbox, "--record", over_grpc)
    assert played.exit_code == 0, played.output
    assert all(line["sandbox"] == [sandbox] * preset(game).players for line in lines(over_grpc)
               if line["type"] == "game")  # fmt: skip
    local = tavolo(*args, "--in-process", "--record", in_process)
    assert local.exit_code == 0, local.output
    assert without_sandbox(over_grpc) == [dumps(line) for line in lines(in_process)]
    assert _table(played) == _table(local)
    if "call_out=true" in extra:
        assert any(line["type"] == "call-out" for line in lines(in_process)), (
            "the heuristic calls out: it knows the target from MatchStarted"
        )


def test_an_sdk_player_hears_the_events_in_the_referees_order() -> None:
    from tavolo_bot import Bot, Turn
    from tavolo_bot.proto import referee_pb2 as pb

    heard: list[tuple[str, Any]] = []

    class Listening(Bot):
        def on_event(self, event: pb.Event) -> None:
            kind = event.WhichOneof("event")
            detail = {
                "game_started": lambda: (event.game_started.game, event.game_started.seat),
                "hand_dealt": lambda: len(event.hand_dealt.cards),
                "game_over": lambda: event.game_over.termination,
                "match_started": lambda: (event.match_started.games, event.match_started.game),
            }.get(kind or "", lambda: None)()
            heard.append((kind or "", detail))

        def on_match_over(self) -> None:
            heard.append(("on_match_over", None))

        def choose(self, turn: Turn) -> int:
            heard.append(("request", (turn.request_id > 0, turn.seat, turn.deadline_ms)))
            return turn.legal[0].id

    result = play_bots("tressette", [Listening, "random"], seed="heard", deals=1)
    # Both slots of the entry (two players, as two processes) hear into one list.
    kinds = [k for k, _ in heard]
    assert kinds[0] == "match_started" and heard[0][1] == (2, "tressette")
    assert kinds.count("match_started") == 2  # one per slot: two players of the entry
    starts = [d for k, d in heard if k == "game_started"]
    assert sorted(starts) == [(1, 0), (1, 2), (2, 1), (2, 3)]
    assert kinds.count("hand_dealt") == 4 and {d for k, d in heard if k == "hand_dealt"} == {10}
    assert kinds.count("game_over") == 4 and kinds.count("match_over") == 2
    assert kinds[-2:] == ["match_over", "on_match_over"]
    requests = [d for k, d in heard if k == "request"]
    # Ten cards from each of its two seats in each game, and any declarations.
    assert len(requests) >= 40 and all(ok and deadline == 1000 for ok, _, deadline in requests)
    assert {seat for _, seat, _ in requests} == {0, 1, 2, 3}
    assert [o.deals for o in result.outcomes] == [1, 1]


def test_only_the_in_process_players_import_the_sdk() -> None:
    """The referee imports the SDK's generated messages (``tavolo_bot.proto``), and its bots
    only to play them here (built-in players, Python bots); loading the SDK, it chooses
    gRPC's transport first."""
    importers = []
    for path in sorted([*(ROOT / "referee").rglob("*.py"), *(ROOT / "tournaments").rglob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            sdk = [n for n in names if n.split(".")[0] == "tavolo_bot"]
            if any(n != "tavolo_bot.proto" for n in sdk):
                importers.append(path.relative_to(ROOT).as_posix())
    # referee/bots holds bots of the SDK that search with the engine (pimc): processes of
    # their own, or the in-process players' (referee.players imports them only then); the
    # IS-MCTS bot is one too, kept with the research code whose extra it needs.
    bots = {
        p
        for p in importers
        if p.startswith("referee/bots/") or p == "referee/research/openspiel_bot.py"
    }
    players = {"referee/players.py", "referee/python_players.py"}
    assert bots and set(importers) - bots == players
    code = (
        "import tournaments.cli.main, referee.match, referee.local_play, sys\n"
        "assert 'tavolo_bot.bots' not in sys.modules, 'loaded without an SDK player'\n"
        "from referee.players import make_player\n"
        "make_player('heuristic', 's')\n"
        "import referee.grpc_transport as t\n"
        "assert 'tavolo_bot.bots' in sys.modules and t.GRPC_EXPERIMENTS_SET_HERE\n"
    )
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
