"""A root referee's sandbox cgroups: left over by a referee killed with SIGKILL, emptied and
removed by the next; one that cannot be removed is named in a warning
(referee/sandbox/cgroups.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.sandbox.cgroups import CGROUP_ROOT, CONTROLLERS, GROUP, SandboxCgroups
from tests.sandboxing import require_sandbox

ROOT = Path(__file__).resolve().parent.parent
THINKER = ROOT / "tests" / "bots" / "thinker.py"
TAVOLO = Path(sys.executable).parent / "tavolo"

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not (CGROUP_ROOT / "pids" / "cgroup.procs").exists(),
    reason="a root referee's cgroups, in cgroup v1 hierarchies",
)


def _parents() -> list[Path]:
    return [CGROUP_ROOT / controller / GROUP for controller in CONTROLLERS]


def _of_referee(pid: int) -> list[Path]:
    """The sandbox cgroups, in every hierarchy, that referee ``pid`` made."""
    return sorted(p for parent in _parents() for p in parent.glob(f"{pid}-*"))


def _wait_for(predicate: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.05)


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` now."""
    found = set()
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError, IndexError):
            if (
                entry.isdigit()
                and int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1]) == pid
            ):
                found.add(int(entry))
    return found


def _alive(pids: set[int]) -> bool:
    """Whether any of ``pids`` (bwraps) still runs; each that does is sent SIGKILL."""
    left = False
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            command = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        if state != "Z" and command == "bwrap":  # not a process that took a freed pid
            left = True
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    return left


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def _held(path: Path) -> list[str]:
    return (path / "cgroup.procs").read_text().split()


def test_a_killed_referees_cgroups_are_removed_by_the_next_referee(tmp_path: Path) -> None:
    require_sandbox()
    manifest = tmp_path / "thinker" / "thinker.toml"
    manifest.parent.mkdir()
    # The script inside the manifest's folder: a manifest reaches nothing outside it.
    shutil.copy(THINKER, manifest.parent / "thinker.py")
    command = [sys.executable, "thinker.py"]
    manifest.write_text(f'name = "thinker"\ncommand = {json.dumps(command)}\n')
    referee = subprocess.Popen(
        [str(TAVOLO), "play", str(manifest), "random", "--seed", "killed", "--deals", "40"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        # Every seat's bot is sandboxed, the built-in one's too.
        _wait_for(lambda: any(_held(p) for p in _of_referee(referee.pid)), 60, "a sandboxed bot")
    finally:
        started = _children(referee.pid)  # its bwraps, each a session of its own
        referee.kill()  # SIGKILL: it removes nothing
        referee.wait()
        # Nothing this test started may outlive it: bwrap dies with its parent, but one
        # that was starting as the referee died can miss that (seen once, in CI).
        _wait_for(lambda: not _alive(started), 10, "the killed referee's bwraps to end")
    left = _of_referee(referee.pid)
    assert left and {p.parent.parent.name for p in left} == set(CONTROLLERS)

    # Beside them: a dead referee's cgroup that still holds a process, as one does when its
    # sandbox was starting as the referee died (bwrap's --die-with-parent misses it), and
    # one of a referee still running (this test).
    dead = _dead_pid()
    holding = CGROUP_ROOT / "pids" / GROUP / f"{dead}-{secrets.token_hex(6)}"
    running = CGROUP_ROOT / "pids" / GROUP / f"{os.getpid()}-{secrets.token_hex(6)}"
    holding.mkdir()
    running.mkdir()
    orphan = subprocess.Popen(["sleep", "600"])
    try:
        (holding / "cgroup.procs").write_text(str(orphan.pid))

        def swept() -> bool:
            # Each new sandbox sweeps; a cgroup whose processes are dying goes at the next.
            cgroups = SandboxCgroups(pids_max=64, memory_bytes=256 << 20)
            asyncio.run(cgroups.remove())
            assert not any(p.exists() for p in cgroups.paths.values())
            return not holding.exists() and not any(p.exists() for p in left)

        _wait_for(swept, 30, "the left-over cgroups to go")
        assert orphan.wait(timeout=10) == -signal.SIGKILL
        assert running.is_dir()
    finally:
        orphan.kill()
        orphan.wait()
        with contextlib.suppress(FileNotFoundError):
            holding.rmdir()
        running.rmdir()


def test_a_cgroup_that_cannot_be_removed_is_named_in_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cgroups = SandboxCgroups(pids_max=64, memory_bytes=256 << 20)
    inner = cgroups.paths["pids"] / "inner"
    inner.mkdir()  # the kernel refuses to remove a cgroup that has one inside it
    try:
        with caplog.at_level(logging.WARNING, logger="tavolo.sandbox"):
            asyncio.run(cgroups.remove(patience=0.2))
        said = [r.getMessage() for r in caplog.records if r.name == "tavolo.sandbox"]
        assert said == [
            f"the sandbox's cgroup {cgroups.paths['pids']} cannot be removed (Device or "
            "resource busy) 0.2 s after its processes were killed; it holds no process: "
            "left in place"
        ]
        # The others were removed all the same.
        assert [c for c, p in cgroups.paths.items() if p.exists()] == ["pids"]
    finally:
        inner.rmdir()
        cgroups.paths["pids"].rmdir()


def test_a_sandbox_cgroup_is_named_after_its_referee() -> None:
    cgroups = SandboxCgroups(pids_max=64, memory_bytes=256 << 20)
    try:
        pid, _, rest = cgroups.name.partition("-")
        assert pid == str(os.getpid()) and len(rest) == 12
        assert {p.name for p in cgroups.paths.values()} == {cgroups.name}
    finally:
        asyncio.run(cgroups.remove())
