"""Become a bot process under CPU and memory limits: ``python -m referee.sandbox.rlimits``.

    python -m referee.sandbox.rlimits --cpu-seconds 600 --memory-mb 2048 [--file-mb 256] -- CMD ...

Sets RLIMIT_CPU, RLIMIT_AS and (with ``--file-mb``) RLIMIT_FSIZE, then replaces itself
with CMD, so the limits bind the bot and nothing else. On Linux it also asks to be killed
when the referee dies, so a referee killed with SIGKILL leaves no bot behind. Imports
nothing from Tavolo beyond its packages' ``__init__`` files (which import nothing), to
start fast and to pass the environment on as it came.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import resource
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent (the referee) ends; elsewhere nothing."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="referee.sandbox.rlimits")
    parser.add_argument("--cpu-seconds", type=int, required=True)
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--file-mb", type=int)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    die_with_parent()
    resource.setrlimit(resource.RLIMIT_CPU, (args.cpu_seconds, args.cpu_seconds + 1))
    memory = args.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    if args.file_mb is not None:
        # Every file the bot writes, its stdout and stderr logs too: it cannot fill the disk.
        size = args.file_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    # Python ignores these at start-up and exec keeps ignored signals ignored; the bot starts
    # with the defaults, as subprocess's restore_signals gives any child.
    for name in ("SIGPIPE", "SIGXFZ", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    try:
        # The environment as the referee made it (referee.sandbox.bot_process.bot_environment).
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"tavolo: cannot start {command[0]!r}: {exc.strerror}", file=sys.stderr)
        return 127
    return 0  # pragma: no cover - execvp does not return


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
