"""A manifest's command resolves relative to the manifest's folder, arguments included.

Real manifests, real sandboxed bot processes, real referee over gRPC, real SQLite: the
commands run from another working directory, where a path left relative finds nothing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from referee.entries import load_manifest, parse_entry
from referee.records import verify_file
from tests.sandboxing import require_sandbox
from tests.test_cli import tavolo
from tournaments.storage import Store

GREEDY = """\
import sys
from pathlib import Path

from tavolo_bot import Bot, Turn, run

# The policy file is named on the command line, outside the manifest's folder: the sandbox
# must let the bot read it, and without it the bot crashes at once.
POLICY = Path(sys.argv[1]).read_text(encoding="utf-8").strip()


class Greedy(Bot):
    def choose(self, turn: Turn) -> int:
        return turn.legal[0 if POLICY == "first" else -1].id


if __name__ == "__main__":
    raise SystemExit(run(Greedy))
"""


def greedy_manifest(root: Path) -> Path:
    """``root/bot/greedy.toml`` running ``greedy.py ../shared/policy.txt``, both relative."""
    (root / "bot").mkdir(parents=True)
    (root / "shared").mkdir()
    (root / "bot" / "greedy.py").write_text(GREEDY, encoding="utf-8")
    (root / "shared" / "policy.txt").write_text("first\n", encoding="utf-8")
    manifest = root / "bot" / "greedy.toml"
    command = [sys.executable, "greedy.py", "../shared/policy.txt", "--fast", "not-a-file"]
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
    script, policy = tmp_path / "bot" / "greedy.py", tmp_path / "shared" / "policy.txt"
    assert entry.command == (sys.executable, str(script), str(policy), "--fast", "not-a-file")
    # The sandbox may read the policy file outside the manifest's folder, and nothing of
    # the working directory (the argument that names nothing stays as written).
    assert str(policy) in entry.read_only
    assert not any(p.startswith(str(elsewhere)) for p in entry.read_only)
    # The same command as cmd:, typed in the manifest's folder, is the same bot.
    monkeypatch.chdir(tmp_path / "bot")
    typed = parse_entry(f"cmd:{sys.executable} greedy.py ../shared/policy.txt --fast not-a-file")
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
