"""The cgroups of a root referee's sandboxes: processes, CPU share and memory, per sandbox.

Root is exempt from RLIMIT_NPROC, and rlimits count per process, so a sandbox of a root
referee gets a cgroup of its own in each of three controllers:

- ``pids``: ``pids.max`` caps its processes and threads together;
- ``cpu``: one equal share of the CPU when the machine is busy, however many processes
  and threads it runs, so a bot that starts sixty busy loops slows its own play, not its
  opponents' thinking; all sandboxes together weigh as much as one busy process per core;
- ``memory``: the whole sandbox, its tmpfs included, stays within ``memory_mb + disk_mb``;
  past it the kernel kills one of its processes, and :meth:`SandboxCgroups.oom_kills`
  counts the kills, so the fault line can say why.

cgroup v1 (a hierarchy per controller under ``/sys/fs/cgroup/NAME``) and v2 (one under
``/sys/fs/cgroup``) are both handled; docs/security.md says what each stops.

A cgroup is named after its referee's pid, so that a referee killed before it could
remove its cgroups (SIGKILL) has them removed by the next one, which also kills any bot
still in them: bwrap's ``--die-with-parent`` kills the others with their referee, but not
one whose sandbox was starting when it died.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import re
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from referee.sandbox.bwrap import SandboxError

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("pids", "cpu", "memory")
GROUP = "tavolo"
"""The folder, in each hierarchy, that holds one cgroup per running sandbox."""

_V1_SHARES = 1024
"""cgroup v1's default ``cpu.shares``: one busy process's weight."""
_V2_WEIGHT = 100
"""cgroup v2's default ``cpu.weight``."""
_V2_WEIGHT_MAX = 10_000

_NAME = re.compile(r"(\d+)-[0-9a-f]{12}")
"""A sandbox's cgroup: its referee's pid, then its own random part."""

REMOVE_SECONDS = 5.0
"""How long :meth:`SandboxCgroups.remove` kills and retries before it gives up, and says so."""

LOG = logging.getLogger("tavolo.sandbox")


@dataclass(frozen=True)
class _Hierarchy:
    root: Path
    v2: bool


def _hierarchy(controller: str) -> _Hierarchy | None:
    """Where cgroups of ``controller`` may be made, with it enabled for their children."""
    v1 = CGROUP_ROOT / controller
    if (v1 / "cgroup.procs").exists() and not (v1 / "cgroup.controllers").exists():
        return _Hierarchy(v1, v2=False) if os.access(v1, os.W_OK) else None
    listed = CGROUP_ROOT / "cgroup.controllers"
    if not listed.exists() or not os.access(CGROUP_ROOT, os.W_OK):
        return None
    if controller not in listed.read_text().split():
        return None
    return _Hierarchy(CGROUP_ROOT, v2=True)


def _enable(folder: Path, controller: str) -> None:
    """cgroup v2: let ``folder``'s children use ``controller``."""
    control = folder / "cgroup.subtree_control"
    if controller not in control.read_text().split():
        control.write_text(f"+{controller}")


def _hierarchies() -> dict[str, _Hierarchy | None]:
    return {controller: _hierarchy(controller) for controller in CONTROLLERS}


def _problem(found: dict[str, _Hierarchy | None]) -> str | None:
    missing = [c for c, where in found.items() if where is None]
    if not missing:
        return None
    return (
        "as root, each sandbox needs cgroups of its own, and this machine has no writable "
        f"{', '.join(missing)} controller under {CGROUP_ROOT} (cgroup v1 hierarchies, or "
        "cgroup v2 with them); or run tavolo as a normal user"
    )


def cgroups_problem() -> str | None:
    """Why a root referee cannot give its sandboxes their cgroups here (one line), or None."""
    return _problem(_hierarchies())


def _cpu_weight_of_all(v2: bool) -> str:
    """The ``tavolo`` folder's CPU weight: one busy process's per core."""
    cores = os.cpu_count() or 1
    if v2:
        return str(min(_V2_WEIGHT_MAX, _V2_WEIGHT * cores))
    return str(_V1_SHARES * cores)


class SandboxCgroups:
    """One sandbox's cgroups: its processes capped, its CPU share equal, its memory capped.

    ``pids_max`` counts processes and threads; ``memory_bytes`` is the whole sandbox's
    memory, its tmpfs's pages included.
    """

    def __init__(self, pids_max: int, memory_bytes: int) -> None:
        found = _hierarchies()
        problem = _problem(found)
        if problem is not None:
            raise SandboxError(problem)
        self.name = f"{os.getpid()}-{secrets.token_hex(6)}"
        self.memory_bytes = memory_bytes
        self.paths: dict[str, Path] = {}
        self._oom_kills = 0
        self._memory_v2 = False
        try:
            for controller, hierarchy in found.items():
                assert hierarchy is not None  # _problem() said so
                self._make(controller, hierarchy, pids_max, memory_bytes)
            # v2's one folder holds every controller's cgroups: swept once.
            for parent in dict.fromkeys(path.parent for path in self.paths.values()):
                sweep_left_over(parent)
        except OSError as exc:
            where = exc.filename or CGROUP_ROOT
            for path in dict.fromkeys(self.paths.values()):  # none holds a process yet
                with contextlib.suppress(FileNotFoundError):
                    path.rmdir()
            why = exc.strerror
            raise SandboxError(f"cannot make the sandbox's cgroup {where}: {why}") from None

    def _make(self, controller: str, found: _Hierarchy, pids_max: int, memory_bytes: int) -> None:
        parent = found.root / GROUP
        if found.v2:
            _enable(found.root, controller)
        parent.mkdir(exist_ok=True)
        if found.v2:
            _enable(parent, controller)
        path = parent / self.name
        # v2 has one folder for every controller: made once, written for each.
        path.mkdir(exist_ok=found.v2)
        self.paths[controller] = path
        if controller == "pids":
            (path / "pids.max").write_text(str(pids_max))
        elif controller == "cpu":
            # Each sandbox keeps the default weight; only their parent's is raised.
            weight = "cpu.weight" if found.v2 else "cpu.shares"
            (parent / weight).write_text(_cpu_weight_of_all(found.v2))
        else:
            self._memory_v2 = found.v2
            if found.v2:
                (path / "memory.max").write_text(str(memory_bytes))
                swap = path / "memory.swap.max"
            else:
                (path / "memory.limit_in_bytes").write_text(str(memory_bytes))
                swap = path / "memory.memsw.limit_in_bytes"
            if swap.exists():  # swap counted too, where the kernel accounts for it
                swap.write_text("0" if found.v2 else str(memory_bytes))

    def add(self, pid: int) -> None:
        """Move process ``pid`` into every cgroup; its children from now on are in them too."""
        for path in dict.fromkeys(self.paths.values()):
            (path / "cgroup.procs").write_text(str(pid))

    def pids(self) -> list[int]:
        """The processes in the sandbox now."""
        path = self.paths.get("pids")
        return [] if path is None else _procs(path)

    def oom_kills(self) -> int:
        """How many of its processes the kernel killed for the memory cap (as last seen,
        once the cgroups are removed)."""
        path = self.paths.get("memory")
        if path is None:
            return self._oom_kills
        name = "memory.events" if self._memory_v2 else "memory.oom_control"
        try:
            lines = (path / name).read_text().splitlines()
        except FileNotFoundError:  # removed: what was seen before is kept
            return self._oom_kills
        for line in lines:
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                self._oom_kills = int(value)
        return self._oom_kills

    def kill_all(self) -> None:
        """SIGKILL everything in the sandbox (nothing a bot started may outlive it)."""
        path = self.paths.get("pids")
        if path is not None:
            _kill(path)

    async def remove(self, patience: float = REMOVE_SECONDS) -> None:
        """Kill what is left and remove the cgroups. One that still cannot be removed after
        ``patience`` seconds is left in place, with a warning that names it."""
        self.oom_kills()
        deadline = time.monotonic() + patience
        for path in dict.fromkeys(self.paths.values()):
            while True:
                self.kill_all()
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if time.monotonic() >= deadline:
                        LOG.warning(
                            "the sandbox's cgroup %s cannot be removed (%s) %g s after its "
                            "processes were killed; it holds %s: left in place",
                            path,
                            exc.strerror,
                            patience,
                            _procs(path) or "no process",
                        )
                        break
                    await asyncio.sleep(0.01)


def _procs(path: Path) -> list[int]:
    try:
        return [int(p) for p in (path / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def _kill(path: Path) -> None:
    """SIGKILL every process in cgroup ``path``."""
    for pid in _procs(path):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def sweep_left_over(parent: Path) -> None:
    """Kill what is left in ``parent``'s cgroups of referees no longer running, and remove
    those that are empty (one whose processes are still dying goes at the next sweep)."""
    for name in os.listdir(parent):
        found = _NAME.fullmatch(name)
        if found is None or Path(f"/proc/{found[1]}").exists():
            continue
        path = parent / name
        # Nothing a bot started may outlive its referee; bwrap's --die-with-parent misses
        # a sandbox that was starting when the referee died.
        _kill(path)
        try:
            path.rmdir()
        except FileNotFoundError:  # another referee swept it first
            continue
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                raise
