"""A real submission in each client language, made by following its README
(tests/client_submissions.py), submitted to a real arena store, built by the arena in its
sandbox, with no network, from what the submission vendored, and validated: each ends
``ready``, its build log kept.

The arena file lists the toolchains an organiser would (docs/arena.md): the Rust
toolchain and the Go root; the rest is the system's. Each client must be built first
(``make clients``): the READMEs copy and vendor from its outputs and caches.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.client_submissions import FOLDER, LANGS, follow, section
from tests.sandboxing import require_sandbox
from tests.test_clients import require
from tournaments.arena.config import ArenaConfig, load_arena
from tournaments.arena.store import ArenaStore, State, Submission
from tournaments.arena.worker import SubmissionWorker
from tournaments.cli.arena import pack

ARENA = """\
name = "languages"
[game]
preset = "tressette"
deals = 1
[match]
deadline_ms = 2000
[submissions]               # a Rust submission's vendored crates are 200 MB in 7,100 files
archive_bytes = 67108864
total_bytes = 268435456
members = 10000
[build]
toolchains = {toolchains}
"""

BUILT = {
    "python": "__pycache__/my_bot.cpython-*.pyc",
    "go": "mybot",
    "rust": "bin/mybot",
    "java": "mybot.jar",
    "cpp": "mybot",
    "typescript": "dist/bots/example-bot.js",
}
"""What the build made: in the built folder, not in the submission."""

LOGGED = {
    "python": r"Compiling '\./grpc/__init__\.py'",
    "go": r"(?m)^google\.golang\.org/grpc$",
    "rust": r"Compiling tonic v[\s\S]*Installing /tmp/work/bin/mybot",
    "java": r"added manifest",
    "cpp": r"Linking CXX executable example-bot",
    "typescript": r"TSFILE: /tmp/work/dist/bots/example-bot\.js",
}
"""A line of the build log that shows the build compiling the vendored code in its sandbox."""


def toolchains() -> list[str]:
    """The host folders an organiser lists here: the Rust toolchain and the Go root."""
    found = []
    for program, ask in (("rustc", ["--print", "sysroot"]), ("go", ["env", "GOROOT"])):
        if shutil.which(program) is not None:
            done = subprocess.run([program, *ask], capture_output=True, text=True, check=True)
            found.append(done.stdout.strip())
    return found


def arena(tmp_path: Path) -> tuple[ArenaStore, ArenaConfig]:
    file = tmp_path / "arena.toml"
    file.write_text(ARENA.format(toolchains=json.dumps(toolchains())), encoding="utf-8")
    return ArenaStore(tmp_path / "arena.db"), load_arena(file)


@pytest.mark.parametrize("lang", LANGS)
def test_a_submission_made_as_the_readme_says_builds_offline_and_is_ready(
    lang: str, tmp_path: Path
) -> None:
    require_sandbox()
    if lang != "python":  # the Python SDK is this checkout's own
        require(lang)
    folder = follow(lang, tmp_path / "work")
    assert section(lang).submit == f"tavolo arena submit {FOLDER} --arena https://arena.example/"
    store, config = arena(tmp_path)
    alice, _ = store.invite("alice")
    submission, new = store.submit(
        alice, pack(folder), limits=config.submissions.archive, per_day=1
    )
    assert new
    seen: list[Submission] = []
    assert asyncio.run(SubmissionWorker(store, config, on_done=seen.append).work_once())
    [done] = seen
    logs = store.logs_of(done.id)
    assert (done.id, done.state, done.reason) == (submission.id, State.READY, ""), logs
    assert re.search(LOGGED[lang], logs["build"]), logs["build"][-3000:]
    assert "; timeouts 0, illegal actions 0, crashes 0" in logs["validation"], logs
    built = list(store.built_of(done).glob(BUILT[lang]))
    assert len(built) == 1 and built[0].is_file(), BUILT[lang]
    assert not list(store.files_of(done).glob(BUILT[lang]))
