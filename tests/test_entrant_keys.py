"""Entrant keys: one key per remote entrant for a whole tournament, through the real CLI.

Every test runs ``tavolo tournament run`` as a process, remote bots as processes of their
own that connect over TCP with ``TAVOLO_KEY``, and reads the real SQLite database.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from referee.entrant_keys import key_digest
from tests.network import free_port, other_address
from tests.test_cli import tavolo
from tests.test_clients import LANGS, require
from tests.test_tls_bots import certificate  # noqa: F401 - a fixture
from tournaments.storage import Store

ROOT = Path(__file__).resolve().parent.parent
KEY_LINE = re.compile(r"^entrant key of (\S+): (tvk_\S+)$", re.MULTILINE)
ADDRESS = re.compile(
    r"remote bots connect to (\S+)(?: over TLS \(give them TAVOLO_TLS_CA\))? with TAVOLO_KEY"
)

ONE_MATCH_BOT = """\
import os
import sys

from tavolo_bot import Bot, main


class OneMatch(Bot):
    \"\"\"Plays its first legal action, and leaves after its first match.\"\"\"

    def choose(self, turn):
        return turn.legal[0].id

    def on_match_over(self):
        sys.stderr.write("one match played, leaving\\n")
        sys.stderr.flush()
        os._exit(0)


main(OneMatch)
"""


def tournament(
    tmp_path: Path,
    *,
    preset: str = "tressette",
    entries: tuple[str, ...] = ("heuristic", "random"),
    games: int = 2,
    connect_timeout: float = 30,
) -> Path:
    """A round robin of ``alice`` (remote) and ``entries``, 2 deals a game."""
    lines = [
        'name = "keys"', 'seed = "keys-1"', 'format = "round-robin"',
        "[game]", f'preset = "{preset}"', "deals = 2",
        "[match]", f"games = {games}", f"connect_timeout = {connect_timeout}",
        "[[entry]]", 'name = "alice"', 'bot = "remote"',
    ]  # fmt: skip
    for i, bot in enumerate(entries):
        lines += ["[[entry]]", f'name = "{bot}-{i}"', f'bot = "{bot}"']
    path = tmp_path / "keys.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class Runner:
    """``tavolo tournament run`` in the background, its output read as it comes."""

    def __init__(self, path: Path, db: Path, *extra: str) -> None:
        code = "import sys; from tournaments.cli.main import app; sys.argv[0] = 'tavolo'; app()"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, "tournament", "run", str(path), "--db", str(db),
             "--quiet", *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # A narrow, piped stdout: the key line must still come whole.
            env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "40"},
        )  # fmt: skip
        self.out: list[str] = []
        self.err: list[str] = []
        for stream, sink in ((self.process.stdout, self.out), (self.process.stderr, self.err)):
            threading.Thread(target=_pump, args=(stream, sink), daemon=True).start()

    def wait_for(self, pattern: re.Pattern[str], timeout: float = 60) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = pattern.search("".join(self.out))
            if found:
                return found
            if self.process.poll() is not None:
                time.sleep(0.2)  # the pumps may still hold the last lines
                found = pattern.search("".join(self.out))
                if found:
                    return found
                break
            time.sleep(0.05)
        raise AssertionError(f"no {pattern.pattern!r} in:\n{self.text()}")

    def finish(self, timeout: float = 180) -> int:
        try:
            code = self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
        time.sleep(0.2)
        return code

    def text(self) -> str:
        return "".join(self.out) + "".join(self.err)


def _pump(stream: object, sink: list[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        sink.append(line)


def bot(
    address: str, key: str, *, streams: int = 2, argv: list[str] | None = None, **env: str
) -> subprocess.Popen[str]:
    """A remote bot process playing ``key`` (the built-in heuristic unless ``argv``)."""
    command = argv or [sys.executable, "-m", "tavolo_bot.bots.heuristic"]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={
            **clean,
            "PYTHONPATH": str(ROOT / "clients" / "python"),
            "TAVOLO_REFEREE": address,
            "TAVOLO_KEY": key,
            "TAVOLO_STREAMS": str(streams),
            "TAVOLO_SEED": "alice",
            **env,
        },
    )


def ended(process: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str]:
    try:
        _, err = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
    return process.returncode, err


def keys_of(runner: Runner) -> tuple[str, str]:
    """(the key printed for alice, the address bots connect to)."""
    found = runner.wait_for(KEY_LINE)
    assert found.group(1) == "alice"
    return found.group(2), runner.wait_for(ADDRESS).group(1)


def games_of(db: Path) -> list[tuple[str, str]]:
    """(termination, faults as JSON) of every stored game."""
    with Store.open_for_reading(db) as store:
        return [
            (g.termination, json.dumps({k: list(v) for k, v in g.faults.items()}))
            for g in store.games()
        ]


def test_one_key_plays_every_match_of_its_entrant(tmp_path: Path) -> None:
    path = tournament(tmp_path)
    db = tmp_path / "keys.db"
    runner = Runner(path, db)
    key, address = keys_of(runner)
    player = bot(address, key)
    code, err = ended(player)
    assert runner.finish() == 0, runner.text()
    assert code == 0, err
    # alice meets each of the two others in a match of 2 games, on one key.
    assert len(KEY_LINE.findall("".join(runner.out))) == 1, "the key is printed once"
    games = games_of(db)
    assert len(games) == 6
    assert all(t in ("target_reached", "deals_played") for t, _ in games), games
    keys = tmp_path / "keys.keys"
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600
    assert f"alice {key}" in keys.read_text(encoding="utf-8")
    # Only the digest is stored: the database opens nothing.
    wal = Path(str(db) + "-wal")
    data = db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    assert key.encode() not in data
    with Store.open_for_reading(db) as store:
        assert store.key_owner(key_digest(key)) == ("alice", False)


def test_the_same_key_and_bot_go_on_after_the_runner_restarts(tmp_path: Path) -> None:
    path = tournament(tmp_path, games=8)
    db = tmp_path / "keys.db"
    listen = f"127.0.0.1:{free_port()}"
    first = Runner(path, db, "--listen", listen)
    key, address = keys_of(first)
    # One process for both runs: it reconnects with its key to the restarted runner.
    player = bot(address, key, TAVOLO_RECONNECT_SECONDS="60")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not db.exists() or len(_stored(db)) < 3):
        time.sleep(0.05)
    first.process.send_signal(signal.SIGKILL)
    first.finish()
    done_before = len(_stored(db))
    assert 3 <= done_before < 24
    second = Runner(path, db, "--listen", listen)
    assert second.finish() == 0, second.text()
    code, err = ended(player)
    assert code == 0, err
    text = "".join(second.out)
    assert not KEY_LINE.search(text), "a resumed run prints no key"
    assert "made on the first run, kept in" in text
    games = games_of(db)
    assert len(games) == 24
    assert all(t in ("target_reached", "deals_played") for t, _ in games), games


def _stored(db: Path) -> list[int]:
    try:
        with Store.open_for_reading(db) as store:
            return [g.number for g in store.games()]
    except Exception:  # the run may be creating the database right now
        return []


def test_wrong_revoked_and_reissued_keys(tmp_path: Path) -> None:
    path = tournament(tmp_path, entries=("heuristic",), connect_timeout=20)
    db = tmp_path / "keys.db"
    runner = Runner(path, db)
    key, address = keys_of(runner)

    code, err = ended(bot(address, "tvk_not-a-key-of-anyone", streams=1))
    assert code == 1
    assert "UNAUTHENTICATED: unknown_key" in err, err
    assert "the referee knows no entrant with this key" in err

    listing = tavolo("tournament", "keys", "--db", db, "--revoke", "alice")
    assert listing.exit_code == 0, listing.output
    assert "revoked the key of alice" in listing.output
    assert "alice: revoked" in listing.output
    code, err = ended(bot(address, key, streams=1))
    assert code == 1
    assert "PERMISSION_DENIED: key_revoked" in err, err

    again = tavolo("tournament", "keys", "--db", db, "--reissue", "alice")
    assert again.exit_code == 0, again.output
    (new,) = re.findall(r"entrant key of alice: (tvk_\S+)", again.output)
    assert new != key and f"alice {new}" in (tmp_path / "keys.keys").read_text()
    assert "alice: valid" in again.output
    code, err = ended(bot(address, key, streams=1))
    assert code == 1 and "unknown_key" in err, err
    code, err = ended(bot(address, new))
    assert code == 0, err
    runner.finish()
    games = games_of(db)
    assert len(games) == 2
    assert all(t in ("target_reached", "deals_played") for t, _ in games), games

    unknown = tavolo("tournament", "keys", "--db", db, "--revoke", "bob")
    assert unknown.exit_code != 0
    assert "entrant 'bob' has no key" in unknown.output


def test_a_bot_may_leave_between_matches_and_come_back(tmp_path: Path) -> None:
    path = tournament(tmp_path, preset="tressette-a-due", games=2)
    db = tmp_path / "keys.db"
    runner = Runner(path, db, "--concurrency", "1")
    key, address = keys_of(runner)
    script = tmp_path / "one_match.py"
    script.write_text(ONE_MATCH_BOT, encoding="utf-8")
    argv = [sys.executable, str(script)]
    for _ in range(2):  # alice has two matches: one process for each
        code, err = ended(bot(address, key, streams=1, argv=argv))
        assert code == 0, err
        assert "one match played, leaving" in err
    assert runner.finish() == 0, runner.text()
    games = games_of(db)
    assert len(games) == 6
    assert all(t in ("target_reached", "deals_played") for t, _ in games), games


def test_a_partnership_table_short_of_streams_says_why(tmp_path: Path) -> None:
    path = tournament(tmp_path, entries=("heuristic",), connect_timeout=3)
    db = tmp_path / "keys.db"
    runner = Runner(path, db)
    key, address = keys_of(runner)
    player = bot(address, key, streams=1)
    runner.finish()
    ended(player, timeout=30)
    with Store.open_for_reading(db) as store:
        records = "".join(text for _, _, text in store.records())
    assert "a table takes 2 (TAVOLO_STREAMS)" in records, records[-2000:]


def test_per_match_tickets_still_work(tmp_path: Path) -> None:
    path = tournament(tmp_path, preset="tressette-a-due", entries=("random",))
    db = tmp_path / "keys.db"
    runner = Runner(path, db, "--tickets")
    found = runner.wait_for(re.compile(r"remote seat alice#1: connect to (\S+) with ticket (\S+)"))
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}
    player = subprocess.Popen(
        [sys.executable, "-m", "tavolo_bot.bots.random"],
        stderr=subprocess.PIPE,
        text=True,
        env={**clean, "PYTHONPATH": str(ROOT / "clients" / "python"),
             "TAVOLO_REFEREE": found.group(1), "TAVOLO_TICKET": found.group(2)},
    )  # fmt: skip
    code, err = ended(player)
    assert code == 0, err
    assert runner.finish() == 0, runner.text()
    assert len(games_of(db)) == 2


@pytest.mark.parametrize("lang", LANGS)
def test_every_sdk_plays_with_a_key(tmp_path: Path, lang: str) -> None:
    example = require(lang)
    path = tournament(tmp_path, entries=("random",))
    db = tmp_path / "keys.db"
    runner = Runner(path, db)
    key, address = keys_of(runner)
    code, err = ended(bot(address, key, argv=[str(example)]))
    assert runner.finish() == 0, runner.text()
    assert code == 0, err
    games = games_of(db)
    assert len(games) == 2
    assert all(t in ("target_reached", "deals_played") for t, _ in games), games


def test_python_sdk_refuses_a_key_and_a_ticket_together() -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}
    done = subprocess.run(
        [sys.executable, "-m", "tavolo_bot.bots.random"],
        capture_output=True,
        text=True,
        env={**clean, "PYTHONPATH": str(ROOT / "clients" / "python"),
             "TAVOLO_REFEREE": "127.0.0.1:1", "TAVOLO_KEY": "tvk_x", "TAVOLO_TICKET": "t"},
        check=False,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "set TAVOLO_TICKET or TAVOLO_KEY, not both" in done.stderr


def test_a_stream_lost_mid_match_comes_back_to_its_slot(tmp_path: Path) -> None:
    import queue

    import grpc

    from tavolo_bot.proto import referee_pb2 as pb
    from tavolo_bot.proto import referee_pb2_grpc as pb_grpc

    path = tournament(tmp_path, preset="tressette-a-due", entries=("random",))
    db = tmp_path / "keys.db"
    runner = Runner(path, db)
    key, address = keys_of(runner)
    channel = grpc.insecure_channel(address)
    stub = pb_grpc.RefereeServiceStub(channel)  # type: ignore[no-untyped-call]

    def open_stream() -> tuple[queue.Queue[pb.PlayRequest | None], object]:
        outbox: queue.Queue[pb.PlayRequest | None] = queue.Queue()
        outbox.put(pb.PlayRequest(hello=pb.Hello(key=key, protocol_version=1)))
        return outbox, stub.Play(iter(outbox.get, None))

    def until_request(call: object) -> tuple[list[str], pb.DecisionRequest]:
        kinds: list[str] = []
        for response in call:  # type: ignore[attr-defined]
            kinds += [e.WhichOneof("event") for e in response.events]
            if response.HasField("request"):
                return kinds, response.request
        raise AssertionError(f"the stream ended after {kinds}")

    _, first = open_stream()
    kinds, request = until_request(first)
    assert kinds[:3] == ["key_accepted", "welcome", "match_started"], kinds
    first.cancel()  # type: ignore[attr-defined]

    outbox, second = open_stream()
    again_kinds, again = until_request(second)
    # Back in the same slot: the open request's response is sent again, as it was (§4.5).
    assert again_kinds == kinds, again_kinds
    assert again.request_id == request.request_id
    outbox.put(
        pb.PlayRequest(decision=pb.Decision(request_id=again.request_id,
                                            action_id=again.legal_actions[0].id))
    )  # fmt: skip
    seen = []
    for response in second:  # type: ignore[attr-defined]
        seen += [e.WhichOneof("event") for e in response.events]
        if response.HasField("request"):
            r = response.request
            outbox.put(
                pb.PlayRequest(decision=pb.Decision(request_id=r.request_id,
                                                    action_id=r.legal_actions[0].id))
            )  # fmt: skip
    outbox.put(None)
    assert seen.count("match_over") == 1  # then the stream ended with OK: no match left
    assert runner.finish() == 0, runner.text()
    with Store.open_for_reading(db) as store:
        records = "".join(text for _, _, text in store.records())
    assert '"disconnect"' in records and '"reconnect"' in records
    assert all(t in ("target_reached", "deals_played") for t, _ in games_of(db))


def test_keys_over_tls(tmp_path: Path, certificate: tuple[Path, Path]) -> None:  # noqa: F811
    cert, private = certificate
    path = tournament(tmp_path, preset="tressette-a-due", entries=("random",))
    db = tmp_path / "keys.db"
    runner = Runner(path, db, "--tls-cert", str(cert), "--tls-key", str(private))
    key, address = keys_of(runner)
    assert "over TLS (give them TAVOLO_TLS_CA)" in "".join(runner.out)
    plain, err = ended(bot(address, key, streams=1, TAVOLO_RECONNECT_SECONDS="1"))
    assert plain == 1, err  # a plaintext bot cannot reach a TLS referee
    code, err = ended(bot(address, key, streams=1, TAVOLO_TLS_CA=str(cert)))
    assert code == 0, err
    assert runner.finish() == 0, runner.text()
    assert len(games_of(db)) == 2


def test_remote_bots_are_told_the_advertised_address(tmp_path: Path) -> None:
    path = tournament(tmp_path, preset="tressette-a-due", entries=("random",), connect_timeout=1)
    port = free_port()
    told = Runner(path, tmp_path / "a.db", "--listen", f"0.0.0.0:{port}", "--advertise",
                  f"cup.example.org:{port}")  # fmt: skip
    assert told.wait_for(ADDRESS).group(1) == f"cup.example.org:{port}"
    told.finish()
    # A wildcard listen address is no place to connect to: this host's name is told instead.
    named = Runner(path, tmp_path / "b.db", "--listen", f"0.0.0.0:{port}")
    assert named.wait_for(ADDRESS).group(1) == f"{socket.getfqdn()}:{port}"
    named.finish()


SPECTATING_BOT = """\
import os
import runpy
import sys

import grpc
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc

# The attack: watch the other tables of the round, which deal the cards this bot is about
# to be dealt, through the address it was told to play on.
with grpc.insecure_channel(os.environ["TAVOLO_REFEREE"]) as channel:
    stub = pb_grpc.SpectatorServiceStub(channel)
    calls = {
        "ListTables": lambda: stub.ListTables(pb.ListTablesRequest(), timeout=10),
        "Watch": lambda: next(iter(stub.Watch(pb.WatchRequest(table_id=os.environ["TABLE"]),
                                              timeout=10))),
    }
    for name, call in calls.items():
        try:
            got = call()
            sys.stderr.write(f"spectated {name}: {str(got)[:200]!r}\\n")
        except grpc.RpcError as exc:
            sys.stderr.write(f"refused {name}: {exc.code().name}: {exc.details()}\\n")
sys.stderr.flush()
runpy.run_module("tavolo_bot.bots.heuristic", run_name="__main__")
"""


def test_a_remote_bot_cannot_watch_the_tables_of_its_round(tmp_path: Path) -> None:
    """A table's deals come again in its set's other game: while remote entrants play,
    spectators need the run's token, from loopback (a forwarder makes anyone loopback)
    as from elsewhere."""
    import grpc

    from tavolo_bot.proto import referee_pb2 as pb
    from tavolo_bot.proto import referee_pb2_grpc as pb_grpc

    other = other_address()
    if other is None:
        pytest.skip("this machine has no address but loopback: no peer can be off loopback")
    path = tournament(tmp_path, games=2)
    port = free_port()
    runner = Runner(path, tmp_path / "t.db", "--listen", f"0.0.0.0:{port}")
    key, _ = keys_of(runner)
    token_file = tmp_path / "t.spectator"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    token = (("tavolo-spectator-token", token_file.read_text(encoding="utf-8").strip()),)
    table = None
    deadline = time.monotonic() + 60
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.SpectatorServiceStub(channel)  # type: ignore[no-untyped-call]
        # On loopback without the token: refused, as a forwarded remote caller would be.
        with pytest.raises(grpc.RpcError) as refused:
            stub.ListTables(pb.ListTablesRequest(), timeout=10)
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        # With it (the organiser's `tavolo watch --token-file`), served.
        while table is None and time.monotonic() < deadline:
            listed = stub.ListTables(pb.ListTablesRequest(), timeout=10, metadata=token).tables
            table = listed[0].table_id if listed else None
            time.sleep(0.05)
    assert table is not None, runner.text()
    attacker = tmp_path / "spectating_bot.py"
    attacker.write_text(SPECTATING_BOT, encoding="utf-8")
    # From off loopback, as a bot on another machine connects: this machine's other address.
    process = bot(f"{other}:{port}", key, argv=[sys.executable, str(attacker)], TABLE=table)
    assert runner.finish() == 0, runner.text()
    code, err = ended(process)
    assert code == 0, err
    for call in ("ListTables", "Watch"):
        assert f"refused {call}: PERMISSION_DENIED: spectators need the tournament's" in err
    assert "spectated" not in err
    # And it played all its games all the same.
    assert [t for t, _ in games_of(tmp_path / "t.db")].count("deals_played") == 6


def test_a_public_live_view_with_remote_entrants_is_warned_of(tmp_path: Path) -> None:
    path = tournament(tmp_path, games=2, connect_timeout=1)
    runner = Runner(path, tmp_path / "t.db", "--web", "0.0.0.0:0")
    runner.wait_for(re.compile(r"live view: http://"))
    runner.finish()  # alice never comes: its games are forfeits, and the run exits 1
    warning = next(line for line in runner.err if line.startswith("warning: --web 0.0.0.0:0"))
    assert "a remote entrant who reads it sees deals before it plays them" in warning
    quiet = Runner(path, tmp_path / "u.db", "--web", "0")  # loopback: no warning
    quiet.wait_for(re.compile(r"live view: http://127\.0\.0\.1:"))
    quiet.finish()
    assert not any("--web" in line for line in quiet.err), quiet.err
