"""Bot processes: each in a sandbox of its own (or unconfined), logs kept outside; reaped."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from referee import grpc_transport
from referee.entries import Entry
from referee.sandbox import (
    SOCKET_INSIDE,
    Confinement,
    PidsCgroup,
    SandboxError,
    SandboxMode,
    bwrap_argv,
    inside_env,
    process_cap,
    running_as_root,
)

STDERR_TAIL_LINES = 20
_READ_CHUNK = 64 * 1024
_DRAIN_AFTER_EXIT = 2.0
"""Seconds to wait, after the process exits, for the last of its output."""


@dataclass
class BotProcess:
    """One running bot process."""

    label: str
    workdir: Path
    """The host folder of its logs (``stdout.log``, ``stderr.log``); never visible to a
    sandboxed bot."""
    process: asyncio.subprocess.Process
    sandbox: SandboxMode
    cgroup: PidsCgroup | None = None
    exit_note: str | None = None
    """Set once the process has exited: its status and the end of its stderr."""
    _copiers: list[asyncio.Task[None]] = field(default_factory=list)

    @property
    def stderr_path(self) -> Path:
        """The process's stderr log."""
        return self.workdir / "stderr.log"

    def stderr_tail(self, lines: int = STDERR_TAIL_LINES) -> str:
        """The last lines of the process's stderr."""
        try:
            text = self.stderr_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    async def watch(self) -> str:
        """Wait for the process to exit; return (and keep) what it left behind."""
        status = await self.process.wait()
        await self._drain(_DRAIN_AFTER_EXIT)
        how = killed_by(-status) if status < 0 else f"exit status {status}"
        tail = self.stderr_tail()
        self.exit_note = how + (f"; stderr ends:\n{tail}" if tail else "; no stderr")
        return self.exit_note

    async def _drain(self, timeout: float) -> None:
        # Unconfined, a grandchild can hold the pipes open: stop copying after ``timeout``.
        if not self._copiers:
            return
        _, pending = await asyncio.wait(self._copiers, timeout=timeout)
        for task in pending:
            task.cancel()
        await asyncio.gather(*self._copiers, return_exceptions=True)

    async def stop(self, grace: float = 2.0) -> None:
        """Let the process exit within ``grace`` seconds, then kill its whole group; reap it.

        A sandbox dies with its bwrap (and a root referee also empties its cgroup), so
        nothing the bot started outlives this.
        """
        if self.process.returncode is None:
            try:
                await asyncio.wait_for(self.process.wait(), grace)
            except TimeoutError:
                # It may exit between the wait and the kill.
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                await self.process.wait()
        if self.cgroup is not None:
            self.cgroup.remove()
        await self._drain(_DRAIN_AFTER_EXIT)


_LIMIT_SIGNALS = {
    "SIGXCPU": "it used up its cpu_seconds",
    "SIGXFSZ": "a file it wrote reached its file_mb",
}


def bot_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """The environment for an unconfined bot process: ours with ``extra``, minus our
    TAVOLO_* values (the admin token among them) and our gRPC choice.

    A bot in another language may run a gRPC core that does not know these experiments
    and says so on stderr; what a user set themselves is passed on. A sandboxed bot gets
    none of ours (``referee.sandbox.inside_env``).
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
) -> BotProcess:
    """Start one process of ``entry``, confined as ``sandbox`` says, logging to ``workdir``.

    ``env`` holds the bot's TAVOLO_* values; ``socket`` is the host path of its own
    socket to the referee, handed over as ``TAVOLO_REFEREE`` (a sandboxed bot sees it at
    :data:`referee.sandbox.SOCKET_INSIDE`). A sandboxed bot gets nothing else of our
    environment; an unconfined one gets ours without the referee's secrets.
    """
    workdir.mkdir(mode=0o700, parents=True, exist_ok=True)
    values = dict(env)
    if entry.cwd is not None:
        values["TAVOLO_BOT_HOME"] = str(entry.cwd)
    if sandbox is SandboxMode.BWRAP:
        return await _start_confined(entry, label, workdir, values, socket)
    if socket is not None:
        values["TAVOLO_REFEREE"] = f"unix:{socket}"
    argv = [
        sys.executable, "-m", "referee.limits_exec",
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
    _keep_logs(bot, entry.log_mb)
    return bot


async def _start_confined(
    entry: Entry, label: str, workdir: Path, env: dict[str, str], socket: Path | None
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
    cgroup = PidsCgroup(process_cap(entry.processes)) if running_as_root() else None
    info_r = info_w = block_r = block_w = -1
    try:
        if cgroup is not None:
            info_r, info_w = os.pipe()
            block_r, block_w = os.pipe()
        argv = bwrap_argv(
            confinement,
            entry.command,
            inside_env(env),
            entry.read_only,
            None if socket is None else str(socket),
            block_fd=block_r if cgroup else None,
            info_fd=info_w if cgroup else None,
        )
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd="/",
            env={},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            pass_fds=(info_w, block_r) if cgroup else (),
        )
        bot = BotProcess(label, workdir, process, SandboxMode.BWRAP, cgroup)
        _keep_logs(bot, entry.log_mb)
        if cgroup is not None:
            os.close(info_w)
            os.close(block_r)
            info_w = block_r = -1
            child = await asyncio.get_running_loop().run_in_executor(None, _child_pid, info_r)
            if child is not None:
                # Before the bot runs: everything it starts is counted against pids.max.
                # If the sandbox is gone already, bwrap's stderr in the log says why.
                with contextlib.suppress(ProcessLookupError):
                    cgroup.add(child)
            with contextlib.suppress(BrokenPipeError):  # bwrap failed: its log says why
                os.write(block_w, b"go")
        return bot
    except BaseException:
        if cgroup is not None:
            cgroup.remove()
        raise
    finally:
        for fd in (info_r, info_w, block_r, block_w):
            if fd >= 0:
                os.close(fd)


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


def _keep_logs(bot: BotProcess, log_mb: int) -> None:
    """Copy the process's stdout and stderr into its log files, up to ``log_mb`` each."""
    process = bot.process
    assert process.stdout is not None and process.stderr is not None
    for stream, name in ((process.stdout, "stdout.log"), (process.stderr, "stderr.log")):
        task = asyncio.ensure_future(_copy(stream, bot.workdir / name, log_mb * 1024 * 1024))
        bot._copiers.append(task)


async def _copy(stream: asyncio.StreamReader, path: Path, cap: int) -> None:
    written = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    with open(fd, "wb", buffering=0) as out:
        while chunk := await stream.read(_READ_CHUNK):
            if written >= cap:
                continue  # read on, so the bot never blocks on a full pipe
            part = chunk[: cap - written]
            out.write(part)
            written += len(part)
            if written >= cap:
                out.write(f"\n[tavolo: log cut at its log_mb, {cap // 2**20} MB]\n".encode())
