"""Bot sandboxes: every bot process the referee starts in a bubblewrap (``bwrap``) of its own.

A sandbox has new user, PID, IPC, UTS, mount, network and cgroup namespaces, so the bot
sees only its own processes and no network at all; it reaches the referee through one
Unix-domain socket bound in at :data:`SOCKET_INSIDE`. Of the host it sees the system's
runtime folders and the paths it was given, read-only; its work folder and ``/tmp`` are
one private tmpfs of ``disk_mb``. Its rlimits (CPU, address space, file size, processes
and threads) are set inside its user namespace, by ``prlimit`` just before the bot starts.

A referee running as root also gives each sandbox cgroups of its own (root is exempt from
RLIMIT_NPROC, and rlimits count per process): :mod:`referee.sandbox.cgroups`.
docs/security.md says what each layer stops.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath

from referee.sandbox.proc_views import proc_args


class SandboxMode(StrEnum):
    """How a bot process is confined."""

    BWRAP = "bwrap"
    """In a bubblewrap sandbox of its own (the default)."""
    OFF = "off"
    """Unconfined: a process of the referee's user beside every other (rlimits only)."""


INSTALL_HINT = (
    "install bubblewrap (Debian or Ubuntu: apt-get install bubblewrap; "
    "Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)"
)
SOCKET_INSIDE = "/run/tavolo/referee.sock"
"""Where the bot's own socket to the referee is, inside its sandbox."""
TMP_INSIDE = "/tmp"
"""The private tmpfs of ``disk_mb``: the work folder and ``/dev/shm`` are on it too. Host
paths under ``/tmp`` that the bot may read are bound into it, read-only."""
WORK_INSIDE = f"{TMP_INSIDE}/work"
SHM_INSIDE = f"{TMP_INSIDE}/.shm"
PATH_INSIDE = "/usr/local/bin:/usr/bin:/bin"
RUNTIME_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""The system's runtime folders, read-only in every sandbox (symlinks stay symlinks)."""
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
UID_INSIDE = 65534
"""A root referee's bots are ``nobody`` inside their namespace (and hold no capability);
that is a host uid of their own outside it (:mod:`referee.sandbox.uids`)."""
DROP_ROOT = (
    "setpriv", f"--reuid={UID_INSIDE}", f"--regid={UID_INSIDE}", "--clear-groups",
    "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs",
)  # fmt: skip
"""A root referee's sandbox leaves its root for ``nobody`` (a host uid of its own) and every
capability for good, before anything of the bot's runs."""
_SANDBOX_OVERHEAD_PROCESSES = 1
"""bwrap's own init (PID 1 in the sandbox) counts against the process cap."""


def process_cap(processes: int) -> int:
    """The cap to set (RLIMIT_NPROC, or a cgroup's pids.max) for ``processes`` of the bot's."""
    return processes + _SANDBOX_OVERHEAD_PROCESSES


class SandboxError(RuntimeError):
    """A bot that cannot be confined as asked; the message says why and what to do."""


@dataclass(frozen=True)
class Confinement:
    """What one sandboxed bot process gets."""

    disk_mb: int
    processes: int
    cpu_seconds: int
    memory_mb: int
    file_mb: int


def bwrap_path() -> str | None:
    """The bubblewrap to run: ``TAVOLO_BWRAP`` if set (a path), else ``bwrap`` on PATH."""
    chosen = os.environ.get("TAVOLO_BWRAP")
    if chosen:
        return chosen if os.access(chosen, os.X_OK) else None
    return shutil.which("bwrap")


def running_as_root() -> bool:
    """Whether this process is root: then each sandbox also gets cgroups of its own."""
    return os.geteuid() == 0


def _runtime_args() -> list[str]:
    args: list[str] = []
    for path in RUNTIME_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


@functools.cache
def _runtime_reals() -> tuple[str, ...]:
    return tuple(os.path.realpath(p) for p in RUNTIME_DIRS if os.path.exists(p))


def under_runtime(path: str) -> bool:
    """Whether ``path`` is inside a runtime folder that every sandbox has anyway."""
    real = os.path.realpath(path)
    return any(real == d or real.startswith(d.rstrip("/") + "/") for d in _runtime_reals())


def bwrap_argv(
    confinement: Confinement,
    command: Sequence[str],
    env: Mapping[str, str],
    read_only: Iterable[str],
    socket_path: str | None,
    *,
    block_fd: int | None = None,
    info_fd: int | None = None,
    seccomp_fd: int | None = None,
    userns_block_fd: int | None = None,
) -> list[str]:
    """The whole command line that runs ``command`` confined: bwrap, then prlimit, then the bot.

    ``env`` is the bot's entire environment; ``read_only`` the host paths it may read, bound
    at the same paths; ``socket_path`` its socket, which appears inside at
    :data:`SOCKET_INSIDE`. With ``block_fd`` and ``info_fd``, bwrap says its child's pid and
    waits for a byte before the bot starts (a root referee moves it into its cgroups).
    ``seccomp_fd`` holds a seccomp program for bwrap to load (:mod:`referee.sandbox.seccomp`).
    With ``userns_block_fd`` (a root referee), bwrap waits for a byte on it while the
    referee maps the sandbox's user namespace (:func:`referee.sandbox.uids.map_user_namespace`);
    the sandbox then drops its root (:data:`DROP_ROOT`) before the bot starts.
    """
    bwrap = bwrap_path()
    prlimit = shutil.which("prlimit")
    setpriv = shutil.which("setpriv")
    if bwrap is None or prlimit is None or setpriv is None:
        raise SandboxError(missing_tools() or "bwrap, prlimit or setpriv not found")
    if userns_block_fd is None:
        users = ["--disable-userns", "--cap-drop", "ALL"]
        drop: list[str] = []
    else:
        users = ["--userns-block-fd", str(userns_block_fd)]
        drop = [setpriv, *DROP_ROOT[1:]]
    args = [
        # bwrap's own --die-with-parent is its child's: bwrap itself, waiting for the
        # referee's byte, would outlive a referee killed meanwhile, for good.
        setpriv, "--pdeathsig", "KILL", "--", bwrap,
        "--unshare-all", "--unshare-user", *users,
        "--die-with-parent", "--new-session", "--hostname", "tavolo",
        *_runtime_args(),
        "--proc", "/proc",
        *proc_args(confinement.memory_mb),
        "--dir", "/dev",
    ]  # fmt: skip
    for device in DEVICES:
        args += ["--dev-bind", device, device]
    for n, name in enumerate(("stdin", "stdout", "stderr")):
        args += ["--symlink", f"/proc/self/fd/{n}", f"/dev/{name}"]
    args += ["--symlink", "/proc/self/fd", "/dev/fd"]
    # One tmpfs for everything the bot may write, so disk_mb caps the whole of it.
    # Made by the sandbox's root, written by its nobody: open to all, as no one else is there.
    tmp_size = ["--size", str(confinement.disk_mb * 1024 * 1024)]
    args += ["--perms", "1777", *tmp_size, "--tmpfs", TMP_INSIDE]
    args += ["--perms", "0777", "--dir", WORK_INSIDE, "--perms", "0777", "--dir", SHM_INSIDE]
    args += ["--symlink", SHM_INSIDE, "/dev/shm"]
    bound = _dedupe(read_only)
    # bwrap makes a bound path's missing parents 0700, root's: nobody could not pass.
    for parent in _parents([*bound, *([SOCKET_INSIDE] if socket_path is not None else [])]):
        args += ["--perms", "0755", "--dir", parent]
    for path in bound:
        args += ["--ro-bind", path, path]
    if socket_path is not None:
        args += ["--bind", socket_path, SOCKET_INSIDE]
    if info_fd is not None:
        args += ["--info-fd", str(info_fd)]
    if block_fd is not None:
        args += ["--block-fd", str(block_fd)]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    # The sandbox's root is bwrap's own tmpfs, uncapped: nothing may be written there.
    args += ["--remount-ro", "/", "--chdir", WORK_INSIDE, "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    memory = confinement.memory_mb * 1024 * 1024
    size = confinement.file_mb * 1024 * 1024
    # Root does not count against RLIMIT_NPROC (a root referee uses a pids cgroup too).
    nproc = process_cap(confinement.processes)
    args += [
        "--", *drop, prlimit,
        f"--cpu={confinement.cpu_seconds}:{confinement.cpu_seconds + 1}",
        f"--as={memory}:{memory}", f"--fsize={size}:{size}", f"--nproc={nproc}:{nproc}",
        "--core=0:0",
        "--", *command,
    ]  # fmt: skip
    return args


def _parents(paths: Iterable[str]) -> list[str]:
    """The folders above ``paths`` that the sandbox does not have already, outermost first."""
    have = {"/", TMP_INSIDE, WORK_INSIDE, SHM_INSIDE, "/dev", "/proc", *RUNTIME_DIRS}
    out: list[str] = []
    for path in paths:
        parents = [str(p) for p in reversed(PurePosixPath(path).parents)]
        out += [p for p in parents if p not in have and p not in out]
    return out


def _dedupe(paths: Iterable[str]) -> list[str]:
    """Paths in order, without repeats, those inside another listed one, or runtime ones."""
    out: list[str] = []
    for path in sorted(set(paths), key=lambda p: (len(p), p)):
        if under_runtime(path):
            continue
        if any(path == p or path.startswith(p.rstrip("/") + "/") for p in out):
            continue
        out.append(path)
    return out


def inside_env(extra: Mapping[str, str]) -> dict[str, str]:
    """A sandboxed bot's whole environment: ``extra`` (its TAVOLO_* values) and the basics."""
    return {
        "PATH": PATH_INSIDE,
        "HOME": WORK_INSIDE,
        "TMPDIR": TMP_INSIDE,
        "LANG": "C.UTF-8",
        **extra,
    }


def missing_tools() -> str | None:
    """Which program a sandbox needs is not here (one line, with what to do), or None."""
    if bwrap_path() is None:
        where = os.environ.get("TAVOLO_BWRAP")
        if where:
            return f"TAVOLO_BWRAP={where} is not an executable bubblewrap: {INSTALL_HINT}"
        return f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}"
    if shutil.which("prlimit") is None:
        return "prlimit (util-linux) is not installed: install util-linux"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed: install util-linux"
    return None


def bwrap_version() -> str:
    """``bwrap --version``'s words, e.g. ``bubblewrap 0.8.0``; empty if there is none."""
    bwrap = bwrap_path()
    if bwrap is None:
        return ""
    try:
        done = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip()
