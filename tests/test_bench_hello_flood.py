"""``tavolo bench hello-flood`` runs and reports what the referee held and refused."""

from __future__ import annotations

import json

from tests.test_cli import tavolo


def test_the_flood_bench_reports_the_cap_and_the_memory() -> None:
    done = tavolo("bench", "hello-flood", "--streams", "200", "--json")
    assert done.exit_code == 0, done.output
    found = json.loads(done.stdout)
    assert found["benchmark"] == "hello-flood" and found["streams"] == 200
    assert found["refused"] == {
        "RESOURCE_EXHAUSTED: too_many_streams": 200 - found["held"],
        "DEADLINE_EXCEEDED: no_hello": found["held"],
    }
    assert 0 < found["rss_before_mb"] <= found["rss_peak_mb"]
