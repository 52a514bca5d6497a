"""Whole tournaments over real gRPC with real bot processes and real SQLite files."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from referee.engine.deals import seed_commitment
from referee.records import verify_lines, without_think_times
from tests.test_cli import assert_one_error, tavolo
from tournaments.config import load_config
from tournaments.runner import match_seed, open_store, planned_pairings
from tournaments.storage import Store

ENTRIES = """
[[entry]]
name = "heuristic"
bot = "heuristic"

[[entry]]
name = "random-a"
bot = "random"

[[entry]]
name = "random-b"
bot = "random"
"""


def tournament(
    tmp_path: Path,
    *,
    fmt: str = "round-robin",
    games: int = 2,
    deals: int = 1,
    extra: str = "",
    entries: str = ENTRIES,
    preset: str = "tressette",
    name: str = "t.toml",
) -> Path:
    path = tmp_path / name
    path.write_text(
        f'name = "test"\nseed = "seed-1"\nformat = "{fmt}"\n{extra}\n'
        f'[game]\npreset = "{preset}"\ndeals = {deals}\n\n[match]\ngames = {games}\n' + entries,
        encoding="utf-8",
    )
    return path


def table_json(db: Path) -> dict[str, Any]:
    result = tavolo("tournament", "table", "--db", db, "--format", "json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def results_only(table: dict[str, Any]) -> list[dict[str, Any]]:
    """The table's entries without their think times, which no two runs share."""
    return [{k: v for k, v in e.items() if k != "think_time"} for e in table["entries"]]


def table_without_think_times(db: Path) -> str:
    """``tavolo tournament table --no-think-times --wide`` in every format, as printed: what
    two runs of the same games (one referee, shards, a cluster) print alike, byte for byte."""
    out = []
    for fmt in ("plain", "csv", "json"):
        result = tavolo(
            "tournament", "table", "--db", db, "--no-think-times", "--wide", "--format", fmt
        )
        assert result.exit_code == 0, result.output
        out.append(result.stdout)
    return "\n".join(out)


def stored_games(db: Path) -> list[tuple[int, int]]:
    with sqlite3.connect(db) as c:
        return [tuple(r) for r in c.execute("SELECT match_id, number FROM games")]  # type: ignore[misc]


def test_round_robin_table_and_records(tmp_path: Path) -> None:
    path, db = tournament(tmp_path, games=4), tmp_path / "t.db"
    result = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert result.exit_code == 0, result.output
    assert "12 games played now, 12 of 12 stored" in result.output
    # The compact table (docs/tournaments.md); --wide adds LOS, W-D-L and the rest.
    assert "rank" in result.output and "-/+95%" in result.output
    data = table_json(db)
    names = {e["name"] for e in data["entries"]}
    assert names == {"heuristic", "random-a", "random-b"}
    # Each pair met in one match of 4 games; pairs in JSON let anyone recompute ratings.
    assert len(data["pairs"]) == 3
    for pair in data["pairs"]:
        assert pair["wins_a"] + pair["draws"] + pair["wins_b"] == 4
    for e in data["entries"]:
        assert e["games"] == 8 and e["wins"] + e["draws"] + e["losses"] == 8
        assert e["ci_low"] <= e["ci_high"]
    assert sum(e["elo"] for e in data["entries"]) == pytest.approx(3 * 1500)
    with Store.open_for_reading(db) as store:
        records = list(store.records())
        assert len(records) == 12
        for match_id, number, text in records:
            verified = verify_lines(text.splitlines(), f"match {match_id} game {number}")
            assert len(verified.outcomes) == 1
        assert store.deal_count() == 12  # one deal a game, each stored with its record


def test_tournament_verify_replays_every_stored_game(tmp_path: Path) -> None:
    path, db = tournament(tmp_path), tmp_path / "t.db"
    assert tavolo("tournament", "run", path, "--db", db, "--quiet").exit_code == 0
    result = tavolo("tournament", "verify", "--db", db)
    assert result.exit_code == 0 and "ok, 6 game records verify" in result.output
    with sqlite3.connect(db) as c:
        record = c.execute("SELECT record FROM games WHERE match_id = 2 AND number = 1").fetchone()
        lines = record[0].splitlines()
        score = next(i for i, line in enumerate(lines) if '"type":"score"' in line)
        obj = json.loads(lines[score])
        obj["points"] = [p + 1 for p in obj["points"]]
        lines[score] = json.dumps(obj, separators=(",", ":"))
        tampered = "\n".join(lines) + "\n"
        c.execute("UPDATE games SET record = ? WHERE match_id = 2 AND number = 1", (tampered,))
    assert_one_error(
        tavolo("tournament", "verify", "--db", db), f"match 2 game 1:{score + 1}", "'points'"
    )


def test_export_writes_a_verifiable_file_per_match(tmp_path: Path) -> None:
    path, db = tournament(tmp_path), tmp_path / "t.db"
    assert tavolo("tournament", "run", path, "--db", db, "--quiet").exit_code == 0
    out = tmp_path / "published"
    result = tavolo("tournament", "export", "--db", db, out)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"{out}: 6 game records in 3 files, and index.json"
    index = json.loads((out / "index.json").read_text(encoding="utf-8"))
    with Store.open_for_reading(db) as store:
        matches, games = store.matches(), store.games()
    assert [m["match"] for m in index["matches"]] == [m.id for m in matches]
    for listed, match in zip(index["matches"], matches, strict=True):
        assert (listed["seed"], listed["entries"]) == (match.seed, list(match.entries))
        played = [g for g in games if g.match_id == match.id]
        assert [(g["game"], g["winner"]) for g in listed["games"]] == [
            (g.number, g.winner) for g in played
        ]
        # Each file is the match's games, in order, and verifies on its own.
        file = out / listed["file"]
        verified = tavolo("verify", file)
        assert verified.exit_code == 0, verified.output
        headers = [line for line in file.read_text().splitlines() if '"type":"game"' in line]
        assert len(headers) == len(played) == 2
    assert sorted(p.name for p in out.iterdir()) == [
        "index.json",
        "match-1.jsonl",
        "match-2.jsonl",
        "match-3.jsonl",
    ]
    # A folder with something in it is never written over.
    assert_one_error(tavolo("tournament", "export", "--db", db, out), str(out), "not an empty")


@pytest.mark.parametrize("fmt", ["plain", "github", "csv", "html"])
def test_table_formats(tmp_path: Path, fmt: str) -> None:
    path, db = tournament(tmp_path), tmp_path / "t.db"
    assert tavolo("tournament", "run", path, "--db", db, "--quiet").exit_code == 0
    result = tavolo("tournament", "table", "--db", db, "--format", fmt)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "random-a" in out and "heuristic" in out
    marker = {"plain": "score %", "github": "|", "csv": "rank,entry,Elo", "html": "<table>"}
    assert marker[fmt] in out


def test_show_crosstable(tmp_path: Path) -> None:
    path, db = tournament(tmp_path, games=4), tmp_path / "t.db"
    assert tavolo("tournament", "run", path, "--db", db, "--quiet").exit_code == 0
    out = tavolo("tournament", "show", "--db", db).stdout
    assert "pentanomial" in out
    # Every cell pair adds up: x's score against y plus y's against x is their 4 games.
    data = table_json(db)
    for pair in data["pairs"]:
        assert f"{pair['a']} vs {pair['b']}:" in out


def test_anchor_option(tmp_path: Path) -> None:
    path, db = tournament(tmp_path), tmp_path / "t.db"
    assert tavolo("tournament", "run", path, "--db", db, "--quiet").exit_code == 0
    result = tavolo("tournament", "table", "--db", db, "--format", "json", "--anchor", "random-b")
    data = json.loads(result.stdout)
    elo = {e["name"]: e["elo"] for e in data["entries"]}
    assert elo["random-b"] == pytest.approx(1500)
    assert_one_error(tavolo("tournament", "table", "--db", db, "--anchor", "x"), "'x'")


def test_gauntlet(tmp_path: Path) -> None:
    path = tournament(tmp_path, fmt="gauntlet", extra='candidate = "random-b"')
    db = tmp_path / "t.db"
    assert tavolo("tournament", "run", path, "--db", db, "--quiet").exit_code == 0
    with Store.open_for_reading(db) as store:
        pairs = [set(m.entries) for m in store.matches()]
    assert pairs == [{"random-b", "heuristic"}, {"random-b", "random-a"}]


def test_swiss_with_byes(tmp_path: Path) -> None:
    five = (
        ENTRIES
        + '\n[[entry]]\nname = "r3"\nbot = "random"\n\n[[entry]]\nname = "r4"\nbot = "random"\n'
    )
    path = tournament(tmp_path, fmt="swiss", extra="rounds = 3", entries=five)
    db = tmp_path / "t.db"
    result = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert result.exit_code == 0, result.output
    with Store.open_for_reading(db) as store:
        matches = store.matches()
        byes = store.byes()
    assert sorted(byes) == [1, 2, 3] and len(set(byes.values())) == 3
    assert len(matches) == 3 * 2
    met = [frozenset(m.entries) for m in matches]
    assert len(set(met)) == len(met), "no pairing repeats in 3 rounds of 5"
    for round_ in (1, 2, 3):
        playing = [n for m in matches if m.round == round_ for n in m.entries]
        assert len(playing) == len(set(playing)) == 4
        assert byes[round_] not in playing


def test_three_handed_round_robin(tmp_path: Path) -> None:
    four = ENTRIES + '\n[[entry]]\nname = "r3"\nbot = "random"\n'
    path = tournament(tmp_path, preset="tressette-a-tre", games=6, entries=four)
    db = tmp_path / "t.db"
    result = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert result.exit_code == 0, result.output
    data = table_json(db)
    assert len(data["pairs"]) == 6
    # Four tables of three (every trio once), a duplicate set of all 3! = 6 seatings each:
    # 18 games per entry.
    assert all(e["games"] == 18 for e in data["entries"])
    # Each game gives three pairwise results, each pair meets at 2 tables.
    assert all(p["wins_a"] + p["draws"] + p["wins_b"] == 12 for p in data["pairs"])
    # Every entry sat at every seat of every table's deals, before and after each other.
    with Store.open_for_reading(db) as store:
        for match in store.matches():
            seatings = {g.sides for g in store.games(match.id)}
            assert len(seatings) == 6, "all arrangements of the three entries"


def test_calabresella_tournament(tmp_path: Path) -> None:
    path = tournament(tmp_path, preset="calabresella", games=6, deals=2)
    db = tmp_path / "t.db"
    result = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert result.exit_code == 0, result.output
    data = table_json(db)
    assert all(e["games"] == 6 for e in data["entries"])
    assert all(e["timeouts"] == e["illegal"] == e["crashes"] == 0 for e in data["entries"])
    with Store.open_for_reading(db) as store:
        for match_id, number, text in store.records():
            verify_lines(text.splitlines(), f"match {match_id} game {number}")


def test_ciapano_tournament_rates_four_individual_players(tmp_path: Path) -> None:
    four = ENTRIES + '\n[[entry]]\nname = "r3"\nbot = "random"\n'
    path = tournament(tmp_path, preset="ciapano", games=24, entries=four)
    db = tmp_path / "t.db"
    result = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert result.exit_code == 0, result.output
    data = table_json(db)
    # One table of four, a duplicate set of all 4! = 24 seatings: six pairs, 24 results each.
    assert all(e["games"] == 24 for e in data["entries"])
    assert len(data["pairs"]) == 6
    assert all(p["wins_a"] + p["draws"] + p["wins_b"] == 24 for p in data["pairs"])
    with Store.open_for_reading(db) as store:
        games = store.games()
    # The pairwise results follow the lower total, as ciapanò is won: count them again here.
    wins: dict[tuple[str, str], int] = {}
    for g in games:
        for (x, tx), (y, ty) in combinations(zip(g.sides, g.totals, strict=True), 2):
            if tx != ty:
                key = (x, y) if tx < ty else (y, x)
                wins[key] = wins.get(key, 0) + 1
    for p in data["pairs"]:
        assert p["wins_a"] == wins.get((p["a"], p["b"]), 0)
        assert p["wins_b"] == wins.get((p["b"], p["a"]), 0)


# -- resuming ------------------------------------------------------------------------------


def run_cli(path: Path, db: Path) -> subprocess.Popen[str]:
    code = "import sys; from tournaments.cli.main import app; sys.argv[0] = 'tavolo'; app()"
    return subprocess.Popen(
        [sys.executable, "-c", code, "tournament", "run", str(path), "--db", str(db), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)},
    )


def deal_lines(db: Path) -> dict[tuple[int, int, int], str]:
    """The hands of every deal of every finished game, by (match, game, deal)."""
    out = {}
    with Store.open_for_reading(db) as store:
        for match_id, number, text in store.records():
            for line in text.splitlines():
                obj = json.loads(line)
                if obj["type"] == "deal":
                    out[(match_id, number, obj["deal"])] = line
    return out


def game_records(db: Path) -> dict[tuple[int, int], list[str]]:
    """The record of every finished game, by (match, game), without its think times (the
    bots never take the same time twice)."""
    with Store.open_for_reading(db) as store:
        return {
            (match_id, number): without_think_times(text.splitlines())
            for match_id, number, text in store.records()
        }


def test_sigkill_then_resume_counts_every_game_once(tmp_path: Path) -> None:
    path = tournament(tmp_path, games=16, deals=2)
    total = 3 * 16
    db = tmp_path / "killed.db"
    process = run_cli(path, db)
    try:
        deadline = time.monotonic() + 120
        stored: list[tuple[int, int]] = []
        while time.monotonic() < deadline and process.poll() is None:
            if db.exists():
                try:
                    stored = stored_games(db)
                except sqlite3.OperationalError:
                    stored = []
                if len(stored) >= 8:
                    break
            time.sleep(0.02)
        assert process.poll() is None, "the run ended before it could be killed"
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
    killed_at = len(stored_games(db))
    assert 8 <= killed_at < total

    resumed = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert resumed.exit_code == 0, resumed.output
    assert f"resumed: {killed_at} games were already stored" in resumed.output
    assert f"{total - killed_at} games played now, {total} of {total} stored" in resumed.output
    games = stored_games(db)
    assert len(games) == len(set(games)) == total
    assert sorted(games) == [(m, n) for m in (1, 2, 3) for n in range(1, 17)]
    data = table_json(db)
    assert sum(e["games"] for e in data["entries"]) == 2 * total
    assert sum(p["wins_a"] + p["draws"] + p["wins_b"] for p in data["pairs"]) == total

    # The same tournament without a kill deals exactly the same cards to every game, and
    # the random bots, which seed each game on its own, play them exactly the same way.
    fresh = tmp_path / "fresh.db"
    assert tavolo("tournament", "run", path, "--db", fresh, "--quiet").exit_code == 0
    assert deal_lines(db) == deal_lines(fresh)
    assert game_records(db) == game_records(fresh)
    assert results_only(table_json(db)) == results_only(table_json(fresh))

    # Running once more plays nothing.
    again = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert "0 games played now" in again.output


def test_unfinished_game_restarts_from_its_seeds(tmp_path: Path) -> None:
    """Deals of a game cut short stay stored under their attempt; the game is replayed."""
    path, db = tournament(tmp_path, games=2, deals=3), tmp_path / "t.db"

    config = load_config(path)
    with open_store(db, config) as store:
        first = planned_pairings(config)[0]
        row = store.add_match(
            first.round, first.entries, match_seed(config, first.round, first.entries), 2
        )
        store.add_deal(row.id, 1, 1, 1, ['{"type":"deal"}', '{"type":"score","points":[1,2]}'])
    result = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert result.exit_code == 0, result.output
    with sqlite3.connect(db) as c:
        attempts = c.execute(
            "SELECT attempt, COUNT(*) FROM deals WHERE match_id = ? AND game = 1 GROUP BY attempt",
            (row.id,),
        ).fetchall()
    assert attempts == [(1, 1), (2, 3)]


def test_sprt_stops_the_match(tmp_path: Path) -> None:
    two = ENTRIES.split('[[entry]]\nname = "random-b"')[0]
    path, db = tournament(tmp_path, games=200, deals=1, entries=two), tmp_path / "t.db"
    result = tavolo("tournament", "run", path, "--db", db, "--quiet", "--sprt", "0,100")
    assert result.exit_code == 0, result.output
    assert "H1 accepted" in result.output
    played = len(stored_games(db))
    assert played < 200 and played % 2 == 0
    with Store.open_for_reading(db) as store:
        (match,) = store.matches()
    assert match.stopped == "SPRT accepted H1"
    assert_one_error(tavolo("tournament", "run", path, "--db", db, "--sprt", "5"), "--sprt")


def test_sprt_needs_two_entries(tmp_path: Path) -> None:
    path = tournament(tmp_path)
    assert_one_error(tavolo("tournament", "run", path, "--sprt", "0,10"), "two entries")


def test_pairs_of_every_game_add_up(tmp_path: Path) -> None:
    path, db = tournament(tmp_path, games=2), tmp_path / "t.db"
    assert tavolo("tournament", "run", path, "--db", db, "--quiet").exit_code == 0
    data = table_json(db)
    names = sorted(e["name"] for e in data["entries"])
    assert [(p["a"], p["b"]) for p in data["pairs"]] == list(combinations(names, 2))


def test_bench_ratings_and_tournament(tmp_path: Path) -> None:
    result = tavolo(
        "bench", "ratings", "--entries", "3", "--games", "40", "--samples", "20", "--json"
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert figures["benchmark"] == "ratings" and figures["entries"] == 3
    assert figures["fit_ms"] > 0 and figures["rate_seconds"] > 0
    path = tournament(tmp_path, games=2)
    result = tavolo("bench", "tournament", path, "--json")
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert figures["games"] == 6 and figures["deals"] == 6 and figures["seconds"] > 0
    assert not list(tmp_path.glob("*.db")), "the benchmark keeps no database"
    # The same six games in this process, and the ratio of their costs per game.
    assert figures["shards"] == (os.cpu_count() or 1)
    assert figures["cpu_seconds"] > 0 and figures["in_process_seconds"] > 0
    for spent, base, ratio in [
        ("seconds", "in_process_seconds", "overhead_per_game"),
        ("cpu_seconds", "in_process_cpu_seconds", "cpu_overhead_per_game"),
    ]:
        # The same games on both sides, so the ratio per game is the ratio of the totals
        # (each rounded to the 0.001 s printed).
        low = (figures[spent] - 0.0005) / (figures[base] + 0.0005)
        high = (figures[spent] + 0.0005) / (figures[base] - 0.0005)
        assert low - 0.05 <= figures[ratio] <= high + 0.05, (ratio, figures)
    result = tavolo("bench", "tournament", path, "--json", "--no-in-process", "--shards", "1")
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert figures["shards"] == 1 and figures["games"] == 6
    assert "overhead_per_game" not in figures
    assert_one_error(tavolo("bench", "tournament", tmp_path / "none.toml"), "none.toml")


FOUR = ENTRIES + '\n[[entry]]\nname = "random-c"\nbot = "random"\n'


def _first_hands_by_round(db: Path) -> dict[int, list[str]]:
    """Each round's matches: the four hands of each match's first deal, as recorded."""
    with Store.open_for_reading(db) as store:
        round_of = {m.id: m.round for m in store.matches()}
        hands: dict[int, list[str]] = {}
        for match_id, number, text in store.records():
            if number != 1:
                continue
            deal = next(json.loads(x) for x in text.splitlines() if '"type":"deal"' in x)
            hands.setdefault(round_of[match_id], []).append(json.dumps(deal["hands"]))
    return hands


@pytest.mark.parametrize("same", [False, True])
def test_each_match_of_a_round_deals_its_own_cards_unless_the_file_says(
    tmp_path: Path, same: bool
) -> None:
    """Four entries, three rounds of two tables: by default no two tables of a round deal
    the same cards (a colluder at one table would know another's hands); with
    ``same_deals_per_round`` both do, and the database's fingerprint says which."""
    extra = "same_deals_per_round = true\n" if same else ""
    path = tournament(tmp_path, entries=FOUR, extra="")
    path.write_text(path.read_text().replace("[match]\n", "[match]\n" + extra), encoding="utf-8")
    db = tmp_path / "t.db"
    result = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert result.exit_code == 0, result.output
    hands = _first_hands_by_round(db)
    assert sorted(hands) == [1, 2, 3] and all(len(h) == 2 for h in hands.values()), hands
    for round_, tables in hands.items():
        assert (tables[0] == tables[1]) is same, round_
    with Store.open_for_reading(db) as store:
        seeds = [m.seed for m in store.matches()]
    assert len(set(seeds)) == (3 if same else 6), seeds
    config = load_config(path)
    other = load_config(tournament(tmp_path, entries=FOUR, name="other.toml"))
    assert (config.fingerprint() == other.fingerprint()) is not same


def test_a_file_without_a_seed_gets_a_strong_one_committed_then_revealed(tmp_path: Path) -> None:
    """No ``seed``: the run makes 128 random bits (never the name, which a bot can guess),
    prints their commitment before play and the seed once every game is stored; a resumed
    run deals from the same seed, and another database gets another."""
    path = tournament(tmp_path)
    path.write_text(path.read_text().replace('seed = "seed-1"\n', ""), encoding="utf-8")
    assert "seed" not in path.read_text().split("[game]")[0]
    seeds = []
    for db in (tmp_path / "a.db", tmp_path / "b.db"):
        result = tavolo("tournament", "run", path, "--db", db, "--quiet")
        assert result.exit_code == 0, result.output
        commitment = re.search(r"its commitment, to publish now: ([0-9a-f]{64})", result.output)
        revealed = re.search(
            r"^seed: ([0-9a-f]{32}) \(check: tavolo seed check", result.output, re.M
        )
        assert commitment and revealed, result.output
        assert result.output.index(commitment.group(0)) < result.output.index(revealed.group(0))
        seed = revealed.group(1)
        assert seed_commitment(seed) == commitment.group(1)
        with Store.open_for_reading(db) as store:
            assert all(m.seed.startswith(f"{seed}/round-") for m in store.matches())
        seeds.append(seed)
    assert seeds[0] != seeds[1] and "test" not in seeds[0]
    # The report's fairness page shows it with the command that checks it.
    site = tmp_path / "site"
    assert tavolo("tournament", "report", site, "--db", tmp_path / "a.db").exit_code == 0
    fairness = (site / "fairness.html").read_text(encoding="utf-8")
    assert f"tavolo seed check {seeds[0]} {seed_commitment(seeds[0])}" in fairness
    # Resumed (nothing left to play): the same seed, committed to again.
    again = tavolo("tournament", "run", path, "--db", tmp_path / "a.db", "--quiet")
    assert again.exit_code == 0 and f"seed: {seeds[0]} (check:" in again.output, again.output
