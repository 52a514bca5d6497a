"""Bot processes: each in a sandbox of its own (or unconfined), logs kept outside; reaped."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from referee import grpc_transport
from referee.entries import Entry, printable
from referee.sandbox.bwrap import (
    SOCKET_INSIDE,
    Confinement,
    SandboxError,
    SandboxMode,
    bwrap_argv,
    inside_env,
    process_cap,
    running_as_root,
)
from referee.sandbox.cgroups import SandboxCgroups
from referee.sandbox.seccomp import seccomp_program
from referee.sandbox.uids import (
    UidLease,
    forbid_user_namespaces,
    lease_uid,
    map_user_namespace,
)

STDERR_TAIL_LINES = 20
_TAIL_BYTES = 8 * 1024
"""What is kept in memory of the end of each process's stderr, whatever its log keeps."""
_READ_CHUNK = 64 * 1024
_EXIT_POLL = 0.05
"""Seconds between looks at whether a bot process has exited."""
_DRAIN_AFTER_EXIT = 2.0
"""Seconds to wait, after the process exits, for the last of its output."""


class LogBudget:
    """A cap on what all the bot processes of a run write into their logs together.

    Each stream's log keeps up to its entry's ``log_mb`` as long as the budget lasts; once
    it is spent, every log that would grow is cut with a line saying so, and later output
    is read and dropped. The end of each process's stderr is kept in memory all the same,
    so fault lines still quote it.
    """

    def __init__(self, total_mb: int, used: int = 0) -> None:
        """A cap of ``total_mb``, of which ``used`` bytes are taken already (older logs)."""
        if total_mb < 1:
            raise ValueError(f"the logs' total cap must be 1 MB or more, got {total_mb}")
        self.total_mb = total_mb
        self.left = max(0, total_mb * 2**20 - used)

    def take(self, wanted: int) -> int:
        """Bytes of ``wanted`` that may still be written."""
        granted = min(wanted, self.left)
        self.left -= granted
        return granted

    async def grant(self, wanted: int) -> int:
        """:meth:`take`, awaited: a budget borrowed from elsewhere (a shard's from its head)
        may have to ask for more first."""
        return self.take(wanted)


GLIBC_FUTEX_ABORT = "The futex facility returned an unexpected error code."
"""What the C library prints as it aborts on a refused futex call (referee.sandbox.seccomp)."""


@dataclass
class BotProcess:
    """One running bot process."""

    label: str
    workdir: Path
    """The host folder of its logs (``stdout.log``, ``stderr.log``); never visible to a
    sandboxed bot."""
    process: asyncio.subprocess.Process
    sandbox: SandboxMode
    cgroup: SandboxCgroups | None = None
    sandbox_pid: int | None = None
    """The host pid of the sandbox's first process (bwrap's ``--info-fd``): every process
    of the bot descends from it."""
    frozen: bool = False
    uid: UidLease | None = None
    """A root referee's sandbox: the host uid its bot runs as, leased until it is reaped."""
    exit_note: str | None = None
    """Set once the process has exited: how, where its stderr is kept, and its end,
    e.g. ``exit status 1; log /x/0-0/stderr.log; stderr ends:\n...`` (see :meth:`watch`)."""
    _copiers: list[asyncio.Task[None]] = field(default_factory=list)
    _tail: bytearray = field(default_factory=bytearray)
    """The end of its stderr as read (up to ``_TAIL_BYTES``), kept whatever the log keeps."""

    @property
    def stderr_path(self) -> Path:
        """The process's stderr log."""
        return self.workdir / "stderr.log"

    def stderr_tail(self, lines: int = STDERR_TAIL_LINES) -> str:
        """The last lines of the process's stderr, as read so far, each with its control
        characters escaped (a bot's text must not drive the organiser's terminal)."""
        text = self._tail.decode("utf-8", errors="replace")
        if len(self._tail) >= _TAIL_BYTES:
            text = text.partition("\n")[2]  # the first line is likely cut: drop it
        return "\n".join(printable(line) for line in text.splitlines()[-lines:])

    async def exited(self) -> int:
        """The process's exit status, once it has exited (:func:`exit_status`)."""
        return await exit_status(self.process)

    async def watch(self) -> str:
        """Wait for the process to exit and for the last of its output; return (and keep)
        :attr:`exit_note`.

        The tail is taken only once the copies of its output are done, so it holds what
        the process wrote last.
        """
        status = await self.exited()
        await self._drain(_DRAIN_AFTER_EXIT)
        how = killed_by(-status) if status < 0 else f"exit status {status}"
        if self.cgroup is not None and (kills := self.cgroup.oom_kills()):
            cap = self.cgroup.memory_bytes // (1024 * 1024)
            how += (
                f"; its sandbox reached its memory cap ({cap} MB: memory_mb + disk_mb) and "
                f"the kernel killed {kills} of its processes"
            )
        tail = self.stderr_tail()
        if self.sandbox is SandboxMode.BWRAP and GLIBC_FUTEX_ABORT in tail:
            how += (
                "; a process-shared lock or semaphore (Python's multiprocessing among them) "
                "needed a futex wake, which the sandbox refuses (docs/writing-a-bot.md)"
            )
        self.exit_note = exit_note(how, self.stderr_path, tail)
        return self.exit_note

    async def _drain(self, timeout: float) -> None:
        # Unconfined, a grandchild can hold the pipes open: stop copying after ``timeout``.
        if not self._copiers:
            return
        _, pending = await asyncio.wait(self._copiers, timeout=timeout)
        for task in pending:
            task.cancel()
        await asyncio.gather(*self._copiers, return_exceptions=True)

    def freeze(self) -> None:
        """Stop every process of the sandbox (SIGSTOP) until :meth:`thaw`.

        Walked from the sandbox's first process again until no process is new: one that
        forked meanwhile is stopped with its child in the next round."""
        self.frozen = True
        self._signal_all(signal.SIGSTOP)

    def thaw(self) -> None:
        """Let every process of the sandbox run again (SIGCONT)."""
        self.frozen = False
        self._signal_all(signal.SIGCONT)

    def _signal_all(self, sig: int) -> None:
        if self.sandbox_pid is None or self.process.returncode is not None:
            return
        done: set[int] = set()
        while True:
            found = [p for p in _descendants(self.sandbox_pid) if p not in done]
            if not found:
                return
            for pid in found:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
                done.add(pid)

    async def stop(self, grace: float = 2.0) -> None:
        """Let the process exit within ``grace`` seconds, then kill its whole group; reap it.

        A sandbox dies with its bwrap (and a root referee also empties its cgroup), so
        nothing the bot started outlives this.
        """
        if self.process.returncode is None:
            try:
                await asyncio.wait_for(self.exited(), grace)
            except TimeoutError:
                # It may exit between the wait and the kill.
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                if self.cgroup is not None:
                    # The sandbox's own processes lead sessions of their own: the cgroup
                    # reaches them where the process group does not.
                    self.cgroup.kill_all()
                await self.exited()
        if self.cgroup is not None:
            await self.cgroup.remove()
        if self.uid is not None:
            # Only once nothing of the sandbox runs as it (its cgroup is empty, or gone).
            self.uid.release()
        await self._drain(_DRAIN_AFTER_EXIT)


_LIMIT_SIGNALS = {
    "SIGXCPU": "it used up its cpu_seconds",
    "SIGXFSZ": "a file it wrote reached its file_mb",
}


T = TypeVar("T")


async def finish_despite_cancel(work: Awaitable[T]) -> T:
    """Await ``work`` to its end even if the caller is cancelled meanwhile (once or more),
    then let the cancellation go on: for cleanup that must not be cut short."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while True:
        try:
            result = await asyncio.shield(task)
            break
        except asyncio.CancelledError:
            if task.cancelled():
                raise
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
    return result


async def exit_status(process: asyncio.subprocess.Process) -> int:
    """``process``'s exit status, once it has exited.

    Not ``Process.wait()``, which also waits for its stdout and stderr to close: a process
    the bot left behind (one that outlived its sandbox's bwrap, say) may hold them open for
    ever. What is left of them is drained on its own (``BotProcess._drain``).
    """
    while (status := process.returncode) is None:
        await asyncio.sleep(_EXIT_POLL)
    return status


def exit_note(how: str, log: Path, tail: str) -> str:
    """How a process ended, where its stderr is kept, and the end of it, as one text:
    ``HOW; log LOG; stderr ends:\nTAIL`` (or ``HOW; log LOG; no stderr``)."""
    end = f"stderr ends:\n{tail}" if tail else "no stderr"
    return f"{how}; log {log}; {end}"


def bot_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """The environment for an unconfined bot process: ours with ``extra``, minus our
    TAVOLO_* values (the admin token among them) and our gRPC choice.

    A bot in another language may run a gRPC core that does not know these experiments
    and says so on stderr; what a user set themselves is passed on. A sandboxed bot gets
    none of ours (``referee.sandbox.bwrap.inside_env``).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}
    env.update(extra)
    if grpc_transport.GRPC_EXPERIMENTS_SET_HERE and "GRPC_EXPERIMENTS" not in extra:
        env.pop("GRPC_EXPERIMENTS", None)
    return env


def killed_by(number: int) -> str:
    """How a process killed by signal ``number`` ended, e.g. ``killed by signal 9 (SIGKILL)``."""
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"killed by signal {number}"
    hint = _LIMIT_SIGNALS.get(name)
    return f"killed by signal {number} ({name}" + (f": {hint})" if hint else ")")


async def start_bot(
    entry: Entry,
    label: str,
    workdir: Path,
    env: Mapping[str, str],
    *,
    sandbox: SandboxMode = SandboxMode.OFF,
    socket: Path | None = None,
    budget: LogBudget | None = None,
) -> BotProcess:
    """Start one process of ``entry``, confined as ``sandbox`` says, logging to ``workdir``.

    ``env`` holds the bot's TAVOLO_* values; ``socket`` is the host path of its own
    socket to the referee, handed over as ``TAVOLO_REFEREE`` (a sandboxed bot sees it at
    :data:`referee.sandbox.bwrap.SOCKET_INSIDE`). A sandboxed bot gets nothing else of our
    environment; an unconfined one gets ours without the referee's secrets. ``budget``
    caps what the logs of every process sharing it keep together.
    """
    workdir.mkdir(mode=0o700, parents=True, exist_ok=True)
    values = dict(env)
    if entry.cwd is not None:
        values["TAVOLO_BOT_HOME"] = str(entry.cwd)
    if sandbox is SandboxMode.BWRAP:
        return await _start_confined(entry, label, workdir, values, socket, budget)
    if socket is not None:
        values["TAVOLO_REFEREE"] = f"unix:{socket}"
    argv = [
        sys.executable, "-m", "referee.sandbox.rlimits",
        "--cpu-seconds", str(entry.cpu_seconds), "--memory-mb", str(entry.memory_mb),
        "--file-mb", str(entry.file_mb),
        "--", *entry.command,
    ]  # fmt: skip
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=workdir,
        env=bot_environment(values),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    bot = BotProcess(label, workdir, process, SandboxMode.OFF)
    _keep_logs(bot, entry.log_mb, budget)
    return bot


async def _start_confined(
    entry: Entry,
    label: str,
    workdir: Path,
    env: dict[str, str],
    socket: Path | None,
    budget: LogBudget | None,
) -> BotProcess:
    # Whole even if this task is cancelled meanwhile (Ctrl-C): cut short, asyncio would
    # wait for the pipes of a sandbox that waits for its go, and a thread would read a
    # closed pipe. A process started for a cancelled call is stopped at once.
    launching = asyncio.ensure_future(_launch_confined(entry, label, workdir, env, socket, budget))
    try:
        return await finish_despite_cancel(launching)
    except asyncio.CancelledError:
        if launching.done() and not launching.cancelled() and launching.exception() is None:
            await finish_despite_cancel(launching.result().stop(grace=0))
        raise


async def _launch_confined(
    entry: Entry,
    label: str,
    workdir: Path,
    env: dict[str, str],
    socket: Path | None,
    budget: LogBudget | None,
) -> BotProcess:
    if socket is not None:
        env["TAVOLO_REFEREE"] = f"unix:{SOCKET_INSIDE}"
    confinement = Confinement(
        disk_mb=entry.disk_mb,
        processes=entry.processes,
        cpu_seconds=entry.cpu_seconds,
        memory_mb=entry.memory_mb,
        file_mb=entry.file_mb,
    )
    cgroup = lease = None
    if running_as_root():
        memory = (entry.memory_mb + entry.disk_mb) * 1024 * 1024
        cgroup = SandboxCgroups(process_cap(entry.processes), memory)
        lease = lease_uid()
    info_r = info_w = block_r = block_w = users_r = users_w = seccomp_r = -1
    process = None
    try:
        # Every sandbox: the filter of referee.sandbox.seccomp (no session, lock or key
        # of its own can reach another sandbox).
        seccomp_r, seccomp_w = os.pipe()
        program = seccomp_program(locks=entry.file_locks)  # an arena's build may lock files
        os.write(seccomp_w, program)  # far less than a pipe holds
        os.close(seccomp_w)
        # bwrap says its child's pid on every road: freezing finds the bot's processes by it.
        info_r, info_w = os.pipe()
        if lease is not None and cgroup is not None:
            block_r, block_w = os.pipe()
            users_r, users_w = os.pipe()
            if socket is not None:
                # Only the sandbox's own uid may connect to its socket.
                os.chown(socket, lease.uid, lease.uid)
                os.chmod(socket, 0o600)
        argv = bwrap_argv(
            confinement,
            entry.command,
            inside_env(env),
            entry.read_only,
            None if socket is None else str(socket),
            block_fd=block_r if cgroup else None,
            info_fd=info_w,
            seccomp_fd=seccomp_r,
            userns_block_fd=users_r if lease else None,
        )
        passed = (seccomp_r, info_w) if lease is None else (seccomp_r, info_w, block_r, users_r)
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd="/",
            env={},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            pass_fds=passed,
        )
        bot = BotProcess(label, workdir, process, SandboxMode.BWRAP, cgroup, uid=lease)
        _keep_logs(bot, entry.log_mb, budget)
        os.close(info_w)
        info_w = -1
        loop = asyncio.get_running_loop()
        child = await loop.run_in_executor(None, _child_pid, info_r)
        bot.sandbox_pid = child
        if cgroup is not None and lease is not None:
            for fd in (block_r, users_r):
                os.close(fd)
            block_r = users_r = -1
            await _admit(cgroup, lease, child, users_w, block_w)
        return bot
    except BaseException:
        try:
            if process is not None and process.returncode is None:
                # The caller never gets this process: it must not outlive the call.
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                if cgroup is not None:
                    cgroup.kill_all()
                await exit_status(process)
        finally:
            if cgroup is not None:
                await cgroup.remove()
            if lease is not None:
                lease.release()
        raise
    finally:
        for fd in (info_r, info_w, block_r, block_w, users_r, users_w, seccomp_r):
            if fd >= 0:
                os.close(fd)


async def _admit(
    cgroup: SandboxCgroups, lease: UidLease, child: int | None, users_w: int, block_w: int
) -> None:
    """Map the sandbox's user namespace (its first process ``child``) to ``lease``'s uid,
    put it into ``cgroup``, then let bwrap start the bot."""
    loop = asyncio.get_running_loop()
    if child is not None:
        # First: a referee killed from here on leaves the sandbox in its cgroup, which the
        # next root referee empties (bwrap's child waits for us until then).
        # Before the bot runs: everything it starts is counted against pids.max.
        # If the sandbox is gone already, bwrap's stderr in the log says why.
        with contextlib.suppress(ProcessLookupError):
            cgroup.add(child)
        map_user_namespace(child, lease.uid)
        try:
            await loop.run_in_executor(None, forbid_user_namespaces, child)
        except OSError as exc:
            raise SandboxError(str(exc)) from None
        with contextlib.suppress(BrokenPipeError):  # bwrap failed: its log says why
            os.write(users_w, b"1")
    with contextlib.suppress(BrokenPipeError):  # bwrap failed: its log says why
        os.write(block_w, b"go")


def _child_pid(fd: int) -> int | None:
    """The sandbox's pid from bwrap's ``--info-fd`` JSON; None if bwrap ended first."""
    data = b""
    while not data.rstrip().endswith(b"}"):
        chunk = os.read(fd, 4096)
        if not chunk:
            return None
        data += chunk
    try:
        return int(json.loads(data)["child-pid"])
    except (ValueError, KeyError) as exc:
        raise SandboxError(f"bwrap said something unexpected on --info-fd: {data!r}") from exc


def _descendants(root: int) -> list[int]:
    """``root`` and every process below it, as ``/proc/PID/task/TID/children`` say now."""
    out, queue = [], [root]
    while queue:
        pid = queue.pop()
        out.append(pid)
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # gone meanwhile
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as f:
                    queue.extend(int(child) for child in f.read().split())
            except OSError:
                continue
    return out


def _keep_logs(bot: BotProcess, log_mb: int, budget: LogBudget | None) -> None:
    """Copy the process's stdout and stderr into its log files, up to ``log_mb`` each (and
    what ``budget`` has left); the end of stderr is also kept in memory."""
    process = bot.process
    assert process.stdout is not None and process.stderr is not None
    cap = log_mb * 2**20
    for stream, name, tail in (
        (process.stdout, "stdout.log", None),
        (process.stderr, "stderr.log", bot._tail),
    ):
        task = asyncio.ensure_future(_copy(stream, bot.workdir / name, cap, budget, tail))
        bot._copiers.append(task)


async def _copy(
    stream: asyncio.StreamReader,
    path: Path,
    cap: int,
    budget: LogBudget | None,
    tail: bytearray | None,
) -> None:
    written = 0
    cut = False
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    with open(fd, "wb", buffering=0) as out:
        while chunk := await stream.read(_READ_CHUNK):
            if tail is not None:
                tail += chunk
                del tail[:-_TAIL_BYTES]
            if cut:
                continue  # read on, so the bot never blocks on a full pipe
            part = chunk[: cap - written]
            granted = len(part) if budget is None else await budget.grant(len(part))
            out.write(part[:granted])
            written += granted
            if written >= cap:
                out.write(f"\n[tavolo: log cut at its log_mb, {cap // 2**20} MB]\n".encode())
                cut = True
            elif granted < len(part):
                assert budget is not None
                note = (
                    "\n[tavolo: log cut: the bots' logs of this run reached their total cap, "
                    f"{budget.total_mb} MB]\n"
                )
                out.write(note.encode())
                cut = True
