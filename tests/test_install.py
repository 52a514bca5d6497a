"""``pip install .`` alone gives a ``tavolo`` whose built-in bots start and play.

A fresh virtual environment gets the repository as a user has it (its files copied, so
no build folder or egg-info lands in the repository) with a plain ``pip install``: not
editable, no ``clients/python``, no ``make setup``. The installed command then plays a
match over real gRPC, its built-in bots running as processes from the installed SDK, in
bubblewrap sandboxes (the check that the sandbox binds an SDK in site-packages).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.sandboxing import require_sandbox

ROOT = Path(__file__).resolve().parent.parent
INSTALL_TIMEOUT = 900
"""Seconds for pip: from its cache it takes well under a minute."""
_NOT_SOURCE = {".git", ".venv", "build", "node_modules", "target", "__pycache__"}


def _source_files() -> list[str]:
    """The repository's files as a checkout has them: tracked, or new and not ignored."""
    if (ROOT / ".git").exists() and shutil.which("git"):
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode()
        return [name for name in listed.split("\0") if name and (ROOT / name).is_file()]
    return [
        str(path.relative_to(ROOT))
        for path in ROOT.rglob("*")
        if path.is_file()
        and not _NOT_SOURCE.intersection(path.relative_to(ROOT).parts)
        and not any(part.endswith(".egg-info") for part in path.parts)
    ]


def _clean_env() -> dict[str, str]:
    """This environment without what would make the test's own venv or sources visible."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}
    }
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin folder of a fresh venv that has had ``pip install <copy of the repo>``."""
    base = tmp_path_factory.mktemp("install")
    source = base / "tavolo-src"
    for name in _source_files():
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(source)],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        env=_clean_env(),
        cwd=base,
        check=False,
    )
    assert done.returncode == 0, f"pip install failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return venv / "bin"


def _run(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_dir / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        timeout=300,
        env=_clean_env(),
        cwd=cwd,
        check=False,
    )


def test_the_installed_tavolo_has_its_version(installed: Path, tmp_path: Path) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    done = _run(installed, "tavolo", "--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"tavolo {project['version']}"


def test_the_sdk_is_installed_with_tavolo_not_found_in_the_repository(
    installed: Path, tmp_path: Path
) -> None:
    code = (
        "import importlib.metadata as m, tavolo_bot, tavolo_bot.bots.heuristic, referee; "
        "print(tavolo_bot.__file__); print(referee.__file__); "
        "print(sorted(d.metadata['Name'] for d in m.distributions()))"
    )
    done = _run(installed, "python", "-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    sdk, referee, names = done.stdout.splitlines()
    venv = installed.parent
    for path in (sdk, referee):
        assert Path(path).is_relative_to(venv), f"{path} is not in the fresh venv"
    assert (Path(sdk).parent / "py.typed").is_file()
    assert (Path(sdk).parent / "proto" / "referee_pb2.pyi").is_file()
    assert "tavolo" in names and "tavolo-bot" not in names, names


def test_the_installed_tavolo_plays_its_built_in_bots_over_grpc(
    installed: Path, tmp_path: Path
) -> None:
    require_sandbox()
    args = ("tavolo", "play", "random", "heuristic", "--seed", "s", "--deals", "2", "--quiet")
    done = _run(installed, *args, "--record", str(tmp_path / "match.jsonl"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    # Sandboxed: no warning that a built-in bot runs unconfined.
    assert done.stderr == "", done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    table = {row[0]: row for row in rows if row and row[0] in {"random", "heuristic"}}
    assert set(table) == {"random", "heuristic"}, done.stdout
    for row in table.values():
        assert row[1] == "2" and row[-1] == "0/0/0", done.stdout  # two games, no fault
    checked = _run(installed, "tavolo", "verify", str(tmp_path / "match.jsonl"), cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert "ok" in checked.stdout and "2 games" in checked.stdout


def test_the_installed_tavolo_plays_in_process(installed: Path, tmp_path: Path) -> None:
    args = ("tavolo", "play", "heuristic", "random", "--seed", "s", "--deals", "2")
    done = _run(installed, *args, "--in-process", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "game 2: random vs heuristic" in done.stdout


def test_the_installed_tavolo_ships_its_pages(installed: Path, tmp_path: Path) -> None:
    """The templates and the JavaScript and CSS are package data: a replay page builds."""
    record = tmp_path / "match.jsonl"
    args = ("tavolo", "play", "heuristic", "random", "--seed", "s", "--deals", "1", "--quiet")
    done = _run(installed, *args, "--in-process", "--record", str(record), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    done = _run(installed, "tavolo", "replay", str(record), "-o", "page.html", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    shipped = ROOT / "tournaments" / "web" / "assets"
    for name in ("replay.js", "replay.css", "tavolo.css"):
        assert (shipped / name).read_text(encoding="utf-8") in page, f"{name} is not inlined"


def test_a_tavolo_without_its_sdk_says_how_to_mend_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from referee.entries import EntryError, parse_entry

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "tavolo_bot" else real(name)
    )
    with pytest.raises(EntryError, match=r"reinstall tavolo \(pip install \.\), which ships it"):
        parse_entry("heuristic")
