"""The ``tavolo`` command line: play, verify, bench, and its one-line errors.

Most tests call the Typer app in process with ``typer.testing.CliRunner``; this Typer
(0.29, with its own copy of click) keeps stdout and stderr apart in ``result.stdout`` and
``result.stderr`` and mixes them in ``result.output``. A few tests run the installed
console script, as a user does.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from referee.records import dumps, verify_file
from tournaments.cli.main import app

RANKS = "32AKQJ7654"
"""Rank letters, strongest first."""

runner = CliRunner()


def tavolo(*args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args])


def assert_one_error(result: Result, *needles: str) -> str:
    """A clean failure: exit code not 0, one ``error:`` line naming the problem, no traceback."""
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"uncaught {result.exception!r}"
    )
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    assert errors[0] in result.stderr.splitlines(), "the error goes to stderr"
    for needle in needles:
        assert needle in errors[0], f"{needle!r} not in {errors[0]!r}"
    return errors[0]


def play_args(record: Path, *extra: str, seed: str = "s", deals: str = "2") -> list[str]:
    """A quick match in this process (``--in-process``: a duplicate set, as over gRPC);
    tests/test_match.py covers gRPC, tests/test_in_process.py that both play alike."""
    return [
        "play", *extra, "--seed", seed, "--deals", deals, "--record", str(record), "--in-process",
    ]  # fmt: skip


# -- tavolo play ------------------------------------------------------------------------


def table_rows(output: str) -> list[list[str]]:
    """The rows of the result table: an entry's name, then its games and W-D-L."""
    return [line.split() for line in output.splitlines() if re.match(r"\S+\s+\d+\s+\d+-", line)]


def test_play_writes_a_record_that_verifies(tmp_path: Path) -> None:
    record = tmp_path / "game.jsonl"
    result = tavolo(*play_args(record, "random", "random"))
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    out = result.stdout
    assert "entry" in out and "W-D-L" in out and "points" in out
    rows = table_rows(out)
    assert [row[0] for row in rows] == ["random", "random-2"]
    assert "after 2 deals" in out
    assert f"record: {record}" in out
    verified = verify_file(record)
    assert [o.deals for o in verified.outcomes] == [2, 2]  # the sides swapped


def test_play_tressette_a_tre_with_three_entries(tmp_path: Path) -> None:
    record = tmp_path / "a-tre.jsonl"
    result = tavolo(*play_args(record, "random", "random", "random", "--game", "tressette-a-tre"))
    assert result.exit_code == 0, result.output
    rows = table_rows(result.stdout)
    assert [row[0] for row in rows] == ["random", "random-2", "random-3"]
    verified = verify_file(record)
    assert len(verified.outcomes) == 6  # every arrangement of the three
    assert len(verified.outcome.totals) == 3
    header = json.loads(record.read_text(encoding="utf-8").splitlines()[0])
    assert header["game"] == "tressette-a-tre"
    assert header["seats"] == ["random", "random-2", "random-3"]


def test_same_seed_same_record(tmp_path: Path) -> None:
    first, second, other = tmp_path / "1.jsonl", tmp_path / "2.jsonl", tmp_path / "3.jsonl"
    assert tavolo(*play_args(first, "random", "random", seed="twice")).exit_code == 0
    assert tavolo(*play_args(second, "random", "random", seed="twice")).exit_code == 0
    assert tavolo(*play_args(other, "random", "random", seed="other")).exit_code == 0
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes() != other.read_bytes()


def test_play_with_rules_and_to_target(tmp_path: Path) -> None:
    record = tmp_path / "target.jsonl"
    result = tavolo(
        "play", "random", "random", "--seed", "t", "--record", record, "--quiet",
        "--game", "treseta", "--rule", "target=11", "--rule", "cappotto=double", "--in-process",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    header = json.loads(record.read_text(encoding="utf-8").splitlines()[0])
    assert header["rules"]["target"] == 11
    assert header["rules"]["cappotto"] == "double"
    assert header["rules"]["signals"] == "leader"
    assert verify_file(record).outcome.termination.value == "target_reached"


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["random", "random", "--game", "scopa"], ["unknown game 'scopa'", "tressette"]),
        (["random", "random", "--rule", "trumps=D"], ["unknown knob 'trumps'"]),
        (["random", "random", "--rule", "signals=loud"], ["knob 'signals'", "'loud'"]),
        (["random", "random", "--rule", "target=many"], ["knob 'target'", "whole number"]),
        (["random", "random", "--rule", "muto"], ["'muto'", "knob=value"]),
        (["random"], ["needs 2 entries", "got 1"]),
        (["random", "random", "random"], ["needs 2 entries", "got 3"]),
        (["random", "random", "--game", "tressette-a-tre"], ["needs 3 entries", "got 2"]),
        (["random", "bogus"], ["unknown built-in player 'bogus'", "random"]),
        (["random", "random", "--deals", "0"], ["--deals"]),
    ],
    ids=[
        "unknown-game",
        "unknown-knob",
        "bad-knob-value",
        "bad-number",
        "no-equals",
        "one-entry",
        "three-entries",
        "a-tre-two-entries",
        "unknown-player",
        "zero-deals",
    ],
)
def test_play_bad_input(args: list[str], needles: list[str]) -> None:
    result = tavolo("play", *args, "--seed", "s", "--quiet", "--in-process")
    assert_one_error(result, *needles)


@pytest.mark.parametrize("where", ["missing-folder", "a-folder"])
def test_play_unwritable_record(tmp_path: Path, where: str) -> None:
    target = tmp_path / "no" / "such" / "dir" / "g.jsonl" if where == "missing-folder" else tmp_path
    result = tavolo(*play_args(target, "random", "random"))
    assert_one_error(result, "cannot write record", str(target))


# -- tavolo verify ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def good_record(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The lines of a two-deal tressette record, without newlines (the match's first game)."""
    path = tmp_path_factory.mktemp("good") / "good.jsonl"
    assert tavolo(*play_args(path, "random", "random", seed="tamper")).exit_code == 0
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    lines = text.splitlines()
    return lines[: next(i for i, line in enumerate(lines) if i and '"type":"game"' in line)]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def events(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines]


def find(lines: list[str], kind: str, nth: int = 0) -> int:
    """The 0-based index of the nth line of ``kind``."""
    found = [i for i, e in enumerate(events(lines)) if e["type"] == kind]
    return found[nth]


def verify_error(path: Path) -> tuple[int | None, str]:
    """Verify a bad record: the line number and message of its one error."""
    result = tavolo("verify", path)
    assert result.exit_code == 1, result.output
    error = assert_one_error(result)
    assert "ok" not in result.stdout
    prefix = f"error: {path}"
    assert error.startswith(prefix), error
    rest = error[len(prefix) :]
    match = re.fullmatch(r":(\d+): (.+)", rest)
    if match:
        return int(match.group(1)), match.group(2)
    assert rest.startswith(": "), error
    return None, rest[2:]


def tamper(tmp_path: Path, lines: list[str], index: int, **changes: Any) -> Path:
    """A copy of the record with fields of line ``index`` (0-based) changed."""
    out = list(lines)
    obj = json.loads(out[index])
    obj.update(changes)
    out[index] = dumps(obj)
    return write(tmp_path / "tampered.jsonl", out)


def test_verify_good_record(tmp_path: Path, good_record: list[str]) -> None:
    path = write(tmp_path / "good.jsonl", good_record)
    result = tavolo("verify", path)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert result.stdout.startswith(f"{path}: ok, {len(good_record)} lines, 2 deals")


def trick_winner(plays: list[dict[str, Any]]) -> int:
    """The seat that wins a trick of play lines: the highest card of the suit led."""
    led = plays[0]["card"][1]
    best = min((p for p in plays if p["card"][1] == led), key=lambda p: RANKS.index(p["card"][0]))
    return int(best["seat"])


def held_card_swap(lines: list[str]) -> tuple[int, str, int]:
    """A play line whose card can become another card of the same suit the seat holds.

    The swap keeps that play legal (same suit, same signal truth) and the trick's winner,
    so the record first breaks where the seat later plays the swapped-in card again:
    returns (swapped line, new card, the line that breaks), 0-based.
    """
    objs = events(lines)
    tricks: list[list[int]] = [[]]
    for i, obj in enumerate(objs):
        if obj["type"] == "play":
            tricks[-1].append(i)
        elif obj["type"] == "trick":
            tricks.append([])
    trick_of = {i: trick for trick in tricks for i in trick}
    hands: list[set[str]] = []
    for i, obj in enumerate(objs):
        if obj["type"] == "deal":
            hands = [set(h) for h in obj["hands"]]
        if obj["type"] != "play":
            continue
        seat, card = obj["seat"], obj["card"]
        hands[seat].discard(card)
        plays = [objs[j] for j in trick_of[i]]
        for other in sorted(hands[seat]):
            if other[1] != card[1]:
                continue
            swapped = [dict(p, card=other) if p is obj else p for p in plays]
            if trick_winner(swapped) != trick_winner(plays):
                continue
            later = next(
                j
                for j in range(i + 1, len(objs))
                if objs[j]["type"] == "play" and objs[j]["card"] == other
            )
            return i, other, later
    raise AssertionError("no play can swap to another held card")


def test_verify_card_changed_to_a_held_card(tmp_path: Path, good_record: list[str]) -> None:
    index, other, breaks = held_card_swap(good_record)
    seat = json.loads(good_record[index])["seat"]
    path = tamper(tmp_path, good_record, index, card=other)
    line, message = verify_error(path)
    assert line == breaks + 1
    assert message.startswith(f"illegal action by seat {seat} (card_not_in_hand)")
    assert f"{other} is not in seat {seat}'s hand" in message


def test_verify_card_changed_to_a_card_not_held(tmp_path: Path, good_record: list[str]) -> None:
    index = find(good_record, "play", 6)
    obj = json.loads(good_record[index])
    seat = obj["seat"]
    deal = json.loads(good_record[find(good_record, "deal")])
    played_before = {json.loads(t).get("card") for t in good_record[:index]}
    not_held = next(
        c for c in deal["hands"][(seat + 1) % 4] if c not in played_before and c != obj["card"]
    )
    path = tamper(tmp_path, good_record, index, card=not_held)
    line, message = verify_error(path)
    assert line == index + 1
    assert f"illegal action by seat {seat} (card_not_in_hand)" in message
    assert f"{not_held} is not in seat {seat}'s hand" in message


def test_verify_card_already_played(tmp_path: Path, good_record: list[str]) -> None:
    first = json.loads(good_record[find(good_record, "play", 0)])
    index = next(
        i
        for i, e in enumerate(events(good_record))
        if i > find(good_record, "trick") and e["type"] == "play" and e["seat"] == first["seat"]
    )
    path = tamper(tmp_path, good_record, index, card=first["card"])
    line, message = verify_error(path)
    assert line == index + 1
    assert "card_not_in_hand" in message


def test_verify_seat_changed(tmp_path: Path, good_record: list[str]) -> None:
    index = find(good_record, "play", 9)
    seat = json.loads(good_record[index])["seat"]
    path = tamper(tmp_path, good_record, index, seat=(seat + 1) % 4)
    line, message = verify_error(path)
    assert line == index + 1
    assert message == f"seat {(seat + 1) % 4} acts, but it is seat {seat}'s turn"


def test_verify_score_points_changed(tmp_path: Path, good_record: list[str]) -> None:
    index = find(good_record, "score")
    points = json.loads(good_record[index])["points"]
    bad = [points[0] + 1, points[1]]
    path = tamper(tmp_path, good_record, index, points=bad)
    line, message = verify_error(path)
    assert line == index + 1
    assert message == (
        f"'score' line: field 'points' is {json.dumps(bad)}, the replay gives {json.dumps(points)}"
    )


def test_verify_totals_changed_in_second_score(tmp_path: Path, good_record: list[str]) -> None:
    index = find(good_record, "score", 1)
    totals = json.loads(good_record[index])["totals"]
    path = tamper(tmp_path, good_record, index, totals=[totals[1], totals[0] + 1])
    line, message = verify_error(path)
    assert line == index + 1
    assert message.startswith("'score' line: field 'totals' is")


def test_verify_trick_winner_changed(tmp_path: Path, good_record: list[str]) -> None:
    index = find(good_record, "trick", 3)
    winner = json.loads(good_record[index])["winner"]
    path = tamper(tmp_path, good_record, index, winner=(winner + 2) % 4)
    line, message = verify_error(path)
    assert line == index + 1
    assert message == (
        f"'trick' line: field 'winner' is {(winner + 2) % 4}, the replay gives {winner}"
    )


@pytest.mark.parametrize("nth", [0, 1])
def test_verify_dealt_hand_changed(tmp_path: Path, good_record: list[str], nth: int) -> None:
    index = find(good_record, "deal", nth)
    hands = json.loads(good_record[index])["hands"]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    path = tamper(tmp_path, good_record, index, hands=hands)
    line, message = verify_error(path)
    assert line == index + 1
    assert message == f"deal {nth + 1}: field 'hands' does not match the seed"


def test_verify_deleted_play_line(tmp_path: Path, good_record: list[str]) -> None:
    index = find(good_record, "play", 13)  # the second play of trick 4 of deal 1
    deleted = json.loads(good_record[index])
    path = write(tmp_path / "t.jsonl", good_record[:index] + good_record[index + 1 :])
    line, message = verify_error(path)
    assert line == index + 1
    assert message == (
        f"seat {(deleted['seat'] + 1) % 4} acts, but it is seat {deleted['seat']}'s turn"
    )


def test_verify_deleted_trick_line(tmp_path: Path, good_record: list[str]) -> None:
    index = find(good_record, "trick", 2)
    path = write(tmp_path / "t.jsonl", good_record[:index] + good_record[index + 1 :])
    line, message = verify_error(path)
    assert line == index + 1
    assert message == "expected a 'trick' line, found 'play'"


def test_verify_deleted_result_line(tmp_path: Path, good_record: list[str]) -> None:
    path = write(tmp_path / "t.jsonl", good_record[:-1])
    line, message = verify_error(path)
    assert line == len(good_record)
    assert message == "record ends early: a 'result' line is missing"


def test_verify_record_stops_mid_deal(tmp_path: Path, good_record: list[str]) -> None:
    index = find(good_record, "trick", 4)  # keep the lines up to this trick line
    path = write(tmp_path / "t.jsonl", good_record[: index + 1])
    winner = json.loads(good_record[index])["winner"]
    line, message = verify_error(path)
    assert line == index + 2
    assert message == f"record ends before the game is over: seat {winner} is to act"


@pytest.mark.parametrize("nth", [0, 20])
def test_verify_truncated_mid_line(tmp_path: Path, good_record: list[str], nth: int) -> None:
    index = find(good_record, "play", nth)
    text = "".join(line + "\n" for line in good_record[:index])
    text += good_record[index][: len(good_record[index]) // 2]
    path = tmp_path / "t.jsonl"
    path.write_text(text, encoding="utf-8")
    line, message = verify_error(path)
    assert line == index + 1
    assert message == "truncated: the last line has no newline"


def test_verify_non_json_line(tmp_path: Path, good_record: list[str]) -> None:
    index = find(good_record, "play", 11)
    path = write(tmp_path / "t.jsonl", [*good_record[:index], "not json {", *good_record[index:]])
    line, message = verify_error(path)
    assert line == index + 1
    assert message.startswith("not JSON (")


def test_verify_blank_line(tmp_path: Path, good_record: list[str]) -> None:
    index = find(good_record, "score")
    path = write(tmp_path / "t.jsonl", [*good_record[:index], "", *good_record[index:]])
    line, message = verify_error(path)
    assert line == index + 1
    assert message.startswith("not JSON (")


@pytest.mark.parametrize("extra", ["play", "result"])
def test_verify_line_after_result(tmp_path: Path, good_record: list[str], extra: str) -> None:
    copied = good_record[find(good_record, extra)]
    path = write(tmp_path / "t.jsonl", [*good_record, copied])
    line, message = verify_error(path)
    assert line == len(good_record) + 1
    assert (
        message
        == f"a '{extra}' line after the game's result (a new game starts with a 'game' line)"
    )


def test_verify_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("", encoding="utf-8")
    line, message = verify_error(path)
    # No line to point at: the message names the file only.
    assert line is None
    assert message == "the record is empty"


def test_verify_missing_file(tmp_path: Path) -> None:
    # A mistake in the command, not a record that failed: exit 2, as everywhere.
    path = tmp_path / "missing.jsonl"
    result = tavolo("verify", path)
    assert result.exit_code == 2, result.output
    assert assert_one_error(result) == f"error: {path}: no such file"


def test_verify_several_files_one_bad(tmp_path: Path, good_record: list[str]) -> None:
    good1 = write(tmp_path / "a.jsonl", good_record)
    index = find(good_record, "trick")
    winner = json.loads(good_record[index])["winner"]
    bad = tamper(tmp_path, good_record, index, winner=(winner + 1) % 4)
    good2 = write(tmp_path / "c.jsonl", good_record)
    result = tavolo("verify", good1, bad, good2)
    assert result.exit_code == 1
    error = assert_one_error(result, f"{bad}:{index + 1}: 'trick' line: field 'winner'")
    assert error.startswith(f"error: {bad}:")
    ok = [line for line in result.stdout.splitlines() if ": ok," in line]
    assert [line.split(":")[0] for line in ok] == [str(good1), str(good2)]


# -- tavolo bench ------------------------------------------------------------------------


def test_bench_engine_json() -> None:
    result = tavolo("bench", "engine", "--json", "--seconds", "0.05", "--rounds", "1")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["benchmark"] == "engine"
    assert data["game"] == "tressette"
    assert data["deals_per_second"] > 0
    assert len(data["rounds"]) == 1
    assert data["deals"] > 0


@pytest.mark.parametrize("game", ["calabresella", "briscola", "briscola-a-quattro"])
def test_bench_engine_plays_every_family(game: str) -> None:
    """Families whose deals are not Tressette's are timed through the game API."""
    result = tavolo(
        "bench", "engine", "--game", game, "--json", "--seconds", "0.05", "--rounds", "1"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["game"] == game and data["deals"] >= 200


def test_bench_bad_seconds() -> None:
    assert_one_error(tavolo("bench", "engine", "--seconds", "0"), "--seconds")


# -- the installed console script ---------------------------------------------------------


def console_script() -> str:
    beside = Path(sys.executable).parent / "tavolo"
    if beside.exists():
        return str(beside)
    found = shutil.which("tavolo")
    if found is None:
        pytest.fail("the tavolo console script is not installed (pip install -e .)")
    return found


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def run_async(*args: str) -> tuple[int, str, str]:
    """:func:`run` from a coroutine, so the event loop (a referee, say) keeps running."""
    process = await asyncio.create_subprocess_exec(
        console_script(), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def test_console_script_plays_and_verifies(tmp_path: Path) -> None:
    record = tmp_path / "game.jsonl"
    played = run(*play_args(record, "random", "random", seed="script"))
    assert played.returncode == 0, played.stderr
    assert played.stderr == ""
    assert len(table_rows(played.stdout)) == 2
    checked = run("verify", record)
    assert checked.returncode == 0, checked.stderr
    assert f"{record}: ok," in checked.stdout
    # The console script and the in-process app write the same record.
    again = tmp_path / "again.jsonl"
    assert tavolo(*play_args(again, "random", "random", seed="script")).exit_code == 0
    assert again.read_bytes() == record.read_bytes()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["play", "random", "random", "--seed", "s", "--game", "scopa"], "unknown game 'scopa'"),
        (["play", "random", "random", "--seed", "s", "--rule", "signals=loud"], "'signals'"),
        (["verify", "/nonexistent/record.jsonl"], "no such file"),
    ],
)
def test_console_script_errors(args: list[str], needle: str) -> None:
    done = run(*args)
    assert done.returncode != 0
    assert "Traceback" not in done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert needle in errors[0]


def test_console_script_tampered_record(tmp_path: Path, good_record: list[str]) -> None:
    index = find(good_record, "score")
    points = json.loads(good_record[index])["card_points"]
    bad = [points[0] + 1, points[1]]
    path = tamper(tmp_path, good_record, index, card_points=bad)
    done = run("verify", path)
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        f"error: {path}:{index + 1}: 'score' line: field 'card_points' is {json.dumps(bad)}, "
        f"the replay gives {json.dumps(points)}"
    ]


# -- bugs found and fixed: a surrogate seed, deep JSON, a wiped record, CRLF line ends -----


def test_verify_seed_with_lone_surrogate(tmp_path: Path, good_record: list[str]) -> None:
    header = good_record[0].replace('"seed":"tamper"', '"seed":"\\ud800"')
    assert header != good_record[0]
    path = write(tmp_path / "t.jsonl", [header, *good_record[1:]])
    line, message = verify_error(path)
    assert line == 1
    assert "seed" in message


def test_play_seed_not_utf8() -> None:
    result = tavolo("play", "random", "random", "--seed", "\udcff", "--deals", "1", "--quiet")
    assert_one_error(result, "seed")


def test_verify_deeply_nested_line(tmp_path: Path, good_record: list[str]) -> None:
    nested = "[" * 100_000 + "]" * 100_000
    path = write(tmp_path / "t.jsonl", [good_record[0], nested])
    line, _message = verify_error(path)
    assert line == 2


def test_play_bad_entry_keeps_existing_record(tmp_path: Path) -> None:
    record = tmp_path / "keep.jsonl"
    record.write_text("precious\n", encoding="utf-8")
    assert_one_error(tavolo(*play_args(record, "random", "bogus")), "bogus")
    assert record.read_text(encoding="utf-8") == "precious\n"


def test_verify_crlf_record_is_not_canonical(tmp_path: Path, good_record: list[str]) -> None:
    path = tmp_path / "crlf.jsonl"
    path.write_bytes("".join(line + "\r\n" for line in good_record).encode())
    line, message = verify_error(path)
    assert line == 1
    assert "canonical" in message
