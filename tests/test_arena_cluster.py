"""The ladder on a Dask cluster (``local:2``, real worker processes): meetings are played
there two at a time, in each worker's sandbox, kept and rated as the local ladder keeps
them, and a meeting played there gives the games it gives here, from the same seed."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from referee.records import without_think_times
from referee.sandbox.probe import sandbox_problem
from tests.test_arena_account import ENV, TAVOLO, start_serve
from tests.test_arena_ladder import ARENA, ready
from tournaments.arena.config import load_arena
from tournaments.arena.ladder import Meeting
from tournaments.arena.ladder_cluster import MeetingCluster
from tournaments.arena.ladder_play import LadderRunner
from tournaments.arena.store import ArenaStore
from tournaments.cluster_task import ClusterError

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=str(sandbox_problem()))


def arena(folder: Path) -> tuple[ArenaStore, list[int]]:
    """Two entrants with two active submissions each (four can play two meetings at once)."""
    folder.mkdir()
    (folder / "arena.toml").write_text(ARENA.replace("active = 1", "active = 2"), "utf-8")
    store = ArenaStore(folder / "arena.db")
    ids = []
    for name in ("alice", "bob"):
        entrant, _ = store.invite(name)
        for k, module in enumerate(("random", "heuristic")):
            ids.append(ready(store, entrant, folder / f"{name}{k}", module))
    return store, ids


def records(store: ArenaStore, meeting: int) -> list[list[str]]:
    games = sorted({g for m, g, _, _ in store.ladder.games_of(store.submissions()[0].id)
                    if m == meeting})  # fmt: skip
    out = []
    for game in games or [1, 2]:
        lines = store.ladder.record_of(meeting, game)
        assert lines is not None
        out.append(without_think_times(lines))
    return out


def test_the_ladder_plays_on_a_cluster_as_it_does_here(tmp_path: Path) -> None:
    store, ids = arena(tmp_path / "cluster")
    config = load_arena(tmp_path / "cluster" / "arena.toml")
    played: list[Meeting] = []

    async def on_the_cluster() -> int:
        folder = tmp_path / "cluster" / "arena.db.ladder"
        async with MeetingCluster("local:2", folder) as cluster:
            assert await cluster.threads() == 2
            runner = LadderRunner(store, config, cluster=cluster, on_meeting=played.append)
            task = asyncio.ensure_future(runner.run())
            while len(played) < 3:
                await asyncio.sleep(0.2)
                assert not task.done(), task.exception()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return len(played)

    assert asyncio.run(on_the_cluster()) >= 3
    folder = tmp_path / "cluster" / "arena.db.ladder"
    # The bots' stderr was read from the workers' folders, and those folders removed.
    first = played[0]
    assert f"ladder-{first.id:06d}" in store.logs_of(first.a)
    for meeting in played:
        assert not (folder / f"meeting-{meeting.id:06d}").exists()
    cut = store.ladder.unfinished()
    assert cut and {f"meeting-{m.id:06d}" for m in cut} >= {p.name for p in folder.iterdir()}

    async def resumed() -> int:
        # Whatever the cancel cut short is played again, once, its old folder removed.
        async with MeetingCluster("local:1", folder) as cluster:
            assert not list(folder.glob("meeting-*"))
            return await LadderRunner(store, config, cluster=cluster).resume()

    assert asyncio.run(resumed()) == len(cut)
    assert store.ladder.unfinished() == []
    done = store.ladder.meetings_done()
    assert done == len(played) + len(cut) and len(store.ladder.results()) == 2 * done

    # The same meeting (its submissions' files, its seed) played here gives the same games.
    here, _ = arena(tmp_path / "here")
    mapping = dict(zip(ids, [s.id for s in here.submissions()], strict=True))
    again = here.ladder.start(mapping[first.a], mapping[first.b], first.seed, "2026-12-06")
    asyncio.run(LadderRunner(here, config).play(again))
    theirs = [[line.replace('"alice-', '"A-').replace('"bob-', '"B-') for line in game]
              for game in records(store, first.id)]  # fmt: skip
    ours = [[line.replace('"alice-', '"A-').replace('"bob-', '"B-') for line in game]
            for game in records(here, again.id)]  # fmt: skip
    assert theirs == ours and len(ours) == 2


def test_a_cluster_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ClusterError, match="local:N needs N"):
        MeetingCluster("local:0", tmp_path)
    with pytest.raises(ClusterError, match="tcp://HOST:PORT"):
        MeetingCluster("nowhere", tmp_path)


def test_arena_serve_plays_its_ladder_on_a_cluster(tmp_path: Path) -> None:
    store, _ = arena(tmp_path / "served")
    store.close()
    folder = tmp_path / "served"
    bad = subprocess.run(
        [str(TAVOLO), "arena", "serve", str(folder / "arena.toml"), "--db",
         str(folder / "arena.db"), "--cluster", "local:0"],
        capture_output=True, text=True, env=ENV, timeout=60,
    )  # fmt: skip
    assert bad.returncode != 0 and "local:N needs N" in bad.stderr
    assert "Traceback" not in bad.stderr
    serve, url = start_serve(folder, tls=False, extra=["--cluster", "local:1"])
    try:
        deadline = time.monotonic() + 120
        with httpx.Client(base_url=url, timeout=30) as http:
            while http.get("/api/v1/leaderboard").json()["games"] == 0:
                assert time.monotonic() < deadline, "the ladder played no meeting"
                assert serve.poll() is None, serve.communicate()[1]
                time.sleep(0.5)
    finally:
        serve.terminate()
        serve.wait(30)
    assert (folder / "arena.db.ladder").is_dir()
