"""A bot is an unprivileged stranger on the host: run for real by ``tests/bots/hostile.py``.

Started by a root referee, bwrap used to map the bot's uid to host uid 0: a bot without
capabilities that still owned ``/proc/sys`` (763 files open for writing, ``core_pattern``
among them, which a crash turns into a root command) and read ``/etc/shadow``. Now each
sandbox runs as a host uid of its own (referee/sandbox/uids.py).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from referee.entries import parse_entry
from referee.match.results import MatchResult
from referee.sandbox.uids import UID_RANGE
from tests.bots.harness import run
from tests.sandboxing import require_sandbox
from tests.test_sandbox import _play, hostile

root_only = pytest.mark.skipif(
    os.geteuid() != 0, reason="the host-uid mapping is a root referee's (a normal user's bots "
    "are that user, who cannot map others)"
)  # fmt: skip


@pytest.fixture(autouse=True)
def _sandbox_needed() -> None:
    require_sandbox()


def _host_uids(marker: str) -> dict[int, int]:
    """pid -> host real uid of every process whose command line holds ``marker``."""
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            status = Path(f"/proc/{pid}/status").read_text().splitlines()
        except OSError:
            continue
        out[int(pid)] = int(next(x.split()[1] for x in status if x.startswith("Uid:")))
    return out


@root_only
def test_a_root_referees_bots_are_strangers_to_the_host(tmp_path: Path) -> None:
    core_pattern = Path("/proc/sys/kernel/core_pattern").read_text()
    seen: dict[int, int] = {}

    async def watch(task: asyncio.Future[MatchResult]) -> None:
        while not task.done():
            # Not bwrap's own process (root's, outside): the bot's, run by the sandbox.
            seen.update(_host_uids("--attack\0host"))
            await asyncio.sleep(0.05)

    entry = hostile(tmp_path / "bot", "host")
    played = run(_play((entry, parse_entry("random")), tmp_path, during=watch), timeout=240)
    played.assert_played_out()
    reports = played.all_reports()
    assert len(reports) == 4  # a process per seat per arrangement, a game each
    mapped = set()
    for r in reports:
        # Inside: nobody, no capability, no new privileges; outside: a uid of the range.
        assert r["uid"] == 65534 and r["cap_eff"] == "0" * 16 and r["no_new_privs"] == "1", r
        inside, outside, count = (int(x) for x in r["uid_map"][-3:])
        assert inside == 65534 and count == 1 and outside in UID_RANGE, r
        mapped.add(outside)
        # ns_last_pid is mode 0666 but of the sandbox's own PID namespace, and a write
        # needs a capability there too; every other knob was host root's to write.
        assert set(r["writable"]) <= {"/proc/sys/kernel/ns_last_pid"}, r
        assert set(r["written"].values()) <= {"EACCES", "EROFS", "EPERM"}, r
        assert r["secrets"] and set(r["secrets"].values()) == {"EACCES"}, r
        # No user namespace below the sandbox's: its limit is 0 (or the filter says no).
        assert r["user_namespace"] in ("ENOSPC", "EPERM"), r
    # A uid of its own per sandbox (two processes of each of two seats' slots).
    assert len(mapped) == 4
    bots = {uid for pid, uid in seen.items() if uid != 0}
    assert bots and bots <= mapped, (seen, mapped)
    assert Path("/proc/sys/kernel/core_pattern").read_text() == core_pattern


def test_the_machines_counters_do_not_move_inside(tmp_path: Path) -> None:
    """A sender that opens and closes thousands of descriptors moves the machine's
    ``file-nr`` (the channel measured at 50 bit/s); inside, every counter stands still."""
    host_file_nr: set[str] = set()

    async def churn(task: asyncio.Future[MatchResult]) -> None:
        while not task.done():
            fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(2000)]
            host_file_nr.add(Path("/proc/sys/fs/file-nr").read_text())
            await asyncio.sleep(0.02)
            for fd in fds:
                os.close(fd)
            host_file_nr.add(Path("/proc/sys/fs/file-nr").read_text())
            await asyncio.sleep(0.02)

    entry = hostile(tmp_path / "bot", "counters")
    played = run(_play((entry, parse_entry("random")), tmp_path, during=churn), timeout=240)
    played.assert_played_out()
    reports = played.all_reports()
    assert reports
    for r in reports:
        assert set(r["distinct"].values()) == {1}, r
        assert r["pressure"] in (None, []), r
    # The channel was there to be read: outside, the count moved.
    assert len(host_file_nr) > 1
