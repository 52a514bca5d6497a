"""Datasets: ``tavolo dataset export`` turns records into Parquet, a row per decision.

Everything is real: the ``tavolo`` command, record files (the golden records of every
family, a match over gRPC with faulting bot processes), a tournament run into SQLite by
``tavolo tournament run``. Each dataset is turned back into its records
(:func:`referee.research.dataset.rebuild`), which must be the records byte for byte.
"""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from referee.engine.cards import CARD_NAMES, cards_of
from referee.engine.deal_book import parse_book
from referee.engine.game_base import AnyGame, Termination
from referee.engine.registry import family, new_game, preset
from referee.engine.rules import Rules
from referee.records import RecordError, verify_file, verify_lines
from referee.research.dataset import (
    DECISIONS,
    DENSE_LEAF,
    GAMES,
    DatasetWriter,
    legal_masks,
    observations,
    rebuild,
)
from referee.research.encoding import (
    OBSERVATION_SIZE,
    action_table,
    legal_ids,
    num_actions,
    observation_entries,
)
from tests.bots.harness import SCRIPTED
from tests.test_cli import assert_one_error, tavolo
from tests.test_tournament_run import tournament
from tournaments.benchmarks.dataset import write_records
from tournaments.storage import Store

GOLDEN = sorted((Path(__file__).parent / "golden").glob("*.jsonl"))
LICENCE = "CC-BY-4.0"


def export(*args: str | Path) -> Any:
    return tavolo("dataset", "export", *args, "--licence", LICENCE, "--quiet")


def exported(out: Path, *args: str | Path) -> tuple[pa.Table, pa.Table]:
    """The decisions and games of a dataset made by ``tavolo dataset export``."""
    result = export(*args, "-o", out)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{out}: "), result.stdout
    return pq.read_table(out / DECISIONS), pq.read_table(out / GAMES)


def rebuilt_files(out: Path) -> dict[str, str]:
    """Each record file of a dataset, rebuilt from its two tables."""
    texts: dict[str, list[str]] = {}
    for game in rebuild(out):
        assert game.match is None
        texts.setdefault(game.source, []).extend(game.lines)
    return {source: "".join(line + "\n" for line in lines) for source, lines in texts.items()}


def game_lines(path: Path) -> list[list[tuple[int, dict[str, Any]]]]:
    """The games of a record file, each as (line number, line) pairs."""
    games: list[list[tuple[int, dict[str, Any]]]] = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = json.loads(text)
        if line["type"] == "game":
            games.append([])
        games[-1].append((number, line))
    return games


# -- record files: every family ------------------------------------------------------------


def test_every_golden_record_comes_back_byte_for_byte_from_its_dataset(tmp_path: Path) -> None:
    out = tmp_path / "golden"
    decisions, games = exported(out, *GOLDEN)
    families = set(games.column("family").to_pylist())
    assert {"tressette", "tressette-a-tre", "tressette-a-due", "ciapano", "calabresella",
            "briscola", "briscola-a-quattro"} <= families  # fmt: skip
    rebuilt = rebuilt_files(out)
    assert sorted(rebuilt) == sorted(map(str, GOLDEN))
    for path in GOLDEN:
        assert rebuilt[str(path)] == path.read_text(encoding="utf-8"), path.name
        assert verify_lines(rebuilt[str(path)].splitlines()).lines > 0
    assert decisions.num_rows == sum(games.column("decisions").to_pylist())
    sheet = json.loads((out / "datasheet.json").read_text(encoding="utf-8"))
    assert sheet["rows"] == {"decisions": decisions.num_rows, "games": games.num_rows,
                             "records": len(GOLDEN)}  # fmt: skip
    assert sheet["licence"] == LICENCE
    assert sheet["families"] == dict(Counter(games.column("family").to_pylist()))
    # Like the records, the files hold every hand: readable by their owner alone.
    files = sorted(p.name for p in out.iterdir())
    assert files == ["datasheet.json", "datasheet.md", DECISIONS, GAMES]
    assert all((out / name).stat().st_mode & 0o777 == 0o600 for name in files)


def test_each_row_is_a_seat_action_line_of_its_record(tmp_path: Path) -> None:
    """Every row points at an action line of its seat, with its kind and think time, and
    every action line a seat wrote has its row."""
    decisions, _ = exported(tmp_path / "out", *GOLDEN)
    rows = decisions.select(["source", "game", "record_line", "seat", "kind", "ms", "step",
                             "action", "action_name", "family"]).to_pylist()  # fmt: skip
    by_file: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_file.setdefault(row["source"], []).append(row)
    for path in GOLDEN:
        mine = by_file[str(path)]
        lines = {n: line for game in game_lines(path) for n, line in game}
        kinds = set(family(mine[0]["family"]).kinds)
        actions = [n for n, line in lines.items() if line["type"] in kinds]
        assert [r["record_line"] for r in mine] == actions, path.name
        for row in mine:
            line = lines[row["record_line"]]
            assert (line["type"], line["seat"], line.get("ms")) == (
                row["kind"], row["seat"], row["ms"]
            )  # fmt: skip
            names = {a.id: a.text for a in action_table(row["family"])}
            assert names[row["action"]] == row["action_name"]
        for game in {r["game"] for r in mine}:
            steps = [r["step"] for r in mine if r["game"] == game]
            assert steps == list(range(len(steps)))


def test_the_columns_hold_what_the_engine_says_at_each_decision(tmp_path: Path) -> None:
    """Replayed by the engine from the rows' own actions, each decision's state gives the
    row's observation, legal actions, hands and returns; the dense layout is the same."""
    out, dense_out = tmp_path / "sparse", tmp_path / "dense"
    decisions, games = exported(out, *GOLDEN)
    dense, _ = exported(dense_out, *GOLDEN, "--dense")
    assert "obs" in dense.column_names and "obs_indices" not in dense.column_names
    assert dense.schema.field("obs").type == pa.list_(pa.float32(), OBSERVATION_SIZE)
    assert np.array_equal(observations(decisions), observations(dense))
    # The dense tensor's few distinct floats are written as a dictionary: small on disk.
    leaf = pq.ParquetFile(dense_out / DECISIONS).metadata.row_group(0)
    [obs] = [leaf.column(i) for i in range(leaf.num_columns) if leaf.column(i).path_in_schema
             == DENSE_LEAF]  # fmt: skip
    assert "RLE_DICTIONARY" in obs.encodings
    rows = decisions.to_pylist()
    at = 0
    for game in games.to_pylist():
        header = json.loads(game["header"])
        if "book" in header:
            continue
        rules = Rules.from_record(header["rules"])
        state = new_game(rules, header["seed"], deals=header["deals"])
        mine = rows[at : at + game["decisions"]]
        at += game["decisions"]
        notes = dict(zip(game["note_steps"], game["notes"], strict=False))
        assert not notes, "the golden records have no faults"
        for row in mine:
            seat = row["seat"]
            assert state.current_player() == seat and state.deal_number == row["deal"]
            entries = observation_entries(state, seat)
            assert row["obs_indices"] == sorted(entries)
            assert row["obs_values"] == pytest.approx([entries[i] for i in sorted(entries)])
            assert row["legal"] == list(legal_ids(state, seat))
            assert row["hidden_hands"] == [
                cards_of(state.deal.hand(s)) for s in range(rules.players)
            ]
            state.apply_action(row["action"])
        assert state.is_terminal()
        assert [r["returns"] for r in mine] == [state.returns()[r["seat"]] for r in mine]
        assert game["returns"] == list(state.returns())
    masks = legal_masks(decisions.slice(0, 5), rows[0]["family"])
    assert masks.shape == (5, num_actions(rows[0]["family"]))
    assert [list(np.flatnonzero(m)) for m in masks] == [sorted(r["legal"]) for r in rows[:5]]


def test_derived_declarations_are_no_decisions(tmp_path: Path) -> None:
    """Under auto_declare the referee declares for everyone: those lines get no row, and
    the record still comes back whole."""
    rules = preset("tressette").with_knobs(["auto_declare=true"])
    [record] = write_records(rules, 1, tmp_path, "auto-declare")
    derived = [line for game in game_lines(record) for _, line in game if line["type"] == "declare"]
    assert derived, "the seed deals a declaration"
    decisions, _ = exported(tmp_path / "out", record)
    assert "declare" not in decisions.column("kind").to_pylist()
    assert rebuilt_files(tmp_path / "out")[str(record)] == record.read_text()


# -- hidden cards ---------------------------------------------------------------------------


def _swapped_games(seed: str) -> tuple[AnyGame, AnyGame]:
    """Two games dealt from books that differ only in one card of a suit that seats 1 and 2
    swap (the weakest each holds of the suit they hold most of together), played alike as
    long as neither swapped card is played (the first plain card, no signal), then
    forfeited by the seat that would have to play one."""
    rules = preset("tressette")
    dealt = rules.family.deal(rules, seed, 1, 0)
    hands = [cards_of(h) for h in dealt.hands]

    def held(seat: int, suit: int) -> int:
        return sum(c // 10 == suit for c in hands[seat])

    suit = max(range(4), key=lambda s: min(held(1, s), held(2, s)))
    one = max(c for c in hands[1] if c // 10 == suit)
    two = max(c for c in hands[2] if c // 10 == suit)
    other = [list(h) for h in hands]
    other[1][other[1].index(one)], other[2][other[2].index(two)] = two, one
    games = []
    for name, seats in (("a", hands), ("b", other)):
        line = {"dealer": dealt.dealer, "hands": [[CARD_NAMES[c] for c in h] for h in seats]}
        book = parse_book((json.dumps(line) + "\n").encode(), rules, name)
        games.append(new_game(rules, seed, deals=1, seats=["n", "e", "s", "w"], record=True,
                              book=book))  # fmt: skip
    a, b = games
    while not a.is_terminal():
        both = [x for x in a.legal_actions() if x in b.legal_actions()]
        plain = [x for x in both if x < 40 and x not in (one, two)]
        if not plain:
            seat = a.current_player()
            assert seat in (1, 2), "only the seats that swapped may be stuck"
            for state in (a, b):
                state.forfeit(seat, Termination.CRASH, "stopped by the test")
            break
        for state in (a, b):
            state.apply_action(plain[0])
    return a, b


def _two_books(tmp_path: Path) -> tuple[Path, Path]:
    """The records of the first pair of :func:`_swapped_games` that play 5 tricks alike."""
    for n in range(50):
        a, b = _swapped_games(f"hidden-{n}")
        assert a.events is not None and b.events is not None
        if len(a.events) > 30:
            break
    paths = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path, state in zip(paths, (a, b), strict=True):
        path.write_text("".join(state.text(i) + "\n" for i in range(len(state.events or ()))))
    return paths


def test_observations_do_not_see_the_other_seats_hidden_cards(tmp_path: Path) -> None:
    a, b = _two_books(tmp_path)
    out = tmp_path / "out"
    decisions, games = exported(out, a, b)
    # Read straight from the files, so the dataset's rebuild is not trusted here.
    assert verify_file(a).outcome == verify_file(b).outcome
    rows = decisions.to_pylist()
    first = [r for r in rows if r["source"] == str(a)]
    second = [r for r in rows if r["source"] == str(b)]
    assert len(first) == len(second) >= 20, "the games go on for tricks before the swap shows"
    seen = {c for c in decisions.column_names if not c.startswith("hidden_")} - {"source"}
    own = {"obs_indices", "obs_values", "legal"}
    unseen = differ = 0
    for x, y in zip(first, second, strict=True):
        assert x["hidden_hands"] != y["hidden_hands"]
        if x["seat"] in (0, 3):
            # Seats 0 and 3 never see seats 1 and 2's cards: all they see is the same.
            assert {k: x[k] for k in seen} == {k: y[k] for k in seen}, x["seat"]
            unseen += 1
        else:
            # Seats 1 and 2 each see their own hand, which differs; the rest is the same.
            assert {k: x[k] for k in seen - own} == {k: y[k] for k in seen - own}
            differ += (x["obs_indices"], x["obs_values"]) != (y["obs_indices"], y["obs_values"])
    assert unseen >= 10 and differ >= 10
    # The deals differ in the hidden column group alone, and the records come back whole.
    deals = games.column("hidden_deals").to_pylist()
    assert deals[0] != deals[1]
    assert rebuilt_files(out) == {str(p): p.read_text() for p in (a, b)}


# -- records of a referee: faults and think times -------------------------------------------


def _scripted(mode: str, *args: str | float) -> str:
    argv = [sys.executable, str(SCRIPTED), "--mode", mode, *(str(a) for a in args)]
    return "cmd:" + shlex.join(argv)


def test_a_match_with_faults_comes_back_with_its_notes_and_think_times(tmp_path: Path) -> None:
    """Over gRPC, with a bot that tries cards it does not hold and one that goes silent
    under ``--on-fault random``: the refusals and incidents are notes of the games, the
    action the referee played is marked, and every think time is kept."""
    record = tmp_path / "m.jsonl"
    played = tavolo(
        "play", _scripted("silent", "--slot", 0, "--at", 3),
        _scripted("late", "--illegal-rate", 0.3, "--seed", "ds"),
        "--seed", "ds-faults", "--deals", 1, "--on-fault", "random", "--deadline-ms", 300,
        "--record", record, "--quiet", "--sandbox", "off",
    )  # fmt: skip
    assert played.exit_code == 0, played.output
    decisions, games = exported(tmp_path / "out", record)
    assert rebuilt_files(tmp_path / "out") == {str(record): record.read_text()}
    lines = [line for game in game_lines(record) for _, line in game]
    notes = [n for game in games.column("notes").to_pylist() for n in game]
    assert Counter(json.loads(n)["type"] for n in notes) == Counter(
        line["type"] for line in lines if line["type"] in ("rejected", "incident", "forfeit")
    )
    assert any(json.loads(n)["type"] == "rejected" for n in notes), "the seed makes a refusal"
    rows = decisions.to_pylist()
    by_line = {n: line for game in game_lines(record) for n, line in game}
    by_referee = [r for r in rows if r["referee_played"]]
    assert by_referee, "the silent bot's seat was played for"
    for row in rows:
        before = by_line[row["record_line"] - 1]
        faults = ("timeout", "illegal_action", "crash")
        after_fault = before["type"] == "incident" and before["kind"] in faults
        assert row["referee_played"] == (after_fault and before["seat"] == row["seat"])
        assert (row["ms"] is None) == row["referee_played"]
    sheet = (tmp_path / "out" / "datasheet.md").read_text(encoding="utf-8")
    assert "rejected" in sheet and "timeout" in sheet


# -- a tournament ---------------------------------------------------------------------------

ENTRIES = {"heuristic-a": "heuristic", "heuristic-b": "heuristic", "random-a": "random",
           "random-b": "random"}  # fmt: skip


@pytest.fixture(scope="module")
def tournament_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real round robin of four built-in bots (6 matches of 2 games) in SQLite."""
    folder = tmp_path_factory.mktemp("tournament")
    entries = "".join(f'[[entry]]\nname = "{n}"\nbot = "{b}"\n' for n, b in ENTRIES.items())
    path = tournament(folder, games=2, deals=1, entries=entries, name="cup.toml")
    db = folder / "cup.db"
    result = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert result.exit_code == 0, result.output
    return db


def test_a_tournament_comes_back_game_by_game(tmp_path: Path, tournament_db: Path) -> None:
    out = tmp_path / "cup"
    decisions, games = exported(out, "--db", tournament_db)
    with Store.open_for_reading(tournament_db) as store:
        stored = {(m, n): text for m, n, text in store.records()}
        count = store.game_count()
    assert count == games.num_rows == 12
    rebuilt = 0
    for game in rebuild(out):
        assert game.source == str(tournament_db)
        assert game.match is not None
        assert "".join(line + "\n" for line in game.lines) == stored[(game.match, game.game)]
        rebuilt += 1
    assert rebuilt == count
    entries = set(decisions.column("entry").to_pylist())
    assert entries == set(ENTRIES)
    assert all(ms is not None for ms in decisions.column("ms").to_pylist())
    sheet = json.loads((out / "datasheet.json").read_text(encoding="utf-8"))
    [source] = sheet["sources"]
    assert (source["kind"], source["tournament"], source["seed"]) == (
        "tournament database", "test", "seed-1"
    )  # fmt: skip
    assert source["entries"]["random-b"] == {"bot": "random"}
    assert sheet["rows"]["decisions"] == decisions.num_rows
    # Run from this checkout: the datasheet names its commit.
    root = Path(__file__).resolve().parent.parent
    head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    assert sheet["tavolo"]["git"]["commit"] == head
    assert sheet["command"] == (
        f"tavolo dataset export --db {tournament_db} --output {out} --licence {LICENCE}"
    )
    for name, facts in sheet["entries"].items():
        mine = [r for r in decisions.select(["entry"]).to_pylist() if r["entry"] == name]
        assert facts["decisions"] == len(mine)
    markdown = (out / "datasheet.md").read_text(encoding="utf-8")
    assert f"| licence | {LICENCE} |" in markdown
    assert f"{decisions.num_rows:,} decisions" in markdown
    assert "| `hand` | 0 | 40 |" in markdown  # the encoding's first section
    for entry in entries:
        assert f"| {entry} | 6 |" in markdown  # its games: 3 matches of 2


EXAMPLE = Path(__file__).parent.parent / "docs" / "examples" / "read_dataset.py"


def test_the_documented_example_reads_a_tournament_dataset(
    tmp_path: Path, tournament_db: Path
) -> None:
    page = (EXAMPLE.parent.parent / "research.md").read_text(encoding="utf-8")
    datasets = page.split("\n## Datasets\n", 1)[1]
    shown = datasets.split("```python\n", 1)[1].split("```", 1)[0]
    assert shown == EXAMPLE.read_text(encoding="utf-8"), "the page shows the whole file"
    out = tmp_path / "quick-dataset"
    decisions, _ = exported(out, "--db", tournament_db)
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE.parent.parent.parent)}
    run = subprocess.run(
        [sys.executable, str(EXAMPLE), str(out)], capture_output=True, text=True, env=env,
        timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    for entry in ENTRIES:
        [row] = [line.split() for line in lines if line.startswith(entry + " ")]
        mine = [e for e in decisions.column("entry").to_pylist() if e == entry]
        assert int(row[1]) == len(mine)
    rows = decisions.num_rows
    assert lines[-1].startswith(f"x ({rows}, {OBSERVATION_SIZE}), legal ({rows}, 322), y ({rows},)")
    # What the tensor's hand section says is held is what the hidden hands hold.
    hands = decisions.select(["seat", "hidden_hands"]).to_pylist()
    held = sum(len(r["hidden_hands"][r["seat"]]) for r in hands) / rows
    assert lines[-1].endswith(f"tressette, {held:.1f} cards held")


# -- bad input ------------------------------------------------------------------------------


def test_a_bad_record_line_is_named_by_file_and_line(tmp_path: Path) -> None:
    lines = GOLDEN[0].read_text(encoding="utf-8").splitlines()
    trick = next(i for i, line in enumerate(lines) if '"type":"trick"' in line)
    lines[trick] = lines[trick].replace('"winner":', '"winner":3,"was":')
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "out"
    assert_one_error(export(GOLDEN[1], bad, "-o", out), f"{bad}:{trick + 1}:", "'trick' line")
    assert not out.exists(), "nothing is left of a dataset that failed"
    broken = tmp_path / "broken.jsonl"
    broken.write_text(GOLDEN[0].read_text(encoding="utf-8")[:-1], encoding="utf-8")
    assert_one_error(export(broken, "-o", out), f"{broken}:", "truncated")


def test_a_record_that_fails_leaves_nothing_in_the_dataset(tmp_path: Path) -> None:
    """A record whose first game verifies and whose second is cut short: none of its rows
    are kept, and what is added after it is written as if it had never been read."""
    first, second = GOLDEN[0], GOLDEN[1]
    cut = second.read_text(encoding="utf-8").splitlines()[:-1]  # no result: not over
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(t + "\n" for t in [*first.read_text().splitlines(), *cut]))
    alone, after = tmp_path / "alone", tmp_path / "after"
    for folder, before in ((alone, []), (after, [bad])):
        folder.mkdir()
        writer = DatasetWriter(folder)
        for path in before:
            with pytest.raises(RecordError, match="record ends"):
                writer.add_file(path)
        writer.add_file(second)
        summary = writer.close()
        assert (summary.games, summary.records) == (1, 1)
    for name in (DECISIONS, GAMES):
        assert pq.read_table(after / name).equals(pq.read_table(alone / name))


def test_a_bad_database_is_named(tmp_path: Path, tournament_db: Path) -> None:
    out = tmp_path / "out"
    assert_one_error(export("--db", tmp_path / "none.db", "-o", out), "none.db", "no such")
    text = tmp_path / "text.db"
    text.write_text("not a database at all, but long enough to be read " * 40)
    assert_one_error(export("--db", text, "-o", out), str(text))
    assert not out.exists()
    copy = tmp_path / "copy.db"
    copy.write_bytes(tournament_db.read_bytes())
    with sqlite3.connect(copy) as db:
        record = db.execute("SELECT record FROM games WHERE match_id = 2 AND number = 2")
        lines = record.fetchone()[0].splitlines()
        play = next(i for i, line in enumerate(lines) if '"type":"play"' in line)
        lines[play] = lines[play].replace('"type":"play"', '"type":"bid"')
        db.execute(
            "UPDATE games SET record = ? WHERE match_id = 2 AND number = 2",
            ("\n".join(lines) + "\n",),
        )
    assert_one_error(export("--db", copy, "-o", out), f"{copy} match 2 game 2:{play + 1}:")


def test_usage_errors_are_one_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert_one_error(tavolo("dataset", "export", GOLDEN[0], "-o", out), "--licence")
    assert_one_error(export("-o", out), "record files or --db")
    assert_one_error(export(GOLDEN[0], "--db", "x.db", "-o", out), "record files or --db")
    assert_one_error(export(GOLDEN[0]), "--output")
    assert_one_error(export(tmp_path / "no.jsonl", "-o", out), "no.jsonl: no such file")
    assert_one_error(export(GOLDEN[0], GOLDEN[0], "-o", out), "twice")
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert_one_error(export(GOLDEN[0], "-o", out), "not an empty folder")
    assert (out / "keep.txt").read_text() == "mine"


# -- the benchmark --------------------------------------------------------------------------


def test_bench_dataset_times_real_exports() -> None:
    result = tavolo("bench", "dataset", "--game", "briscola", "--games", 3, "--rounds", 2, "--json")
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert (figures["benchmark"], figures["game"], figures["layout"]) == (
        "dataset", "briscola", "sparse"
    )  # fmt: skip
    # Three Briscola games to the target: every card of every deal is a decision.
    assert figures["decisions"] % 40 == 0 and figures["decisions"] >= 3 * 40
    rounds = figures["rounds"]
    assert len(rounds) == 2 and min(rounds) <= figures["decisions_per_second"] <= max(rounds)
    assert figures["bytes_per_decision"] > 0
