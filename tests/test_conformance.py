"""``tavolo conformance``: real bot processes against the scripted referee."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import Result

from referee.conformance import GAMES, every_event, find_position, kinds_of
from referee.families.tressette.actions import CALL_OUT, END_DECLARATIONS, is_declaration
from tests.test_cli import assert_one_error, tavolo

SCRIPTED = str(Path(__file__).parent / "bots" / "scripted.py")
CHECKS = 3 + sum(len(kinds_of(g)) for g in GAMES) + 4
RANGES = {
    "bid": (400, 406),
    "call": (440, 480),
    "give": (480, 520),
    "discard": (520, 560),
    "split": (560, 576),
}
"""Calabresella's action ids by kind, as docs/protocol.md gives them."""


def conformance(*args: str) -> Result:
    return tavolo("conformance", "--connect-timeout", "10", "--", *args)


def result_of(output: str, check: str) -> list[str]:
    for line in output.splitlines():
        if line.startswith(check):
            return line[len(check) :].split(maxsplit=1)
    raise AssertionError(f"no line {check!r} in\n{output}")


def test_every_kind_is_asked_in_every_game() -> None:
    for game in GAMES:
        for kind in kinds_of(game):
            position = find_position(game, kind)
            legal = position.legal
            if kind in RANGES:
                low, high = RANGES[kind]
                assert any(low <= a < high for a in legal), (game, kind)
            elif kind == "declare":
                assert any(is_declaration(a) for a in legal)
            elif kind == "end-declarations":
                assert END_DECLARATIONS in legal
            elif kind == "call-out":
                assert CALL_OUT in legal
            else:
                assert (len(position.observation.trick) == 0) == (kind == "lead")
            assert position.observation.players == position.rules.players
    # key_accepted comes only to a stream opened with an entrant key, never to a ticket's
    # (tests/test_entrant_keys.py plays every SDK with a key).
    assert {e.WhichOneof("event") for e in every_event()} | {"match_over", "key_accepted"} == {
        f.name for f in every_event()[0].DESCRIPTOR.oneofs_by_name["event"].fields
    }
    assert kinds_of("tressette") == ("lead", "follow", "declare", "end-declarations", "call-out")
    assert kinds_of("calabresella") == ("bid", "call", "give", "discard", "split", "lead", "follow")
    assert kinds_of("ciapano") == ("lead", "follow")


@pytest.mark.parametrize("bot", ["heuristic", "random"])
def test_the_python_bots_conform(bot: str) -> None:
    result = conformance(sys.executable, "-m", f"tavolo_bot.bots.{bot}")
    assert result.exit_code == 0, result.output
    assert f"{CHECKS} of {CHECKS} checks passed: the bot conforms" in result.output
    assert result_of(result.output, "match over: the stream ends, the process exits 0") == [
        "pass",
        "exit status 0",
    ]


def test_an_illegal_answer_fails_and_stops_the_session() -> None:
    result = conformance(sys.executable, SCRIPTED, "--mode", "not-in-hand", "--at", "2")
    assert result.exit_code == 1
    verdict, detail = result_of(result.output, "tressette: lead")
    assert verdict == "FAIL" and "is not in the legal list" in detail
    assert result_of(result.output, "tressette: follow") == ["not", "reached"]
    assert "checks passed" in result.output and "conforms" not in result.output


def test_a_slow_bot_fails_the_near_deadline() -> None:
    args = ["--mode", "late", "--sleep-ms", "400", "--times", "1000"]
    result = conformance(sys.executable, SCRIPTED, *args)
    assert result.exit_code == 1
    assert result_of(result.output, "tressette: lead")[0] == "pass"
    verdict, detail = result_of(result.output, "answer within a near deadline (200 ms)")
    assert verdict == "FAIL" and detail == "no answer within 200 ms"


def test_a_flooding_bot_fails_quiet() -> None:
    result = conformance(sys.executable, SCRIPTED, "--mode", "flood", "--count", "5")
    assert result.exit_code == 1
    verdict, detail = result_of(result.output, "sends nothing unasked")
    assert verdict == "FAIL" and detail.startswith("5 message(s)")


def test_a_bot_that_dies_shows_its_stderr() -> None:
    args = ["--mode", "exit", "--at", "3", "--say", "giving up here"]
    result = conformance(sys.executable, SCRIPTED, *args)
    assert result.exit_code == 1
    assert "FAIL" in result.output
    assert "giving up here" in result.output


def test_a_bot_that_never_connects() -> None:
    result = tavolo(
        "conformance", "--connect-timeout", "1", "--", sys.executable, SCRIPTED,
        "--mode", "never-connect",
    )  # fmt: skip
    assert result.exit_code == 1
    verdict, detail = result_of(result.output, "connects")
    assert verdict == "FAIL" and detail == "no connection within 1 s"


def test_bad_commands() -> None:
    assert_one_error(tavolo("conformance", "--", "./no-such-bot"), "'./no-such-bot' not found")
    assert_one_error(tavolo("conformance", "--", "no-such-bot-xyz"), "not found on PATH")
    assert_one_error(
        tavolo("conformance", "--game", "poker", "--", sys.executable), "unknown game 'poker'"
    )


MINIMAL = Path(__file__).parent.parent / "docs" / "examples" / "minimal_bot.py"


def test_the_documented_bot_is_the_file_and_conforms(tmp_path: Path) -> None:
    page = (MINIMAL.parent.parent / "writing-a-bot.md").read_text(encoding="utf-8")
    shown = page.split("```python\n", 1)[1].split("```", 1)[0]
    assert shown == MINIMAL.read_text(encoding="utf-8"), "the page shows the whole file"
    result = conformance(sys.executable, str(MINIMAL))
    assert result.exit_code == 0, result.output
    record = tmp_path / "m.jsonl"
    played = tavolo(
        "play", f"cmd:{sys.executable} {MINIMAL}", "random", "--seed", "doc", "--deals", "3",
        "--quiet", "--record", record,
    )  # fmt: skip
    assert played.exit_code == 0, played.output
    assert "0/0/0" in played.output.splitlines()[2]  # the minimal bot's row: no faults
    assert tavolo("verify", record).exit_code == 0
