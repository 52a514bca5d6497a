"""``tavolo`` as newcomers and scripts see it: help text, play's output, exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.test_cli import console_script, tavolo


def _help(*command: str) -> str:
    """The help as a terminal of 200 columns shows it (the console script, for real)."""
    done = subprocess.run(
        [console_script(), *command, "--help"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "COLUMNS": "200", "TERM": "dumb"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_flags_take_no_value_in_help() -> None:
    top = _help()
    assert "<bool>" not in top
    assert re.search(r"--version\s+Print the version", top), top
    assert re.search(r"--help\s+Show this message", top), top
    assert "<bool>" not in _help("play")


def test_arguments_read_as_words_in_usage() -> None:
    play = _help("play")
    assert "Usage: tavolo play [OPTIONS] ENTRIES..." in play
    assert "{" not in play.splitlines()[1]
    assert "Usage: tavolo tournament run [OPTIONS] FILE" in _help("tournament", "run")


def test_play_help_names_every_built_in_bot() -> None:
    play = " ".join(_help("play").split())
    assert "a built-in bot (heuristic, pimc, random)" in play


def test_help_paragraphs_are_not_broken_mid_sentence() -> None:
    # Wide enough for the sentence: it is one line, not cut where the source wraps.
    bench = _help("bench", "referee")
    assert "plays T Tressette matches of two remote entries at once" in bench


def test_play_prints_the_table_first_and_words_not_tokens(tmp_path: Path) -> None:
    done = tavolo("play", "heuristic", "random", "--seed", "words", "--deals", "1")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0].startswith("entry ")  # no blank line first
    games = [line for line in lines if line.startswith("game ")]
    assert len(games) == 2
    for line in games:
        assert re.fullmatch(
            r"game \d: \S+ vs \S+: \[\d+, \d+\] after 1 deal, deals played: (\S+ won|a draw)", line
        ), line
    assert "deals_played" not in done.stdout


def test_quiet_prints_the_table_and_only_the_games_that_went_wrong() -> None:
    done = tavolo("play", "heuristic", "random", "--seed", "quiet", "--deals", "1", "--quiet")
    assert done.exit_code == 0, done.output
    assert not [line for line in done.stdout.splitlines() if line.startswith("game ")]
    assert "heuristic" in done.stdout


@pytest.mark.parametrize("in_process", [False, True])
def test_play_json(tmp_path: Path, in_process: bool) -> None:
    record = tmp_path / "r.jsonl"
    args = ["play", "heuristic", "random", "--seed", "json", "--deals", "1", "--json",
            "--record", str(record)]  # fmt: skip
    done = tavolo(*args, *(["--in-process"] if in_process else []))
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)  # nothing else on stdout
    assert [e["name"] for e in data["entries"]] == ["heuristic", "random"]
    assert sum(e["wins"] + e["draws"] for e in data["entries"]) >= 2
    assert [g["game"] for g in data["games"]] == [1, 2]
    for game in data["games"]:
        assert game["deals"] == 1 and game["termination"] == "deals_played"
        assert sorted(game["sides"]) == ["heuristic", "random"]
        best = game["totals"].index(max(game["totals"]))
        if game["totals"].count(max(game["totals"])) == 1:
            assert game["winner"] == game["sides"][best]
    assert data["record"] == str(record)


@pytest.mark.parametrize(
    "args",
    [
        ["verify", "/nonexistent/r.jsonl"],
        ["replay", "/nonexistent/r.jsonl"],
        ["tournament", "run", "/nonexistent/t.toml"],
        ["tournament", "table", "--db", "/nonexistent/t.db"],
        ["tournament", "report", "/tmp/never-made-report", "--db", "/nonexistent/t.db"],
        ["play", "random", "random", "--seed", "s", "--book", "/nonexistent/book.jsonl"],
    ],
)
def test_a_missing_file_is_exit_2_everywhere(args: list[str]) -> None:
    done = tavolo(*args)
    assert done.exit_code == 2, done.output
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "/nonexistent/" in errors[0], done.stderr


def test_the_demos_logs_are_ignored_and_cleaned() -> None:
    root = Path(__file__).resolve().parent.parent
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "demo.logs/"], cwd=root, check=False, timeout=30
    )
    assert ignored.returncode == 0, "demo.logs/ is not ignored"
    clean = subprocess.run(
        ["make", "-n", "clean"], cwd=root, capture_output=True, text=True, check=True, timeout=30
    )
    assert "demo.logs" in clean.stdout.split()
