"""The report of every format at the field sizes organisers run: 4, 5, 8 and 12 entries.

Each tournament is run for real (built-in bots over real gRPC, a real database), then
reported. A round robin's first round is disjoint pairs, which no fit can rate together:
the progress page says so for that round instead of failing the whole report (it failed
on every round robin of four, whose tests used two or three entries).
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from tests.test_cli import assert_one_error, run, tavolo

CASES = [
    ("round-robin", 4), ("round-robin", 5), ("round-robin", 8),
    ("double-round-robin", 4), ("double-round-robin", 5), ("double-round-robin", 8),
    ("swiss", 4), ("swiss", 5), ("swiss", 8), ("swiss", 12),
    ("gauntlet", 4), ("gauntlet", 5), ("gauntlet", 8),
]  # fmt: skip


def _tournament(
    folder: Path,
    fmt: str,
    size: int,
    *,
    game: str | None = None,
    bots: tuple[str, ...] = ("random", "heuristic"),
    seed: str = "sizes-1",
    rounds: int = 3,
) -> Path:
    """A tournament of ``size`` built-in bots (``bots`` in turn) in ``fmt``, of ``game``'s
    preset if given, run for real; its database."""
    head = [f'name = "{fmt}-{size}"', f'seed = "{seed}"', f'format = "{fmt}"']
    if fmt == "swiss":
        head.append(f"rounds = {rounds}")
    if fmt == "gauntlet":
        head.append('candidate = "e0"')
    preset = [f'preset = "{game}"'] if game else []
    lines = [*head, "[game]", *preset, "deals = 1", "[match]", "games = 2", 'sandbox = "off"']
    for i in range(size):
        lines += ["[[entry]]", f'name = "e{i}"', f'bot = "{bots[i % len(bots)]}"']
    file = folder / "t.toml"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = folder / "t.db"
    result = run("tournament", "run", file, "--db", db, "--quiet")
    assert result.returncode == 0, result.stderr
    return db


@pytest.mark.parametrize(("fmt", "size"), CASES)
def test_every_format_and_size_is_reported(tmp_path: Path, fmt: str, size: int) -> None:
    db = _tournament(tmp_path, fmt, size)
    out = tmp_path / "site"
    result = tavolo("tournament", "report", out, "--db", db)
    assert result.exit_code == 0, result.output
    standings = json.loads((out / "standings.json").read_text(encoding="utf-8"))
    assert sorted(e["name"] for e in standings["entries"]) == sorted(f"e{i}" for i in range(size))
    progress = (out / "progress.html").read_text(encoding="utf-8")
    rows = re.findall(r'<tr data-entry="(e\d+)">', progress)
    assert sorted(rows) == sorted(f"e{i}" for i in range(size))
    # The first round of a round robin or a Swiss is disjoint pairs: unrated, and said so.
    # A gauntlet's first round is one match: two entries, connected.
    said = re.findall(r"<li>after round (\d+): the entries do not all connect", progress)
    if fmt == "gauntlet":
        assert said == []
    else:
        assert "1" in said, progress
    # The last round's fit rates everyone who played: the field is connected by then.
    assert str(max(int(r) for r in re.findall(r"<th>round (\d+)</th>", progress))) not in said
    # A second report over the first replaces it.
    again = tavolo("tournament", "report", out, "--db", db)
    assert again.exit_code == 0, again.output
    assert [p.name for p in tmp_path.iterdir() if ".partial-" in p.name] == []


def test_a_report_that_fails_leaves_nothing_half_written(tmp_path: Path) -> None:
    db = _tournament(tmp_path, "round-robin", 4)
    out = tmp_path / "site"
    first = tavolo("tournament", "report", out, "--db", db)
    assert first.exit_code == 0, first.output
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    # A record damaged by hand in the database: the report fails on it, half way through.
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE games SET record = '{not json' WHERE match_id = 6")
    failed = tavolo("tournament", "report", out, "--db", db)
    assert_one_error(failed, "match 6 game 1, line 1, is damaged")
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before  # the earlier report, whole
    assert [p.name for p in tmp_path.iterdir() if ".partial-" in p.name] == []
    # Into a new folder: nothing is left there either, so a retry starts clean.
    fresh = tmp_path / "fresh"
    assert_one_error(tavolo("tournament", "report", fresh, "--db", db), "is damaged")
    assert not fresh.exists()


@pytest.mark.parametrize(
    ("game", "fmt"), [("briscola", "round-robin"), ("briscola-a-quattro", "swiss")]
)
def test_briscola_in_a_tournament_of_four(tmp_path: Path, game: str, fmt: str) -> None:
    """The newest family plays a real tournament (random, heuristic and pimc over gRPC),
    which stores games whose records verify, and reports."""
    db = _tournament(
        tmp_path, fmt, 4, game=game, bots=("random", "heuristic", "pimc", "random"),
        seed="briscola-4", rounds=2,
    )  # fmt: skip
    with sqlite3.connect(db) as connection:
        records = [r for (r,) in connection.execute("SELECT record FROM games")]
    assert records and all(f'"game":"{game}"' in r.splitlines()[0] for r in records)
    (tmp_path / "game.jsonl").write_text(records[-1], encoding="utf-8")
    verified = tavolo("verify", tmp_path / "game.jsonl")
    assert verified.exit_code == 0, verified.output
    out = tmp_path / "site"
    report = tavolo("tournament", "report", out, "--db", db)
    assert report.exit_code == 0, report.output
    standings = json.loads((out / "standings.json").read_text(encoding="utf-8"))
    assert sorted(e["name"] for e in standings["entries"]) == ["e0", "e1", "e2", "e3"]
