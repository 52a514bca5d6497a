"""A full disk under the tournament database: one error line, and nothing stored is lost.

The database lives on a tiny tmpfs in a mount namespace of the test's own (``unshare``),
so the disk really fills; the run is then resumed elsewhere and completes.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tournaments.storage import Store

TAVOLO = Path(sys.executable).with_name("tavolo")
TOURNAMENT = """\
name = "full"
seed = "full-1"
# One table: the 200 KB disk then holds a few whole games before it fills (three tables'
# deals at once fill it before the first game ends).
concurrency = 1
[game]
preset = "tressette"
deals = 2
[match]
games = 20
sandbox = "off"
[[entry]]
name = "a"
bot = "random"
[[entry]]
name = "b"
bot = "random"
"""


def test_a_full_disk_gives_one_line_and_loses_nothing(tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed")
    path = tmp_path / "t.toml"
    path.write_text(TOURNAMENT, encoding="utf-8")
    disk = tmp_path / "disk"
    disk.mkdir()
    kept = tmp_path / "kept"
    kept.mkdir()
    run = shlex.join([str(TAVOLO), "tournament", "run", str(path), "--db", str(disk / "t.db")])
    script = (
        f"mount -t tmpfs -o size=280k tmpfs {shlex.quote(str(disk))} && {{ {run}; echo rc=$?; "
        f"cp {shlex.quote(str(disk))}/t.db* {shlex.quote(str(kept))}/; }}"
    )
    userns = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    done = subprocess.run(
        ["unshare", *userns, "--mount", "--propagation", "private", "sh", "-c", script],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert "rc=2" in done.stdout, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {disk / 't.db'}: cannot store the result, the disk is full")
    assert "Traceback" not in done.stderr
    # What was stored before the disk filled is all there, and verifies.
    with Store.open_for_reading(kept / "t.db") as store:
        before = store.game_count()
    assert 1 <= before < 20
    verify = subprocess.run(
        [str(TAVOLO), "tournament", "verify", "--db", str(kept / "t.db")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert verify.returncode == 0, verify.stderr
    # With room again, the same command resumes and finishes.
    resumed = subprocess.run(
        [str(TAVOLO), "tournament", "run", str(path), "--db", str(kept / "t.db"), "--quiet"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed: {before} games were already stored" in resumed.stdout
    with Store.open_for_reading(kept / "t.db") as store:
        assert store.game_count() == 20
