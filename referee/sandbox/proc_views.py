"""What a sandbox's ``/proc`` shows in place of the machine's own counters.

Counters of the whole machine are a channel between sandboxes: a bot that opens thousands
of descriptors moves ``/proc/sys/fs/file-nr`` for every other bot to read (a hand at
50 bit/s, measured), and so do the load, the CPU times, the free memory and the pressure
stall figures. Each such file is covered, inside every sandbox, by a fixed view: the
machine as it would look with the bot alone on it, within its memory cap. Runtimes still
size themselves from it (the CPU count, the memory total), and nothing in it moves.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
import time

PROC_VIEWS = (
    "loadavg", "stat", "meminfo", "vmstat", "diskstats", "interrupts", "softirqs",
    "schedstat", "locks", "zoneinfo", "buddyinfo", "pagetypeinfo", "swaps",
    "sys/fs/file-nr", "sys/fs/inode-nr", "sys/fs/dentry-state", "sys/fs/aio-nr",
    "sys/kernel/random/entropy_avail",
)  # fmt: skip
"""The files under ``/proc`` covered by a fixed view (absent ones are left alone)."""
PROC_HIDDEN_DIRS = ("pressure",)
"""Folders under ``/proc`` covered by an empty one."""


def _contents(memory_mb: int) -> dict[str, str]:
    cpus = os.cpu_count() or 1
    kb = memory_mb * 1024
    cpu_lines = "".join(f"cpu{n} 0 0 0 0 0 0 0 0 0 0\n" for n in range(cpus))
    boot = int(time.time() - time.monotonic())
    return {
        "loadavg": "0.00 0.00 0.00 1/1 1\n",
        "stat": (
            f"cpu  0 0 0 0 0 0 0 0 0 0\n{cpu_lines}intr 0\nctxt 0\nbtime {boot}\n"
            "processes 1\nprocs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n"
        ),
        "meminfo": "".join(
            f"{name + ':':<16}{value:>9} kB\n"
            for name, value in (
                ("MemTotal", kb),
                ("MemFree", kb),
                ("MemAvailable", kb),
                ("Buffers", 0),
                ("Cached", 0),
                ("SwapCached", 0),
                ("Active", 0),
                ("Inactive", 0),
                ("SwapTotal", 0),
                ("SwapFree", 0),
                ("Dirty", 0),
                ("Shmem", 0),
            )
        ),
        "sys/fs/file-nr": "0\t0\t1048576\n",
        "sys/fs/inode-nr": "0\t0\n",
        "sys/fs/dentry-state": "0\t0\t45\t0\t0\t0\n",
        "sys/fs/aio-nr": "0\n",
        "sys/kernel/random/entropy_avail": "256\n",
    }


@functools.cache
def proc_views(memory_mb: int) -> str:
    """A folder (mode 0755, files 0644) holding the views of :data:`PROC_VIEWS` for a bot
    of ``memory_mb``, made once per referee process; files not listed in
    :func:`_contents` are empty."""
    root = tempfile.mkdtemp(prefix=f"tavolo-proc-{memory_mb}-")
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    os.chmod(root, 0o755)
    contents = _contents(memory_mb)
    for name in PROC_VIEWS:
        path = os.path.join(root, name.replace("/", "_"))
        with open(path, "w", encoding="ascii") as file:
            file.write(contents.get(name, ""))
        os.chmod(path, 0o644)
    os.mkdir(os.path.join(root, "empty"), 0o755)
    return root


def proc_args(memory_mb: int) -> list[str]:
    """bwrap's arguments that cover the machine's counters, after its ``--proc /proc``."""
    root = proc_views(memory_mb)
    args: list[str] = []
    for name in PROC_VIEWS:
        if os.path.exists(f"/proc/{name}"):
            args += ["--ro-bind", os.path.join(root, name.replace("/", "_")), f"/proc/{name}"]
    for name in PROC_HIDDEN_DIRS:
        if os.path.isdir(f"/proc/{name}"):
            args += ["--ro-bind", os.path.join(root, "empty"), f"/proc/{name}"]
    return args
