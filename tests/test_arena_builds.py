"""Submissions built and validated in the real sandbox, by the arena's worker, against a
real store: a build that works and a bot that plays are ``ready``; a build that fails, that
attacks the host, or that runs too long, and a bot that breaks the protocol are ``failed``,
with the reason, and their logs kept for their entrant."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from referee.sandbox.probe import sandbox_problem
from tournaments.arena.archives import ArchiveLimits, pack
from tournaments.arena.config import ArenaConfig, load_arena
from tournaments.arena.store import ArenaStore, Entrant, State, Submission
from tournaments.arena.worker import SubmissionWorker

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=str(sandbox_problem()))

ARENA = """\
name = "builds"
[game]
preset = "tressette"
deals = 1
[match]
deadline_ms = 2000
[build]
seconds = {seconds}
toolchains = {toolchains}
"""

RANDOM_BOT = "from tavolo_bot.bots.random import main\nmain()\n"


def setting(
    tmp_path: Path, seconds: float = 60, toolchains: tuple[str, ...] = ()
) -> tuple[ArenaStore, ArenaConfig, Entrant]:
    file = tmp_path / "arena.toml"
    listed = json.dumps(list(toolchains))
    file.write_text(ARENA.format(seconds=seconds, toolchains=listed), encoding="utf-8")
    store = ArenaStore(tmp_path / "arena.db")
    entrant, _ = store.invite("alice")
    return store, load_arena(file), entrant


def submitted(
    store: ArenaStore, entrant: Entrant, folder: Path, files: dict[str, str]
) -> Submission:
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    submission, new = store.submit(entrant, pack(folder), limits=ArchiveLimits(), per_day=20)
    assert new
    return submission


def manifest(build: str | None, command: str = f'["{sys.executable}", "bot.py"]') -> str:
    text = f'name = "mybot"\ncommand = {command}\n'
    return text + (f"build = {build}\n" if build else "")


def processed(store: ArenaStore, config: ArenaConfig) -> Submission:
    seen: list[Submission] = []
    worked = asyncio.run(SubmissionWorker(store, config, on_done=seen.append).work_once())
    assert worked and len(seen) == 1
    return seen[0]


def test_a_bot_built_in_the_sandbox_that_plays_is_ready(tmp_path: Path) -> None:
    store, config, alice = setting(tmp_path)
    # The build writes the bot from its template: bot.py exists only in the built folder.
    build = '["sh", "-c", "echo making the bot; cp template.py bot.py"]'
    submission = submitted(store, alice, tmp_path / "bot", {
        "bot.toml": manifest(build), "template.py": RANDOM_BOT,
    })  # fmt: skip
    done = processed(store, config)
    assert (done.id, done.state, done.reason) == (submission.id, State.READY, "")
    built = store.built_of(done)
    assert (built / "bot.py").read_text() == RANDOM_BOT and not (
        store.files_of(done) / "bot.py"
    ).exists()
    assert (built / "bot.py").stat().st_mode & 0o222 == 0  # kept read-only
    logs = store.logs_of(done.id)
    assert logs["build"].strip() == "making the bot"
    assert "conformance: connects: pass" in logs["validation"]
    assert "; timeouts 0, illegal actions 0, crashes 0" in logs["validation"]
    assert store.received() == []


def test_a_failing_build_is_failed_with_its_log(tmp_path: Path) -> None:
    store, config, alice = setting(tmp_path)
    build = '["sh", "-c", "echo compiling; echo missing.h: no such file >&2; exit 3"]'
    submitted(store, alice, tmp_path / "bot", {"bot.toml": manifest(build)})
    done = processed(store, config)
    assert done.state is State.FAILED and done.reason == "the build failed: exit status 3"
    assert store.logs_of(done.id)["build"] == "compiling\nmissing.h: no such file\n"
    assert not store.built_of(done).exists()


def test_a_build_cannot_reach_the_host_or_the_network(tmp_path: Path) -> None:
    store, config, alice = setting(tmp_path)
    target = tmp_path / "planted"
    attack = "\n".join([
        f"{{ echo pwned > {target}; }} 2> /dev/null || echo host: refused",
        f"{{ echo pwned > {store.files}/planted; }} 2> /dev/null || echo files: refused",
        "cat /etc/shadow > /dev/null 2>&1 || echo shadow: refused",
        "python3 -c \"",
        "import socket",
        "try:",
        "    socket.create_connection(('1.1.1.1', 53), 3)",
        "    print('network: open')",
        "except OSError as error:",
        "    print('network: refused', type(error).__name__)\"",
        "exit 1",
    ])  # fmt: skip
    build = f"['sh', '-c', '''{attack}''']"
    submitted(store, alice, tmp_path / "bot", {"bot.toml": manifest(build)})
    done = processed(store, config)
    assert done.state is State.FAILED
    assert store.logs_of(done.id)["build"].split() == [
        "host:", "refused", "files:", "refused", "shadow:", "refused",
        "network:", "refused", "OSError",
    ]  # fmt: skip
    assert not target.exists()


LOCKS = """\
import fcntl
with open("template.py") as file:
    fcntl.flock(file, fcntl.LOCK_EX)
    fcntl.lockf(file, fcntl.LOCK_SH)
    print("locks: taken")
    try:
        fcntl.fcntl(file, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        print("lease: taken")
    except OSError as error:
        print("lease: refused", error.strerror)
"""


def test_a_build_runs_its_toolchains_programs_and_may_lock_its_files(tmp_path: Path) -> None:
    """A toolchain's bin folder is on the build's PATH (a manifest names ``cargo``, not
    where the organiser keeps it); go and cargo lock their own files, so a build may, but
    a lease, which sees others' opens, stays refused."""
    toolchain = tmp_path / "toolchain"
    (toolchain / "bin").mkdir(parents=True)
    tool = toolchain / "bin" / "maketool"
    tool.write_text('#!/bin/sh\necho "maketool ran: $0"\n', encoding="utf-8")
    tool.chmod(0o755)
    store, config, alice = setting(tmp_path, toolchains=(str(toolchain),))
    build = '["sh", "-c", "maketool && python3 locks.py && cp template.py bot.py"]'
    submitted(store, alice, tmp_path / "bot", {
        "bot.toml": manifest(build), "template.py": RANDOM_BOT, "locks.py": LOCKS,
    })  # fmt: skip
    done = processed(store, config)
    assert (done.state, done.reason) == (State.READY, "")
    assert store.logs_of(done.id)["build"].splitlines() == [
        f"maketool ran: {tool}", "locks: taken", "lease: refused Operation not permitted",
    ]  # fmt: skip


def test_a_build_that_runs_too_long_is_stopped(tmp_path: Path) -> None:
    store, config, alice = setting(tmp_path, seconds=2)
    submitted(store, alice, tmp_path / "bot", {"bot.toml": manifest('["sleep", "60"]')})
    done = processed(store, config)
    assert done.state is State.FAILED and done.reason == "the build took more than 2 s"


def test_a_bot_that_breaks_the_protocol_fails_validation(tmp_path: Path) -> None:
    store, config, alice = setting(tmp_path)
    submitted(store, alice, tmp_path / "bot", {
        "bot.toml": manifest(None), "bot.py": "print('I am not a bot')\n",
    })  # fmt: skip
    done = processed(store, config)
    assert done.state is State.FAILED and done.reason.startswith("conformance failed: ")
    assert "conformance: " in store.logs_of(done.id)["validation"]


def test_a_stopped_arena_takes_up_what_it_was_doing(tmp_path: Path) -> None:
    store, _, alice = setting(tmp_path)
    submission = submitted(store, alice, tmp_path / "bot", {"bot.toml": manifest(None)})
    store.set_state(submission.id, State.VALIDATING)
    assert store.received() == []
    assert store.requeue_unfinished() == 1
    assert store.received() == [store.submission(submission.id)]


def test_the_validation_opponent_and_its_sets_are_the_arenas(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    reference.mkdir()
    (reference / "bot.toml").write_text(
        f'name = "mine"\ncommand = ["{sys.executable}", "-m", "tavolo_bot.bots.heuristic"]\n'
    )
    file = tmp_path / "arena.toml"
    file.write_text(
        ARENA.format(seconds=60, toolchains="[]")
        + '[validation]\nopponent = "reference/bot.toml"\nsets = 2\n',
        encoding="utf-8",
    )
    config = load_arena(file)
    assert config.validation.opponent == str(reference / "bot.toml")
    store = ArenaStore(tmp_path / "arena.db")
    alice, _ = store.invite("alice")
    submitted(store, alice, tmp_path / "bot", {"bot.toml": manifest(None), "bot.py": RANDOM_BOT})
    done = processed(store, config)
    assert done.state is State.READY, done.reason
    # Two duplicate sets of four-seat Tressette: four games, against the organiser's bot.
    assert "validation match against bot.toml: 4 games" in store.logs_of(done.id)["validation"]
    store.close()
