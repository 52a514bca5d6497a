"""Match entries: a built-in bot, a command in any language, a Python bot (``py:``), a TOML
manifest, or remote."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import re
import shlex
import shutil
import sys
import tomllib
from dataclasses import dataclass
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path

from referee.sandbox.bwrap import PATH_INSIDE, SandboxMode, under_runtime

BUILT_IN_BOTS = {
    "random": "tavolo_bot.bots.random",
    "heuristic": "tavolo_bot.bots.heuristic",
    "pimc": "referee.bots.pimc",
}
"""Built-in bots and the module each runs as (``pimc`` searches with the engine, so it is
the referee's; the others are the SDK's)."""

OPENSPIEL_BOTS = {"openspiel:ismcts": "referee.research.openspiel_bot"}
"""Entries that play an algorithm of OpenSpiel, and the module each runs as: the referee's,
like pimc, and needing the ``research`` extra (OpenSpiel and numpy) besides."""
OPENSPIEL_INSTALL = "pip install 'tavolo[research]'"
"""How OpenSpiel is installed for the OpenSpiel entries."""

SEARCH_BOT_PARTS = ("bots", "search", "engine", "families")
"""The folders of ``referee`` whose files make a built-in bot of the referee's (pimc): its
search plays by the engine and every family's rules."""

DEFAULT_CPU_SECONDS = 600
DEFAULT_MEMORY_MB = 2048
DEFAULT_FILE_MB = 256
"""The largest file a bot process may write."""
DEFAULT_DISK_MB = 256
"""A sandbox's work folder, ``/tmp`` and ``/dev/shm`` together (one tmpfs)."""
DEFAULT_PROCESSES = 64
"""Processes and threads a sandboxed bot may have at once."""
DEFAULT_LOG_MB = 32
"""What the referee keeps of each of a bot process's stdout and stderr."""
_MANIFEST_KEYS = {"name", "command", "workdir", "limits", "read_only", "sandbox", "build"}
"""``build`` is the arena's (tournaments/arena/builds.py): a match runs what was built."""
_LIMITS = {
    "cpu_seconds": DEFAULT_CPU_SECONDS,
    "memory_mb": DEFAULT_MEMORY_MB,
    "file_mb": DEFAULT_FILE_MB,
    "disk_mb": DEFAULT_DISK_MB,
    "processes": DEFAULT_PROCESSES,
    "log_mb": DEFAULT_LOG_MB,
}


PYTHON_RUNNER = "tavolo_bot.py_entry"
"""The SDK's module that plays a ``py:`` entry's function or bot as a process."""

_SDK_MODULES = frozenset({"tavolo_bot", "grpc", "google"})
"""What the SDK's runner imports before a ``py:`` entry's module: names a bot's own module
cannot take."""


class EntryError(ValueError):
    """An entry that names no bot, or a manifest that is wrong; says where."""


@dataclass(frozen=True)
class PythonTarget:
    """What a ``py:`` entry plays: a name in a Python module, found without running it."""

    module: str
    """The dotted module path, as written."""
    name: str
    """The function or bot in it."""
    file: str
    """The module's source file (for a package, its ``__init__.py``)."""
    roots: tuple[str, ...]
    """The folders the module is imported from: put first on ``sys.path``."""


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
    disk_mb: int = DEFAULT_DISK_MB
    processes: int = DEFAULT_PROCESSES
    log_mb: int = DEFAULT_LOG_MB
    read_only: tuple[str, ...] = ()
    """Host paths a sandboxed process may read: its program, interpreter and folder."""
    sandbox: SandboxMode | None = None
    """What the manifest asks for; None leaves it to the match (bwrap by default)."""
    built_in: bool = False
    """One of :data:`BUILT_IN_BOTS`: may run unconfined where bubblewrap is missing."""
    manifest: str | None = None
    """The absolute path of the manifest the entry was read from, if any."""
    file_locks: bool = False
    """May lock files in its sandbox: an arena's build (tournaments/arena/builds.py), never a
    bot (:func:`referee.sandbox.seccomp.seccomp_program`)."""
    python: PythonTarget | None = None
    """A ``py:`` entry's function or bot, which its command plays with the SDK."""
    program_on_path: bool = False
    """Its program was named bare (``python3``) and found on PATH: the machine's."""


def built_in_bot(entry: Entry) -> str | None:
    """Which of :data:`BUILT_IN_BOTS` ``entry`` runs, whatever its name; None for another."""
    if not entry.built_in or not entry.command:
        return None
    bots = {**BUILT_IN_BOTS, **OPENSPIEL_BOTS}
    modules = {module: name for name, module in bots.items()}
    return modules.get(entry.command[-1])


def parse_entry(text: str, *, folder: Path | None = None) -> Entry:
    """An entry from its command-line form.

    ``random``, ``heuristic`` or ``pimc`` (built in), ``openspiel:ismcts`` (built in, with
    the research extra), ``remote``, ``cmd:<command line>``,
    ``py:MODULE:NAME`` (:func:`python_entry`: the module is looked for in ``folder``, by
    default the current folder, then on ``sys.path``), or the path of a ``.toml`` bot
    manifest.
    """
    if text in BUILT_IN_BOTS:
        module = BUILT_IN_BOTS[text]
        folders = [sdk_folder()]
        if module.startswith("referee."):
            folders.append(package_folder("referee"))
        return Entry(
            text,
            command=(sys.executable, "-m", module),
            read_only=(*python_paths(sys.executable, editable=False), *folders),
            built_in=True,
        )
    if text in OPENSPIEL_BOTS:
        return openspiel_entry(text)
    if text == "remote":
        return Entry("remote", remote=True)
    if text.startswith("cmd:"):
        try:
            argv = tuple(shlex.split(text[4:]))
        except ValueError as exc:
            raise EntryError(f"entry {text!r}: bad command line ({exc})") from None
        if not argv:
            raise EntryError(f"entry {text!r}: the command is empty")
        program = _check_program(argv[0], None, f"entry {text!r}")
        on_path = "/" not in argv[0]
        argv = (program, *absolute_paths(argv)[1:])
        name = check_name(Path(argv[0]).name, f"entry {printable(text)!r}")
        return Entry(
            name, command=argv, read_only=tuple(program_paths(argv)), program_on_path=on_path
        )
    if text.startswith("py:"):
        return python_entry(text, Path.cwd() if folder is None else folder)
    if text.endswith(".toml"):
        return load_manifest(Path(text))
    raise EntryError(
        f"unknown entry {text!r}: use a built-in bot ({', '.join(BUILT_IN_BOTS)}), "
        f"{', '.join(OPENSPIEL_BOTS)}, "
        "remote, cmd:<command line>, py:MODULE:NAME or a .toml bot manifest"
    )


def openspiel_entry(text: str) -> Entry:
    """An entry of :data:`OPENSPIEL_BOTS` at its default knobs, run as pimc is, its sandbox
    reading this Python (its site-packages hold OpenSpiel), the SDK and the referee;
    EntryError saying how to install OpenSpiel where this Python cannot import it."""
    # Found, not imported: tavolo starts without the research extra.
    if importlib.util.find_spec("pyspiel") is None:
        raise EntryError(
            f"entry {text!r} needs OpenSpiel, which this Python ({sys.executable}) cannot "
            f"import: {OPENSPIEL_INSTALL}"
        )
    return Entry(
        text.partition(":")[2],
        command=(sys.executable, "-m", OPENSPIEL_BOTS[text]),
        read_only=(
            *python_paths(sys.executable, editable=False),
            sdk_folder(),
            package_folder("referee"),
        ),
        built_in=True,
    )


def python_entry(text: str, folder: Path) -> Entry:
    """A ``py:MODULE:NAME`` entry: the SDK's runner (:data:`PYTHON_RUNNER`) playing ``NAME``
    of ``MODULE``, with this Python.

    The module is found, not run: in ``folder``, then on ``sys.path``; ``NAME`` must be
    defined at the top of its source. The entry is named ``NAME``. Its sandbox may read this
    Python and its SDK and, of the module, its file when it stands alone, or its top
    package's folder when it belongs to a package.
    """
    where = f"entry {printable(text)!r}"
    module, colon, name = text.removeprefix("py:").partition(":")
    if not colon or not all(p.isidentifier() for p in module.split(".")) or not name.isidentifier():
        raise EntryError(
            f"{where}: write py:MODULE:NAME, a dotted module path, a colon and a function or "
            "bot in it (py:mybots.greedy:choose)"
        )
    file, roots, readable = find_module(module, folder.resolve(), where)
    _check_defines(file, name, where)
    paths = [arg for root in roots for arg in ("--path", root)]
    return Entry(
        check_name(name, where),
        command=(sys.executable, "-m", PYTHON_RUNNER, *paths, f"{module}:{name}"),
        read_only=(*program_paths((sys.executable,)), sdk_folder(), *readable),
        python=PythonTarget(module, name, file, roots),
    )


def find_module(module: str, folder: Path, where: str) -> tuple[str, tuple[str, ...], list[str]]:
    """(source file, folders to import from, what a sandbox must read) of ``module``, found
    in ``folder`` and then where this Python's imports look, without running any of it."""
    top, *parts = module.split(".")
    spec = PathFinder.find_spec(top, [str(folder)])
    if spec is not None and (top in sys.stdlib_module_names or top in _SDK_MODULES):
        # The SDK's runner has imported those before the bot's module: it would get them.
        raise EntryError(
            f"{where}: {top!r} in {folder} has the name of a module of the standard library "
            "or of the SDK; give the bot's module another name"
        )
    spec = spec or _importable(top, where)
    if spec is None:
        raise EntryError(f"{where}: no module {top!r} in {folder} or on this Python's path")
    roots: tuple[str, ...]
    if spec.submodule_search_locations is None:
        origin = _source(spec, where)
        readable, roots = [origin], (os.path.dirname(origin),)
    else:
        readable = [os.path.realpath(p) for p in spec.submodule_search_locations]
        roots = tuple(dict.fromkeys(os.path.dirname(p) for p in readable))
    for part in parts:
        found = spec.name
        if spec.submodule_search_locations is None:
            raise EntryError(f"{where}: {found} is a module, not a package: it has no {part!r}")
        spec = PathFinder.find_spec(f"{found}.{part}", list(spec.submodule_search_locations))
        if spec is None:
            raise EntryError(f"{where}: package {found} has no module {part!r}")
    return _source(spec, where), roots, readable


def _importable(top: str, where: str) -> ModuleSpec | None:
    """How this Python would import the top-level module ``top`` (its path, or a finder of
    an editable install); finding a top-level module runs none of its code."""
    try:
        return importlib.util.find_spec(top)
    except (ImportError, ValueError) as exc:
        raise EntryError(f"{where}: cannot look for module {top!r}: {exc}") from None


def _source(spec: ModuleSpec, where: str) -> str:
    """The Python source file of ``spec``'s module."""
    origin = spec.origin
    if origin is None or (spec.submodule_search_locations is not None and not spec.has_location):
        raise EntryError(f"{where}: {spec.name} is a folder without __init__.py: it has no names")
    if not spec.has_location or not origin.endswith(".py"):
        raise EntryError(f"{where}: {spec.name} is {origin}, not Python source (.py)")
    return os.path.realpath(origin)


def _check_defines(file: str, name: str, where: str) -> None:
    """``name`` must be bound at the top of the module ``file`` (def, class, assignment or
    import, also under an ``if`` or ``try``); a ``from ... import *`` is taken at its word."""
    try:
        tree = ast.parse(Path(file).read_bytes(), file)
    except OSError as exc:
        raise EntryError(f"{where}: cannot read {file}: {exc.strerror}") from None
    except (SyntaxError, ValueError) as exc:
        raise EntryError(f"{where}: {file} is not valid Python: {exc}") from None
    bound: set[str] = set()
    statements = list(tree.body)
    while statements:
        node = statements.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Assign):
            bound.update(n for target in node.targets for n in _assigned(target))
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            bound.update(_assigned(node.target))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    return
                bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.If | ast.Try | ast.TryStar | ast.With):
            for block in ("body", "orelse", "finalbody", "handlers"):
                statements.extend(getattr(node, block, []))
        elif isinstance(node, ast.ExceptHandler):
            statements.extend(node.body)
    if name not in bound:
        raise EntryError(
            f"{where}: {file} defines no {name!r} at its top (no def, class, assignment "
            "or import of it)"
        )


def _assigned(target: ast.expr) -> list[str]:
    """The names an assignment to ``target`` binds (``a``, ``a, b``, ``*rest``)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [n for item in target.elts for n in _assigned(item)]
    if isinstance(target, ast.Starred):
        return _assigned(target.value)
    return []  # an attribute or an item: no name of the module's


MAX_NAME = 64
"""The longest entry name."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with every control character (C0, DEL, C1, so ESC sequences too) escaped as
    ``\\xNN``, for showing bot-supplied text (names, stderr tails) on a terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def check_name(name: str, where: str) -> str:
    """``name`` if it is printable text of 1 to :data:`MAX_NAME` characters."""
    if not name or len(name) > MAX_NAME or _CONTROL.search(name) or not name.isprintable():
        raise EntryError(
            f"{where}: name '{printable(name)}' must be 1 to {MAX_NAME} printable characters"
        )
    return name


def _inside(path: str, folders: tuple[str, ...]) -> bool:
    real = os.path.realpath(path)
    return any(real == f or real.startswith(f.rstrip("/") + "/") for f in folders)


def manifest_argv(value: object, where: str) -> tuple[str, ...]:
    """A manifest's command line: a list of strings, or a string split as a shell would
    (never run by one); EntryError, starting with ``where``, if it is neither or empty."""
    if isinstance(value, str):
        try:
            argv = tuple(shlex.split(value))
        except ValueError as exc:
            raise EntryError(f"{where}: {exc}") from None
    elif isinstance(value, list) and all(isinstance(a, str) for a in value):
        argv = tuple(value)
    else:
        raise EntryError(f"{where} must be a string or a list of strings")
    if not argv:
        raise EntryError(f"{where} is empty")
    return argv


def load_manifest(path: Path, *, allow: tuple[str | Path, ...] = ()) -> Entry:
    """A bot manifest: ``name``, ``command``, optional ``workdir`` and ``[limits]``.

    Every path it names (the program, arguments naming files, ``workdir``, ``read_only``)
    must stay inside the manifest's folder once links are followed, or inside a folder of
    ``allow`` (the organiser's, never the entrant's). The program may also be a system
    runtime (found on PATH, or under the sandbox's runtime folders) or this Python. A
    manifest with ``sandbox = "off"`` is not held to its folder: nothing is bound for it.
    """
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
    check_name(name, f"{path}: key 'name'")
    argv = manifest_argv(data.get("command"), f"{path}: key 'command'")
    base = path.resolve().parent
    folders = (str(base), *(os.path.realpath(a) for a in allow))

    # Paths are what a sandbox binds: a manifest that asks for none (refused in a
    # tournament unless its organiser runs every bot unconfined) reads what it likes anyway.
    confined = data.get("sandbox") != SandboxMode.OFF.value

    def contain(key: str, item: str, full: str) -> None:
        if confined and not _inside(full, folders):
            raise EntryError(
                f"{path}: key {key!r}: {printable(item)!r} leads out of the manifest's "
                f"folder {base}"
            )

    workdir = data.get("workdir", ".")
    if not isinstance(workdir, str):
        raise EntryError(f"{path}: key 'workdir' must be a string")
    cwd = (base / workdir).resolve()
    contain("workdir", workdir, str(cwd))
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
    # Paths start from the manifest's folder, as a cmd: line's start where it was typed.
    program = _check_program(argv[0], base, f"{path}: key 'command'")
    # A program named by a path is held to the manifest's folder; one found on PATH is not.
    if "/" in argv[0] and not under_runtime(program) and not _same_file(program, sys.executable):
        contain("command", argv[0], program)
    written = argv
    argv = (program, *(_from_folder(arg, base) for arg in argv[1:]))
    for arg, full in zip(written[1:], argv[1:], strict=True):
        if os.path.isabs(full) and os.path.exists(full) and not under_runtime(full):
            contain("command", arg, full)
    read_only = data.get("read_only", [])
    if not isinstance(read_only, list) or not all(isinstance(p, str) for p in read_only):
        raise EntryError(f"{path}: key 'read_only' must be a list of paths")
    extra = []
    for item in read_only:
        full = (base / item).resolve()
        contain("read_only", item, str(full))
        if not full.exists():
            raise EntryError(f"{path}: key 'read_only': {item!r} ({full}) does not exist")
        extra.append(str(full))
    sandbox = data.get("sandbox")
    if sandbox is not None and sandbox not in {m.value for m in SandboxMode}:
        choices = ", ".join(repr(m.value) for m in SandboxMode)
        raise EntryError(f"{path}: key 'sandbox' must be {choices}, not {sandbox!r}")
    return Entry(
        name,
        command=argv,
        cwd=cwd,
        cpu_seconds=values["cpu_seconds"],
        memory_mb=values["memory_mb"],
        file_mb=values["file_mb"],
        disk_mb=values["disk_mb"],
        processes=values["processes"],
        log_mb=values["log_mb"],
        read_only=(str(base), str(cwd), *program_paths(argv), *extra),
        sandbox=None if sandbox is None else SandboxMode(sandbox),
        manifest=str(path.resolve()),
        program_on_path="/" not in written[0],
    )


def _same_file(a: str, b: str) -> bool:
    """Whether ``a`` is ``b`` (this Python), as named or once links are followed."""
    return os.path.abspath(a) == os.path.abspath(b) or os.path.realpath(a) == os.path.realpath(b)


def _from_folder(arg: str, base: Path) -> str:
    """A manifest's argument made absolute when it names something in or from ``base``."""
    if arg.startswith("-") or os.path.isabs(arg) or not (base / arg).exists():
        return arg
    # abspath, not resolve: as the program, a link named by the manifest stays a link.
    return os.path.abspath(base / arg)


def _check_program(program: str, folder: Path | None, where: str) -> str:
    """The program to run: a relative path made absolute (from ``folder`` if given); a
    bare name as found on this PATH, absolute where a sandbox's PATH would find another
    program or none and it is no script. It must exist."""
    if "/" in program:
        path = Path(program)
        if not path.is_absolute() and folder is not None:
            path = folder / path
        if not path.exists():
            raise EntryError(f"{where}: program {program!r} not found")
        # abspath, not resolve: a virtualenv's python is a symlink that must stay one.
        return os.path.abspath(path)
    found = shutil.which(program)
    if found is None:
        raise EntryError(f"{where}: program {program!r} not found on PATH")
    # The bot runs the program found here. A sandbox's PATH is the system's alone: there
    # "python" of a virtualenv is the system's, without its packages, or nothing at all.
    # But a script found here (a shim of pyenv or asdf) picks its program by settings
    # no sandbox has: the sandbox's own is run then.
    if shutil.which(program, path=PATH_INSIDE) == found or _is_script(found):
        return program
    return os.path.abspath(found)


def _is_script(path: str) -> bool:
    """Whether ``path`` (links followed) starts with ``#!``."""
    try:
        with open(path, "rb") as file:
            return file.read(2) == b"#!"
    except OSError:
        return False


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


def sdk_folder() -> str:
    """The folder of the Python SDK's package, which the built-in bots run from.

    The ``tavolo`` distribution ships the package (``tavolo_bot``, from clients/python): in
    site-packages after ``pip install .``, the source folder after ``pip install -e .``.
    """
    try:
        return package_folder("tavolo_bot")  # found, not imported
    except EntryError:
        raise EntryError(
            "the built-in bots need the Python SDK (the tavolo_bot package), which this "
            f"Python ({sys.executable}) cannot import: reinstall tavolo (pip install .), "
            "which ships it"
        ) from None


def package_folder(name: str) -> str:
    """The folder of an installed package of the tavolo distribution (``referee``), which
    a built-in bot that imports it must be able to read."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise EntryError(f"this Python ({sys.executable}) cannot import {name}: reinstall tavolo")
    return str(Path(spec.origin).resolve().parent)


def program_paths(argv: tuple[str, ...]) -> list[str]:
    """What a sandbox must let ``argv`` read: the program (and its target, if a link), a
    Python interpreter's installation, and every argument that names a file."""
    program = argv[0] if "/" in argv[0] else shutil.which(argv[0])
    out: list[str] = []
    if program is not None:
        program = os.path.abspath(program)
        out += [program, os.path.realpath(program), *python_paths(program)]
    # Absolute only: parse_entry and load_manifest made absolute what they resolved, and a
    # relative name left over must not reach a file of wherever the referee runs.
    out += [a for a in argv[1:] if os.path.isabs(a) and os.path.isfile(a)]
    return out


def program_files(entry: Entry) -> list[str]:
    """The files that make what ``entry`` runs, as absolute paths: a built-in bot's module,
    a ``py:`` entry's module, a manifest and the files its command names, a ``cmd:`` program
    and the files it names.

    A program found on PATH (``python3``) is the machine's, not the entry's: left out, as
    are folders and files the bot opens without naming them on its command line.
    """
    if entry.remote:
        return []
    if entry.python is not None:
        return [entry.python.file]  # run by this Python, as a built-in bot is
    if entry.built_in:
        # Its command ends with the module (-m); an in-process entry has no command.
        module = entry.command[-1] if entry.command else BUILT_IN_BOTS[entry.name]
        sdk = Path(sdk_folder())
        if not module.startswith("referee."):
            return [str(sdk / (module.removeprefix("tavolo_bot.").replace(".", "/") + ".py"))]
        # A searching bot plays by the engine's rules, its search and the heuristic's
        # choices (pimc): a change to any of them changes what it plays. An OpenSpiel bot
        # also plays by the research package's game and worlds.
        parts: tuple[str, ...] = SEARCH_BOT_PARTS
        if module in OPENSPIEL_BOTS.values():
            parts = (*parts, "research")
        referee = Path(package_folder("referee"))
        files = [p for part in parts for p in sorted((referee / part).rglob("*.py"))]
        return [*map(str, files), str(sdk / "bots" / "heuristic.py")]
    out = [entry.manifest] if entry.manifest is not None else []
    named_by_entry = entry.command[1:] if entry.program_on_path else entry.command
    named = [a for a in named_by_entry if os.path.isabs(a) and os.path.isfile(a)]
    return out + [a for a in named if a not in out]


def program_hashes(entry: Entry) -> dict[str, str]:
    """The SHA-256 of each of :func:`program_files`, by path."""
    out = {}
    for name in program_files(entry):
        digest = hashlib.sha256()
        try:
            with open(name, "rb") as file:
                while block := file.read(1 << 20):
                    digest.update(block)
        except OSError as exc:
            raise EntryError(f"entry {entry.name!r}: cannot read {name}: {exc.strerror}") from None
        out[name] = digest.hexdigest()
    return out


_MAPPING = re.compile(r"^MAPPING\b[^=]*=\s*(\{.*\})\s*$", re.MULTILINE)


def python_paths(program: str, *, editable: bool = True) -> list[str]:
    """A Python interpreter's own files: its virtual environment and that venv's base
    installation, or the prefix it is installed in; with ``editable``, also the sources
    of the packages installed into the venv in editable mode."""
    path = Path(program)
    if not path.name.startswith("python"):
        return []
    venv = path.parent.parent
    config = venv / "pyvenv.cfg"
    if not config.is_file():
        real = Path(os.path.realpath(program))
        return [str(real.parent.parent)] if real.parent.name == "bin" else []
    out = [str(venv)]
    for line in config.read_text(encoding="utf-8", errors="replace").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            home = Path(value.strip())
            out.append(str(home.parent if home.name == "bin" else home))
    if editable:
        for site in venv.glob("lib/python*/site-packages"):
            for finder in site.glob("__editable__*finder.py"):
                found = _MAPPING.search(finder.read_text(encoding="utf-8", errors="replace"))
                if found:
                    with_paths = ast.literal_eval(found.group(1))
                    out += [p for p in with_paths.values() if os.path.isabs(p)]
            for pth in site.glob("*.pth"):
                for line in pth.read_text(encoding="utf-8", errors="replace").splitlines():
                    if os.path.isabs(line.strip()) and os.path.isdir(line.strip()):
                        out.append(line.strip())
    return out


def unique_names(entries: list[Entry]) -> list[str]:
    """Entry names made unique for a table: a repeated name gets -2, -3, ..."""
    seen: dict[str, int] = {}
    out = []
    for entry in entries:
        count = seen.get(entry.name, 0) + 1
        seen[entry.name] = count
        out.append(entry.name if count == 1 else f"{entry.name}-{count}")
    return out
