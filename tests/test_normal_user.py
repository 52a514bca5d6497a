"""The key attacks again with the referee run by a real normal user, not root.

The other sandbox tests run the referee as root (the road docs/security.md recommends)
and take the normal user's road by telling the referee it is not root. Here ``tavolo
play`` itself runs as the user ``TAVOLO_NORMAL_USER`` (``.ci/run`` makes ``tavolo-ci``)
from a virtual environment of Debian's Python that the user can read
(``TAVOLO_NORMAL_PYTHON``): bwrap, the kernel's keyrings and ``/proc/sys`` all see a
normal user. The bots' logs are read afterwards, as root.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.sandboxing import REQUIRED, require_sandbox
from tests.test_sandbox_kernel_objects import REFUSED

HOSTILE = Path(__file__).resolve().parent / "bots" / "hostile.py"
USER = os.environ.get("TAVOLO_NORMAL_USER", "")
PYTHON = os.environ.get("TAVOLO_NORMAL_PYTHON", "")


@pytest.fixture
def folder() -> Iterator[Path]:
    """A folder of the normal user's, outside root's private temporary folders."""
    problem = None
    if os.geteuid() != 0:
        problem = "these tests start the referee as another user, which needs root"
    elif not USER or not PYTHON:
        problem = "TAVOLO_NORMAL_USER and TAVOLO_NORMAL_PYTHON are not set (.ci/run sets them)"
    if problem is not None:
        if REQUIRED:
            pytest.fail(f"{problem} (TAVOLO_REQUIRE_SANDBOX=1: no sandbox test may be skipped)")
        pytest.skip(problem)
    require_sandbox()
    user = pwd.getpwnam(USER)
    made = Path(tempfile.mkdtemp(prefix="tavolo-normal-user-", dir="/tmp"))
    made.chmod(0o755)
    os.chown(made, user.pw_uid, user.pw_gid)
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def _play_as_the_user(folder: Path, attack: str) -> tuple[subprocess.CompletedProcess[str], list]:
    """``tavolo play`` of a hostile manifest against random, run by the normal user; the
    run, and every ATTACK line of its bots."""
    user = pwd.getpwnam(USER)
    bot = folder / "bot"
    bot.mkdir()
    shutil.copy(HOSTILE, bot / "hostile.py")
    command = [PYTHON, "hostile.py", "--attack", attack]
    (bot / "bot.toml").write_text(
        f'name = "hostile"\ncommand = {json.dumps(command)}\n', encoding="utf-8"
    )
    for path in (bot, bot / "hostile.py", bot / "bot.toml"):
        os.chown(path, user.pw_uid, user.pw_gid)
    tavolo = str(Path(PYTHON).with_name("tavolo"))
    args = [tavolo, "play", str(bot / "bot.toml"), "random", "--seed", "normal-user",
            "--deals", "1", "--deadline-ms", "10000",
            "--workdir", str(folder / "work")]  # fmt: skip
    done = subprocess.run(
        ["/usr/sbin/runuser", "-u", USER, "--", *args],
        cwd=folder,
        env={"HOME": user.pw_dir, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    reports = [
        json.loads(line.split(" ", 1)[1])
        for log in sorted((folder / "work").rglob("stderr.log"))
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
        if line.startswith("ATTACK ")
    ]
    return done, reports


def _played_as_a_normal_user(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stdout + done.stderr
    # The referee knew it was not root: no cgroups, and it said so.
    assert "the referee is not root" in done.stderr, done.stderr


def test_partners_pass_nothing_through_kernel_objects_under_a_normal_user(folder: Path) -> None:
    """Under one normal user every sandbox shares the user's keyring: the filter refuses it."""
    done, reports = _play_as_the_user(folder, "kernel-objects")
    _played_as_a_normal_user(done)
    found: list[dict[str, Any]] = [r for r in reports if r["attack"] == "kernel-objects"]
    assert len(found) == 4, reports
    for r in found:
        errors = r["errors"]
        assert {name: errors.get(name) for name in REFUSED} == dict.fromkeys(REFUSED, "EPERM"), r
        assert r["learned"] == {} and r["futex_woken"] == {}, r


def test_a_normal_users_bot_cannot_touch_the_host(folder: Path) -> None:
    done, reports = _play_as_the_user(folder, "host")
    _played_as_a_normal_user(done)
    found = [r for r in reports if r["attack"] == "host"]
    assert len(found) == 4, reports
    for r in found:
        assert r["cap_eff"] == "0" * 16 and r["no_new_privs"] == "1", r
        assert set(r["writable"]) <= {"/proc/sys/kernel/ns_last_pid"}, r
        assert set(r["written"].values()) <= {"EACCES", "EROFS", "EPERM"}, r
        assert r["secrets"] and set(r["secrets"].values()) == {"EACCES"}, r
        assert r["user_namespace"] in ("ENOSPC", "EPERM"), r
