"""The tournament file and the database: every bad input gets one line naming where."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli import assert_one_error, tavolo
from tournaments.config import ConfigError, Format, load_config
from tournaments.storage import StorageError, Store

GOOD = """\
name = "t"
seed = "s1"
format = "round-robin"

[game]
preset = "tressette"
deals = 1

[match]
games = 2

[[entry]]
name = "h"
bot = "heuristic"

[[entry]]
name = "r"
bot = "random"
"""


def write(tmp_path: Path, text: str, name: str = "t.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def config_error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    return str(info.value)


def test_good_file_loads_with_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, GOOD))
    assert config.format is Format.ROUND_ROBIN
    assert [e.name for e in config.entries] == ["h", "r"]
    assert config.games == 2 and config.sets == 1 and config.duplicate
    assert config.deals == 1
    assert config.limits.deadline_ms == 1000
    assert config.ratings.elo == 1500 and config.ratings.anchor is None


def test_fingerprint_follows_results_not_concurrency(tmp_path: Path) -> None:
    base = load_config(write(tmp_path, GOOD)).fingerprint()
    more = load_config(
        write(tmp_path, GOOD.replace("format", "concurrency = 3\nformat"))
    ).fingerprint()
    other_seed = load_config(write(tmp_path, GOOD.replace('"s1"', '"s2"'))).fingerprint()
    assert base == more
    assert base != other_seed
    # Restarting crashed bots decides results; on (the default) leaves the fingerprint as it
    # was before the key existed, so older databases still resume.
    on = write(tmp_path, GOOD.replace("games = 2", "games = 2\nrestart_crashed = true"), "on.toml")
    off = write(
        tmp_path, GOOD.replace("games = 2", "games = 2\nrestart_crashed = false"), "off.toml"
    )
    assert load_config(on).limits.restart_crashed is True
    assert load_config(on).fingerprint() == base
    assert load_config(off).limits.restart_crashed is False
    assert load_config(off).fingerprint() != base


def test_the_example_loads() -> None:
    config = load_config(Path(__file__).parent.parent / "tournaments/examples/quick.toml")
    assert len(config.entries) == 3 and config.format is Format.ROUND_ROBIN


def test_not_toml_names_the_line(tmp_path: Path) -> None:
    message = config_error(tmp_path, GOOD.replace("games = 2", "games = = 2"))
    assert message.startswith(f"{tmp_path / 't.toml'}:10: not TOML")


def test_unknown_key_names_line_and_key(tmp_path: Path) -> None:
    message = config_error(tmp_path, GOOD.replace("games = 2", "games = 2\ngamez = 3"))
    assert message.startswith(f"{tmp_path / 't.toml'}:11: key 'match.gamez': unknown key")


def test_unknown_top_key(tmp_path: Path) -> None:
    message = config_error(tmp_path, "colour = 1\n" + GOOD)
    assert ":1: key 'colour': unknown key" in message


def test_unknown_entry_key_names_the_entry(tmp_path: Path) -> None:
    text = GOOD.replace('bot = "random"', 'bot = "random"\nlevel = 3')
    message = config_error(tmp_path, text)
    assert ":19: key 'entry[2].level': unknown key" in message


def test_a_key_digest_is_a_remote_entrys_and_a_sha256(tmp_path: Path) -> None:
    digest = "ab" * 32
    remote = GOOD.replace('bot = "random"', f'bot = "remote"\nkey_sha256 = "{digest}"')
    config = load_config(write(tmp_path, remote))
    assert [e.key_sha256 for e in config.entries] == [None, digest]
    local = GOOD.replace('bot = "random"', f'bot = "random"\nkey_sha256 = "{digest}"')
    message = config_error(tmp_path, local)
    assert ":19: key 'entry[2].key_sha256': only a remote entry" in message
    short = GOOD.replace('bot = "random"', 'bot = "remote"\nkey_sha256 = "ab12"')
    message = config_error(tmp_path, short)
    assert ":19: key 'entry[2].key_sha256': must be a SHA-256 in hex: 64 of 0-9a-f" in message


def test_duplicate_entry_name(tmp_path: Path) -> None:
    message = config_error(tmp_path, GOOD.replace('name = "r"', 'name = "h"'))
    assert ":17: key 'entry[2].name': duplicate entry name 'h'" in message
    assert "(line 13)" in message


def test_bot_command_not_found(tmp_path: Path) -> None:
    text = GOOD.replace('bot = "random"', 'bot = "cmd:no-such-program-xyz --fast"')
    message = config_error(tmp_path, text)
    assert ":18: key 'entry[2].bot'" in message
    assert "'no-such-program-xyz' not found" in message


def test_manifest_is_found_beside_the_file(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    write(tmp_path, f'name = "m"\ncommand = ["{sys.executable}", "-m", "x"]\n', "bots/m.toml")
    config = load_config(write(tmp_path, GOOD.replace('bot = "random"', 'bot = "bots/m.toml"')))
    assert config.entries[1].entry.command[0] == sys.executable


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        (('format = "round-robin"', 'format = "knockout"'), [":3:", "unknown format 'knockout'"]),
        (('format = "round-robin"', 'format = "swiss"'), ["'rounds'", "needs rounds"]),
        (('format = "round-robin"', 'format = "gauntlet"'), ["'candidate'", "needs candidate"]),
        (("games = 2", "games = 3"), [":10:", "'match.games'", "multiple of 2"]),
        (("games = 2", 'games = "two"'), [":10:", "must be a whole number"]),
        (("deals = 1", "deals = 0"), [":7:", "'game.deals'"]),
        (('preset = "tressette"', 'preset = "poker"'), [":6:", "unknown game 'poker'"]),
        (("[match]", "[game.rules]\ntarget = -3\n[match]"), ["'game.rules.target'"]),
        (("[match]", "[game.rules]\ncolour = 1\n[match]"), ["colour"]),
        (("games = 2", 'games = 2\non_fault = "panic"'), [":11:", "forfeit, random"]),
        (("games = 2", 'games = 2\nrestart_crashed = "yes"'), [":11:", "true or false"]),
        (("games = 2", 'games = 2\ntempo = "fixed:0"'), [":11:", "'match.tempo'", "fixed:MS"]),
        (("games = 2", 'games = 2\ntempo = "slow"'), [":11:", "'match.tempo'", "'slow'"]),
        (("games = 2", "games = 2\nsame_deals_per_round = 1"), [":11:", "true or false"]),
        (("games = 2", 'games = 2\nponder = "yes"'), [":11:", "'match.ponder'", "true or false"]),
        (('name = "t"', 'name = "t"\nallow_paths = "x"'), [":2:", "'allow_paths'"]),
        (("[match]", '[ratings]\nanchor = "zed"\n[match]'), ["'ratings.anchor'", "'zed'"]),
        (('\n[[entry]]\nname = "r"\nbot = "random"\n', ""), ["seats 2 entries", "has 1"]),
        (('name = "r"\nbot = "random"\n', ""), [":16:", "'entry[2].bot'", "must be"]),
    ],
)
def test_config_errors(tmp_path: Path, change: tuple[str, str], needles: list[str]) -> None:
    assert change[0] in GOOD
    message = config_error(tmp_path, GOOD.replace(*change))
    for needle in needles:
        assert needle in message, message


def test_cli_reports_config_error_in_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("games = 2", "gamez = 2"))
    assert_one_error(tavolo("tournament", "run", path), str(path), "'match.gamez'")


def test_missing_file(tmp_path: Path) -> None:
    assert_one_error(
        tavolo("tournament", "run", tmp_path / "none.toml"), "none.toml", "cannot read"
    )


# -- the database ------------------------------------------------------------------------


def open_run(path: Path, fingerprint: str = "f1", force: bool = False) -> Store:
    return Store.open_for_run(path, fingerprint=fingerprint, name="t", config_text="", force=force)


def test_database_of_another_tournament_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    open_run(db).close()
    with pytest.raises(StorageError, match="another tournament"):
        open_run(db, "f2")
    with open_run(db, "f2", force=True) as store:
        assert store.moved_aside is not None and store.moved_aside.exists()
        assert store.meta()["fingerprint"] == "f2"
    with Store.open_for_reading(store.moved_aside) as old:  # nothing was deleted
        assert old.meta()["fingerprint"] == "f1"


def test_cli_refuses_another_tournaments_database(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    open_run(db, "something-else").close()
    path = write(tmp_path, GOOD)
    assert_one_error(tavolo("tournament", "run", path, "--db", db), str(db), "--force")


def test_second_run_on_the_same_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    with open_run(db), pytest.raises(StorageError, match="locked: another"):
        open_run(db)
    # And from another process, as two shells would do it.
    code = (
        "import sys; from pathlib import Path; from tournaments.storage import Store;"
        "Store.open_for_run(Path(sys.argv[1]), fingerprint='f1', name='t', config_text='')"
    )
    with open_run(db):
        other = subprocess.run(
            [sys.executable, "-c", code, str(db)], capture_output=True, text=True, check=False
        )
    assert other.returncode != 0 and "locked: another" in other.stderr


def test_database_locked_by_another_program(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    db = tmp_path / "t.db"
    assert tavolo("tournament", "run", path, "--db", db, "--quiet").exit_code == 0
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # as a sqlite3 shell in the middle of a write would
    try:
        assert_one_error(tavolo("tournament", "run", path, "--db", db), str(db), "locked")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert tavolo("tournament", "run", path, "--db", db, "--quiet").exit_code == 0


def test_not_a_database(tmp_path: Path) -> None:
    bad = write(tmp_path, "hello, not sqlite\n" * 50, "x.db")
    assert_one_error(tavolo("tournament", "table", "--db", bad), str(bad), "not a tournament")
    assert_one_error(tavolo("tournament", "table", "--db", tmp_path / "no.db"), "no such database")


def test_tempo_reads_as_the_match_limit_and_changes_the_fingerprint(tmp_path: Path) -> None:
    free = load_config(write(tmp_path, GOOD))
    fixed = load_config(
        write(tmp_path, GOOD.replace("games = 2", 'games = 2\ntempo = "fixed:250"'))
    )
    assert (free.limits.tempo_ms, fixed.limits.tempo_ms) == (0, 250)
    assert free.fingerprint() != fixed.fingerprint()
    said = load_config(write(tmp_path, GOOD.replace("games = 2", 'games = 2\ntempo = "free"')))
    assert said.fingerprint() == free.fingerprint()
