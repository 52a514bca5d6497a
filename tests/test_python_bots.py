"""Python bots in this process (``referee.local_play.play_bots``): a function of the SDK's
``Turn`` or an SDK ``Bot`` plays the match, seats, seeds and record it plays over gRPC."""

from __future__ import annotations

import io
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.entries import EntryError
from referee.local_play import FAULT_STOPS, EntriesError, play_bots
from referee.players import PlayerError
from referee.python_players import python_entry
from referee.records import dumps, verify_lines
from tavolo_bot import Bot, Turn
from tavolo_bot.proto import referee_pb2 as pb
from tests.bots.seeded import Seeded
from tests.sandboxing import require_sandbox
from tests.test_cli import assert_one_error, tavolo
from tests.test_in_process import lines, without_sandbox

ROOT = Path(__file__).resolve().parent.parent
SEEDED = ROOT / "tests" / "bots" / "seeded.py"


@pytest.mark.parametrize(
    ("game", "others", "deals", "sandbox"),
    [("tressette", ["random"], 2, "bwrap"), ("tressette-a-tre", ["heuristic", "random"], 1, "off")],
    ids=["tressette-sandboxed", "a-tre-unconfined"],
)
def test_an_sdk_bot_plays_in_process_the_record_it_plays_as_a_process(
    tmp_path: Path, game: str, others: list[str], deals: int, sandbox: str
) -> None:
    """The SDK bot as a process (``cmd:``, over real gRPC), and its class in this process:
    the same record, but for the sandbox and the think times, and the same table."""
    if sandbox == "bwrap":
        require_sandbox()
    over_grpc, in_process = tmp_path / "grpc.jsonl", tmp_path / "local.jsonl"
    played = tavolo(
        "play", f"cmd:{sys.executable} {SEEDED}", *others, "--game", game, "--seed", "py-same",
        "--deals", str(deals), "--sandbox", sandbox, "--record", over_grpc, "--json",
    )  # fmt: skip
    assert played.exit_code == 0, played.output
    # A cmd: entry is named after its program: the in-process entry takes that name, which
    # also seeds its slots.
    name = Path(sys.executable).name
    with in_process.open("w", encoding="utf-8") as record:
        result = play_bots(
            game, [python_entry(Seeded, name), *others], seed="py-same", deals=deals,
            record=record,
        )  # fmt: skip
    assert without_sandbox(over_grpc) == [dumps(line) for line in lines(in_process)]
    table = json.loads(played.stdout)["entries"]
    assert [(s.name, s.wins, s.points, s.illegal, s.crashes) for s in result.stats] == [
        (e["name"], e["wins"], e["points"], e["illegal"], e["crashes"]) for e in table
    ]
    assert table[0]["name"] == name and table[0]["crashes"] == 0


def first_card(turn: Turn) -> int:
    """The first card of the legal list, else its first action."""
    plays = turn.plays() or turn.legal
    return plays[0].id


def test_a_function_of_the_turn_plays_as_a_bot() -> None:
    asked: list[tuple[int, int]] = []

    def first(turn: Turn) -> int:
        asked.append((turn.observation.game, turn.seat))
        return first_card(turn)

    record = io.StringIO()
    result = play_bots("tressette", [first, "heuristic"], seed="fn", deals=1, record=record)
    assert [s.name for s in result.stats] == ["first", "heuristic"]
    verified = verify_lines(record.getvalue().splitlines())
    assert len(verified.outcomes) == 2
    games = [json.loads(line) for line in record.getvalue().splitlines()]
    assert [g["seats"] for g in games if g["type"] == "game"] == [
        ["first", "heuristic", "first", "heuristic"],
        ["heuristic", "first", "heuristic", "first"],
    ]
    # Both seats of its side in each game, ten cards each (and any declarations).
    assert {seat for game, seat in asked if game == 1} == {0, 2}
    assert {seat for game, seat in asked if game == 2} == {1, 3}
    assert len(asked) >= 40


class Counting(Bot):
    """Plays the first legal action and keeps the games it heard start."""

    def __init__(self) -> None:
        self.games: list[int] = []

    def on_event(self, event: pb.Event) -> None:
        if event.WhichOneof("event") == "game_started":
            self.games.append(event.game_started.game)

    def choose(self, turn: Turn) -> int:
        return turn.legal[0].id


def test_each_slot_plays_a_bot_of_its_own() -> None:
    """A factory is called once per slot, and an instance is copied for each: two seats of
    a side are two bots, as over gRPC they are two processes."""
    made: list[Counting] = []

    def factory() -> Counting:
        made.append(Counting())
        return made[-1]

    template = Counting()
    result = play_bots("tressette", [template, factory], seed="slots", deals=1)
    assert [s.name for s in result.stats] == ["Counting", "factory"]
    assert template.games == [] and template.seed == "", "the instance itself never played"
    assert len(made) == 2 and [b.games for b in made] == [[1, 2], [1, 2]]
    assert made[0].seed != made[1].seed != "", "each slot is seeded as its process would be"


def test_a_bot_class_needs_no_name_and_may_be_named() -> None:
    result = play_bots(
        "tressette-a-tre", [Counting, python_entry(Counting, "second"), "random"], seed="n",
        deals=1,
    )  # fmt: skip
    assert [s.name for s in result.stats] == ["Counting", "second", "random"]
    assert sum(s.games for s in result.stats) == 18  # 6 arrangements, 3 entries each


def raises(turn: Turn) -> int:
    raise ValueError(f"no idea at seat {turn.seat}")


@pytest.mark.parametrize(
    ("bot", "said"),
    [
        (lambda turn: 999, "chose action 999, which is none of the legal actions ["),
        (lambda turn: turn.legal[0].card, "raised TypeError: choose() must return an action id"),
        (lambda turn: True, "raised TypeError: choose() must return an action id"),
        (raises, "raised ValueError: no idea at seat "),
    ],
    ids=["illegal", "a-card-name", "a-bool", "raises"],
)
def test_a_fault_stops_the_match_with_one_line_naming_the_entry(bot: Any, said: str) -> None:
    record = io.StringIO()
    with pytest.raises(PlayerError) as info:
        play_bots("tressette", [python_entry(bot, "faulty"), "random"], seed="f", record=record)
    message = str(info.value)
    # The first request of the match, to a seat of the entry's side (0 and 2 in game 1).
    assert re.match(r"entry 'faulty' \(game 1, seat [02], request 1\) ", message), message
    assert said in message and message.endswith(FAULT_STOPS) and "\n" not in message
    if bot is raises:
        assert isinstance(info.value.__cause__, ValueError), "the bot's own traceback"
    written = [json.loads(line)["type"] for line in record.getvalue().splitlines()]
    assert written[0] == "game" and "game_over" not in written


class Deaf(Counting):
    """Cannot bear to hear a trick won."""

    def on_event(self, event: pb.Event) -> None:
        if event.WhichOneof("event") == "trick_won":
            raise RuntimeError("too loud")


def test_a_bot_that_raises_on_an_event_stops_the_match_too() -> None:
    with pytest.raises(PlayerError) as info:
        play_bots("tressette", [Deaf, "random"], seed="deaf", deals=1)
    message = str(info.value)
    assert re.match(r"entry 'Deaf' \(game 1, seat [02]\) raised RuntimeError: too loud ", message)
    assert message.endswith(f" on hearing trick_won; {FAULT_STOPS}")
    assert isinstance(info.value.__cause__, RuntimeError)


@pytest.mark.parametrize(
    ("bot", "said"),
    [
        (42, "entry 'int': int is not a bot"),
        (dict, "entry 'dict': class dict is not a tavolo_bot.Bot subclass"),
        (lambda turn, seat: 0, "takes 2 arguments: a bot function takes one (the Turn)"),
    ],
    ids=["a-number", "another-class", "two-arguments"],
)
def test_what_cannot_play_is_refused_before_the_match(bot: object, said: str) -> None:
    with pytest.raises(EntryError, match=said.replace("(", r"\(").replace(")", r"\)")):
        python_entry(bot)


def test_a_factory_that_makes_no_bot_stops_the_match_at_once() -> None:
    def not_a_bot() -> int:
        return 7

    with pytest.raises(PlayerError, match=r"^entry 'not_a_bot': making its bot raised "):
        play_bots("tressette", [not_a_bot, "random"], seed="x")


def test_one_entry_per_side() -> None:
    with pytest.raises(EntriesError, match="tressette needs 2 entries, one per side; got 3"):
        play_bots("tressette", [first_card, "random", "random"], seed="x")
    with pytest.raises(EntryError, match="unknown entry 'champion'"):
        play_bots("tressette", [first_card, "champion"], seed="x")


BROKEN = """\
def choose(turn):
    return "not an id"
"""


def test_tavolo_play_in_process_says_a_py_entrys_fault_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "in_process_broken.py").write_text(BROKEN, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    record = tmp_path / "kept.jsonl"
    result = tavolo(
        "play", "py:in_process_broken:choose", "random", "--seed", "s", "--in-process",
        "--quiet", "--record", record,
    )  # fmt: skip
    assert result.exit_code == 1
    assert_one_error(
        result,
        "entry 'choose' (game 1, seat 0, request 1) raised TypeError: choose() must return",
        FAULT_STOPS,
        f"the record keeps what was played ({record})",
    )
    kept = [json.loads(line)["type"] for line in record.read_text().splitlines()]
    assert kept == ["game", "deal"]


EXAMPLE = ROOT / "docs" / "examples" / "python_bots.py"


def test_the_page_shows_the_example_whose_commands_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/writing-a-bot.md shows docs/examples/python_bots.py whole; its commands run, and
    the py: entry plays the same record in its sandbox as in process."""
    require_sandbox()
    section = (ROOT / "docs" / "writing-a-bot.md").read_text(encoding="utf-8")
    section = section.split("## Python bots in process\n", 1)[1]
    shown = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert shown == EXAMPLE.read_text(encoding="utf-8"), "the page shows the whole file"
    commands = section.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert commands[:2] == ["cd docs/examples", "python python_bots.py match.jsonl"]
    assert len(commands) == 4

    monkeypatch.chdir(EXAMPLE.parent)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # no __pycache__ in docs/
    match = tmp_path / "match.jsonl"
    done = subprocess.run(
        [sys.executable, EXAMPLE.name, str(match)], capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    first, second, tricks = done.stdout.splitlines()
    assert re.fullmatch(r"cheapest: \d of 2 won random: \d of 2 won", first), first
    assert re.fullmatch(r"tally: \d of 2 won heuristic: \d of 2 won", second), second
    counted = json.loads(tricks.split(": ", 1)[1])
    assert len(counted) == 2 and counted[0] == counted[1] > 0, "both seats saw the same tricks"
    seats = [g["seats"] for g in map(json.loads, match.read_text().splitlines()) if "seats" in g]
    assert seats == [["tally", "heuristic"] * 2, ["heuristic", "tally"] * 2]

    records = []
    for command in commands[2:]:
        words = shlex.split(command)
        assert words[:2] == ["tavolo", "play"]
        at = words.index("--record") + 1
        words[at] = str(tmp_path / words[at])
        records.append(Path(words[at]))
        played = tavolo(*words[1:], "--quiet")
        assert played.exit_code == 0, played.output
        assert "Tally" in played.stdout and "0/0/0" in played.stdout
    over_grpc, here = records
    assert without_sandbox(over_grpc) == [dumps(line) for line in lines(here)]
