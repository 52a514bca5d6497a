"""``tavolo bench referee --shards N``: a tiny run on real ``tavolo serve`` processes.

Only the report's fields and their consistency are checked; the speed targets live in
docs/benchmarks.md.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.test_cli import assert_one_error, tavolo
from tournaments.benchmarks.round_trips import BenchError
from tournaments.benchmarks.shards import ServeProcess, serve_tree_has_shards
from tournaments.cli.main import app

runner = CliRunner()


def _consistent(run: dict[str, Any], shards: int, tables: int) -> None:
    assert (run["shards"], run["tables"], run["streams"]) == (shards, tables, 4 * tables)
    assert run["connected"] == run["streams"] and run["never_connected"] == 0
    assert run["refused"] == {}
    assert run["matches"] == {"done": tables}
    terminations = run["terminations"]
    # Two games a match, each ended one way or another.
    assert run["games"] == sum(terminations.values()) == 2 * tables
    assert run["spurious_timeouts"] == terminations.get("timeout", 0)
    decisions, seconds = run["decisions"], run["seconds"]
    # One deal a game: at least one decision a card, 40 cards a deal.
    assert decisions >= 2 * 40 * tables
    # The seconds are rounded to the millisecond in the report, and a tiny run lasts a few
    # tens of them: the rate lies within what the rounding allows, give or take its own 0.1.
    low, high = decisions / (seconds + 0.0005), decisions / (seconds - 0.0005)
    assert low - 0.1 <= run["decisions_per_second"] <= high + 0.1
    referee_cpu = run["referee_cpu_seconds"]
    assert referee_cpu > 0
    assert abs(run["referee_cpu_us_per_decision"] - referee_cpu / decisions * 1e6) < 1
    assert run["generator_cpu_seconds"] > 0
    # Every stream got in within the connection window (20 s).
    assert 0 < run["connect_seconds_max"] < 20


@pytest.mark.parametrize("generator", ["python", "go"])
def test_bench_referee_shards_reports_both_runs_the_ratio_and_the_streams(generator: str) -> None:
    if generator == "go" and shutil.which("go") is None:
        if os.environ.get("TAVOLO_REQUIRE_CLIENTS") == "1":
            pytest.fail("no go toolchain (TAVOLO_REQUIRE_CLIENTS=1: the Go generator must run)")
        pytest.skip("no go toolchain on PATH")
    result = runner.invoke(
        app,
        ["bench", "referee", "--shards", "2", "--shard-tables", "2", "--stream-tables", "3",
         "--deals", "1", "--json", "--generator", generator],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["benchmark"] == "referee_shards" and out["shards"] == 2
    assert out["generator"] == generator
    assert {out[k]["generator"] for k in ("one_shard", "n_shards", "streams")} == {generator}
    one, many, streams = out["one_shard"], out["n_shards"], out["streams"]
    _consistent(one, 1, 2)
    _consistent(many, 2, 2)
    _consistent(streams, 2, 3)
    # The same load: the same seeds, deals and first-legal answers give the same games.
    assert one["decisions"] == many["decisions"]
    # One address for one shard; CreateMatch put the two waiting matches on both shards.
    assert (one["addresses"], many["addresses"], streams["addresses"]) == (1, 2, 2)
    assert out["ratio"] == round(many["decisions_per_second"] / one["decisions_per_second"], 2)
    assert out["ratio_target"] == 1.7


def test_bench_referee_shards_refuses_no_shards() -> None:
    assert_one_error(
        tavolo("bench", "referee", "--shards", "0"),
        "--shards, --shard-tables and --stream-tables must be 1 or more",
    )


def test_bench_referee_shards_generator_errors_are_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    base = ["bench", "referee", "--shards", "1", "--shard-tables", "1", "--stream-tables", "1"]
    assert_one_error(tavolo(*base, "--generator", "fortran"), "--generator fortran", "go, python")
    assert_one_error(tavolo("bench", "referee", "--generator", "go"), "goes with --shards")
    # Python itself stays reachable: only go is gone from PATH.
    monkeypatch.setenv("PATH", str(tmp_path))
    assert_one_error(tavolo(*base, "--generator", "go"), "no go toolchain on PATH")


REPO = Path(__file__).resolve().parent.parent


def test_bench_referee_against_alternates_the_two_trees_and_reports_the_change() -> None:
    # The other tree is this checkout itself: its serve runs from the tree's own directory.
    result = runner.invoke(
        app,
        ["bench", "referee", "--against", str(REPO), "--rounds", "2", "--shard-tables", "2",
         "--deals", "1", "--generator", "python", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["benchmark"] == "referee_against" and out["against"] == str(REPO)
    assert (out["tables"], out["deals"], out["rounds"], out["generator"]) == (2, 1, 2, "python")
    for side in ("other", "this"):
        figures = out[side]
        cpu, rate = figures["referee_cpu_us_per_decision"], figures["decisions_per_second"]
        assert len(cpu) == len(rate) == 2 and min(cpu) > 0 and min(rate) > 0
        # Timeouts are counted, not required to be 0: a loaded machine may make a few.
        assert len(figures["spurious_timeouts"]) == 2 and min(figures["spurious_timeouts"]) >= 0
        assert abs(figures["mean_referee_cpu_us_per_decision"] - sum(cpu) / 2) <= 0.1
    # The change is this build's mean over the other's, less one.
    mean = {side: out[side]["mean_referee_cpu_us_per_decision"] for side in ("other", "this")}
    assert abs(out["referee_cpu_change"] - (mean["this"] / mean["other"] - 1)) < 0.002


def test_bench_referee_against_refuses_what_is_no_checkout(tmp_path: Path) -> None:
    assert_one_error(
        tavolo("bench", "referee", "--against", str(tmp_path)),
        f"--against {tmp_path}", "not a tavolo checkout",
    )  # fmt: skip
    assert_one_error(
        tavolo("bench", "referee", "--against", str(REPO), "--shards", "2"),
        "--against and --shards",
    )


def test_a_tree_whose_serve_has_no_shards_plays_only_one(tmp_path: Path) -> None:
    (tmp_path / "tournaments" / "cli").mkdir(parents=True)
    generated = tmp_path / "clients" / "python" / "tavolo_bot" / "proto"
    generated.mkdir(parents=True)
    (tmp_path / "tournaments" / "cli" / "serve.py").write_text("def serve(listen): ...\n")
    (generated / "referee_pb2.py").write_text("")
    assert not serve_tree_has_shards(tmp_path)
    assert serve_tree_has_shards(REPO)
    with pytest.raises(BenchError, match="has no --shards, so only 1 shard"):
        ServeProcess(2, tmp_path, 20.0, tmp_path)


def test_bench_referee_against_runs_the_other_trees_own_serve(tmp_path: Path) -> None:
    tree = tmp_path / "other"
    for folder in ("referee", "tournaments", "clients/python"):
        shutil.copytree(REPO / folder, tree / folder, ignore=shutil.ignore_patterns("__pycache__"))
    serve = tree / "tournaments" / "cli" / "serve.py"
    serve.write_text(serve.read_text() + "\nraise SystemExit('the other tree serves')\n")
    # The copy's serve fails as it loads: the load on it reports that, not this tree's.
    assert_one_error(
        tavolo("bench", "referee", "--against", str(tree), "--rounds", "1",
               "--shard-tables", "1", "--deals", "1", "--generator", "python"),
        "tavolo serve exited with 1", "the other tree serves",
    )  # fmt: skip
