"""Matches over real gRPC with real bot processes: `tavolo play`, entries, serve, TLS."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from typer.testing import CliRunner

from referee.engine.registry import preset
from referee.entries import EntryError, parse_entry
from referee.match.config import Limits, MatchConfig
from referee.match.match import Match
from referee.match_maker import LocalMatchMaker
from referee.records import verify_file, verify_lines, without_think_times
from referee.sandbox.bot_process import start_bot
from referee.sandbox.bwrap import PATH_INSIDE
from referee.sandbox.probe import sandbox_problem
from referee.service.server import start_referee
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc
from tests.test_cli import run_async
from tournaments.cli.main import app

RUNNER = CliRunner()


def headers(record: Path) -> list[dict[str, object]]:
    lines = record.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.startswith('{"type":"game"')]


def test_play_over_grpc_plays_a_duplicate_set(tmp_path: Path) -> None:
    record = tmp_path / "match.jsonl"
    args = ["play", "random", "heuristic", "--seed", "dup", "--deals", "2", "--quiet"]
    result = RUNNER.invoke(app, [*args, "--record", str(record), "--workdir", str(tmp_path / "w")])
    assert result.exit_code == 0, result.output
    assert "random" in result.stdout and "heuristic" in result.stdout
    assert "0/0/0" in result.stdout  # no timeouts, illegal actions or crashes
    verified = verify_file(record)
    assert len(verified.outcomes) == 2
    assert all(o.deals == 2 for o in verified.outcomes)
    # The same seeded deals, the sides swapped.
    first, second = headers(record)
    assert first["seed"] == second["seed"] == "dup"
    assert first["seats"] == ["random", "heuristic", "random", "heuristic"]
    assert second["seats"] == ["heuristic", "random", "heuristic", "random"]
    deals = [
        json.loads(line)
        for line in record.read_text(encoding="utf-8").splitlines()
        if line.startswith('{"type":"deal"')
    ]
    assert [d["hands"] for d in deals[:2]] == [d["hands"] for d in deals[2:]]
    # Each process had its own folder with its own logs; in the sandbox, each seat's
    # second game (the same deals) is played by a process of its own.
    folders = sorted(p.name for p in (tmp_path / "w").iterdir())
    # Built-in bots: one process per slot for the match, sandboxed or not (the per-game
    # processes of other bots are tested in tests/test_sandbox.py).
    assert folders == ["0-0", "0-1", "1-0", "1-1"]
    for folder in folders:
        assert (tmp_path / "w" / folder / "stderr.log").exists()
        assert (tmp_path / "w" / folder / "stdout.log").exists()


def test_the_same_seed_gives_the_same_record_over_processes(tmp_path: Path) -> None:
    records = []
    for name in ("a", "b"):
        record = tmp_path / f"{name}.jsonl"
        args = ["play", "random", "random", "--seed", "again", "--deals", "1", "--quiet"]
        result = RUNNER.invoke(app, [*args, "--record", str(record)])
        assert result.exit_code == 0, result.output
        records.append(record.read_text(encoding="utf-8").splitlines())
    # The same but for the think times, which no two runs share.
    assert without_think_times(records[0]) == without_think_times(records[1])


def test_tressette_a_tre_over_grpc_plays_every_arrangement(tmp_path: Path) -> None:
    record = tmp_path / "tre.jsonl"
    args = ["play", "random", "heuristic", "random", "--game", "tressette-a-tre"]
    result = RUNNER.invoke(
        app, [*args, "--seed", "tre", "--deals", "1", "--quiet", "--record", str(record)]
    )
    assert result.exit_code == 0, result.output
    verified = verify_file(record)
    assert len(verified.outcomes) == 6
    seatings = [h["seats"] for h in headers(record)]
    # The three rotations first, then the other three orders: all 3! arrangements.
    assert seatings == [
        ["random", "heuristic", "random-2"],
        ["random-2", "random", "heuristic"],
        ["heuristic", "random-2", "random"],
        ["random", "random-2", "heuristic"],
        ["heuristic", "random", "random-2"],
        ["random-2", "heuristic", "random"],
    ]
    assert {h["seed"] for h in headers(record)} == {"tre"}, "one duplicate set: the same deals"


def test_a_bot_manifest_and_a_command_entry(tmp_path: Path) -> None:
    manifest = tmp_path / "bot.toml"
    manifest.write_text(
        'name = "my-bot"\n'
        f'command = ["{sys.executable}", "-m", "tavolo_bot.bots.heuristic"]\n'
        "[limits]\ncpu_seconds = 60\nmemory_mb = 1024\nfile_mb = 8\n",
        encoding="utf-8",
    )
    entry = parse_entry(str(manifest))
    assert (entry.name, entry.cpu_seconds, entry.memory_mb, entry.file_mb) == (
        "my-bot",
        60,
        1024,
        8,
    )
    record = tmp_path / "m.jsonl"
    command = f"cmd:{sys.executable} -m tavolo_bot.bots.random"
    args = ["play", str(manifest), command, "--seed", "m", "--deals", "1", "--quiet"]
    result = RUNNER.invoke(app, [*args, "--record", str(record)])
    assert result.exit_code == 0, result.output
    assert "my-bot" in result.stdout
    assert result.stdout.count(" 0/0/0") == 2
    assert "incident" not in result.stdout
    outcomes = verify_file(record).outcomes
    assert [o.termination.value for o in outcomes] == ["deals_played", "deals_played"]


def test_a_bot_starts_with_default_signal_handling(tmp_path: Path) -> None:
    """Python ignores SIGPIPE and SIGXFSZ, and exec would pass that on to the bot."""
    probe = parse_entry("cmd:sh -c 'grep SigIgn /proc/self/status'")

    async def ignored() -> int:
        bot = await start_bot(probe, "probe", tmp_path / "probe", {})
        await bot.process.wait()
        line = (bot.workdir / "stdout.log").read_text(encoding="utf-8")
        return int(line.split()[1], 16)

    mask = asyncio.run(ignored())
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        assert not mask & (1 << (sig - 1)), sig


def test_a_log_is_cut_at_log_mb(tmp_path: Path) -> None:
    """A log cannot grow past log_mb: the disk stays safe, and the bot is not blocked."""
    flood = tmp_path / "flood.toml"
    flood.write_text(
        'name = "flood"\n'
        'command = ["sh", "-c", "head -c 3000000 /dev/zero >&2; exit 7"]\n'
        "[limits]\nlog_mb = 1\n",
        encoding="utf-8",
    )
    record, work = tmp_path / "m.jsonl", tmp_path / "w"
    args = ["play", str(flood), "random", "--seed", "f", "--deals", "1", "--quiet"]
    args += ["--connect-timeout", "10", "--record", str(record), "--workdir", str(work)]
    result = RUNNER.invoke(app, args)
    # It never connects, so the command fails (after the table): but it was not blocked.
    assert result.exit_code == 1, result.output
    note = b"\n[tavolo: log cut at its log_mb, 1 MB]\n"
    for k in ("0", "1"):
        log = (work / f"0-{k}" / "stderr.log").read_bytes()
        assert log == b"\0" * 1024 * 1024 + note
    forfeits = [
        json.loads(line)
        for line in record.read_text(encoding="utf-8").splitlines()
        if line.startswith('{"type":"forfeit"')
    ]
    assert len(forfeits) == 2
    for forfeit in forfeits:
        assert forfeit["reason"] == "crash"
        # It wrote all it wanted (the referee read on) and ended by itself.
        assert "exit status 7" in forfeit["detail"]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("bogus", "unknown entry 'bogus'"),
        ("cmd:", "the command is empty"),
        ("cmd:no-such-program-xyz --flag", "'no-such-program-xyz' not found on PATH"),
        ("cmd:./missing.sh", "'./missing.sh' not found"),
        ("cmd:'unclosed", "bad command line"),
        ("nowhere.toml", "cannot read bot manifest"),
    ],
)
def test_bad_entries_are_named(text: str, needle: str) -> None:
    with pytest.raises(EntryError, match=needle):
        parse_entry(text)


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ('name = "x"\ncommand = "true"\ncolour = "red"\n', "unknown key 'colour'"),
        ('command = "true"\n', "key 'name'"),
        ('name = "x"\n', "key 'command'"),
        ('name = "x"\ncommand = "true"\n[limits]\nmemory_mb = 0\n', "limits.memory_mb"),
        ('name = "x"\ncommand = "true"\n[limits]\nfile_mb = -1\n', "limits.file_mb"),
        ('name = "x"\ncommand = "true"\n[limits]\ngpus = 1\n', "limits.gpus"),
        ('name = "x"\ncommand = "./nope"\n', "'./nope' not found"),
        ('name = "x"\ncommand = "true"\nworkdir = "no/such"\n', "is not a folder"),
        ("name = \n", "not TOML"),
    ],
)
def test_bad_manifests_name_the_file_and_key(tmp_path: Path, body: str, needle: str) -> None:
    manifest = tmp_path / "bot.toml"
    manifest.write_text(body, encoding="utf-8")
    with pytest.raises(EntryError, match=needle) as info:
        parse_entry(str(manifest))
    assert str(manifest) in str(info.value)


def test_play_with_a_bad_entry_is_one_error_line() -> None:
    result = RUNNER.invoke(app, ["play", "random", "cmd:no-such-program-xyz", "--seed", "s"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: entry 'cmd:no-such-program-xyz': program 'no-such-program-xyz' not found on PATH"
    ]


def test_every_process_is_reaped_and_tickets_close() -> None:
    async def scenario() -> None:
        referee = await start_referee()
        try:
            config = MatchConfig(
                preset("tressette"),
                "reap",
                # cmd: entries, not built in: in the sandbox, a process per seat and game.
                (parse_entry(f"cmd:{sys.executable} -m tavolo_bot.bots.random"),) * 2,
                deals=1,
                limits=Limits(connect_timeout=10),
            )
            match = Match(referee, config)
            await match.run()
            # In the sandbox, one process per seat for each of the duplicate set's games.
            assert len(match.processes) == (8 if sandbox_problem() is None else 4)
            assert all(p.process.returncode is not None for p in match.processes)
            for row in match.links:
                for link in row:
                    assert link.closed
            # A used ticket opens nothing now (nor did it ever over TCP: its own socket
            # was the only way in, and that socket is gone).
            ticket = match.links[0][0].ticket
            assert match.links[0][0].socket is not None
            assert not Path(match.links[0][0].socket).exists()
            async with grpc.aio.insecure_channel(referee.address) as channel:
                call = pb_grpc.RefereeServiceStub(channel).Play()
                await call.write(pb.PlayRequest(hello=pb.Hello(ticket=ticket, protocol_version=1)))
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await call.read()
                assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
                assert "wrong_socket" in (info.value.details() or "")
        finally:
            await referee.stop()

    asyncio.run(scenario())


def test_serve_runs_matches_for_organisers(tmp_path: Path) -> None:
    async def scenario() -> None:
        referee = await start_referee()
        LocalMatchMaker(referee, "secret", tmp_path / "records")
        try:
            async with grpc.aio.insecure_channel(referee.address) as channel:
                stub = pb_grpc.MatchServiceStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await stub.CreateMatch(pb.CreateMatchRequest(admin_token="wrong"))
                assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await stub.CreateMatch(
                        pb.CreateMatchRequest(
                            admin_token="secret", entries=["random", "cmd:rm -rf /"], seed="s"
                        )
                    )
                assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                created = await stub.CreateMatch(
                    pb.CreateMatchRequest(
                        admin_token="secret",
                        entries=["heuristic", "remote"],
                        seed="served",
                        deals=1,
                    )
                )
                assert [t.label for t in created.tickets] == ["remote#1", "remote#2"]
                tickets = ",".join(t.ticket for t in created.tickets)
                bot = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "tavolo_bot.bots.random",
                    env={"TAVOLO_REFEREE": created.referee, "TAVOLO_TICKET": tickets},
                )  # fmt: skip
                assert await asyncio.wait_for(bot.wait(), 60) == 0
                for _ in range(100):
                    status = await stub.GetMatch(
                        pb.GetMatchRequest(admin_token="secret", match_id=created.match_id)
                    )
                    if status.status != "running":
                        break
                    await asyncio.sleep(0.1)
                assert status.status == "done", status
                assert len(json.loads(status.result_json)["games"]) == 2
        finally:
            await referee.stop()

    asyncio.run(scenario())
    (record,) = (tmp_path / "records").iterdir()
    assert len(verify_file(record).outcomes) == 2


def test_health_and_reflection_are_served() -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    async def scenario() -> None:
        referee = await start_referee()
        try:
            async with grpc.aio.insecure_channel(referee.address) as channel:
                health = health_pb2_grpc.HealthStub(channel)
                answer = await health.Check(
                    health_pb2.HealthCheckRequest(service="tavolo.v1.RefereeService")
                )
                assert answer.status == health_pb2.HealthCheckResponse.SERVING
                stub = reflection_pb2_grpc.ServerReflectionStub(channel)
                call = stub.ServerReflectionInfo()
                await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
                reply = await call.read()
                await call.done_writing()
                names = {s.name for s in reply.list_services_response.service}
                assert {"tavolo.v1.RefereeService", "tavolo.v1.SpectatorService"} <= names
                assert "grpc.health.v1.Health" in names
        finally:
            await referee.stop()

    asyncio.run(scenario())


def test_tls(tmp_path: Path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip

    async def scenario() -> None:
        referee = await start_referee(tls=(key.read_bytes(), cert.read_bytes()))
        try:
            config = MatchConfig(
                preset("tressette"),
                "tls",
                (parse_entry("remote"), parse_entry("remote")),
                deals=1,
            )
            match = Match(referee, config)
            tickets = ",".join(t for _, t in match.remote_tickets())
            run = asyncio.ensure_future(match.run())
            bot = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "tavolo_bot.bots.random",
                env={
                    "TAVOLO_REFEREE": referee.address,
                    "TAVOLO_TICKET": tickets,
                    "TAVOLO_TLS_CA": str(cert),
                },
            )  # fmt: skip
            result = await asyncio.wait_for(run, 60)
            assert await bot.wait() == 0
            assert len(result.outcomes) == 2
            assert not result.incidents
            # A spectator follows the (finished) table over TLS with the same certificate...
            watch = ("watch", match.match_id, "--referee", referee.address)
            code, out, err = await run_async(*watch, "--tls-ca", str(cert))
            assert code == 0, err
            assert out.count("deal 1 scored") == 2 and " plays " in out
            # ...and without it gets one error line.
            code, out, err = await run_async(*watch)
            assert code == 1 and out == "" and len(err.splitlines()) == 1
            assert err.startswith(f"error: {referee.address}: UNAVAILABLE")
        finally:
            await referee.stop()

    asyncio.run(scenario())


def test_the_time_bank_pays_for_an_overrun() -> None:
    """Deadline 200 ms, bank 500 ms: a 300 ms answer is accepted and costs the bank ~100 ms."""

    async def slow_once(address: str, ticket: str, banks: list[int]) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            call = pb_grpc.RefereeServiceStub(channel).Play()
            await call.write(pb.PlayRequest(hello=pb.Hello(ticket=ticket, protocol_version=1)))
            while True:
                response = await call.read()
                if response is grpc.aio.EOF:
                    return
                if not response.HasField("request"):
                    continue
                request = response.request
                banks.append(request.time_bank_ms)
                if len(banks) == 1:
                    await asyncio.sleep(0.3)
                answer = pb.Decision(
                    request_id=request.request_id, action_id=request.legal_actions[0].id
                )
                await call.write(pb.PlayRequest(decision=answer))

    async def scenario() -> list[int]:
        referee = await start_referee()
        try:
            limits = Limits(deadline_ms=200, time_bank_ms=500)
            config = MatchConfig(
                preset("tressette"),
                "bank",
                (parse_entry("remote"), parse_entry("remote")),
                deals=1,
                sets=1,
                limits=limits,
            )
            match = Match(referee, config)
            tickets = [t for _, t in match.remote_tickets()]
            run = asyncio.ensure_future(match.run())
            bot = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "tavolo_bot.bots.random",
                env={"TAVOLO_REFEREE": referee.address, "TAVOLO_TICKET": ",".join(tickets[1:])},
            )  # fmt: skip
            banks: list[int] = []
            await slow_once(referee.address, tickets[0], banks)
            result = await asyncio.wait_for(run, 60)
            assert await bot.wait() == 0
            assert [o.termination.value for o in result.outcomes] == ["deals_played"] * 2
            assert result.stats[0].timeouts == 0
            return banks
        finally:
            await referee.stop()

    banks = asyncio.run(scenario())
    assert banks[0] == 500
    assert 300 <= banks[1] <= 420  # 300 ms taken against a 200 ms deadline
    assert banks[-1] == banks[1]  # quick answers cost nothing more


def test_game_plan_duplicate_and_not() -> None:
    rules = preset("tressette")
    entries = (parse_entry("random"), parse_entry("random"))
    dup = MatchConfig(rules, "s", entries, sets=2)
    assert dup.games == 4
    # Game n: set (n-1)//2 + 1, the set's seed, sides rotated every game.
    assert [dup.game_plan(n) for n in (1, 2, 3, 4)] == [
        (1, "s", 0), (1, "s", 1), (2, "s:2", 0), (2, "s:2", 1),
    ]  # fmt: skip
    solo = MatchConfig(rules, "s", entries, sets=2, duplicate=False)
    assert [solo.game_plan(n)[1] for n in (1, 2, 3, 4)] == ["s", "s:2", "s:3", "s:4"]
    with pytest.raises(ValueError, match="game 5 is not in a match of 4"):
        dup.game_plan(5)


def test_a_match_plays_chosen_games_and_reports_deals_and_games() -> None:
    """What a resumed tournament relies on: only the games asked for, each reported whole."""
    rules = preset("tressette")
    entries = (parse_entry("random"), parse_entry("heuristic"))
    config = MatchConfig(rules, "pick", entries, deals=2, sets=2)
    deals: list[tuple[int, int, int]] = []
    games = []

    async def main() -> None:
        referee = await start_referee()
        try:
            match = Match(
                referee,
                config,
                on_deal_recorded=lambda d: deals.append((d.game, d.deal, len(d.lines))),
                on_game_recorded=games.append,
            )
            result = await match.run([4, 2])
            assert result.numbers == [2, 4]
        finally:
            await referee.stop()

    asyncio.run(main())
    assert [(g, d) for g, d, _ in deals] == [(2, 1), (2, 2), (4, 1), (4, 2)]
    assert [g.number for g in games] == [2, 4]
    assert [g.set_number for g in games] == [1, 2]
    assert [g.sides for g in games] == [(1, 0), (1, 0)]  # both second rotations
    for game in games:
        verified = verify_lines(game.lines, f"game {game.number}")
        assert verified.outcome == game.outcome
        header = json.loads(game.lines[0])
        assert header["seed"] == ("pick" if game.number == 2 else "pick:2")
        assert header["seats"] == ["heuristic", "random", "heuristic", "random"]


def test_cmd_entry_paths_are_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot runs in its own folder: a script named relative to here must still be found."""
    (tmp_path / "mybot.py").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    # The system's PATH, a sandbox's: its python3 is the one a sandbox finds, so it stays bare.
    monkeypatch.setenv("PATH", PATH_INSIDE)
    entry = parse_entry("cmd:python3 mybot.py --level 3 missing.txt")
    assert entry.command == ("python3", str(tmp_path / "mybot.py"), "--level", "3", "missing.txt")
