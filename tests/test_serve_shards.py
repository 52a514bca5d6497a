"""``tavolo serve --shards 2``: a real front process, its two shard processes, real gRPC,
and remote bots as processes of their own, connecting to the front or to a shard."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc
from tests.network import free_port
from tests.test_cli import assert_one_error, tavolo
from tests.test_tls_bots import certificate  # noqa: F401 - a fixture

TAVOLO = Path(sys.executable).with_name("tavolo")
TOKEN = "shards-test-token"


@dataclass
class Served:
    """The front's address and process, and the shards' addresses."""

    address: str
    process: subprocess.Popen[str]
    shards: list[str]


@contextlib.contextmanager
def _serving(tmp_path: Path, *tls: str) -> Iterator[Served]:
    """``tavolo serve --shards 2`` on a free port P (``tls``: its --tls-* options)."""
    port = free_port()
    env = {**os.environ, "TAVOLO_ADMIN_TOKEN": TOKEN}
    process = subprocess.Popen(
        [str(TAVOLO), "serve", "--listen", f"127.0.0.1:{port}", "--shards", "2",
         "--records", str(tmp_path / "records"), "--connect-timeout", "30", *tls],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        how = "TLS" if tls else "plaintext"
        assert first == f"tavolo referee on 127.0.0.1:{port} ({how})\n", first
        # Shard k listens on port P+k of --listen's host.
        second = process.stdout.readline()
        shards = [f"127.0.0.1:{port + 1}", f"127.0.0.1:{port + 2}"]
        assert second == f"2 shards, each a referee of its own: {', '.join(shards)}\n", second
        yield Served(f"127.0.0.1:{port}", process, shards)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with _serving(tmp_path) as serving:
        yield serving


def _create(address: str, seed: str, deals: int, ca: Path | None = None) -> pb.CreateMatchResponse:
    if ca is None:
        channel = grpc.insecure_channel(address)
    else:
        credentials = grpc.ssl_channel_credentials(root_certificates=ca.read_bytes())
        channel = grpc.secure_channel(address, credentials)
    with channel:
        stub = pb_grpc.MatchServiceStub(channel)  # type: ignore[no-untyped-call]
        request = pb.CreateMatchRequest(
            admin_token=TOKEN, entries=["remote", "remote"], seed=seed, deals=deals
        )
        response: pb.CreateMatchResponse = stub.CreateMatch(request, timeout=30)
        return response


def _bots(
    address: str, response: pb.CreateMatchResponse, ca: Path | None = None
) -> subprocess.Popen[str]:
    """One process playing every remote seat of the match, connected to ``address``
    (over TLS trusting ``ca``, if given)."""
    tickets = ",".join(t.ticket for t in response.tickets)
    env = {**os.environ, "TAVOLO_REFEREE": address, "TAVOLO_TICKET": tickets}
    if ca is not None:
        env["TAVOLO_TLS_CA"] = str(ca)
    return subprocess.Popen(
        [sys.executable, "-m", "tavolo_bot.bots.random"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _status(address: str, match_id: str) -> tuple[str, str]:
    """``tavolo match status``'s first line and its whole output."""
    done = subprocess.run(
        [str(TAVOLO), "match", "status", match_id, "--referee", address],
        env={**os.environ, "TAVOLO_ADMIN_TOKEN": TOKEN}, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[0], done.stdout


def _wait_status(address: str, match_id: str, wanted: str, seconds: float = 120) -> str:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        first, out = _status(address, match_id)
        if first.startswith(wanted):
            return out
        time.sleep(0.2)
    raise AssertionError(f"match {match_id} never became {wanted!r}: {out}")


def _tables(address: str) -> list[str]:
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.SpectatorServiceStub(channel)  # type: ignore[no-untyped-call]
        listed: pb.ListTablesResponse = stub.ListTables(pb.ListTablesRequest(), timeout=10)
        return [t.table_id for t in listed.tables]


def _watch(address: str, table_id: str) -> list[str]:
    """Every event a spectator of the front gets for the table, until its stream ends."""
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.SpectatorServiceStub(channel)  # type: ignore[no-untyped-call]
        stream = stub.Watch(pb.WatchRequest(table_id=table_id), timeout=120)
        return [str(r.event.WhichOneof("event")) for r in stream]


def _health(address: str) -> int:
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        answer = stub.Check(  # type: ignore[attr-defined]
            health_pb2.HealthCheckRequest(service="tavolo.v1.RefereeService"), timeout=10
        )
        return int(answer.status)


def test_matches_spread_over_shards_and_play_through_the_front_or_a_shard(
    served: Served,
) -> None:
    first = _create(served.address, "shards-a", deals=1)
    # The first match waits for its bots, so the second goes to the other shard.
    second = _create(served.address, "shards-b", deals=1)
    assert sorted([first.referee, second.referee]) == served.shards
    # The front lists and serves the tables of both shards.
    assert set(_tables(served.address)) == {first.match_id, second.match_id}
    watched: list[str] = []
    watcher = threading.Thread(
        target=lambda: watched.extend(_watch(served.address, second.match_id))
    )
    watcher.start()
    time.sleep(0.5)
    # The first match's bots connect to the front, which relays their streams to the
    # shard; the second's connect to their shard directly.
    relayed = _bots(served.address, first)
    direct = _bots(second.referee, second)
    for bots in (relayed, direct):
        _, err = bots.communicate(timeout=120)
        assert bots.returncode == 0, err
    watcher.join(120)
    for match in (first, second):
        out = _wait_status(served.address, match.match_id, "done")
        result = json.loads("\n".join(out.splitlines()[2:]))
        assert [g["termination"] for g in result["games"]] == ["deals_played"] * 2
    # The spectator of the front saw the second shard's table to its end.
    assert watched.count("game_over") == 2 and "card_played" in watched
    # A finished table of the other shard still replays on the front.
    replay = _watch(served.address, first.match_id)
    assert replay.count("card_played") >= 80 and replay.count("game_over") == 2
    assert _tables(served.address) == []
    # A ticket no shard gave is refused by the front as a shard would refuse it.
    with grpc.insecure_channel(served.address) as channel:
        stub = pb_grpc.RefereeServiceStub(channel)  # type: ignore[no-untyped-call]
        hello = pb.PlayRequest(hello=pb.Hello(ticket="no-such-ticket", protocol_version=1))
        with pytest.raises(grpc.RpcError) as refused:
            list(stub.Play(iter([hello]), timeout=10))
    assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED
    assert refused.value.details() == "unknown_ticket: unknown ticket"


def _listener_pid(port: int, pids: list[int]) -> int:
    """Which of ``pids`` listens on TCP ``port`` (from /proc/net/tcp* and the fds)."""
    inodes = set()
    # gRPC listens on 127.0.0.1 as ::ffff:127.0.0.1, an IPv6 socket.
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":
                inodes.add(f"socket:[{fields[9]}]")
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd) in inodes:
                    return pid
            except OSError:
                continue
    raise AssertionError(f"no process of {pids} listens on port {port}")


def test_a_killed_shard_fails_its_match_and_comes_back(served: Served) -> None:
    long = _create(served.address, "shards-killed", deals=50)
    # A match whose bots never come keeps the other shard loaded.
    waiting = _create(served.address, "shards-waiting", deals=1)
    assert long.referee != waiting.referee
    bots = _bots(long.referee, long)
    try:
        _wait_status(served.address, long.match_id, "running")
        children = [
            int(p) for p in subprocess.run(
                ["pgrep", "-P", str(served.process.pid)], capture_output=True, text=True
            ).stdout.split()
        ]  # fmt: skip
        shard = served.shards.index(long.referee)
        os.kill(_listener_pid(int(long.referee.rsplit(":", 1)[1]), children), signal.SIGKILL)
        end = time.monotonic() + 30
        while _health(served.address) != health_pb2.HealthCheckResponse.NOT_SERVING:
            assert time.monotonic() < end, "the front kept reporting SERVING"
            time.sleep(0.05)
        out = _wait_status(served.address, long.match_id, "failed", 30)
        assert f"ShardLost: shard {shard} was killed by SIGKILL" in out
        end = time.monotonic() + 60
        while _health(served.address) != health_pb2.HealthCheckResponse.SERVING:
            assert time.monotonic() < end, "the shard never came back"
            time.sleep(0.1)
    finally:
        bots.kill()
        bots.wait()
    assert long.match_id not in _tables(served.address)
    # The restarted shard has the same address and the least load: the new match is its.
    again = _create(served.address, "shards-again", deals=1)
    assert again.referee == long.referee
    more = _bots(again.referee, again)
    _, err = more.communicate(timeout=120)
    assert more.returncode == 0, err
    _wait_status(served.address, again.match_id, "done")
    # The other shard's match was never touched.
    assert _status(served.address, waiting.match_id)[0].startswith("waiting for bots")
    assert served.process.stderr is not None
    served.process.send_signal(signal.SIGINT)
    served.process.wait(30)
    warnings = served.process.stderr.read()
    assert f"warning: shard {shard} was killed by SIGKILL: its matches are lost" in warnings


def test_shards_must_be_one_or_more() -> None:
    assert_one_error(tavolo("serve", "--shards", "0"), "--shards must be 1 or more, got 0")


def test_the_front_relays_bots_over_tls(
    tmp_path: Path,
    certificate: tuple[Path, Path],  # noqa: F811 - the fixture imported above
) -> None:
    cert, key = certificate
    with _serving(tmp_path, "--tls-cert", str(cert), "--tls-key", str(key)) as served:
        match = _create(served.address, "shards-tls", deals=1, ca=cert)
        assert match.referee in served.shards
        # The bots trust the certificate for the front; the front, for the shard.
        bots = _bots(served.address, match, ca=cert)
        _, err = bots.communicate(timeout=120)
        assert bots.returncode == 0, err
