"""Match entries: a built-in bot, a command in any language, a TOML manifest, or remote."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

BUILT_IN_BOTS = {
    "random": "tavolo_bot.bots.random",
    "heuristic": "tavolo_bot.bots.heuristic",
}
"""Built-in bots and the SDK module each runs as."""

DEFAULT_CPU_SECONDS = 600
DEFAULT_MEMORY_MB = 2048
DEFAULT_FILE_MB = 256
"""The largest file a bot process may write, its logs included: a bot cannot fill the disk."""
_MANIFEST_KEYS = {"name", "command", "workdir", "limits"}
_LIMITS = {
    "cpu_seconds": DEFAULT_CPU_SECONDS,
    "memory_mb": DEFAULT_MEMORY_MB,
    "file_mb": DEFAULT_FILE_MB,
}


class EntryError(ValueError):
    """An entry that names no bot, or a manifest that is wrong; says where."""


@dataclass(frozen=True)
class Entry:
    """One bot of a match."""

    name: str
    remote: bool = False
    """A bot anywhere on the network that connects with a printed ticket."""
    command: tuple[str, ...] = ()
    """The argv that starts one process of the bot (empty for remote)."""
    cwd: Path | None = None
    """Where relative paths of the command are resolved (a manifest's folder)."""
    cpu_seconds: int = DEFAULT_CPU_SECONDS
    memory_mb: int = DEFAULT_MEMORY_MB
    file_mb: int = DEFAULT_FILE_MB


def parse_entry(text: str) -> Entry:
    """An entry from its command-line form.

    ``random`` or ``heuristic`` (built in), ``remote``, ``cmd:<command line>``, or the
    path of a ``.toml`` bot manifest.
    """
    if text in BUILT_IN_BOTS:
        return Entry(text, command=(sys.executable, "-m", BUILT_IN_BOTS[text]))
    if text == "remote":
        return Entry("remote", remote=True)
    if text.startswith("cmd:"):
        try:
            argv = tuple(shlex.split(text[4:]))
        except ValueError as exc:
            raise EntryError(f"entry {text!r}: bad command line ({exc})") from None
        if not argv:
            raise EntryError(f"entry {text!r}: the command is empty")
        _check_program(argv[0], None, f"entry {text!r}")
        return Entry(Path(argv[0]).name, command=absolute_paths(argv))
    if text.endswith(".toml"):
        return load_manifest(Path(text))
    raise EntryError(
        f"unknown entry {text!r}: use a built-in bot ({', '.join(BUILT_IN_BOTS)}), "
        "remote, cmd:<command line> or a .toml bot manifest"
    )


def load_manifest(path: Path) -> Entry:
    """A bot manifest: ``name``, ``command``, optional ``workdir`` and ``[limits]``."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EntryError(f"{path}: cannot read bot manifest: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise EntryError(f"{path}: not TOML: {exc}") from None
    unknown = sorted(set(data) - _MANIFEST_KEYS)
    if unknown:
        raise EntryError(f"{path}: unknown key {unknown[0]!r}; keys are {sorted(_MANIFEST_KEYS)}")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise EntryError(f"{path}: key 'name' must be a non-empty string")
    command = data.get("command")
    if isinstance(command, str):
        try:
            argv = tuple(shlex.split(command))
        except ValueError as exc:
            raise EntryError(f"{path}: key 'command': {exc}") from None
    elif isinstance(command, list) and all(isinstance(a, str) for a in command):
        argv = tuple(command)
    else:
        raise EntryError(f"{path}: key 'command' must be a string or a list of strings")
    if not argv:
        raise EntryError(f"{path}: key 'command' is empty")
    base = path.resolve().parent
    workdir = data.get("workdir", ".")
    if not isinstance(workdir, str):
        raise EntryError(f"{path}: key 'workdir' must be a string")
    cwd = (base / workdir).resolve()
    if not cwd.is_dir():
        raise EntryError(f"{path}: key 'workdir': {cwd} is not a folder")
    limits = data.get("limits", {})
    if not isinstance(limits, dict):
        raise EntryError(f"{path}: [limits] must be a table")
    unknown = sorted(set(limits) - set(_LIMITS))
    if unknown:
        raise EntryError(f"{path}: unknown key 'limits.{unknown[0]}'; keys are {sorted(_LIMITS)}")
    values: dict[str, int] = {}
    for key, default in _LIMITS.items():
        value = limits.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise EntryError(f"{path}: key 'limits.{key}' must be a whole number from 1")
        values[key] = value
    argv = (str(_check_program(argv[0], cwd, f"{path}: key 'command'")), *argv[1:])
    return Entry(
        name,
        command=argv,
        cwd=cwd,
        cpu_seconds=values["cpu_seconds"],
        memory_mb=values["memory_mb"],
        file_mb=values["file_mb"],
    )


def _check_program(program: str, cwd: Path | None, where: str) -> str:
    """The program to run, made absolute when it is a relative path; it must exist."""
    if "/" in program:
        path = Path(program)
        if not path.is_absolute() and cwd is not None:
            path = cwd / path
        if not path.exists():
            raise EntryError(f"{where}: program {program!r} not found")
        # abspath, not resolve: a virtualenv's python is a symlink that must stay one.
        return os.path.abspath(path)
    if shutil.which(program) is None:
        raise EntryError(f"{where}: program {program!r} not found on PATH")
    return program


def absolute_paths(argv: tuple[str, ...]) -> tuple[str, ...]:
    """``argv`` with the program and every argument that names an existing file made absolute.

    A bot runs in a folder of its own, so ``cmd:python3 mybot.py`` must still find
    ``mybot.py`` where the user typed it.
    """
    out = []
    for i, arg in enumerate(argv):
        is_path = (i == 0 and "/" in arg) or (i > 0 and not arg.startswith("-"))
        # abspath, not resolve: a virtualenv's python is a symlink that must stay one.
        out.append(os.path.abspath(arg) if is_path and os.path.exists(arg) else arg)
    return tuple(out)


def unique_names(entries: list[Entry]) -> list[str]:
    """Entry names made unique for a table: a repeated name gets -2, -3, ..."""
    seen: dict[str, int] = {}
    out = []
    for entry in entries:
        count = seen.get(entry.name, 0) + 1
        seen[entry.name] = count
        out.append(entry.name if count == 1 else f"{entry.name}-{count}")
    return out
