"""The arena's entrants, submissions and API, through a real ``tavolo arena serve`` process,
the real CLI and a real HTTP client (httpx)."""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.test_arena_archives import tar_of
from tournaments.arena.api import ArenaApi
from tournaments.arena.archives import pack
from tournaments.arena.config import load_arena
from tournaments.arena.store import ArenaStore

TAVOLO = Path(sys.executable).with_name("tavolo")
ENV = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}

ARENA = """\
name = "Winter arena"
[game]
preset = "tressette"
[match]
deadline_ms = 500
[submissions]
per_day = {per_day}
archive_bytes = 200000
[signup]
open = {signup}
[api]
requests_per_minute = {rpm}
"""


def tavolo(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TAVOLO), *args], capture_output=True, text=True, timeout=60, env=env or ENV
    )


def invite(db: Path, name: str) -> str:
    done = tavolo("arena", "invite", name, "--db", str(db))
    assert done.returncode == 0, done.stderr
    match = re.fullmatch(rf"entrant {name}: token (tav_\S+)\n", done.stdout)
    assert match, done.stdout
    return match.group(1)


class Arena:
    """A running ``tavolo arena serve``."""

    def __init__(self, tmp: Path, *, per_day: int = 3, signup: bool = False, rpm: int = 600):
        self.db = tmp / "arena.db"
        self.file = tmp / "arena.toml"
        self.file.write_text(
            ARENA.format(per_day=per_day, signup=str(signup).lower(), rpm=rpm), encoding="utf-8"
        )
        self.tokens = {name: invite(self.db, name) for name in ("alice", "bob")}
        self.process = subprocess.Popen(
            [str(TAVOLO), "arena", "serve", str(self.file), "--db", str(self.db),
             "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
        )  # fmt: skip
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        match = re.fullmatch(r"arena Winter arena: (http://127\.0\.0\.1:\d+/)\n", line)
        assert match, (line, self.process.stderr.read() if self.process.stderr else "")
        self.url = match.group(1)
        self.http = httpx.Client(base_url=self.url, timeout=30)

    def as_(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[name]}"}

    def stop(self) -> None:
        self.http.close()
        self.process.terminate()
        self.process.wait(15)


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Arena]:
    running = Arena(tmp_path)
    yield running
    running.stop()


def bot_folder(root: Path, text: str = "print('hello')\n") -> Path:
    root.mkdir()
    (root / "bot.toml").write_text('name = "mybot"\ncommand = ["python3", "bot.py"]\n')
    (root / "bot.py").write_text(text)
    return root


def test_an_invited_entrant_submits_from_the_cli_and_finds_it_in_the_api(
    arena: Arena, tmp_path: Path
) -> None:
    bot = bot_folder(tmp_path / "mybot")
    env = {**ENV, "TAVOLO_ARENA_TOKEN": arena.tokens["alice"]}
    done = tavolo("arena", "submit", str(bot), "--arena", arena.url, env=env)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"submission 1: received \(2 files, digest [0-9a-f]{16}\)\n", done.stdout)
    mine = arena.http.get("/api/v1/submissions", headers=arena.as_("alice")).json()
    # The arena builds and validates it meanwhile: this bot only prints, so it will fail.
    assert [(s["id"], s["entrant"]) for s in mine] == [(1, "alice")]
    assert mine[0]["state"] in ("received", "building", "validating", "failed")
    # Kept by content, read-only, where the store says.
    kept = arena.db.with_name("arena.db.submissions") / mine[0]["digest"]
    assert (kept / "bot.py").read_text() == "print('hello')\n"
    assert (kept / "bot.py").stat().st_mode & 0o777 == 0o444
    # The same folder again is the same submission, and costs nothing of the day's.
    again = tavolo("arena", "submit", str(bot), "--arena", arena.url, env=env)
    assert again.returncode == 0 and again.stdout.startswith("submission 1: ")
    # Another entrant sees none of it, not even that it exists.
    other = arena.http.get("/api/v1/submissions/1", headers=arena.as_("bob"))
    assert other.status_code == 404 and other.json() == {"error": "no submission 1 of yours"}
    assert arena.http.get("/api/v1/submissions", headers=arena.as_("bob")).json() == []
    assert arena.http.get("/api/v1/me", headers=arena.as_("bob")).json()["name"] == "bob"


def test_tokens_are_kept_only_as_digests_and_a_wrong_one_gets_nothing(arena: Arena) -> None:
    stored = arena.db.read_bytes() + (
        arena.db.with_name("arena.db-wal").read_bytes()
        if arena.db.with_name("arena.db-wal").exists()
        else b""
    )
    for token in arena.tokens.values():
        assert token.encode() not in stored
    with sqlite3.connect(arena.db) as db:
        digests = [r[0] for r in db.execute("SELECT token_digest FROM entrants")]
    assert len(digests) == 2 and all(re.fullmatch(r"[0-9a-f]{64}", d) for d in digests)
    for headers in ({}, {"Authorization": "Bearer tav_" + "x" * 43}, {"Authorization": "Basic x"}):
        answer = arena.http.get("/api/v1/submissions", headers=headers)
        assert answer.status_code == 401 and answer.headers["www-authenticate"] == "Bearer"
        assert "no valid token" in answer.json()["error"]
    # A digest is no token either.
    assert (
        arena.http.get("/api/v1/me", headers={"Authorization": f"Bearer {digests[0]}"}).status_code
        == 401
    )


def test_an_attacking_archive_is_refused_naming_its_member(arena: Arena, tmp_path: Path) -> None:
    evil = tar_of([
        ("bot.toml", b'name = "x"\ncommand = ["sh"]\n', tarfile.REGTYPE),
        ("../../../escaped.txt", b"pwned", tarfile.REGTYPE),
    ])  # fmt: skip
    answer = arena.http.post("/api/v1/submissions", content=evil, headers=arena.as_("alice"))
    assert answer.status_code == 400
    assert answer.json()["error"] == (
        "the archive is refused: '../../../escaped.txt': a path with '..'; members must be "
        "inside the folder"
    )
    assert not list(tmp_path.rglob("escaped.txt"))
    assert arena.http.get("/api/v1/submissions", headers=arena.as_("alice")).json() == []
    # Not a bot: no manifest on top.
    plain = tar_of([("readme.txt", b"hi", tarfile.REGTYPE)])
    answer = arena.http.post("/api/v1/submissions", content=plain, headers=arena.as_("alice"))
    assert answer.status_code == 400 and "no bot.toml at its top" in answer.json()["error"]
    # Too big is refused before it is read whole.
    big = arena.http.post(
        "/api/v1/submissions", content=b"\0" * 300_000, headers=arena.as_("alice")
    )
    assert big.status_code == 413
    assert big.json()["error"] == "the body is 300000 bytes, more than the 200000 allowed"


def test_each_entrant_has_its_own_days_cap(arena: Arena, tmp_path: Path) -> None:
    def archive(i: int) -> bytes:
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w") as tar:
            for name, data in (
                ("bot.toml", b'name = "b"\ncommand = ["sh"]\n'),
                ("v", str(i).encode()),
            ):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        return out.getvalue()

    codes = [
        arena.http.post(
            "/api/v1/submissions", content=archive(i), headers=arena.as_("alice")
        ).status_code
        for i in range(4)
    ]
    assert codes == [201, 201, 201, 429]
    refusal = arena.http.post("/api/v1/submissions", content=archive(9), headers=arena.as_("alice"))
    assert "has made its 3 submissions of" in refusal.json()["error"]
    # Bob's day is his own.
    bob = arena.http.post("/api/v1/submissions", content=archive(0), headers=arena.as_("bob"))
    assert bob.status_code == 201 and bob.json()["entrant"] == "bob"
    # The same files as Alice's share her copy on disk.
    files = arena.db.with_name("arena.db.submissions")
    assert len([p for p in files.iterdir() if not p.name.startswith(".")]) == 3


def test_the_api_is_rate_limited_per_client(tmp_path: Path) -> None:
    arena = Arena(tmp_path, rpm=20)
    try:
        codes = [
            arena.http.get("/api/v1/me", headers=arena.as_("alice")).status_code for _ in range(25)
        ]
        assert codes[:20] == [200] * 20 and set(codes[20:]) == {429}
        limited = arena.http.get("/api/v1/me", headers=arena.as_("alice"))
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        assert "too many requests: 20 a minute" in limited.json()["error"]
        # Another client's budget is its own.
        assert arena.http.get("/api/v1/me", headers=arena.as_("bob")).status_code == 200
    finally:
        arena.stop()


def test_sign_up_needs_it_open_and_a_code_with_uses_left(tmp_path: Path) -> None:
    (tmp_path / "closed").mkdir()
    closed = Arena(tmp_path / "closed", signup=False)
    try:
        answer = closed.http.post("/api/v1/signup", json={"name": "carol", "invitation": "tav_x"})
        assert answer.status_code == 403 and "sign-up is closed" in answer.json()["error"]
    finally:
        closed.stop()
    (tmp_path / "open").mkdir()
    arena = Arena(tmp_path / "open", signup=True)
    try:
        made = tavolo("arena", "invitation", "--db", str(arena.db), "--uses", "1")
        assert made.returncode == 0, made.stderr
        code = made.stdout.split()[1]
        joined = arena.http.post("/api/v1/signup", json={"name": "carol", "invitation": code})
        assert joined.status_code == 201, joined.text
        token = joined.json()["token"]
        me = arena.http.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
        assert me.json()["name"] == "carol"
        used = arena.http.post("/api/v1/signup", json={"name": "dave", "invitation": code})
        assert (
            used.status_code == 403 and used.json()["error"] == "the invitation code is not valid"
        )
        wrong = arena.http.post(
            "/api/v1/signup", json={"name": "dave", "invitation": code[:-2] + "zz"}
        )
        assert wrong.status_code == 403
        taken = tavolo("arena", "invitation", "--db", str(arena.db))
        again = arena.http.post(
            "/api/v1/signup", json={"name": "carol", "invitation": taken.stdout.split()[1]}
        )
        assert again.status_code == 409 and "exists already" in again.json()["error"]
        bad = arena.http.post("/api/v1/signup", content=b"{not json")
        assert bad.status_code == 400
    finally:
        arena.stop()


def test_the_openapi_schema_names_every_route(arena: Arena, tmp_path: Path) -> None:
    schema = arena.http.get("/api/v1/openapi.json").json()
    assert schema["openapi"].startswith("3.")
    assert set(schema["paths"]) == {
        "/api/v1/signup", "/api/v1/me", "/api/v1/submissions", "/api/v1/submissions/{number}",
        "/api/v1/submissions/{number}/logs", "/api/v1/leaderboard",
        "/api/v1/submissions/{number}/choose", "/api/v1/remote",
    }  # fmt: skip
    # The same as the API serves.
    api = ArenaApi(ArenaStore(tmp_path / "other.db"), load_arena(arena.file))
    served = {r.path.replace(":int", "") for r in api.routes()}
    assert set(schema["paths"]) | {"/api/v1/openapi.json"} == served
    assert json.dumps(schema).count("#/components/schemas/Submission") >= 3


def test_bad_arena_files_and_names_get_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[submissions]\nper_day = 0\n', encoding="utf-8")
    done = tavolo("arena", "serve", str(bad), "--db", str(tmp_path / "a.db"))
    assert done.returncode == 2
    assert done.stderr == f"error: {bad}:3: key 'submissions.per_day': must be 1 or more\n"
    bad.write_text('name = "x"\n[season]\nopens = 2027-01-01\n', encoding="utf-8")
    done = tavolo("arena", "serve", str(bad), "--db", str(tmp_path / "a.db"))
    assert done.returncode == 2 and "key 'season.opens': must be a date and time" in done.stderr
    bad.write_text('name = "x"\nprize = 100\n', encoding="utf-8")
    done = tavolo("arena", "serve", str(bad), "--db", str(tmp_path / "a.db"))
    assert done.returncode == 2 and f"{bad}:2: key 'prize': unknown key" in done.stderr
    bad.write_text('name = "x"\n[validation]\nopponent = "nobody.toml"\n', encoding="utf-8")
    done = tavolo("arena", "serve", str(bad), "--db", str(tmp_path / "a.db"))
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {bad}:3: key 'validation.opponent': must be a built-in")
    assert "nobody.toml" in done.stderr and "Traceback" not in done.stderr
    bad.write_text('name = "x"\n[validation]\nsets = 0\n', encoding="utf-8")
    done = tavolo("arena", "serve", str(bad), "--db", str(tmp_path / "a.db"))
    assert done.stderr == f"error: {bad}:3: key 'validation.sets': must be 1 or more\n"
    db = tmp_path / "a.db"
    invite(db, "alice")
    twice = tavolo("arena", "invite", "alice", "--db", str(db))
    assert (
        twice.returncode == 2 and twice.stderr == "error: an entrant named 'alice' exists already\n"
    )
    odd = tavolo("arena", "invite", "al ice\x1b", "--db", str(db))
    assert odd.returncode == 2 and odd.stderr.startswith("error: the entrant's name")
    nowhere = tavolo(
        "arena", "submit", str(tmp_path), "--arena", "http://127.0.0.1:9/", "--token", "tav_x"
    )
    assert nowhere.returncode == 2 and "no bot.toml at the top of the folder" in nowhere.stderr


def test_a_submission_is_built_and_validated_and_only_its_entrant_reads_its_logs(
    arena: Arena, tmp_path: Path
) -> None:
    def state_of(number: int) -> dict[str, object]:
        deadline = time.monotonic() + 120
        while True:
            answer = arena.http.get(f"/api/v1/submissions/{number}", headers=arena.as_("alice"))
            if answer.json()["state"] in ("ready", "failed"):
                return dict(answer.json())
            assert time.monotonic() < deadline, answer.json()
            time.sleep(0.3)

    broken = bot_folder(tmp_path / "broken")
    (broken / "bot.toml").write_text(
        f'name = "mybot"\ncommand = ["{sys.executable}", "bot.py"]\n'
        'build = ["sh", "-c", "echo syntax error in bot.c >&2; exit 2"]\n'
    )
    sent = arena.http.post("/api/v1/submissions", content=pack(broken), headers=arena.as_("alice"))
    failed = state_of(sent.json()["id"])
    assert (failed["state"], failed["reason"]) == ("failed", "the build failed: exit status 2")
    logs = arena.http.get(f"/api/v1/submissions/{failed['id']}/logs", headers=arena.as_("alice"))
    assert logs.json() == {"build": "syntax error in bot.c\n"}
    # Fixed: the bot now plays.
    fixed = bot_folder(tmp_path / "fixed", "from tavolo_bot.bots.random import main\nmain()\n")
    (fixed / "bot.toml").write_text(f'name = "mybot"\ncommand = ["{sys.executable}", "bot.py"]\n')
    sent = arena.http.post("/api/v1/submissions", content=pack(fixed), headers=arena.as_("alice"))
    ready = state_of(sent.json()["id"])
    assert (ready["state"], ready["reason"]) == ("ready", "")
    logs = arena.http.get(f"/api/v1/submissions/{ready['id']}/logs", headers=arena.as_("alice"))
    assert "timeouts 0, illegal actions 0, crashes 0" in logs.json()["validation"]
    # Bob reads neither log, nor learns that they exist.
    for number in (failed["id"], ready["id"]):
        other = arena.http.get(f"/api/v1/submissions/{number}/logs", headers=arena.as_("bob"))
        assert other.status_code == 404
    # Once Bob's bot is ready too, the ladder has them meet, and the leaderboard shows it.
    theirs = arena.http.post("/api/v1/submissions", content=pack(fixed), headers=arena.as_("bob"))
    assert theirs.status_code == 201
    deadline = time.monotonic() + 180
    while True:
        board = arena.http.get("/api/v1/leaderboard").json()
        if board["games"] > 0:
            break
        assert time.monotonic() < deadline, board
        time.sleep(0.5)
    assert {(r["entrant"], r["state"]) for r in board["submissions"]} == {
        ("alice", "ready"), ("bob", "ready"),
    }  # fmt: skip
    assert [e["entrant"] for e in board["entrants"]] in (["alice", "bob"], ["bob", "alice"])
