"""Think times: the ``ms`` of every answer in a referee's record, its verification, and the
think-time statistics of the tournament tables.

Everything is real: the ``tavolo`` command, a referee over gRPC, bot processes
(``tests/bots/scripted.py`` through ``cmd:`` entries, unconfined so they can log), SQLite.
Expected figures are computed from the stored records, never written in.
"""

from __future__ import annotations

import json
import math
import shlex
import sqlite3
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from referee.records import replay, timed_types, without_think_times
from tests.bots.harness import SCRIPTED, record_lines, split_games
from tests.test_cli import assert_one_error, tavolo
from tournaments.storage import Store

GOLDEN = Path(__file__).parent / "golden"


def scripted(mode: str, *args: str | float) -> str:
    """A ``cmd:`` entry of the scripted bot in ``mode``."""
    argv = [sys.executable, str(SCRIPTED), "--mode", mode, *(str(a) for a in args)]
    return "cmd:" + shlex.join(argv)


def referee_played(game: list[dict[str, Any]]) -> set[int]:
    """Indexes of the action lines the referee played itself (after a fault incident)."""
    return {
        i + 1
        for i, line in enumerate(game[:-1])
        if line["type"] == "incident" and line["kind"] in ("timeout", "illegal_action")
    }


def assert_answers_timed(lines: list[dict[str, Any]]) -> None:
    """Every bot answer carries a whole ``ms`` as its last field; no other line has one."""
    for game in split_games(lines):
        by_referee = referee_played(game)
        for i, line in enumerate(game):
            # ``declare`` is derived only under auto_declare, which these games do not use.
            if line["type"] in timed_types() and i not in by_referee:
                ms = line.get("ms")
                assert isinstance(ms, int) and not isinstance(ms, bool) and ms >= 0, line
                assert list(line)[-1] == "ms", line
            else:
                assert "ms" not in line, line


def play(tmp_path: Path, *args: str | int, name: str = "m.jsonl") -> Path:
    record = tmp_path / name
    argv: list[str | Path] = [*map(str, args), "--record", record, "--quiet", "--sandbox", "off"]
    result = tavolo("play", *argv)
    assert result.exit_code == 0, result.output
    return record


# -- records -------------------------------------------------------------------------------


def test_every_answer_of_a_match_carries_its_think_time(tmp_path: Path) -> None:
    # Both processes of the entry answer their 2nd to 4th requests after 150 ms, and try a
    # card they do not hold now and then (each refusal is an answer too).
    bot = scripted("late", "--at", 2, "--times", 3, "--sleep-ms", 150,
                   "--illegal-rate", 0.2, "--seed", "think")  # fmt: skip
    record = play(tmp_path, bot, "random", "--seed", "think-1", "--deals", 1)
    lines = record_lines(record)
    assert_answers_timed(lines)
    assert any(line["type"] == "rejected" for line in lines), "the seed makes a refusal"
    game = split_games(lines)[0]
    name = game[0]["seats"][0]
    for seat in (s for s, n in enumerate(game[0]["seats"]) if n == name):
        answers = [line for line in game if line["type"] in timed_types() and line["seat"] == seat]
        assert all(line["ms"] >= 150 for line in answers[1:4]), answers[:4]
    checked = tavolo("verify", record)
    assert checked.exit_code == 0, checked.output
    assert f"{record}: ok, {len(lines)} lines, 2 games" in checked.stdout
    # The rebuilt record keeps the think times as written.
    text = record.read_text(encoding="utf-8").splitlines()
    assert replay(text) == text


def test_the_action_the_referee_plays_itself_has_no_think_time(tmp_path: Path) -> None:
    bot = scripted("silent", "--slot", 0, "--at", 3)
    record = play(
        tmp_path, bot, "random", "--seed", "think-2", "--deals", 1,
        "--on-fault", "random", "--deadline-ms", 200,
    )  # fmt: skip
    lines = record_lines(record)
    [timeout] = [i for i, line in enumerate(lines) if line.get("kind") == "timeout"]
    played = lines[timeout + 1]
    assert played["type"] == "play" and played["seat"] == lines[timeout]["seat"]
    assert "ms" not in played
    assert_answers_timed(lines)
    assert tavolo("verify", record).exit_code == 0


def test_verify_checks_the_form_of_think_times(tmp_path: Path) -> None:
    record = play(tmp_path, "random", "random", "--seed", "think-3", "--deals", 1)
    text = record.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(text) if '"type":"play"' in line)
    ms = json.loads(text[at])["ms"]

    def tampered(name: str, line: str, index: int = at) -> Path:
        path = tmp_path / name
        changed = [*text[:index], line, *text[index + 1 :]]
        path.write_text("".join(t + "\n" for t in changed), encoding="utf-8")
        return path

    for n, bad in enumerate(("-3", "1.5", '"12"', "true", "null")):
        path = tampered(f"bad-{n}.jsonl", text[at].replace(f'"ms":{ms}', f'"ms":{bad}'))
        assert_one_error(
            tavolo("verify", path), f"{path}:{at + 1}:", "field 'ms' must be a whole number"
        )
    # Only a bot's answer may have one.
    deal = next(i for i, line in enumerate(text) if '"type":"deal"' in line)
    path = tampered("on-deal.jsonl", text[deal][:-1] + ',"ms":3}', deal)
    assert_one_error(tavolo("verify", path), f"{path}:{deal + 1}:", "unknown field 'ms'")
    # It is the last field of its line.
    obj = json.loads(text[at])
    moved = json.dumps({"ms": obj.pop("ms"), **obj}, separators=(",", ":"))
    path = tampered("moved.jsonl", moved)
    assert_one_error(tavolo("verify", path), f"{path}:{at + 1}:", "canonical form")
    # Without any, as records were before think times, it verifies too.
    old = tmp_path / "without.jsonl"
    old.write_text("".join(t + "\n" for t in without_think_times(text)), encoding="utf-8")
    assert '"ms"' not in old.read_text(encoding="utf-8")
    assert tavolo("verify", old).exit_code == 0


def test_records_written_before_think_times_verify_unchanged() -> None:
    files = sorted([*GOLDEN.glob("*.jsonl"), *(GOLDEN / "before-2026-12-01").glob("*.jsonl")])
    assert len(files) > 5
    result = tavolo("verify", *files)
    assert result.exit_code == 0, result.output
    assert result.stdout.count(": ok,") == len(files)


def test_in_process_records_are_not_timed(tmp_path: Path) -> None:
    record = tmp_path / "local.jsonl"
    args = ["play", "random", "heuristic", "--seed", "think-4", "--deals", "1", "--quiet"]
    assert tavolo(*args, "--in-process", "--record", record).exit_code == 0
    assert '"ms"' not in record.read_text(encoding="utf-8")


# -- tournaments ---------------------------------------------------------------------------


def write_tournament(path: Path, entries: dict[str, str], match: str, game: str) -> Path:
    text = f'name = "think"\nseed = "think-seed"\n[game]\n{game}\n[match]\n{match}\n'
    for name, bot in entries.items():
        text += f"[[entry]]\nname = {json.dumps(name)}\nbot = {json.dumps(bot)}\n"
    path.write_text(text, encoding="utf-8")
    return path


def records(db: Path) -> list[tuple[int, list[dict[str, Any]]]]:
    """(match id, record lines) of every stored game, in order."""
    with Store.open_for_reading(db) as store:
        return [(m, [json.loads(t) for t in text.splitlines()]) for m, _, text in store.records()]


def expected_times(
    games: Iterable[tuple[int, list[dict[str, Any]]]], deadline: int, bank: int
) -> dict[str, dict[str, Any]]:
    """Per entry, from the records of a game without partners (one slot an entry): every
    answer's ms, its timeouts, and the most of its bank it had spent in one match."""
    out: dict[str, dict[str, Any]] = {}
    spent: dict[tuple[int, str], int] = {}
    for match, game in games:
        seats = game[0]["seats"]
        for line in game:
            seat = line.get("seat")
            if seat is None:
                continue
            name = seats[seat]
            mine = out.setdefault(name, {"ms": [], "timeouts": 0, "bank_used": 0.0})
            key = (match, name)
            timed_out = line.get("reason") == "timeout" or line.get("kind") == "timeout"
            if "ms" in line:
                mine["ms"].append(line["ms"])
                spent[key] = min(bank, spent.get(key, 0) + max(0, line["ms"] - deadline))
            elif timed_out:
                mine["timeouts"] += 1
                spent[key] = bank
            mine["bank_used"] = max(mine["bank_used"], spent.get(key, 0) / bank)
    return out


def p95(values: list[int]) -> int:
    ordered = sorted(values)
    return ordered[math.ceil(0.95 * len(ordered)) - 1]


def test_tournament_tables_show_think_times_bank_and_timeouts(tmp_path: Path) -> None:
    entries = {
        # Its first two answers of each match take 300 ms, 100 ms over the deadline each.
        "slow": scripted("late", "--at", 1, "--times", 2, "--sleep-ms", 300),
        # No answer to its third request: a timeout, which spends all that is left.
        "silent": scripted("silent", "--at", 3),
        "random": "random",
    }
    match = 'games = 6\ndeadline_ms = 200\ntime_bank_ms = 400\nsandbox = "off"\n'
    path = write_tournament(
        tmp_path / "t.toml", entries, match, 'preset = "tressette-a-tre"\ndeals = 1'
    )
    db = tmp_path / "t.db"
    run = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert run.exit_code == 0, run.output
    stored = records(db)
    assert len(stored) == 6
    for _, game in stored:
        assert_answers_timed(game)
    expected = expected_times(stored, deadline=200, bank=400)
    assert expected["slow"]["bank_used"] >= 0.5  # two answers, each 100 ms or more over
    assert expected["silent"]["timeouts"] == 1 and expected["silent"]["bank_used"] == 1.0

    data = json.loads(tavolo("tournament", "table", "--db", db, "--format", "json").stdout)
    by_name = {e["name"]: e for e in data["entries"]}
    for name, want in expected.items():
        got = by_name[name]
        ms = want["ms"]
        assert got["think_time"] == {
            "decisions": len(ms),
            "mean_ms": sum(ms) / len(ms),
            "p95_ms": p95(ms),
            "max_ms": max(ms),
            "time_bank_ms": 400,
            "bank_used": want["bank_used"],
        }, name
        assert got["timeouts"] == want["timeouts"], name

    # The compact table fits 80 columns; --wide has every column, think times included.
    plain = tavolo("tournament", "table", "--db", db).stdout
    assert all(len(line) <= 80 for line in plain.splitlines()), plain
    header = plain.splitlines()[0].split("  ")
    assert [h.strip() for h in header if h.strip()] == [
        "rank", "entry", "Elo", "-/+95%", "games", "score %", "faults", "mean ms",
    ]  # fmt: skip
    wide = tavolo("tournament", "table", "--db", db, "--wide").stdout
    assert "LOS next" in wide and "timeouts/illegal/crashes" in wide
    for name, want in expected.items():
        think = by_name[name]["think_time"]
        compact_row = next(line.split() for line in plain.splitlines()[1:4] if name in line)
        assert compact_row[-1] == f"{think['mean_ms']:.1f}"
        row = next(line.split() for line in wide.splitlines()[1:4] if name in line)
        assert row[-4:] == [
            f"{think['mean_ms']:.1f}", str(think["p95_ms"]), str(think["max_ms"]),
            f"{100 * want['bank_used']:.1f}%",
        ]  # fmt: skip

    # show: the same per match (one match here, the three entries at one table).
    shown = tavolo("tournament", "show", "--db", db).stdout
    assert all(len(line) <= 80 for line in shown.splitlines()[-4:])
    rows = {line.split()[1]: line.split() for line in shown.splitlines()[-3:]}
    for name, want in expected.items():
        think = by_name[name]["think_time"]
        assert rows[name] == [
            "1", name, "6", f"{think['mean_ms']:.1f}", str(think["p95_ms"]),
            str(think["max_ms"]), f"{100 * want['bank_used']:.1f}%", str(want["timeouts"]),
        ]  # fmt: skip

    # The table a run prints is the compact one, or the wide one with --wide.
    assert run.stdout.rstrip().splitlines()[-1].startswith("sandbox:")
    assert "mean ms" in run.stdout and "LOS next" not in run.stdout
    again = tavolo("tournament", "run", path, "--db", db, "--quiet", "--wide")
    assert again.exit_code == 0, again.output
    assert "0 games played now" in again.stdout
    assert "LOS next" in again.stdout and "p95 ms" in again.stdout


LONG = "a-very-long-entry-name-for-the-compact-table"


def test_a_database_without_think_times_opens_and_shows_none(tmp_path: Path) -> None:
    entries = {f"{LONG}-1": "random", f"{LONG}-2": "random"}
    game = 'preset = "tressette"\ndeals = 1'
    path = write_tournament(tmp_path / "t.toml", entries, "games = 2", game)
    db = tmp_path / "t.db"
    assert tavolo("tournament", "run", path, "--db", db, "--quiet").exit_code == 0

    # No time bank: bank used is not applicable.
    data = json.loads(tavolo("tournament", "table", "--db", db, "--format", "json").stdout)
    for entry in data["entries"]:
        assert entry["think_time"]["time_bank_ms"] == 0 and entry["think_time"]["bank_used"] is None
        assert entry["think_time"]["decisions"] > 0
    wide = tavolo("tournament", "table", "--db", db, "--wide").stdout
    rows = [line.split() for line in wide.splitlines()[1:3]]
    assert {row[1] for row in rows} == set(entries)  # names whole in the wide table
    assert all(row[-1] == "n/a" for row in rows)

    # Long names lose their middle in the compact table, which still fits 80 columns.
    plain = tavolo("tournament", "table", "--db", db).stdout
    assert all(len(line) <= 80 for line in plain.splitlines()), plain
    cut = [line.split()[1] for line in plain.splitlines()[1:3]]
    assert len(set(cut)) == 2 and all("…" in name for name in cut)
    for name in cut:
        head, tail = name.split("…")
        assert any(n.startswith(head) and n.endswith(tail) for n in entries)

    # A database made before think times were stored: the table is missing.
    with sqlite3.connect(db) as c:
        c.execute("DROP TABLE think_times")
    untimed = tavolo("tournament", "table", "--db", db)
    assert untimed.exit_code == 0, untimed.output
    assert all(line.split()[-1] == "-" for line in untimed.stdout.splitlines()[1:3])
    data = json.loads(tavolo("tournament", "table", "--db", db, "--format", "json").stdout)
    assert [e["think_time"] for e in data["entries"]] == [None, None]
    shown = tavolo("tournament", "show", "--db", db)
    assert shown.exit_code == 0, shown.output
    assert all(line.split()[3:7] == ["-"] * 4 for line in shown.stdout.splitlines()[-2:])
    # A run opens it, makes the table, and the games stored before stay untimed.
    again = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert again.exit_code == 0 and "0 games played now" in again.stdout, again.output
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM think_times").fetchone() == (0,)
