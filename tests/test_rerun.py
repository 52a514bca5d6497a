"""A changed bot is named when its tournament runs again, and `rerun` replays its forfeits.

Real tournaments through the real CLI: sandboxed bot processes, real gRPC, real SQLite.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.entries import parse_entry, program_files
from tests.sandboxing import require_sandbox
from tests.test_cli import assert_one_error, tavolo
from tests.test_cluster import run_console
from tests.test_tournament_run import deal_lines, game_records
from tournaments.config import load_config
from tournaments.runner import open_store, table_facts
from tournaments.storage import ChangedEntries, StorageError, Store

BOT = """\
from tavolo_bot import Bot, Turn, run


class Greedy(Bot):
    def choose(self, turn: Turn) -> int:
        {body}


if __name__ == "__main__":
    raise SystemExit(run(Greedy))
"""
BROKEN = BOT.format(body='raise RuntimeError("greedy is broken")')
FIXED = BOT.format(body="return turn.legal[0].id")
TOURNAMENT = """\
name = "rerun"
seed = "rerun-1"
[game]
deals = 2
[match]
games = 2
[[entry]]
name = "heuristic"
bot = "heuristic"
[[entry]]
name = "random"
bot = "random"
[[entry]]
name = "greedy"
bot = "bot/greedy.toml"
"""
MEASURED = {"think_time"}
"""Table keys the referee measures (clock time), which no two runs share."""


def write_tournament(root: Path, bot: str) -> Path:
    """``root/t.toml``: heuristic, random and the manifest bot ``greedy`` running ``bot``."""
    (root / "bot").mkdir(parents=True)
    (root / "bot" / "greedy.py").write_text(bot, encoding="utf-8")
    command = json.dumps([sys.executable, "greedy.py"])
    (root / "bot" / "greedy.toml").write_text(
        f'name = "greedy"\ncommand = {command}\n', encoding="utf-8"
    )
    path = root / "t.toml"
    path.write_text(TOURNAMENT, encoding="utf-8")
    return path


def decided_table(db: Path) -> dict[str, Any]:
    """``table --format json`` without what is measured rather than played."""
    result = tavolo("tournament", "table", "--db", db, "--format", "json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    for entry in data["entries"]:
        for key in MEASURED:
            entry.pop(key, None)
    return data


def test_a_fixed_bot_is_named_then_its_forfeits_are_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_sandbox()
    path = write_tournament(tmp_path / "event", BROKEN)
    db = tmp_path / "event" / "t.db"
    monkeypatch.chdir(tmp_path)

    first = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert first.exit_code != 0, first.output
    with Store.open_for_reading(db) as store:
        games = store.games()
    greedy = [g for g in games if "greedy" in g.sides]
    assert len(games) == 6 and len(greedy) == 4
    assert all(g.termination == "crash" for g in greedy)
    assert all(g.faults["greedy"].crashes for g in greedy)
    others = game_records(db)
    others = {k: v for k, v in others.items() if k not in {(g.match_id, g.number) for g in greedy}}
    assert len(others) == 2

    (tmp_path / "event" / "bot" / "greedy.py").write_text(FIXED, encoding="utf-8")
    refused = tavolo("tournament", "run", path, "--db", db, "--quiet")
    error = assert_one_error(refused, "entry 'greedy'", "greedy.py changed", "--entry greedy")
    assert "rerun" in error and "--force" in error and "restore" in error
    assert "games played now" not in refused.output
    # Only the changed entry may be accepted: replaying another's forfeits is refused.
    assert_one_error(tavolo("tournament", "rerun", "--db", db, "--entry", "random"), "'greedy'")

    # From another folder, without the file: the database knows where it is.
    replayed = tavolo("tournament", "rerun", "--db", db, "--entry", "greedy", "--quiet")
    assert replayed.exit_code == 0, replayed.output
    assert "deleted 4 stored games that ended in crash" in replayed.stdout
    assert "replayed 4 of 4 games; 6 of 6 stored" in replayed.stdout
    with Store.open_for_reading(db) as store:
        games = store.games()
    assert len(games) == 6 and not any(g.faults for g in games)
    assert {k: v for k, v in game_records(db).items() if k in others} == others

    again = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert again.exit_code == 0, again.output
    assert "0 games played now" in again.stdout

    # The same tournament with the good bot from the start, on a fresh database.
    fresh_path = write_tournament(tmp_path / "fresh", FIXED)
    fresh = tmp_path / "fresh" / "t.db"
    played = tavolo("tournament", "run", fresh_path, "--db", fresh, "--quiet")
    assert played.exit_code == 0, played.output
    assert decided_table(db) == decided_table(fresh)
    assert deal_lines(db) == deal_lines(fresh)
    counts = "SELECT (SELECT COUNT(*) FROM deals), (SELECT COUNT(*) FROM think_times)"
    with sqlite3.connect(db) as c, sqlite3.connect(fresh) as f:
        # Nothing of a deleted game is left to count: one attempt per game, as in fresh.
        assert c.execute("SELECT DISTINCT attempt FROM deals").fetchall() == [(1,)]
        assert c.execute(counts).fetchone() == f.execute(counts).fetchone()
    with Store.open_for_reading(db) as store:
        assert store.deal_count() == 12
        reruns = store.fact("reruns")
    assert [len(r["games"]) for r in reruns] == [4]
    assert reruns[0]["entries"] == ["greedy"]
    # The report's fairness page lists what was deleted and played again.
    site = tmp_path / "site"
    assert tavolo("tournament", "report", site, "--db", db).exit_code == 0
    fairness = (site / "fairness.html").read_text(encoding="utf-8")
    listed = fairness.split('id="reruns"')[1].split("</table>")[0]
    for g in greedy:
        assert f"match {g.match_id} game {g.number} (crash)" in listed
    assert '<td class="name">greedy</td>' in listed


@pytest.mark.parametrize("where", [("--shards", "2"), ("--cluster", "local:1")])
def test_rerun_plays_on_shards_or_a_cluster(tmp_path: Path, where: tuple[str, str]) -> None:
    require_sandbox()
    path = write_tournament(tmp_path / "event", BROKEN)
    db = tmp_path / "event" / "t.db"
    first = tavolo("tournament", "run", path, "--db", db, "--quiet", "--shards", "1")
    assert first.exit_code != 0, first.output
    (tmp_path / "event" / "bot" / "greedy.py").write_text(FIXED, encoding="utf-8")
    replayed = run_console(
        "tournament", "rerun", "--db", db, "--entry", "greedy", "--quiet", *where
    )
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "replayed 4 of 4 games; 6 of 6 stored" in replayed.stdout
    assert "Traceback" not in replayed.stderr

    fresh_path = write_tournament(tmp_path / "fresh", FIXED)
    fresh = tmp_path / "fresh" / "t.db"
    played = tavolo("tournament", "run", fresh_path, "--db", fresh, "--quiet", "--shards", "1")
    assert played.exit_code == 0, played.output
    assert decided_table(db) == decided_table(fresh)
    assert deal_lines(db) == deal_lines(fresh)


def test_rerun_refuses_shards_with_a_cluster(tmp_path: Path) -> None:
    path = write_tournament(tmp_path, FIXED)
    db = tmp_path / "t.db"
    both = ("--shards", "2", "--cluster", "local:1")
    assert_one_error(tavolo("tournament", "rerun", path, "--db", db, *both), "choose one")
    assert_one_error(tavolo("tournament", "rerun", path, "--db", db, "--shards", "0"), "--shards")


def cmd_tournament(root: Path, script: str) -> Path:
    """Two entries, one a ``cmd:`` bot running ``root/greedy.py``, one deal a game."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "greedy.py").write_text(script, encoding="utf-8")
    bot = "cmd:" + shlex.join([sys.executable, str(root / "greedy.py")])
    path = root / "t.toml"
    path.write_text(
        'name = "cmd"\n[game]\ndeals = 1\n[match]\ngames = 2\n'
        f'[[entry]]\nname = "greedy"\nbot = {json.dumps(bot)}\n'
        '[[entry]]\nname = "random"\nbot = "random"\n',
        encoding="utf-8",
    )
    return path


def test_a_database_made_before_programs_were_stored_resumes(tmp_path: Path) -> None:
    """Today's fingerprint alone, no programs: the run resumes, and a later change is named."""
    require_sandbox()
    path = cmd_tournament(tmp_path, FIXED)
    config = load_config(path)
    db = tmp_path / "old.db"
    Store.open_for_run(
        db,
        fingerprint=config.fingerprint(),
        name=config.name,
        config_text=config.text,
        facts=table_facts(config),
    ).close()
    result = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert result.exit_code == 0, result.output
    assert "2 games played now, 2 of 2 stored" in result.stdout
    with Store.open_for_reading(db) as store:
        assert store.fact("programs") == config.programs()
        assert store.fact("file") == str(path.resolve())

    (tmp_path / "greedy.py").write_text(FIXED + "# tuned\n", encoding="utf-8")
    assert_one_error(
        tavolo("tournament", "run", path, "--db", db, "--quiet"), "entry 'greedy'", "greedy.py"
    )
    # Rerun with nothing to replay accepts the new program; the next run goes on with it.
    accepted = tavolo("tournament", "rerun", "--db", db, path, "--quiet")
    assert accepted.exit_code == 0, accepted.output
    assert "deleted 0 stored games" in accepted.stdout
    assert tavolo("tournament", "run", path, "--db", db, "--quiet").exit_code == 0


def test_what_an_entry_runs(tmp_path: Path) -> None:
    """A built-in bot: its modules; cmd: and manifests: the files their commands name."""
    module = Path(program_files(parse_entry("heuristic"))[0])
    assert module.name == "heuristic.py" and module.parent.name == "bots"
    assert module.read_text(encoding="utf-8").startswith('"""')
    # pimc plays by the engine, its search and the heuristic's signals: all of them count.
    pimc = [Path(p) for p in program_files(parse_entry("pimc"))]
    assert all(p.is_file() for p in pimc)
    names = {(p.parent.name, p.name) for p in pimc}
    for part in {("bots", "pimc.py"), ("search", "pimc.py"), ("tressette", "deal.py")}:
        assert part in names, part
    assert pimc[-1] == module
    (tmp_path / "bot.py").write_text(FIXED, encoding="utf-8")
    entry = parse_entry(f"cmd:python3 {tmp_path / 'bot.py'} --level 3")
    assert program_files(entry) == [str(tmp_path / "bot.py")]  # python3 is the machine's
    assert program_files(parse_entry("remote")) == []


def test_a_manifest_edit_changes_only_its_entry(tmp_path: Path) -> None:
    path = write_tournament(tmp_path, FIXED)
    config = load_config(path)
    manifest = tmp_path / "bot" / "greedy.toml"
    manifest.write_text(manifest.read_text() + "[limits]\nmemory_mb = 1024\n", encoding="utf-8")
    edited = load_config(path)
    before, after = config.programs(), edited.programs()
    assert [n for n in before if before[n] != after[n]] == ["greedy"]
    assert str(manifest) in after["greedy"]
    # The settings' fingerprint stays today's: an old database still opens, and the
    # programs stored beside it name the change.
    assert edited.fingerprint() == config.fingerprint()


def test_the_store_names_changed_entries_and_keeps_todays_message(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    old = {"a": {"/x/a.py": "1"}, "b": {"/x/b.py": "2"}}
    moved = {"a": {"/y/a.py": "1"}, "b": {"/y/b.py": "2"}}
    new = {"a": {"/x/a.py": "9"}, "b": {"/x/b.py": "2"}}

    def open_(fingerprint: str, programs: Any, **kw: Any) -> Store:
        return Store.open_for_run(
            db, fingerprint=fingerprint, name="t", config_text="", programs=programs, **kw
        )

    open_("f1", old).close()
    open_("f1", moved).close()  # the same files elsewhere: nothing changed
    with pytest.raises(ChangedEntries) as info:
        open_("f1", new)
    assert info.value.entries == ["a"]
    assert "'a' (/x/a.py changed)" in str(info.value) and "'b'" not in str(info.value)
    open_("f1", new, accept=["a"]).close()
    # Other settings as well: today's message, whatever the programs.
    with pytest.raises(StorageError, match="another tournament"):
        open_("f2", new)
    with open_("f1", new, force=True) as store:
        assert store.moved_aside is not None and store.fact("programs") == new


def test_rerun_errors_are_one_line(tmp_path: Path) -> None:
    path = cmd_tournament(tmp_path, FIXED)
    config = load_config(path)
    db = tmp_path / "t.db"
    assert_one_error(tavolo("tournament", "rerun", "--db", db), str(db), "no such database")
    Store.open_for_run(
        db, fingerprint=config.fingerprint(), name=config.name, config_text=config.text
    ).close()
    assert_one_error(
        tavolo("tournament", "rerun", "--db", db), "does not say which tournament file", "FILE"
    )
    assert_one_error(
        tavolo("tournament", "rerun", "--db", db, path, "--faults", "crash,slow"),
        "'slow' is not a fault kind",
        "crash, timeout, illegal",
    )
    assert_one_error(
        tavolo("tournament", "rerun", "--db", db, path, "--entry", "nobody"), "'nobody'"
    )
    open_store(db, config).close()  # the file is stored now
    path.write_text(path.read_text().replace("deals = 1", "deals = 2"), encoding="utf-8")
    assert_one_error(
        tavolo("tournament", "rerun", "--db", db), "not the tournament stored in", "--force"
    )
    path.unlink()
    assert_one_error(tavolo("tournament", "rerun", "--db", db), "is gone", "FILE")
