"""Bot processes: started with limits, a folder and logs of their own; always reaped."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from referee import bot_environment
from referee.entries import Entry

STDERR_TAIL_LINES = 20


@dataclass
class BotProcess:
    """One running bot process."""

    label: str
    workdir: Path
    process: asyncio.subprocess.Process
    exit_note: str | None = None
    """Set once the process has exited: its status and the end of its stderr."""

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
        how = killed_by(-status) if status < 0 else f"exit status {status}"
        tail = self.stderr_tail()
        self.exit_note = how + (f"; stderr ends:\n{tail}" if tail else "; no stderr")
        return self.exit_note

    async def stop(self, grace: float = 2.0) -> None:
        """Let the process exit within ``grace`` seconds, then kill its whole group; reap it."""
        if self.process.returncode is None:
            try:
                await asyncio.wait_for(self.process.wait(), grace)
            except TimeoutError:
                # It may exit between the wait and the kill.
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                await self.process.wait()


_LIMIT_SIGNALS = {
    "SIGXCPU": "it used up its cpu_seconds",
    "SIGXFSZ": "a file it wrote, a log perhaps, reached its file_mb",
}


def killed_by(number: int) -> str:
    """How a process killed by signal ``number`` ended, e.g. ``killed by signal 9 (SIGKILL)``."""
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"killed by signal {number}"
    hint = _LIMIT_SIGNALS.get(name)
    return f"killed by signal {number} ({name}" + (f": {hint})" if hint else ")")


async def start_bot(entry: Entry, label: str, workdir: Path, env: Mapping[str, str]) -> BotProcess:
    """Start one process of ``entry`` in ``workdir`` with rlimits and logs there.

    The command runs through ``referee.limits_exec``, which sets the CPU and memory
    limits and then becomes the bot (exec), so limits apply to the bot alone.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    argv = [
        sys.executable, "-m", "referee.limits_exec",
        "--cpu-seconds", str(entry.cpu_seconds), "--memory-mb", str(entry.memory_mb),
        "--file-mb", str(entry.file_mb),
        "--", *entry.command,
    ]  # fmt: skip
    full_env = bot_environment(env)
    if entry.cwd is not None:
        full_env["TAVOLO_BOT_HOME"] = str(entry.cwd)
    with (
        open(workdir / "stdout.log", "wb") as stdout,
        open(workdir / "stderr.log", "wb") as stderr,
    ):
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=workdir,
            env=full_env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
    return BotProcess(label, workdir, process)
