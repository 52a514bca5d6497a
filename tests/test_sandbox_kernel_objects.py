"""Partners in two sandboxes cannot pass a hand through a kernel object they both reach.

A hostile entry plays both seats of a side, each in a sandbox of its own. When its hand
arrives, each process publishes it through every object another sandbox might reach
(byte-range locks on ``/etc/passwd``, keyrings, System V memory, a futex in a shared
mapping) and reads its partner's back (tests/bots/hostile.py, ``kernel-objects``). The
seccomp filter (:mod:`referee.sandbox.seccomp`) refuses each call; without it the locks,
the keyrings and the futex each carried whole hands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from referee.entries import parse_entry
from tests.sandboxing import as_a_normal_user, require_sandbox
from tests.test_sandbox import hostile, play

REFUSED = {
    "posix_lock", "posix_probe", "ofd_lock", "ofd_probe", "flock",
    "add_key_session", "add_key_user", "request_key",
    "futex_wake", "inotify_init1", "fanotify_init", "mincore", "fadvise_dontneed",
    "io_uring_setup", "userfaultfd", "bpf", "unshare",
}  # fmt: skip


@pytest.fixture(autouse=True)
def _sandbox_needed() -> None:
    require_sandbox()


def _reports(tmp_path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Each process's report, and what each futex waiter got."""
    entry = hostile(tmp_path / "bot", "kernel-objects")
    played = play((entry, parse_entry("random")), tmp_path)
    played.assert_played_out()
    reports = [r for r in played.all_reports() if r["attack"] == "kernel-objects"]
    # Two games (the duplicate set's two arrangements), with two seats in each, each seat
    # in a sandbox of its own.
    assert len(reports) == 4, reports
    waits = [r["waited"] for r in played.all_reports() if r["attack"] == "kernel-objects-futex"]
    return reports, waits


def _assert_nothing_crossed(reports: list[dict[str, Any]], waits: list[str]) -> None:
    for r in reports:
        errors = r["errors"]
        assert {name: errors.get(name) for name in REFUSED} == dict.fromkeys(REFUSED, "EPERM"), r
        assert errors["clone3"] == "ENOSYS", r  # as a kernel without it: libraries fall back
        # The IPC namespace is the sandbox's own: the partner's segment is not there.
        assert errors["shmget"] == "ok" and errors["shmget_other"] == "ENOENT", r
        assert r["learned"] == {} and r["futex_woken"] == {}, r
    # A shared wait is allowed (pthread_join's); only the kernel can end it, at a thread's
    # exit, so the waiters, if they report before their process is killed, time out.
    assert "woken" not in waits, waits


def test_partners_pass_nothing_through_kernel_objects(tmp_path: Path) -> None:
    _assert_nothing_crossed(*_reports(tmp_path))


def test_partners_pass_nothing_through_kernel_objects_on_a_normal_users_road(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with as_a_normal_user(monkeypatch):
        reports, waits = _reports(tmp_path)
    _assert_nothing_crossed(reports, waits)


def test_a_bot_whose_process_shared_lock_is_refused_is_told_why(tmp_path: Path) -> None:
    """Contended, a ``multiprocessing.Lock`` needs a shared futex wake, which the filter
    refuses: the C library aborts the process, and the fault line says what happened."""
    played = play((hostile(tmp_path / "bot", "shared-lock"), parse_entry("random")), tmp_path)
    forfeits = [line for line in played.lines if line["type"] == "forfeit"]
    assert forfeits and {f["reason"] for f in forfeits} == {"crash"}, forfeits
    for forfeit in forfeits:
        # SIGABRT: bwrap passes it on as 128 + 6.
        assert "exit status 134" in forfeit["detail"], forfeit
        assert "needed a futex wake, which the sandbox refuses" in forfeit["detail"], forfeit
    assert not [r for r in played.all_reports() if r["attack"] == "shared-lock"]
