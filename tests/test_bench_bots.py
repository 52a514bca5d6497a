"""``tavolo bench bots``: figures of real matches that agree with their records."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.helpers import record_games
from tournaments.benchmarks.bots import SCENARIOS, Z95, paired_difference, ratio_interval
from tournaments.cli.main import app

RUNNER = CliRunner()
TINY = [
    "--bot", "heuristic", "--scenario", "study-vs-random,a-tre-vs-heuristic",
    "--games", "4", "--deals", "1",
]  # fmt: skip


def test_the_margin_interval_worked_by_hand() -> None:
    # Sets (margin, deals): (4, 2) and (0, 2). Mean 4/4 = 1; residuals 4 - 2 = 2 and
    # 0 - 2 = -2; se = sqrt(2/1 · 8) / 4 = 1.
    m = ratio_interval({1: (4.0, 2), 2: (0.0, 2)})
    assert (m.mean, m.low, m.high) == pytest.approx((1.0, 1.0 - Z95, 1.0 + Z95))
    assert ratio_interval({1: (3.0, 2)}).low is None  # one set: no spread to measure
    assert ratio_interval({}).mean is None
    # a: (6, 2), (2, 2): mean 2, z of a ±2/4; b: (2, 2), (2, 2): mean 1, z 0. Difference 1,
    # se = sqrt(2 · (0.25 + 0.25)) = 1.
    d = paired_difference({1: (6.0, 2), 2: (2.0, 2)}, {1: (2.0, 2), 2: (2.0, 2)})
    assert (d.mean, d.low, d.high) == pytest.approx((1.0, 1.0 - Z95, 1.0 + Z95))
    # Paired: a constant shift on the same sets has no spread at all.
    d = paired_difference({1: (6.0, 2), 2: (2.0, 2)}, {1: (4.0, 2), 2: (0.0, 2)})
    assert (d.mean, d.low, d.high) == pytest.approx((1.0, 1.0, 1.0))
    assert paired_difference({1: (6.0, 2), 2: (2.0, 2)}, {1: (4.0, 2)}).low is None


def _nearest_rank(times: list[int], q: float) -> int:
    ordered = sorted(times)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def test_the_figures_are_the_records(tmp_path: Path) -> None:
    records = tmp_path / "records"
    result = RUNNER.invoke(app, ["bench", "bots", *TINY, "--json", "--records", str(records)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert [s["scenario"] for s in out["scenarios"]] == ["study-vs-random", "a-tre-vs-heuristic"]
    for s in out["scenarios"]:
        games = record_games(Path(s["record"]))
        wins = draws = deals = 0
        margin = 0.0
        times: list[int] = []
        for game in games:
            header = game[0]
            seats = [str(x) for x in header["seats"]]  # type: ignore[union-attr]
            sides = 3 if header["game"] == "tressette-a-tre" else 2
            # The bot under test is the match's first entry: named "heuristic" as it is.
            mine = [seat for seat, name in enumerate(seats) if name == "heuristic"]
            side = mine[0] % sides
            result_line = game[-1]
            wins += result_line["winner"] == side
            draws += result_line["winner"] is None
            for line in game:
                if line["type"] == "score":
                    points = [int(p) for p in line["points"]]  # type: ignore[union-attr]
                    others = [p for k, p in enumerate(points) if k != side]
                    margin += points[side] - sum(others) / len(others)
                    deals += 1
                if "ms" in line and line["seat"] in mine:
                    times.append(int(str(line["ms"])))
        assert s["games"] == len(games) == (4 if s["scenario"] == "study-vs-random" else 6)
        assert (s["wins"], s["draws"], s["deals"]) == (wins, draws, deals)
        assert s["margin_per_deal"] == pytest.approx(margin / deals, abs=1e-4)
        assert s["decisions"] == len(times) > 0
        assert s["p50_ms"] == _nearest_rank(times, 0.5)
        assert s["p99_ms"] == _nearest_rank(times, 0.99)
        assert (s["timeouts"], s["forfeits"]) == (0, 0)
        assert s["win_rate"] == pytest.approx(wins / len(games), abs=1e-4)
    # Two sets of study-vs-random give a margin interval; one set of a-tre gives none.
    study, a_tre = out["scenarios"]
    assert study["margin_low"] <= study["margin_per_deal"] <= study["margin_high"]
    assert a_tre["margin_low"] is None
    assert study["win_target"] == 0.95 and study["win_target_met"] == (study["win_rate"] >= 0.95)
    assert out["games"] == 10 and out["no_timeouts_target"]["met"] is False

    # The table says the same (the same seed plays the same games), targets beside them.
    text = RUNNER.invoke(app, ["bench", "bots", *TINY])
    assert text.exit_code == 0, text.output
    line = next(x for x in text.stdout.splitlines() if x.startswith("study-vs-random"))
    assert f"{study['wins']}/4 {study['win_rate']:.3f} " in line
    assert (">= 0.95: met" if study["win_target_met"] else ">= 0.95: not met") in line
    assert "timeouts: 0 in 10 games; target: none in 1,000 games: not met" in text.stdout


def test_every_scenario_of_the_issue_is_there() -> None:
    names = [s.name for s in SCENARIOS]
    assert names[:5] == [
        "defaults-vs-heuristic", "study-vs-heuristic", "study-vs-random",
        "signals-any", "signals-muto",
    ]  # fmt: skip
    assert {s.game for s in SCENARIOS} >= {
        "tressette-a-tre",
        "tressette-a-due",
        "ciapano",
        "calabresella",
    }
    for s in SCENARIOS:
        s.rules()  # every preset and knob is one the engine knows


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scenario", "vs-nobody"], "unknown scenario 'vs-nobody'; choose from defaults-vs"),
        (["--bot", "cmd:no-such-program-xyz"], "--bot: entry 'cmd:no-such-program-xyz'"),
        (["--games", "0"], "--games, --deadline-ms and --deals must be 1 or more"),
    ],
)
def test_bad_benches_fail_in_one_line(args: list[str], message: str) -> None:
    result = RUNNER.invoke(app, ["bench", "bots", "--scenario", "study-vs-random", *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
