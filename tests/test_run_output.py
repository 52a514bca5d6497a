"""What ``tavolo tournament run`` prints: a bar that keeps its count and ETA at 80 columns,
only the resume line after Ctrl-C (the bots stopped and reaped), the SPRT as a sentence,
and the connection window of ``--connect-timeout``.

Real console script (under a pseudo-terminal for the bar), real sandboxed bots, real gRPC.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import shlex
import signal
import sqlite3
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.sandboxing import require_sandbox
from tests.test_cli import console_script, tavolo

SDK_RANDOM = "cmd:" + shlex.join([sys.executable, "-m", "tavolo_bot.bots.random"])
ENV = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}


def tournament(tmp_path: Path, entries: dict[str, str], *, games: int, extra: str = "") -> Path:
    path = tmp_path / "cup.toml"
    body = "".join(
        f"[[entry]]\nname = {json.dumps(n)}\nbot = {json.dumps(b)}\n" for n, b in entries.items()
    )
    path.write_text(
        f'name = "a-rather-long-tournament-name-2026"\nseed = "out-1"\n[game]\ndeals = 1\n'
        f"[match]\ngames = {games}\n{extra}\n{body}",
        encoding="utf-8",
    )
    return path


def stored(db: Path) -> int:
    try:
        with sqlite3.connect(db) as c:
            return int(c.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


# -- the bar at 80 columns --------------------------------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run_in_terminal(args: list[str], columns: int) -> tuple[int, str]:
    """Run the console script on a pseudo-terminal ``columns`` wide; (exit status, output)."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    process = subprocess.Popen(
        [console_script(), *args],
        stdin=side, stdout=side, stderr=side, close_fds=True,
        env={**ENV, "COLUMNS": str(columns), "TERM": "xterm"},
    )  # fmt: skip
    os.close(side)
    chunks = []
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.5)
        if ready:
            try:
                data = os.read(main, 65536)
            except OSError:  # the other side closed: the process is gone
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    os.close(main)
    return process.wait(30), b"".join(chunks).decode("utf-8", errors="replace")


def test_the_bar_keeps_its_count_and_eta_at_80_columns(tmp_path: Path) -> None:
    require_sandbox()
    long_names = {
        "heuristic-with-a-long-name": "heuristic",
        "random-number-one-long-name": "random",
        "random-number-two-long-name": "random",
    }
    path = tournament(tmp_path, long_names, games=8)
    code, output = run_in_terminal(["tournament", "run", str(path)], 80)
    assert code == 0, output
    frames = [
        ANSI.sub("", frame).rstrip()
        for frame in re.split(r"[\r\n]", output)
        if "games, ETA" in frame
    ]
    assert frames, output
    for frame in frames:
        assert len(frame) <= 80, frame
        assert re.search(r" \d+/24 games, ETA (\d+:\d\d:\d\d|-:--:--)( |$)", frame), frame
    assert re.search(r" 24/24 games, ETA 0:00:00", frames[-1]), frames[-1]
    assert "…" in "".join(frames)  # the name and the standings were cut, not the count
    # A terminal shows the bar, not a line per game.
    assert "match 1 game 1:" not in output


# -- Ctrl-C -----------------------------------------------------------------------------------


@pytest.mark.parametrize("when", ["starting", "playing"])
def test_ctrl_c_prints_only_the_resume_line(tmp_path: Path, when: str) -> None:
    require_sandbox()
    # A bot of its own path, to find any of its processes left behind.
    script = tmp_path / "mine.py"
    script.write_text(
        "from tavolo_bot.bots.random import main\nmain()\n",
        encoding="utf-8",
    )
    mine = "cmd:" + shlex.join([sys.executable, str(script)])
    path = tournament(tmp_path, {"mine": mine, "other": SDK_RANDOM, "third": "random"}, games=40)
    db = tmp_path / "cup.db"
    process = subprocess.Popen(
        [console_script(), "tournament", "run", str(path), "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            # match-1, or match-1-part-1 when the run cuts the match into runs of sets
            if when == "starting" and list((tmp_path / "cup.logs").glob("match-1*")):
                break
            if when == "playing" and stored(db) >= 2:
                break
            time.sleep(0.02)
        assert process.poll() is None, "the run ended before Ctrl-C"
        process.send_signal(signal.SIGINT)
        time.sleep(0.2)
        if process.poll() is None:
            process.send_signal(signal.SIGINT)  # impatient: a second Ctrl-C changes nothing
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, out + err
    assert err.splitlines() == [
        f"error: interrupted: every finished deal and game is in {db}; "
        "run the same command to resume"
    ]
    # Every bot process was stopped and reaped before the command ended.
    left = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if str(script).encode() in cmdline:
            left.append(proc.name)
    assert left == []
    # And the run resumes where it stopped; a match it had begun logs into a folder of its
    # own, so the first run's logs stay as they were.
    logs = tmp_path / "cup.logs"
    before = {p.name for p in logs.iterdir()}
    again = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert again.exit_code == 0, again.output
    assert "120 of 120 stored" in again.stdout
    resumed = {p.name for p in logs.iterdir()} - before
    assert any(re.fullmatch(r"match-\d+(-part-\d+)?-run-2", name) for name in resumed), resumed


# -- the SPRT, as a sentence ------------------------------------------------------------------


def test_the_sprt_reads_as_a_sentence(tmp_path: Path) -> None:
    h1 = tournament(tmp_path, {"strong": "heuristic", "weak": "random"}, games=200)
    result = tavolo("tournament", "run", h1, "--db", tmp_path / "h1.db", "--sprt", "0,100")
    assert result.exit_code == 0, result.output
    assert re.search(
        r"^SPRT \(elo0 0, elo1 100\): LLR (\d+\.\d{3}) crossed the upper bound 2\.944: "
        r"H1 accepted$",
        result.stdout,
        re.M,
    ), result.stdout

    undecided = tournament(tmp_path, {"a": "random", "b": "random"}, games=2)
    result = tavolo("tournament", "run", undecided, "--db", tmp_path / "u.db", "--sprt", "0,10")
    assert result.exit_code == 0, result.output
    assert re.search(
        r"^SPRT \(elo0 0, elo1 10\): LLR -?\d+\.\d{3} is between the bounds -2\.944 and "
        r"2\.944: undecided, more games are needed$",
        result.stdout,
        re.M,
    ), result.stdout

    h0 = tournament(tmp_path, {"a": "random", "b": "random"}, games=400)
    result = tavolo("tournament", "run", h0, "--db", tmp_path / "h0.db", "--sprt", "100,200")
    assert result.exit_code == 0, result.output
    assert re.search(
        r"^SPRT \(elo0 100, elo1 200\): LLR -\d+\.\d{3} crossed the lower bound -2\.944: "
        r"H0 accepted$",
        result.stdout,
        re.M,
    ), result.stdout


# -- the connection window --------------------------------------------------------------------


def test_connect_timeout_on_the_command_line_wins_over_the_file(tmp_path: Path) -> None:
    path = tournament(
        tmp_path, {"far": "remote", "near": "random"}, games=2, extra="connect_timeout = 30\n"
    )
    start = time.monotonic()
    result = tavolo("tournament", "run", path, "--db", tmp_path / "c.db", "--connect-timeout", "1")
    assert time.monotonic() - start < 30
    assert result.exit_code == 1, result.output  # 'far' never connected: every game faulted
    games = [line for line in result.stdout.splitlines() if line.startswith("match 1 game ")]
    assert len(games) == 2
    for line in games:
        assert ", crash: never connected (entry 'far', seat " in line
        assert "no connection within 1 s" in line
    bad = tavolo("tournament", "run", path, "--connect-timeout", "0")
    assert bad.exit_code == 2
    assert "error: --connect-timeout must be seconds above 0 and at most 86400" in bad.stderr
