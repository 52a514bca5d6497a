"""pimc's clock: the in-process match's deadline sizes it, and without it pimc reproduces.

Before, ``--in-process`` said a fixed 1000 ms deadline in every request whatever
``--deadline-ms`` was, so pimc searched 400 ms a decision; and there was no way to
take the clock away, so a search cut short by a slow machine made a rerun differ.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tournaments.cli.main import app


def _play(
    tmp_path: Path, name: str, deadline_ms: int, ms: str, worlds: str = "6"
) -> tuple[str, str]:
    """``tavolo play pimc heuristic --in-process`` with pimc's knobs in the environment:
    its record without the think times, and its stderr."""
    record = tmp_path / f"{name}.jsonl"
    env = {"TAVOLO_PIMC_MS_PER_DECISION": ms, "TAVOLO_PIMC_WORLDS": worlds}
    done = CliRunner().invoke(
        app,
        ["play", "pimc", "heuristic", "--seed", "clock", "--deals", "1", "--in-process",
         "--deadline-ms", str(deadline_ms), "--record", str(record)],
        env=env,
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    return record.read_text(encoding="utf-8"), done.stderr


def test_in_process_requests_say_the_match_deadline(tmp_path: Path) -> None:
    # 60 ms less its 50 ms margin: 10 ms a search, which 200 worlds never fit in; before,
    # the 1000 ms the requests said gave 400 ms.
    _, said = _play(tmp_path, "short", deadline_ms=60, ms="400", worlds="200")
    assert "pimc: the time limit (10 ms) stopped a search" in said, said


def test_without_a_clock_the_same_seed_gives_the_same_record(tmp_path: Path) -> None:
    hurried, said = _play(tmp_path, "hurried", deadline_ms=60, ms="0")
    assert "time limit" not in said
    easy, _ = _play(tmp_path, "easy", deadline_ms=5000, ms="0")
    assert hurried == easy
    assert '"type":"play"' in hurried


@pytest.mark.parametrize("bad", ["-1", "x"])
def test_a_bad_clock_is_one_error(tmp_path: Path, bad: str) -> None:
    done = CliRunner().invoke(
        app, ["play", "pimc", "heuristic", "--seed", "s", "--deals", "1", "--in-process"],
        env={"TAVOLO_PIMC_MS_PER_DECISION": bad},
    )  # fmt: skip
    assert done.exit_code == 2, done.output
    assert "ms-per-decision must be a whole number from 0" in done.stderr
