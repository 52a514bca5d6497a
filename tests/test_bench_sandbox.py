"""``tavolo bench sandbox`` and ``bench tournament --sandbox``: they run and report real figures.

Small sizes: these check the benchmarks work, not how fast anything is.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.sandboxing import require_sandbox
from tests.test_cli import tavolo


def test_bench_sandbox_reports_start_ups_and_round_trips() -> None:
    require_sandbox()
    result = tavolo("bench", "sandbox", "--runs", "2", "--deals", "2", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["bwrap"].startswith("bubblewrap ")
    seen = {(s["command"], s["sandbox"]) for s in out["startup_ms"]}
    assert seen == {(c, m) for c in ("/bin/true", "random bot to Hello") for m in ("off", "bwrap")}
    assert all(s["median"] > 0 for s in out["startup_ms"])
    trips = {(t["transport"], t["sandbox"]): t for t in out["round_trip_us"]}
    assert set(trips) == {("unix", "bwrap"), ("tcp", "off"), ("unix", "off")}
    assert all(t["decisions"] > 0 and t["p50"] > 0 for t in trips.values())
    # The same table with its bots stopped off move, then pondering: the same decisions.
    frozen, pondering = out["freezing"]
    assert (frozen["bots"], pondering["bots"]) == ("stopped off move", "pondering")
    assert frozen["decisions"] == pondering["decisions"] > 0
    assert isinstance(out["freezing_ms_a_decision"], float)


def test_bench_tournament_counts_the_processes_of_each_sandbox(tmp_path: Path) -> None:
    require_sandbox()
    path = tmp_path / "t.toml"
    path.write_text(
        'name = "b"\n[game]\ndeals = 1\n[match]\ngames = 4\n'
        '[[entry]]\nname = "a"\nbot = "random"\n[[entry]]\nname = "b"\nbot = "random"\n',
        encoding="utf-8",
    )
    counts = {}
    for mode in ("bwrap", "off"):
        result = tavolo("bench", "tournament", path, "--sandbox", mode, "--json")
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        assert (out["sandbox"], out["games"]) == (mode, 4)
        counts[mode] = out["bot_processes"]
    # One match of two sets (four games) of built-in bots: one process per seat for the
    # match either way (a bot that is not built in has one per game in the sandbox).
    assert counts == {"bwrap": 4, "off": 4}
