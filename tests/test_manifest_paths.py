"""A manifest's command resolves relative to the manifest's folder, arguments included.

Real manifests, real sandboxed bot processes, real referee over gRPC, real SQLite: the
commands run from another working directory, where a path left relative finds nothing.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from referee.entries import EntryError, load_manifest, parse_entry, program_files
from referee.records import verify_file
from tests.sandboxing import require_sandbox
from tests.test_cli import tavolo
from tournaments.config import ConfigError, load_config
from tournaments.storage import Store

GREEDY = """\
import sys
from pathlib import Path

from tavolo_bot import Bot, Turn, run

# The policy file is named on the command line, in a subfolder of the manifest's: the
# sandbox must let the bot read it, and without it the bot crashes at once.
POLICY = Path(sys.argv[1]).read_text(encoding="utf-8").strip()


class Greedy(Bot):
    def choose(self, turn: Turn) -> int:
        return turn.legal[0 if POLICY == "first" else -1].id


if __name__ == "__main__":
    raise SystemExit(run(Greedy))
"""


def greedy_manifest(root: Path) -> Path:
    """``root/bot/greedy.toml`` running ``greedy.py shared/policy.txt``, both relative."""
    (root / "bot" / "shared").mkdir(parents=True)
    (root / "bot" / "greedy.py").write_text(GREEDY, encoding="utf-8")
    (root / "bot" / "shared" / "policy.txt").write_text("first\n", encoding="utf-8")
    manifest = root / "bot" / "greedy.toml"
    command = [sys.executable, "greedy.py", "shared/policy.txt", "--fast", "not-a-file"]
    manifest.write_text(f'name = "greedy"\ncommand = {json.dumps(command)}\n', encoding="utf-8")
    return manifest


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory that holds none of the bot's files."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def test_arguments_are_made_absolute_from_the_manifests_folder(
    tmp_path: Path, elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = load_manifest(greedy_manifest(tmp_path))
    script, policy = tmp_path / "bot" / "greedy.py", tmp_path / "bot" / "shared" / "policy.txt"
    assert entry.command == (sys.executable, str(script), str(policy), "--fast", "not-a-file")
    # The sandbox may read the policy file, and nothing of
    # the working directory (the argument that names nothing stays as written).
    assert str(policy) in entry.read_only
    assert not any(p.startswith(str(elsewhere)) for p in entry.read_only)
    # The same command as cmd:, typed in the manifest's folder, is the same bot.
    monkeypatch.chdir(tmp_path / "bot")
    typed = parse_entry(f"cmd:{sys.executable} greedy.py shared/policy.txt --fast not-a-file")
    assert typed.command == entry.command
    assert str(policy) in typed.read_only


def test_a_relative_program_resolves_from_the_manifests_folder(
    tmp_path: Path, elsewhere: Path
) -> None:
    folder = tmp_path / "bot"
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "run").write_text("#!/bin/sh\n", encoding="utf-8")
    (folder / "run.toml").write_text(
        'name = "r"\ncommand = ["bin/run", "bin"]\nworkdir = "bin"\n', encoding="utf-8"
    )
    entry = load_manifest(folder / "run.toml")
    assert entry.command == (str(folder / "bin" / "run"), str(folder / "bin"))
    assert entry.cwd == folder / "bin"


def test_play_runs_the_manifests_script_from_another_folder(
    tmp_path: Path, elsewhere: Path
) -> None:
    require_sandbox()
    manifest = greedy_manifest(tmp_path)
    record = tmp_path / "m.jsonl"
    relative = Path("..") / manifest.relative_to(tmp_path)
    result = tavolo(
        "play", relative, "random", "--seed", "m", "--deals", "1", "--quiet", "--record", record
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "incident" not in result.stdout
    assert [o.termination.value for o in verify_file(record).outcomes] == ["deals_played"] * 2


def test_a_tournament_runs_the_manifests_script_from_another_folder(
    tmp_path: Path, elsewhere: Path
) -> None:
    require_sandbox()
    greedy_manifest(tmp_path)
    path = tmp_path / "t.toml"
    path.write_text(
        'name = "paths"\n[game]\ndeals = 1\n[match]\ngames = 2\n'
        '[[entry]]\nname = "greedy"\nbot = "bot/greedy.toml"\n'
        '[[entry]]\nname = "random"\nbot = "random"\n',
        encoding="utf-8",
    )
    db = tmp_path / "t.db"
    result = tavolo("tournament", "run", Path("..") / "t.toml", "--db", db, "--quiet")
    assert result.exit_code == 0, result.output
    with Store.open_for_reading(db) as store:
        games = store.games()
    assert len(games) == 2
    assert all(g.termination == "deals_played" and not g.faults for g in games)


def _escaping(tmp_path: Path, body: str) -> Path:
    """``tmp_path/bot/bot.toml`` with ``body``, beside ``tmp_path/event/secret.toml`` and
    ``bot/link`` (a link to ``event``) and ``bot/run.py`` linking to a script outside."""
    (tmp_path / "bot").mkdir()
    (tmp_path / "event").mkdir()
    (tmp_path / "event" / "secret.toml").write_text("seed = 1\n", encoding="utf-8")
    (tmp_path / "event" / "evil.py").write_text("print(1)\n", encoding="utf-8")
    (tmp_path / "bot" / "link").symlink_to(tmp_path / "event")
    (tmp_path / "bot" / "run.py").symlink_to(tmp_path / "event" / "evil.py")
    (tmp_path / "bot" / "own.py").write_text("print(1)\n", encoding="utf-8")
    manifest = tmp_path / "bot" / "bot.toml"
    manifest.write_text(f'name = "b"\n{body}\n', encoding="utf-8")
    return manifest


ESCAPES = {
    "read_only dotdot": ("read_only", "../event", 'command = ["python3", "own.py"]\nread_only = ["../event"]'),  # noqa: E501
    "read_only absolute": ("read_only", "{event}", 'command = ["python3", "own.py"]\nread_only = ["{event}"]'),  # noqa: E501
    "read_only link": ("read_only", "link", 'command = ["python3", "own.py"]\nread_only = ["link"]'),  # noqa: E501
    "workdir dotdot": ("workdir", "../event", 'command = ["python3", "own.py"]\nworkdir = "../event"'),  # noqa: E501
    "workdir absolute": ("workdir", "{event}", 'command = ["python3", "own.py"]\nworkdir = "{event}"'),  # noqa: E501
    "workdir link": ("workdir", "link", 'command = ["python3", "own.py"]\nworkdir = "link"'),
    "script dotdot": ("command", "../event/evil.py", 'command = ["python3", "../event/evil.py"]'),
    "script absolute": ("command", "{event}/evil.py", 'command = ["python3", "{event}/evil.py"]'),
    "script link": ("command", "run.py", 'command = ["python3", "run.py"]'),
    "program dotdot": ("command", "../event/evil.py", 'command = ["../event/evil.py"]'),
}  # fmt: skip


@pytest.mark.parametrize("case", ESCAPES)
def test_a_path_leading_out_of_the_manifests_folder_is_refused(tmp_path: Path, case: str) -> None:
    key, item, body = ESCAPES[case]
    event = str(tmp_path / "event")
    manifest = _escaping(tmp_path, body.replace("{event}", event))
    with pytest.raises(EntryError) as caught:
        load_manifest(manifest)
    message = str(caught.value)
    assert message.startswith(f"{manifest}: key {key!r}: ")
    assert item.replace("{event}", event) in message
    assert f"leads out of the manifest's folder {tmp_path / 'bot'}" in message


@pytest.mark.parametrize("case", ESCAPES)
def test_the_organiser_may_allow_a_wider_folder(tmp_path: Path, case: str) -> None:
    _, _, body = ESCAPES[case]
    manifest = _escaping(tmp_path, body.replace("{event}", str(tmp_path / "event")))
    load_manifest(manifest, allow=(tmp_path / "event",))


def test_system_programs_and_this_python_are_allowed(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "own.py").write_text("print(1)\n", encoding="utf-8")
    for program in ("python3", "/bin/sh", sys.executable):
        (folder / "b.toml").write_text(
            f'name = "b"\ncommand = [{json.dumps(program)}, "own.py"]\n'
            'workdir = "."\nread_only = ["own.py"]\n',
            encoding="utf-8",
        )
        entry = load_manifest(folder / "b.toml")
        assert entry.command[1] == str(folder / "own.py")


def test_a_tournament_file_names_the_escaping_manifest_and_may_allow_it(tmp_path: Path) -> None:
    """From a tournament file, the manifest's escape is one error with the file's line;
    the organiser's ``allow_paths`` (relative to the tournament file) lets it through."""
    manifest = _escaping(tmp_path, 'command = ["python3", "own.py"]\nread_only = ["../event"]')
    event = tmp_path / "cup.toml"
    entries = f'[[entry]]\nname = "b"\nbot = "{manifest}"\n\n[[entry]]\nbot = "random"\n'
    event.write_text(f'name = "cup"\nseed = "s"\n\n{entries}', encoding="utf-8")
    result = tavolo("tournament", "run", event, "--db", tmp_path / "cup.db")
    assert result.exit_code == 2
    said = f"{event}:6: key 'entry[1].bot': {manifest}: key 'read_only': '../event' leads out"
    assert said in result.output
    assert "Traceback" not in result.output and not (tmp_path / "cup.db").exists()
    event.write_text(
        f'name = "cup"\nseed = "s"\nallow_paths = ["event"]\n\n{entries}', encoding="utf-8"
    )
    assert load_config(event).entries[0].entry.read_only[-1] == str(tmp_path / "event")
    event.write_text(f'name = "cup"\nallow_paths = ["nowhere"]\n\n{entries}', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"cup.toml:2: key 'allow_paths': 'nowhere' .* is not a"):
        load_config(event)


def test_an_unconfined_manifest_is_not_held_to_its_folder(tmp_path: Path) -> None:
    """Paths are what a sandbox binds; with ``sandbox = "off"`` nothing is bound, and in a
    tournament such a manifest is refused unless the organiser runs every bot unconfined."""
    body = 'command = ["python3", "../event/evil.py"]\nsandbox = "off"'
    entry = load_manifest(_escaping(tmp_path, body))
    assert entry.command[1] == str(tmp_path / "event" / "evil.py")


def test_a_program_named_bare_is_the_one_found_here(
    tmp_path: Path, elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/bots.md's manifests say ``python``: the one on the PATH where tavolo runs (here
    this virtualenv's), which the sandbox, with a PATH of its own, would not find (or
    would find another, without Tavolo's packages)."""
    require_sandbox()
    bin_folder = Path(sys.executable).parent
    assert (bin_folder / "python").exists()
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ.get('PATH', '')}")
    manifest = tmp_path / "pimc-fast.toml"
    command = ["python", "-m", "referee.bots.pimc", "--worlds", "4", "--ms-per-decision", "0"]
    manifest.write_text(f'name = "pimc-fast"\ncommand = {json.dumps(command)}\n', "utf-8")
    entry = load_manifest(manifest)
    assert entry.command[0] == str(bin_folder / "python")
    assert program_files(entry) == [str(manifest)]  # the interpreter is the machine's
    record = tmp_path / "m.jsonl"
    result = tavolo(
        "play", manifest, "cmd:python -m tavolo_bot.bots.random", "--seed", "bare", "--deals", "1",
        "--quiet", "--record", record,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "incident" not in result.stdout
    assert [o.termination.value for o in verify_file(record).outcomes] == ["deals_played"] * 2


def test_a_shim_found_on_path_leaves_the_program_to_the_sandboxs_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyenv's and asdf's ``python3`` are scripts that pick a program by settings no sandbox
    has: a manifest's bare ``python3`` is then the sandbox's own, as it always was."""
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python3").write_text('#!/bin/sh\nexec pyenv exec python3 "$@"\n', "utf-8")
    (shims / "python3").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}{os.environ.get('PATH', '')}")
    manifest = tmp_path / "bot.toml"
    manifest.write_text('name = "bot"\ncommand = ["python3", "-m", "bot"]\n', "utf-8")
    assert load_manifest(manifest).command[0] == "python3"
    assert parse_entry("cmd:python3 -m bot").command[0] == "python3"
