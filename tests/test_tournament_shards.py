"""Tournaments on referee shards: real shard processes, real bots, real SQLite.

A sharded run must store what a run in one process stores: the same games, deal for deal
(think times aside), whatever happens to a shard on the way.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from referee.service.server import Referee, start_referee
from referee.shard_pool import ShardFailed, ShardPool, ShardSpec
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc
from tests.test_cli import tavolo
from tests.test_tournament_run import game_records, table_without_think_times, tournament
from tournaments.config import load_config
from tournaments.runner import (
    RunSettings,
    SilentListener,
    TournamentRun,
    open_store,
    planned_pairings,
)
from tournaments.storage import StorageError, Store


def test_a_sharded_run_stores_what_one_process_stores(tmp_path: Path) -> None:
    file = tournament(tmp_path, games=4, deals=2)
    runs = {}
    for shards in (1, 2):
        db = tmp_path / f"shards-{shards}.db"
        result = tavolo("tournament", "run", file, "--db", db, "--shards", str(shards), "--quiet")
        assert result.exit_code == 0, result.output
        runs[shards] = db
    assert table_without_think_times(runs[1]) == table_without_think_times(runs[2])
    timed = json.loads(tavolo("tournament", "table", "--db", runs[2], "--format", "json").stdout)
    assert all(e["think_time"]["decisions"] > 0 for e in timed["entries"])
    untimed = tavolo("tournament", "table", "--db", runs[2], "--format", "json", "--no-think-times")
    assert all(e["think_time"] is None for e in json.loads(untimed.stdout)["entries"])
    assert game_records(runs[1]) == game_records(runs[2])
    assert len(game_records(runs[2])) == 12


def test_spectators_of_the_head_see_every_shards_tables(tmp_path: Path) -> None:
    config = load_config(tournament(tmp_path, games=2, deals=3))
    matches = len(planned_pairings(config))
    watched: dict[str, list[str]] = {}

    async def watch_all(address: str) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            spectators = pb_grpc.SpectatorServiceStub(channel)  # type: ignore[no-untyped-call]
            follows: list[asyncio.Task[None]] = []

            async def follow(table_id: str) -> None:
                cards = watched.setdefault(table_id, [])
                async for item in spectators.Watch(pb.WatchRequest(table_id=table_id)):
                    if item.event.HasField("card_played"):
                        cards.append(item.event.card_played.card)

            # Listing stops once every match has shown its table: a poll that came after the
            # run stopped its head would find nothing listening.
            while len(watched) < matches:
                listed = await spectators.ListTables(pb.ListTablesRequest())
                for info in listed.tables:
                    if info.table_id not in watched:
                        watched[info.table_id] = []
                        follows.append(asyncio.ensure_future(follow(info.table_id)))
                await asyncio.sleep(0.02)
            await asyncio.gather(*follows)

    async def scenario() -> None:
        watchers: list[asyncio.Task[None]] = []

        class Watching(SilentListener):
            def referee(self, referee: Referee) -> None:
                watchers.append(asyncio.ensure_future(watch_all(referee.address)))

        with open_store(tmp_path / "t.db", config) as store:
            settings = RunSettings(concurrency=2, shards=2)
            run = TournamentRun(config, store, settings, listener=Watching())
            await run.run()
        await asyncio.gather(*watchers)

    asyncio.run(scenario())
    stored = {}
    for (match_id, _), lines in sorted(game_records(tmp_path / "t.db").items()):
        plays = [json.loads(line) for line in lines]
        stored.setdefault(match_id, []).extend(p["card"] for p in plays if p["type"] == "play")
    # Every match was played on a shard (the head plays none when sharded) and watched
    # through the head from its first card to its last.
    assert len(stored) == matches
    assert sorted(watched.values()) == sorted(stored.values())


def _shards_of(pid: int) -> list[int]:
    """The shard processes under ``pid``."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == pid and b"referee.shard_worker" in cmdline:
            out.append(int(entry.name))
    return out


def test_a_shard_killed_mid_tournament_has_its_match_played_again(tmp_path: Path) -> None:
    file = tournament(tmp_path, games=8, deals=3)
    local = tmp_path / "local.db"
    result = tavolo("tournament", "run", file, "--db", local, "--shards", "1", "--quiet")
    assert result.exit_code == 0, result.output

    db = tmp_path / "sharded.db"
    code = "import sys; from tournaments.cli.main import app; sys.argv[0] = 'tavolo'; app()"
    command = [sys.executable, "-c", code, "tournament", "run", str(file), "--db", str(db)]
    command += ["--shards", "2", "--concurrency", "2", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        killed = None
        deadline = time.monotonic() + 120
        while killed is None and time.monotonic() < deadline:
            shards = _shards_of(run.pid)
            if len(shards) == 2 and _deals_stored(db) >= 2:
                os.kill(shards[0], signal.SIGKILL)
                killed = shards[0]
            time.sleep(0.05)
        assert killed is not None, "the run never had two shards and a stored deal"
        _, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, err.decode()
    assert "was killed by SIGKILL: starting it again" in err.decode()
    assert "its unfinished games play again" in err.decode()
    assert table_without_think_times(db) == table_without_think_times(local)
    assert game_records(db) == game_records(local)
    with Store.open_for_reading(db) as store:
        assert store.game_count() == 24  # nothing counted twice


def _deals_stored(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with Store.open_for_reading(db) as store:
            return store.deal_count()
    except (StorageError, sqlite3.OperationalError):  # the run is still making it
        return 0


def test_a_shard_that_cannot_start_is_one_error_quoting_its_stderr() -> None:
    async def scenario() -> str:
        head = await start_referee()
        pool = ShardPool(head, [ShardSpec("256.1.2.3:0")])  # no such address to listen on
        try:
            with pytest.raises(ShardFailed) as failed:
                await pool.start()
        finally:
            await head.stop(0)
        return str(failed.value)

    message = asyncio.run(scenario())
    assert message.startswith("shard 0 (listening on 256.1.2.3:0) did not start: exited with")
    assert "its stderr ends: " in message and "\n" not in message
