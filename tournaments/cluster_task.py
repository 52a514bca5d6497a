"""What a Dask worker runs for a tournament on a cluster: one duplicate set, and the check
of its bots before anything is played.

Imported on the workers (by name, from the pickled calls) and on the head; it imports no
Dask at module level, so the head's CLI loads it without loading Dask.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import importlib.metadata
import logging
import os
import shutil
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee import engine
from referee.entries import Entry, EntryError, built_in_bot, parse_entry, program_files
from referee.match.config import MatchConfig
from referee.match.match import Match
from referee.match.results import DealReport, GameReport
from referee.sandbox.bot_process import LogBudget
from referee.sandbox.bwrap import SandboxMode
from referee.sandbox.probe import sandbox_problem
from referee.service.server import Referee, start_referee


class ClusterError(RuntimeError):
    """A tournament cannot go on on its cluster; one line naming the worker and what."""


@dataclass(frozen=True)
class SetOutcome:
    """A duplicate set as a worker played it: what the head stores in one transaction."""

    deals: tuple[DealReport, ...]
    games: tuple[GameReport, ...]
    worker: str
    """The worker's address."""
    folder: str
    """Where its bots' logs are, on that worker's machine."""


@dataclass(frozen=True)
class BotCheck:
    """What a worker must find of one entry: the head's view of it."""

    name: str
    entry: Entry
    programs: tuple[tuple[str, str], ...]
    """(path, SHA-256) of each file, as the head read them (:meth:`TournamentConfig.programs`)."""
    mode: str
    """What it runs under on the head: ``bwrap`` or ``off``."""


def worker_address() -> str:
    """The address of the Dask worker running this call (``local`` outside one)."""
    from distributed import get_worker  # only ever called on a worker

    try:
        return str(get_worker().address)
    except ValueError:  # not in a task: client.run runs it beside the worker
        return "local"


def code_digest() -> str:
    """The tavolo version and a SHA-256 of the rules engine's Python files: the same digest
    on the head and a worker means the same rules, so the same deals and the same results."""
    root = Path(engine.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return f"{importlib.metadata.version('tavolo')}/{digest.hexdigest()[:16]}"


def check_bots(checks: Sequence[BotCheck], head_code: str) -> list[str]:
    """What is wrong here for playing these entries, one line each; empty if nothing is."""
    here = code_digest()
    if here != head_code:
        return [
            f"tavolo here is {here} (version/engine digest), the head's is {head_code}: "
            "install the same tavolo"
        ]
    problems: list[str] = []
    if any(c.mode == SandboxMode.BWRAP for c in checks):
        problem = sandbox_problem()
        if problem is not None:
            problems.append(f"no sandbox can be made: {problem}")
    for check in checks:
        problems += _entry_problems(check)
    return problems


def _entry_problems(check: BotCheck) -> list[str]:
    entry = check.entry
    if entry.built_in:
        try:
            local = on_this_machine(entry)
        except EntryError as exc:
            return [str(exc)]
        # A built-in bot runs from this machine's SDK: the head's file, found where it is here.
        ((_, head_hash),) = check.programs
        (path,) = program_files(local)
        return _file_problems(path, head_hash, f"entry {check.name!r}: built-in bot")
    out = []
    for path, sha in check.programs:
        out += _file_problems(path, sha, f"entry {check.name!r}")
    named = {path for path, _ in check.programs}
    program = entry.command[0]
    if "/" not in program:
        if shutil.which(program) is None:
            out.append(f"{program}: not found on PATH (entry {check.name!r})")
    elif os.path.exists(program):
        if not os.access(program, os.X_OK):
            out.append(f"{program}: not executable (entry {check.name!r})")
        out += _interpreter_problems(program, check.name)
    elif program not in named:
        out.append(f"{program}: missing (entry {check.name!r})")
    if entry.cwd is not None and not entry.cwd.is_dir():
        out.append(f"{entry.cwd}: missing folder (entry {check.name!r}'s workdir)")
    # What its sandbox binds: its interpreter's installation and its folders, among others.
    for path in entry.read_only:
        if not os.path.exists(path) and path not in named:
            out.append(f"{path}: missing (entry {check.name!r} reads it)")
    return out


def _file_problems(path: str, sha: str, who: str) -> list[str]:
    try:
        with open(path, "rb") as file:
            digest = hashlib.file_digest(file, "sha256").hexdigest()
    except FileNotFoundError:
        return [f"{path}: missing ({who})"]
    except OSError as exc:
        return [f"{path}: cannot be read: {exc.strerror} ({who})"]
    if digest != sha:
        return [f"{path}: not the head's file (SHA-256 {digest[:12]}…, the head's {sha[:12]}…)"]
    return []


def _interpreter_problems(program: str, name: str) -> list[str]:
    """A script's ``#!`` interpreter must be here too."""
    try:
        with open(program, "rb") as file:
            first = file.readline(256)
    except OSError as exc:
        return [f"{program}: cannot be read: {exc.strerror} (entry {name!r})"]
    if not first.startswith(b"#!"):
        return []
    words = first[2:].decode(errors="replace").split()
    if not words:
        return [f"{program}: its #! line names no interpreter (entry {name!r})"]
    interpreter = words[0]
    if os.path.basename(interpreter) == "env" and len(words) > 1:
        if shutil.which(words[1]) is None:
            return [f"{program}: its interpreter {words[1]} is not on PATH (entry {name!r})"]
        return []
    if not os.access(interpreter, os.X_OK):
        return [f"{program}: its interpreter {interpreter} is missing (entry {name!r})"]
    return []


def on_this_machine(entry: Entry) -> Entry:
    """``entry`` as this machine runs it: a built-in bot from this Python and its SDK (the
    head's paths may not exist here); any other entry as it is."""
    if not entry.built_in:
        return entry
    name = built_in_bot(entry)
    assert name is not None, entry.command
    return dataclasses.replace(parse_entry(name), name=entry.name)


_budgets: dict[str, LogBudget] = {}
_lock = threading.Lock()


def _budget(root: Path, total_mb: int) -> LogBudget:
    """One log budget per logs folder for this worker process, counted once from what the
    folder holds: every set this worker plays into it shares it."""
    with _lock:
        key = str(root)
        if key not in _budgets:
            root.mkdir(mode=0o700, parents=True, exist_ok=True)
            used = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
            _budgets[key] = LogBudget(total_mb, used)
        return _budgets[key]


def free_folder(folder: Path) -> Path:
    """``folder``, or ``folder-run-N`` for the first N that is free, made now: a set played
    again (its worker died) keeps the earlier logs as they were."""
    folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    out, run = folder, 1
    while True:
        try:
            out.mkdir(mode=0o700)
            return out
        except FileExistsError:
            run += 1
            out = folder.with_name(f"{folder.name}-run-{run}")


_checked: dict[tuple[tuple[BotCheck, ...], str], list[str]] = {}
"""What :func:`check_bots` found in this worker process, for each tournament's bots."""


def checked_once(checks: tuple[BotCheck, ...], head_code: str) -> list[str]:
    """:func:`check_bots`, run once per worker process: a worker that joins during a run
    is checked at its first set."""
    with _lock:
        key = (checks, head_code)
        if key not in _checked:
            _checked[key] = check_bots(checks, head_code)
        return _checked[key]


def play_set(
    config: MatchConfig,
    games: Sequence[int],
    checks: tuple[BotCheck, ...],
    head_code: str,
    folder: str,
    logs: tuple[str, int],
) -> SetOutcome:
    """Play ``games`` (one duplicate set's) at a referee of this worker's own, with each
    entry confined as ``checks`` says it is on the head, once this worker passes them
    (:func:`check_bots`). Its bots' logs go in ``folder`` (or ``folder-run-N``), within
    the logs folder and cap ``logs`` (path, MB)."""
    problems = checked_once(checks, head_code)
    if problems:
        raise ClusterError(f"worker {worker_address()}: {problems[0]}")
    modes = {c.name: c.mode for c in checks}
    try:
        return _play_set(config, games, modes, Path(folder), logs)
    except ClusterError:
        raise
    except Exception as exc:
        # The head shows one line: which worker, and what; the worker's log has the rest.
        raise ClusterError(f"worker {worker_address()}: {folder}: {exc}") from exc


def _play_set(
    config: MatchConfig,
    games: Sequence[int],
    modes: Mapping[str, str],
    folder: Path,
    logs: tuple[str, int],
) -> SetOutcome:
    entries = []
    for entry in config.entries:
        local = on_this_machine(entry)
        if modes[entry.name] == SandboxMode.OFF:
            local = dataclasses.replace(local, sandbox=SandboxMode.OFF)
        elif local.built_in and sandbox_problem() is not None:
            # A built-in bot would run unconfined here while the head's table says bwrap.
            raise ClusterError(f"worker {worker_address()}: no sandbox: {sandbox_problem()}")
        entries.append(local)
    config = dataclasses.replace(config, entries=tuple(entries))
    budget = _budget(Path(logs[0]), logs[1])
    loop, referee = _referee()
    played = asyncio.run_coroutine_threadsafe(_play(referee, config, games, folder, budget), loop)
    deals, reports, where = played.result()
    return SetOutcome(tuple(deals), tuple(reports), worker_address(), str(where))


_loop_and_referee: tuple[asyncio.AbstractEventLoop, Referee] | None = None


def _referee() -> tuple[asyncio.AbstractEventLoop, Referee]:
    """This worker process's referee, on loopback, and the event loop it runs on in a
    thread of its own: every set the worker plays, at once or in turn, has a table there.

    Started once: a referee's start costs about as much as a game. The thread lives as
    long as the process, so the bots it starts (which die with their parent thread) stay.
    """
    global _loop_and_referee
    with _lock:
        if _loop_and_referee is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="tavolo-referee", daemon=True).start()
            referee = asyncio.run_coroutine_threadsafe(start_referee("127.0.0.1:0"), loop)
            _loop_and_referee = loop, referee.result()
        return _loop_and_referee


KEEP_IDLE = 8
"""Kept matches a worker process holds with no set to play, at most; the longest idle
one closes first."""
IDLE_SECONDS = 60.0
"""A kept match with no set for this long closes (its head may be gone)."""


@dataclass(eq=False)
class _Kept:
    """A match whose bot processes play one set after another of it on this worker."""

    key: str
    """Its key in ``_kept``."""
    config: MatchConfig
    match: Match
    folder: Path
    """Its bots' logs, for every set it plays: the folder of the first."""
    deals: list[DealReport] = dataclasses.field(default_factory=list)
    reports: list[GameReport] = dataclasses.field(default_factory=list)
    busy: bool = True
    idle_since: float = 0.0


_kept: dict[str, list[_Kept]] = {}
"""The match's logs folder on the head -> its kept matches here; only the referee's loop
touches it."""
_logger = logging.getLogger("tavolo.cluster")


async def _play(
    referee: Referee, config: MatchConfig, games: Sequence[int], folder: Path, budget: LogBudget
) -> tuple[list[DealReport], list[GameReport], Path]:
    """Play ``games`` on an idle kept match of the same config, or on a new one kept
    afterwards: a match's bots start once per worker, not once per set (no process plays
    two games of a deal either way: each plays one arrangement of every set)."""
    key = str(folder.parent)
    pool = _kept.setdefault(key, [])
    kept = next((k for k in pool if not k.busy and k.config == config), None)
    if kept is None:
        where = free_folder(folder)
        deals: list[DealReport] = []
        reports: list[GameReport] = []
        match = Match(
            referee,
            config,
            workdir=where,
            log_budget=budget,
            on_deal_recorded=deals.append,
            on_game_recorded=reports.append,
        )
        kept = _Kept(key, config, match, where, deals, reports)
        pool.append(kept)
        try:
            await match.open()
        except BaseException:
            await _close_kept(kept, played=False)
            raise
    kept.busy = True
    kept.deals.clear()
    kept.reports.clear()
    try:
        await kept.match.play(games, keep=True)
    except BaseException:
        await _close_kept(kept, played=False)
        raise
    out = list(kept.deals), list(kept.reports), kept.folder
    if kept.match.all_alive():
        kept.busy = False
        kept.idle_since = time.monotonic()
        _ensure_reaper()
    else:
        # A process that exited (and was started again, or not) is not carried into
        # another set: the next starts from fresh processes, as a set of its own would.
        await _close_kept(kept)
    await _close_beyond(KEEP_IDLE)
    return out


async def _close_kept(kept: _Kept, *, played: bool = True) -> None:
    """Forget ``kept`` and close its match (MatchOver first if it was ``played``)."""
    _detach(kept)
    await kept.match.close(played=played)


def _detach(kept: _Kept) -> None:
    pool = _kept.get(kept.key, [])
    if kept in pool:
        pool.remove(kept)
    if not pool:
        _kept.pop(kept.key, None)


async def _close_idle(stale: list[_Kept]) -> None:
    """Close these idle kept matches, each forgotten first, before any close is awaited
    (meanwhile a set could take one of them)."""
    for kept in stale:
        _detach(kept)
    await asyncio.gather(*(kept.match.close() for kept in stale))


async def _close_beyond(keep: int, idle: float = 0.0) -> None:
    """Close the idle kept matches beyond the ``keep`` newest, and any idle ``idle``
    seconds or more (0: none for that)."""
    now = time.monotonic()
    idle_ones = sorted(
        (k for pool in _kept.values() for k in pool if not k.busy), key=lambda k: k.idle_since
    )
    stale = idle_ones[: max(0, len(idle_ones) - keep)]
    if idle:
        stale += [k for k in idle_ones if now - k.idle_since >= idle and k not in stale]
    await _close_idle(stale)


_reaper: asyncio.Task[None] | None = None


def _ensure_reaper() -> None:
    """Run the task that closes kept matches idle for IDLE_SECONDS, if none runs."""
    global _reaper
    if _reaper is None or _reaper.done():
        _reaper = asyncio.ensure_future(_reap())
        _reaper.add_done_callback(_report_failure)


async def _reap() -> None:
    while any(not k.busy for pool in _kept.values() for k in pool):
        await asyncio.sleep(IDLE_SECONDS / 4)
        await _close_beyond(KEEP_IDLE, IDLE_SECONDS)


def _report_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        _logger.error("closing kept matches failed", exc_info=task.exception())


def forget_match(folder: str) -> int:
    """Close this worker's idle kept matches of the match whose logs are in ``folder``
    (its sets are all played); the number closed. Run on every worker by the head."""
    if _loop_and_referee is None:
        return 0
    loop, _ = _loop_and_referee

    async def close() -> int:
        idle = [k for k in _kept.get(folder, []) if not k.busy]
        await _close_idle(idle)
        return len(idle)

    return asyncio.run_coroutine_threadsafe(close(), loop).result()
