"""``tavolo bench referee``: a tiny run through the real referee and bot processes.

Only the shape of the figures is checked; speed targets live in docs/benchmarks.md.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess

import pytest
from typer.testing import CliRunner

from referee import grpc_transport
from tests.test_cli import console_script
from tournaments.benchmarks.round_trips import default_deals, percentile
from tournaments.cli.main import app

runner = CliRunner()


def test_bench_referee_json_has_positive_figures() -> None:
    args = ["bench", "referee", "--json", "--tables", "1", "--deals", "1", "--echo-trips", "200"]
    result = runner.invoke(app, [*args, "--rounds", "3"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["benchmark"] == "referee"
    for key in (
        "p50_us",
        "p99_us",
        "decisions_per_second",
        "echo_p50_us",
        "echo_after_write_p50_us",
    ):
        assert out[key] > 0, key
    [run] = out["runs"]
    assert run["tables"] == 1
    assert run["deals"] == 1
    assert run["faults"] == 0
    # Two games (both seatings) of one deal: one decision a card, 40 a deal.
    assert run["decisions"] >= 2 * 40
    for key in ("p50_us", "p99_us", "decisions_per_second", "seconds"):
        assert run[key] > 0, key
    assert run["p99_us"] >= run["p50_us"]
    # CPU over the play phase: the referee's (this process) and the four bots', in all and
    # per answered decision; the top level gives those of the run with the most tables.
    for side in ("referee", "bot"):
        seconds, per_decision = run[f"{side}_cpu_seconds"], run[f"{side}_cpu_us_per_decision"]
        assert math.isfinite(per_decision) and per_decision > 0, side
        assert per_decision == pytest.approx(seconds / run["decisions"] * 1e6, rel=0.01, abs=0.2)
        assert out[f"{side}_cpu_us_per_decision"] == per_decision
    # Not more CPU than the wall time allows on this machine's cores.
    assert run["referee_cpu_seconds"] <= run["seconds"] * (os.cpu_count() or 1) + 0.05
    # The bare echo (one client process), then the echo laid out like the 1-table run.
    bare, matched = out["echo"]
    assert (bare["tables"], bare["processes"]) == (1, 1)
    assert (matched["tables"], matched["processes"]) == (1, 4)
    for echo in (bare, matched):
        assert echo["decisions"] == 200
        assert echo["p50_us"] > 0 and echo["decisions_per_second"] > 0
    assert out["echo_p50_us"] == bare["p50_us"]
    # Every run above used the referee's transport; the bare echo ran once more on gRPC's
    # defaults, in a process of its own.
    assert out["transport"] == {"GRPC_EXPERIMENTS": grpc_transport.GRPC_EXPERIMENTS}
    defaults = out["echo_grpc_defaults"]
    assert (defaults["tables"], defaults["processes"], defaults["decisions"]) == (1, 1, 200)
    assert out["echo_grpc_defaults_p50_us"] == defaults["p50_us"] > 0
    # Three rounds of the bare echoes and the referee: the runs shown are the median ones,
    # and each ratio is the median of the rounds' ratios.
    rounds = out["rounds"]
    assert len(rounds) == 3
    assert sorted(r["p50_us"] for r in rounds)[1] == out["p50_us"] == run["p50_us"]
    assert sorted(r["echo_p50_us"] for r in rounds)[1] == out["echo_p50_us"]
    assert sorted(r["echo_grpc_defaults_p50_us"] for r in rounds)[1] == defaults["p50_us"]
    same = sorted(r["p50_us"] / r["echo_p50_us"] for r in rounds)[1]
    assert out["p50_over_echo"] == pytest.approx(same, abs=0.01)
    grpc_defaults = sorted(r["p50_us"] / r["echo_grpc_defaults_p50_us"] for r in rounds)[1]
    assert out["p50_over_echo_grpc_defaults"] == pytest.approx(grpc_defaults, abs=0.01)


def test_bench_referee_on_grpc_defaults_has_no_second_baseline() -> None:
    # A process of its own: gRPC reads its transport when it loads.
    env = {**os.environ, "GRPC_EXPERIMENTS": ""}
    args = ["bench", "referee", "--json", "--tables", "1", "--deals", "1", "--echo-trips", "100"]
    args += ["--rounds", "1"]
    done = subprocess.run(
        [console_script(), *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["transport"] == {"GRPC_EXPERIMENTS": ""}
    assert "echo_grpc_defaults" not in out
    assert out["runs"][0]["faults"] == 0


def test_bench_referee_refuses_bad_table_counts() -> None:
    result = runner.invoke(app, ["bench", "referee", "--tables", "1,x"])
    assert result.exit_code == 2
    assert "error: --tables" in result.stderr
    result = runner.invoke(app, ["bench", "referee", "--tables", "0"])
    assert result.exit_code == 2
    result = runner.invoke(app, ["bench", "referee", "--rounds", "0"])
    assert result.exit_code == 2 and "--rounds" in result.stderr


def test_percentile_and_default_sizes() -> None:
    assert percentile([5.0], 50) == 5.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 50) == 3.0
    assert 4.9 < percentile([float(i) for i in range(1, 6)], 99) <= 5.0
    assert default_deals(1) > default_deals(64) >= 1


def test_bench_referee_text_names_the_transport_and_both_ratios() -> None:
    result = runner.invoke(
        app, ["bench", "referee", "--tables", "1", "--deals", "1", "--echo-trips", "100"]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any(line.startswith("echo, gRPC defaults") for line in lines)
    assert f"gRPC transport: GRPC_EXPERIMENTS={grpc_transport.GRPC_EXPERIMENTS!r}" in lines
    assert any(line.startswith("  on gRPC's defaults: ") for line in lines)
    assert any(line.startswith("  on the same transport: ") for line in lines)
    assert "referee CPU µs/decision" in lines[0] and "bots CPU µs/decision" in lines[0]
    cpu = re.fullmatch(
        r"1 table\(s\): referee CPU ([\d,]+) µs and bots CPU ([\d,]+) µs per decision", lines[-2]
    )
    assert cpu is not None, lines[-2]
    assert all(int(x.replace(",", "")) > 0 for x in cpu.groups())
    assert lines[-1].endswith("decisions/s (target >= 5,000 at 64 tables)")
