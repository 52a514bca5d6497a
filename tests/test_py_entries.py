"""``py:MODULE:NAME`` entries: a Python function or SDK bot run as an SDK process
(``python -m tavolo_bot.py_entry``) in its sandbox, found at parse time without running it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.entries import PYTHON_RUNNER, EntryError, parse_entry, program_files, program_hashes
from referee.records import dumps
from tests.sandboxing import require_sandbox
from tests.test_cli import assert_one_error, tavolo
from tests.test_in_process import lines, without_sandbox
from tournaments.config import ConfigError, load_config

SEEDED = (Path(__file__).parent / "bots" / "seeded.py").read_text(encoding="utf-8")

GREEDY = '''\
"""Plays the first card it may, else the first action."""


def choose(turn):
    plays = turn.plays() or turn.legal
    return plays[0].id
'''

SNOOP = '''\
"""Plays the first legal action, once sure it cannot read what lies beside its file."""

from pathlib import Path

SECRET = Path(__file__).with_name("secret.txt")
if SECRET.exists():
    raise RuntimeError(f"the sandbox lets this bot read {SECRET}")


def choose(turn):
    return turn.legal[0].id
'''


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def bots(folder: Path) -> Path:
    """``folder`` with a lone module (``greedy.py``), a package whose bot imports its own
    helper (``cup_bots``), and a module beside a file it must not read (``snoop.py``)."""
    write(folder / "greedy.py", GREEDY)
    write(folder / "cup_bots" / "__init__.py", "")
    helped = "import random\n\nfrom cup_bots.helpers import NOTE  # noqa: F401\n"
    write(folder / "cup_bots" / "seeded.py", SEEDED.replace("import random\n", helped))
    write(folder / "cup_bots" / "helpers.py", 'NOTE = "importable from its package"\n')
    write(folder / "snoop.py", SNOOP)
    write(folder / "secret.txt", "the organiser's\n")
    return folder


def test_a_py_entry_runs_the_sdks_runner_with_this_python(tmp_path: Path) -> None:
    folder = bots(tmp_path)
    lone = parse_entry("py:greedy:choose", folder=folder)
    assert lone.name == "choose"
    assert lone.command == (sys.executable, "-m", PYTHON_RUNNER, "--path", str(folder),
                            "greedy:choose")  # fmt: skip
    # A module on its own: its file, not the folder it lies in.
    assert str(folder / "greedy.py") in lone.read_only and str(folder) not in lone.read_only
    packaged = parse_entry("py:cup_bots.seeded:Seeded", folder=folder)
    assert packaged.name == "Seeded" and packaged.command[-1] == "cup_bots.seeded:Seeded"
    # A module of a package: the package's folder, which it imports from.
    assert str(folder / "cup_bots") in packaged.read_only and str(folder) not in packaged.read_only
    assert not lone.built_in and not lone.remote and lone.python is not None


def test_a_py_entrys_program_is_its_module(tmp_path: Path) -> None:
    """Hashed like a cmd: entry's script, so a tournament notices a changed bot."""
    folder = bots(tmp_path)
    entry = parse_entry("py:cup_bots.seeded:Seeded", folder=folder)
    module = folder / "cup_bots" / "seeded.py"
    assert program_files(entry) == [str(module)]
    before = program_hashes(entry)
    module.write_text(SEEDED + "# changed\n", encoding="utf-8")
    assert program_hashes(entry) != before


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("py:greedy", "write py:MODULE:NAME"),
        ("py:greedy:", "write py:MODULE:NAME"),
        ("py:greedy:choose-first", "write py:MODULE:NAME"),
        ("py:no_such_module_xyz:choose", "no module 'no_such_module_xyz' in "),
        ("py:greedy:nothing", "greedy.py defines no 'nothing' at its top"),
        ("py:greedy.inner:choose", "greedy is a module, not a package: it has no 'inner'"),
        ("py:cup_bots.nothing:choose", "package cup_bots has no module 'nothing'"),
        ("py:broken:choose", "broken.py is not valid Python"),
        ("py:random:choose", "'random' in "),
    ],
    ids=[
        "no-name", "empty-name", "bad-name", "no-module", "no-attribute", "not-a-package",
        "no-submodule", "syntax-error", "shadows-the-stdlib",
    ],
)  # fmt: skip
def test_a_bad_py_entry_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str, said: str
) -> None:
    folder = bots(tmp_path)
    write(folder / "broken.py", "def choose(turn)\n    return 0\n")
    write(folder / "random.py", GREEDY)
    monkeypatch.chdir(folder)
    result = tavolo("play", spec, "random", "--seed", "s", "--quiet")
    assert_one_error(result, f"entry {spec!r}: ", said)
    with pytest.raises(EntryError, match=f"^entry {spec!r}: "):
        parse_entry(spec, folder=folder)


def test_a_tournament_looks_beside_its_file_and_names_the_line(tmp_path: Path) -> None:
    folder = bots(tmp_path / "event")
    entries = '[[entry]]\nname = "g"\nbot = "py:greedy:choose"\n\n[[entry]]\nbot = "random"\n'
    path = write(folder / "t.toml", 'seed = "s"\n[game]\npreset = "tressette"\n' + entries)
    config = load_config(path)  # run from anywhere: the module is found beside the file
    assert config.entries[0].entry.python is not None
    assert config.entries[0].programs[0][0] == str(folder / "greedy.py")
    write(path, path.read_text(encoding="utf-8").replace("greedy:choose", "greedy:nothing"))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert ":6: key 'entry[1].bot': entry 'py:greedy:nothing': " in str(info.value)


def test_py_entries_play_a_tournament_in_their_sandboxes(tmp_path: Path) -> None:
    """A packaged bot that imports its own helper, and a lone module that may not read the
    file beside it (it crashes if it can): every game without a fault."""
    require_sandbox()
    folder = bots(tmp_path / "event")
    entries = "".join(
        f'[[entry]]\nname = "{name}"\nbot = "{bot}"\n\n'
        for name, bot in [("seeded", "py:cup_bots.seeded:Seeded"), ("snoop", "py:snoop:choose"),
                          ("random", "random")]
    )  # fmt: skip
    path = write(
        folder / "t.toml",
        'seed = "cup"\nformat = "round-robin"\n[game]\npreset = "tressette"\ndeals = 1\n'
        "[match]\ngames = 2\n" + entries,
    )
    result = tavolo("tournament", "run", path, "--db", folder / "t.db", "--quiet")
    assert result.exit_code == 0, result.output
    table = tavolo("tournament", "table", "--db", folder / "t.db", "--format", "json")
    rows = {e["name"]: e for e in json.loads(table.stdout)["entries"]}
    assert set(rows) == {"seeded", "snoop", "random"}
    for row in rows.values():
        assert row["games"] == 4, row
        assert (row["timeouts"], row["illegal"], row["crashes"]) == (0, 0, 0), row


def test_a_py_entry_plays_in_its_sandbox_the_record_it_plays_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_sandbox()
    monkeypatch.chdir(bots(tmp_path))
    args = ["play", "py:cup_bots.seeded:Seeded", "heuristic", "--seed", "py-rec", "--deals", "2"]
    over_grpc, in_process = tmp_path / "grpc.jsonl", tmp_path / "local.jsonl"
    played = tavolo(*args, "--sandbox", "bwrap", "--record", over_grpc, "--quiet")
    assert played.exit_code == 0, played.output
    assert "Seeded" in played.stdout and "0/0/0" in played.stdout
    local = tavolo(*args, "--in-process", "--record", in_process, "--quiet")
    assert local.exit_code == 0, local.output
    assert without_sandbox(over_grpc) == [dumps(line) for line in lines(in_process)]


def runner(*args: str) -> subprocess.CompletedProcess[str]:
    """The SDK's runner, with no referee to play against."""
    return subprocess.run(
        [sys.executable, "-m", PYTHON_RUNNER, *args],
        capture_output=True, text=True, timeout=60, check=False,
        env={k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ([], "usage: python -m tavolo_bot.py_entry [--path DIR]... MODULE:NAME"),
        (["greedy"], "'greedy' is not MODULE:NAME"),
        (["no_such_module_xyz:choose"], "no module named 'no_such_module_xyz'"),
        (["greedy:nothing"], "module greedy ("),
        (["not_a_bot:choose"], "not_a_bot:choose: int is not a bot"),
        (["asyncio:run"], "another module of that name was imported first"),
    ],
    ids=["usage", "no-colon", "no-module", "no-attribute", "not-a-bot", "from-elsewhere"],
)
def test_the_runner_refuses_what_it_cannot_play_in_one_line(
    tmp_path: Path, args: list[str], said: str
) -> None:
    folder = bots(tmp_path)
    write(folder / "not_a_bot.py", "choose = 42\n")
    write(folder / "asyncio.py", GREEDY)  # the runner has imported the real one
    done = runner("--path", str(folder), *args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("tavolo_bot.py_entry: ")
    assert said in done.stderr


def test_the_runner_shows_a_module_that_fails_to_import(tmp_path: Path) -> None:
    write(tmp_path / "fails.py", "import no_such_dependency_xyz\n\nchoose = None\n")
    done = runner("--path", str(tmp_path), "fails:choose")
    assert done.returncode == 1
    assert "importing fails:choose raised an exception" in done.stderr
    assert "Traceback" in done.stderr and "No module named 'no_such_dependency_xyz'" in done.stderr
