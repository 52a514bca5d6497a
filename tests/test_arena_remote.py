"""Remote bots in the arena: an entrant's bot that runs on its own machine and connects to
the arena's referee with its submission's key, through a real ``tavolo arena serve``, real
bot processes over TCP, the real API (httpx) and the real CLI; and the attacks on it: a
wrong key, another entrant's eyes, a watcher, a disabled submission's key."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from referee.sandbox.probe import sandbox_problem
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc
from tests.network import free_port
from tests.test_arena_account import Site, make_certificate, organiser_token, start_serve
from tests.test_arena_api import bot_folder, invite
from tests.test_arena_ladder import ready
from tournaments.arena.archives import pack
from tournaments.arena.config import load_arena
from tournaments.arena.ladder_play import LadderRunner
from tournaments.arena.remote_bots import RemoteBots
from tournaments.arena.store import ArenaStore, State, now_utc

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=str(sandbox_problem()))
TAVOLO = Path(sys.executable).with_name("tavolo")
ENV = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}

ARENA = """\
name = "Remote arena"
[game]
preset = "tressette"
deals = 1
[match]
deadline_ms = 2000
connect_timeout = 20
[submissions]
per_day = 5
[remote]
allowed = {allowed}
connect_hours = {hours}
"""

ILLEGAL_BOT = """\
from tavolo_bot import Bot, main


class Illegal(Bot):
    \"\"\"Answers every turn with an action no turn offers.\"\"\"

    def choose(self, turn):
        return 9999


main(Illegal)
"""


def remote_bot(
    referee: str, key: str, *, module: str = "tavolo_bot.bots.random", script: Path | None = None
) -> subprocess.Popen[str]:
    """A bot process of this machine standing for one on the entrant's, playing a key."""
    argv = [sys.executable, str(script)] if script else [sys.executable, "-m", module]
    env = {**ENV, "TAVOLO_REFEREE": referee, "TAVOLO_KEY": key}
    return subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )


class RemoteArena:
    """A running ``tavolo arena serve`` that takes remote bots."""

    def __init__(self, tmp: Path, *, hours: float = 24) -> None:
        self.db = tmp / "arena.db"
        self.file = tmp / "arena.toml"
        self.file.write_text(ARENA.format(allowed="true", hours=hours), encoding="utf-8")
        self.tokens = {name: invite(self.db, name) for name in ("alice", "bob")}
        self.process = subprocess.Popen(
            [str(TAVOLO), "arena", "serve", str(self.file), "--db", str(self.db),
             "--listen", "127.0.0.1:0", "--referee-listen", "127.0.0.1:0", "--parallel", "1"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
        )  # fmt: skip
        assert self.process.stdout is not None
        site = self.process.stdout.readline()
        match = re.fullmatch(r"arena Remote arena: (http://127\.0\.0\.1:\d+/)\n", site)
        assert match, (site, self.process.stderr.read() if self.process.stderr else "")
        self.url = match.group(1)
        port = re.fullmatch(r"remote bots connect to port (\d+)\n", self.process.stdout.readline())
        assert port
        self.port = int(port.group(1))
        self.http = httpx.Client(base_url=self.url, timeout=30)
        self.bots: list[subprocess.Popen[str]] = []

    def as_(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[name]}"}

    def remote(self, name: str) -> dict[str, Any]:
        answer = self.http.post("/api/v1/remote", headers=self.as_(name))
        assert answer.status_code == 201, answer.text
        return dict(answer.json())

    def bot(self, key: str, **how: Any) -> subprocess.Popen[str]:
        process = remote_bot(f"127.0.0.1:{self.port}", key, **how)
        self.bots.append(process)
        return process

    def submission(self, name: str, number: int) -> dict[str, Any]:
        answer = self.http.get(f"/api/v1/submissions/{number}", headers=self.as_(name))
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def settled(self, name: str, number: int, seconds: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        while True:
            found = self.submission(name, number)
            if found["state"] in ("ready", "failed"):
                return found
            assert time.monotonic() < deadline, found
            time.sleep(0.3)

    def stop(self) -> None:
        for bot in self.bots:
            bot.kill()
            bot.wait(10)
        self.http.close()
        self.process.terminate()
        self.process.wait(15)


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[RemoteArena]:
    running = RemoteArena(tmp_path)
    yield running
    running.stop()


def test_a_remote_bot_is_validated_then_rated_and_its_key_opens_nothing_else(
    arena: RemoteArena, tmp_path: Path
) -> None:
    made = arena.remote("alice")
    number = made["submission"]["id"]
    assert made["key"].startswith("tvk_") and made["streams"] == 2 and made["tls"] is False
    assert made["referee"] == f"127.0.0.1:{arena.port}"
    # Only the key's digest is kept, and the key is never shown again.
    assert made["key"] not in arena.db.read_bytes().decode("latin-1")
    mine = arena.submission("alice", number)
    assert (mine["state"], mine["remote"], mine["streams_waiting"]) == ("received", True, 0)
    assert made["key"] not in str(mine)
    # Bob learns nothing of it.
    assert (
        arena.http.get(f"/api/v1/submissions/{number}", headers=arena.as_("bob")).status_code == 404
    )

    # A key nobody has is refused at once, naming why.
    stranger = arena.bot("tvk_" + "A" * 32)
    assert stranger.wait(30) != 0
    assert stranger.stderr is not None and "no entrant has this key" in stranger.stderr.read()

    # Alice's bot connects: it is validated, then Bob's files meet it on the ladder.
    arena.bot(made["key"], module="tavolo_bot.bots.heuristic")
    validated = arena.settled("alice", number)
    assert (validated["state"], validated["reason"]) == ("ready", "")
    logs = arena.http.get(f"/api/v1/submissions/{number}/logs", headers=arena.as_("alice")).json()
    assert "conformance: not run: the bot is remote" in logs["validation"]
    assert "timeouts 0, illegal actions 0, crashes 0" in logs["validation"]
    folder = bot_folder(tmp_path / "bob", "from tavolo_bot.bots.random import main\nmain()\n")
    (folder / "bot.toml").write_text(f'name = "b"\ncommand = ["{sys.executable}", "bot.py"]\n')
    sent = arena.http.post("/api/v1/submissions", content=pack(folder), headers=arena.as_("bob"))
    assert arena.settled("bob", sent.json()["id"])["state"] == "ready"
    deadline = time.monotonic() + 240
    while True:
        board = arena.http.get("/api/v1/leaderboard").json()
        if len(board["submissions"]) == 2:
            break
        assert time.monotonic() < deadline, board
        time.sleep(0.5)
    assert {r["submission"] for r in board["submissions"]} == {number, sent.json()["id"]}
    stderr = arena.http.get(f"/api/v1/submissions/{number}/logs", headers=arena.as_("alice"))
    ladder = [text for name, text in stderr.json().items() if name.startswith("ladder-")]
    assert ladder and "its stderr stays on its entrant's machine" in ladder[0]

    # Nobody watches the referee's tables: not a remote bot, not anyone.
    with grpc.insecure_channel(f"127.0.0.1:{arena.port}") as channel:
        spectator = pb_grpc.SpectatorServiceStub(channel)  # type: ignore[no-untyped-call]
        with pytest.raises(grpc.RpcError) as refused:
            spectator.ListTables(pb.ListTablesRequest(), timeout=10)
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED

    # Disabled, its key opens nothing: its bot's streams end, and a new one is refused.
    off = subprocess.run(
        [str(TAVOLO), "arena", "disable", str(number), "--db", str(arena.db),
         "--reason", "played from two machines"],
        capture_output=True, text=True, timeout=60, env=ENV,
    )  # fmt: skip
    assert off.returncode == 0, off.stderr
    again = arena.bot(made["key"])
    assert again.wait(60) != 0
    assert again.stderr is not None and "revoked" in again.stderr.read()


def test_a_remote_bot_that_plays_illegal_actions_fails_validation(
    arena: RemoteArena, tmp_path: Path
) -> None:
    made = arena.remote("bob")
    script = tmp_path / "illegal.py"
    script.write_text(ILLEGAL_BOT, encoding="utf-8")
    arena.bot(made["key"], script=script)
    failed = arena.settled("bob", made["submission"]["id"])
    assert failed["state"] == "failed"
    assert failed["reason"].startswith("the validation match against random had faults")
    assert "illegal actions 0" not in failed["reason"]


def test_a_remote_submission_whose_bot_never_comes_fails(tmp_path: Path) -> None:
    arena = RemoteArena(tmp_path, hours=0.0005)  # 1.8 s
    try:
        made = arena.remote("alice")
        failed = arena.settled("alice", made["submission"]["id"], 60)
        assert failed["reason"] == "no bot connected with its key within 0.0005 hours"
    finally:
        arena.stop()


def test_remote_bots_are_taken_only_where_the_organiser_allows_them(tmp_path: Path) -> None:
    def serve(allowed: str, *extra: str) -> subprocess.CompletedProcess[str]:
        path = tmp_path / f"{allowed}.toml"
        path.write_text(ARENA.format(allowed=allowed, hours=1), encoding="utf-8")
        return subprocess.run(
            [str(TAVOLO), "arena", "serve", str(path), "--db", str(tmp_path / "a.db"), *extra],
            capture_output=True, text=True, timeout=60, env=ENV,
        )  # fmt: skip

    off = serve("false", "--referee-listen", "127.0.0.1:0")
    assert off.returncode == 2
    assert off.stderr == (
        f"error: --referee-listen: {tmp_path / 'false.toml'} takes no remote bots "
        "([remote] allowed = true)\n"
    )
    on = serve("true")
    assert on.returncode == 2
    assert on.stderr == (
        f"error: {tmp_path / 'true.toml'}: [remote] allowed = true: give --referee-listen "
        "HOST:PORT\n"
    )
    bad = tmp_path / "bad.toml"
    bad.write_text(ARENA.format(allowed="true", hours=0), encoding="utf-8")
    done = subprocess.run(
        [str(TAVOLO), "arena", "serve", str(bad), "--db", str(tmp_path / "a.db")],
        capture_output=True, text=True, timeout=60, env=ENV,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == f"error: {bad}:12: key 'remote.connect_hours': must be hours above 0\n"


def test_the_cli_makes_a_remote_submission_and_prints_its_key_once(arena: RemoteArena) -> None:
    done = subprocess.run(
        [str(TAVOLO), "arena", "remote", "--arena", arena.url],
        capture_output=True, text=True, timeout=60,
        env={**ENV, "TAVOLO_ARENA_TOKEN": arena.tokens["alice"]},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"submission \d+: remote; its key is shown this once", lines[0])
    assert re.fullmatch(
        rf"TAVOLO_REFEREE=127\.0\.0\.1:{arena.port} TAVOLO_KEY=tvk_\S+ TAVOLO_STREAMS=2", lines[1]
    )


def test_a_meeting_cut_short_waits_for_its_remote_bot_and_holds_nobody_else(
    tmp_path: Path,
) -> None:
    (tmp_path / "arena.toml").write_text(ARENA.format(allowed="true", hours=1), encoding="utf-8")
    config = load_arena(tmp_path / "arena.toml")
    store = ArenaStore(tmp_path / "arena.db")
    alice, bob, carol = (store.invite(n)[0] for n in ("alice", "bob", "carol"))
    remote, key = store.submit_remote(alice, per_day=5)
    store.set_state(remote.id, State.READY)
    b = ready(store, bob, tmp_path / "b", "random")
    c = ready(store, carol, tmp_path / "c", "random")
    # A stopped arena left a meeting of Alice's remote bot and Bob's unfinished.
    cut = store.ladder.start(remote.id, b, "cut-short", "2026-12-01T00:00:00")

    async def scenario() -> None:
        bots = await RemoteBots.start(store, config, "127.0.0.1:0")
        runner = LadderRunner(store, config, remote=bots)
        process = None
        try:
            assert await runner.resume() == 0  # nothing played: its bot is not back
            # Bob is not held for it: he meets Carol meanwhile.
            other = await runner.play_next()
            assert other is not None and {other.a, other.b} == {b, c}
            process = remote_bot(f"127.0.0.1:{bots.port}", key)
            deadline = time.monotonic() + 30
            while not bots.ready(remote):
                assert time.monotonic() < deadline and process.poll() is None
                await asyncio.sleep(0.1)
            # Its bot back, the meeting cut short goes first, from its seed.
            assert await runner.play_next() == cut
        finally:
            await bots.stop()
            if process is not None:
                process.kill()
                process.wait(10)

    asyncio.run(scenario())
    assert store.ladder.unfinished() == []
    # Its games are kept, against Bob, under Alice's remote submission.
    assert {row[0] for row in store.ladder.games_of(remote.id)} == {cut.id}
    store.close()


def test_a_remote_finalist_plays_the_final_with_its_season_key(tmp_path: Path) -> None:
    (tmp_path / "arena.toml").write_text(ARENA.format(allowed="true", hours=1), encoding="utf-8")
    db = tmp_path / "arena.db"
    store = ArenaStore(db)
    alice, bob = (store.invite(n)[0] for n in ("alice", "bob"))
    remote, key = store.submit_remote(alice, per_day=5)
    store.set_state(remote.id, State.READY)
    store.choose(alice, remote.id)
    store.choose(bob, ready(store, bob, tmp_path / "b", "random"))
    store.freeze(now_utc())
    store.close()
    port = free_port()
    bot = remote_bot(f"127.0.0.1:{port}", key)
    try:
        done = subprocess.run(
            [str(TAVOLO), "arena", "final", str(tmp_path / "arena.toml"), "--db", str(db),
             "--games", "2", "--out", str(tmp_path / "report"), "--listen", f"127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=600, env=ENV,
        )  # fmt: skip
    finally:
        bot.kill()
        bot.wait(10)
    assert done.returncode == 0, done.stderr
    played = tomllib.loads(db.with_name("arena.db.final.toml").read_text(encoding="utf-8"))
    alices = next(e for e in played["entry"] if e["name"] == "alice")
    assert alices["bot"] == "remote" and len(alices["key_sha256"]) == 64
    # No new key was made for her: the season's opened her seats.
    assert "entrant key of alice" not in done.stdout
    table = subprocess.run(
        [str(TAVOLO), "tournament", "table", "--db", str(db.with_name("arena.db.final.db"))],
        capture_output=True, text=True, timeout=60, env=ENV,
    )  # fmt: skip
    assert table.returncode == 0, table.stderr
    # Both games played, none forfeited by a fault: her bot was seated with her key.
    assert re.search(r"^\d\s+alice\s+\d+\s+\S+\s+2\s+[\d.]+\s+0/0/0\s", table.stdout, re.M)
    assert "sandbox: alice remote, bob bwrap" in table.stdout


def test_over_tls_an_entrant_makes_a_remote_bot_on_its_page_and_the_bot_needs_the_ca(
    tmp_path: Path,
) -> None:
    (tmp_path / "arena.toml").write_text(ARENA.format(allowed="true", hours=1), encoding="utf-8")
    trust = make_certificate(tmp_path)
    store = ArenaStore(tmp_path / "arena.db")
    _, token = store.invite("alice")
    store.close()
    serve, url = start_serve(tmp_path, tls=True, extra=["--referee-listen", "127.0.0.1:0"])
    bots: list[subprocess.Popen[str]] = []
    try:
        assert serve.stdout is not None
        port = re.fullmatch(r"remote bots connect to port (\d+)\n", serve.stdout.readline())
        assert port
        site = Site(url, trust, tmp_path)
        site.tokens = {"alice": token}
        http, csrf = site.signed_in("alice")
        page = http.get("/account")
        assert 'action="/account/remote"' in page.text
        # Without the session's form token, no key is made.
        assert http.post("/account/remote", data={}).status_code == 403
        made = http.post("/account/remote", data={"csrf": csrf})
        assert made.status_code == 201 and made.headers["cache-control"] == "no-store"
        key = re.search(r'<span id="remote-key">(tvk_[^<]+)</span>', made.text)
        assert key and f"TAVOLO_REFEREE=127.0.0.1:{port.group(1)}" in made.text
        assert "TAVOLO_TLS_CA=" in made.text
        # The page shows the key no more: only that the bot is not connected yet.
        again = http.get("/account")
        assert key.group(1) not in again.text and "0 stream(s) connected" in again.text
        referee = f"127.0.0.1:{port.group(1)}"
        # A bot that does not trust the certificate is not seated; one that does is.
        plain = remote_bot(referee, key.group(1))
        bots.append(plain)
        assert plain.wait(60) != 0
        env = {**ENV, "TAVOLO_REFEREE": referee, "TAVOLO_KEY": key.group(1),
               "TAVOLO_TLS_CA": str(tmp_path / "cert.pem")}  # fmt: skip
        trusting = subprocess.Popen(
            [sys.executable, "-m", "tavolo_bot.bots.random"], env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        bots.append(trusting)
        deadline = time.monotonic() + 120
        while 'state">ready<' not in (page := http.get("/account")).text:
            assert time.monotonic() < deadline, page.text
            time.sleep(0.5)
        assert "validation match against random" in page.text
        http.close()
        # The organiser sees it on the admin page, with its bot's two streams waiting.
        site.tokens["organiser"] = organiser_token(tmp_path / "arena.db")
        admin, _ = site.signed_in("organiser")
        deadline = time.monotonic() + 30
        row = re.compile(r'<tr data-submission="1"><td>1</td><td class="name">alice</td>'
                         r'<td class="name">ready</td><td>2</td></tr>')  # fmt: skip
        while not row.search(text := admin.get("/admin").text):
            assert time.monotonic() < deadline, text
            time.sleep(0.5)
        assert f"listens on port {port.group(1)}" in text
        admin.close()
    finally:
        for bot in bots:
            bot.kill()
            bot.wait(10)
        serve.terminate()
        serve.wait(15)
