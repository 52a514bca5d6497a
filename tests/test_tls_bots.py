"""A referee serving TLS, and the bots it starts: built-in and ``cmd:`` bots play on their
own (plaintext) Unix sockets, remote bots over TLS with ``TAVOLO_TLS_CA``; ``match status``
says when a match waits for its bots and when every game of an entry ended in a crash;
``--connect-timeout`` sets the connection window on ``serve`` and ``match create``.

Real ``tavolo serve`` and ``tavolo play`` processes, real sandboxed bots, real gRPC.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.network import free_port
from tests.sandboxing import require_sandbox

TAVOLO = Path(sys.executable).with_name("tavolo")
TOKEN = "tls-test-token-" + os.urandom(4).hex()


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, and its key."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}}


def read_tickets(play: subprocess.Popen[str], count: int) -> list[str]:
    """The tickets of the first ``count`` remote seats ``tavolo play`` prints (over TLS)."""
    assert play.stdout is not None
    tickets = []
    while len(tickets) < count:
        line = play.stdout.readline()
        assert line, play.stderr.read() if play.stderr else ""
        if line.startswith("remote seat "):
            assert "over TLS (give it TAVOLO_TLS_CA)" in line
            tickets.append(line.split()[-1])
    return tickets


@pytest.fixture
def served(tmp_path: Path, certificate: tuple[Path, Path]) -> Iterator[str]:
    """A ``tavolo serve`` over TLS with a 3 s connection window; its address."""
    cert, key = certificate
    address = f"127.0.0.1:{free_port()}"
    serve = subprocess.Popen(
        [str(TAVOLO), "serve", "--listen", address, "--records", str(tmp_path / "records"),
         "--tls-cert", str(cert), "--tls-key", str(key), "--connect-timeout", "3"],
        env={**ENV, "TAVOLO_ADMIN_TOKEN": TOKEN},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert serve.stdout is not None
        first = serve.stdout.readline()
        assert first.startswith("tavolo referee on") and "(TLS)" in first, first
        yield address
    finally:
        serve.terminate()
        serve.wait(30)


def match_cli(
    certificate: tuple[Path, Path], *args: str, ca: bool = True
) -> subprocess.CompletedProcess[str]:
    extra = ["--tls-ca", str(certificate[0])] if ca else []
    return subprocess.run(
        [str(TAVOLO), "match", *args, *extra],
        env={**ENV, "TAVOLO_ADMIN_TOKEN": TOKEN},
        capture_output=True,
        text=True,
        timeout=60,
    )


def status(certificate: tuple[Path, Path], address: str, match_id: str) -> str:
    done = match_cli(certificate, "status", match_id, "--referee", address)
    assert done.returncode == 0, done.stderr
    return done.stdout


def wait_done(certificate: tuple[Path, Path], address: str, match_id: str) -> str:
    for _ in range(600):
        out = status(certificate, address, match_id)
        if not out.startswith(("waiting", "running")):
            return out
        time.sleep(0.1)
    raise AssertionError(f"match {match_id} still not over: {out}")


SLOW = """
import time
from tavolo_bot import Bot, run


class Slow(Bot):
    def choose(self, turn):
        time.sleep(0.05)
        return turn.legal[0].id


raise SystemExit(run(Slow))
"""


def result_of(out: str) -> dict[str, object]:
    text = out[out.index("{") :]
    result: dict[str, object] = json.loads(text)
    return result


def test_built_in_bots_play_under_a_tls_referee(
    served: str, certificate: tuple[Path, Path]
) -> None:
    require_sandbox()
    created = match_cli(
        certificate, "create", "heuristic", "random", "--seed", "tls-1", "--deals", "1",
        "--referee", served,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    match_id = created.stdout.split()[1]
    out = wait_done(certificate, served, match_id)
    first, sandbox = out.splitlines()[:2]
    assert first == "done"  # no note: nothing went wrong
    assert sandbox == "sandbox: heuristic bwrap, random bwrap"
    games = result_of(out)["games"]
    assert isinstance(games, list) and len(games) == 2
    assert [g["termination"] for g in games] == ["deals_played", "deals_played"]


def test_a_remote_bot_plays_over_tls_and_status_says_waiting_running_done(
    served: str, certificate: tuple[Path, Path], tmp_path: Path
) -> None:
    require_sandbox()
    created = match_cli(
        certificate, "create", "heuristic", "remote", "--seed", "tls-2", "--deals", "2",
        "--referee", served, "--connect-timeout", "60",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    match_id = created.stdout.split()[1]
    tickets = [line.split("TAVOLO_TICKET=")[1] for line in created.stdout.splitlines()[1:]]
    assert len(tickets) == 2
    before = status(certificate, served, match_id)
    assert before.splitlines()[0] == "waiting for bots (not connected yet: remote#1, remote#2)"
    # A slow remote bot, so the match is seen running: the SDK over TLS, trusting the CA.
    script = tmp_path / "slow.py"
    script.write_text(SLOW, encoding="utf-8")
    bot = subprocess.Popen(
        [sys.executable, str(script)],
        env={**ENV, "TAVOLO_REFEREE": served, "TAVOLO_TICKET": ",".join(tickets),
             "TAVOLO_TLS_CA": str(certificate[0])},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        seen = []
        for _ in range(600):
            first = status(certificate, served, match_id).splitlines()[0]
            if not seen or seen[-1] != first:
                seen.append(first)
            if first not in ("running",) and not first.startswith("waiting"):
                break
            time.sleep(0.05)
        _, err = bot.communicate(timeout=60)
        assert bot.returncode == 0, err
    finally:
        if bot.poll() is None:
            bot.kill()
    assert seen[-1] == "done", seen
    assert "running" in seen, seen
    games = result_of(status(certificate, served, match_id))["games"]
    assert isinstance(games, list)
    assert [g["termination"] for g in games] == ["deals_played", "deals_played"]


def test_remote_bots_that_never_connect_make_done_say_so(
    served: str, certificate: tuple[Path, Path]
) -> None:
    require_sandbox()
    # The serve's own window (3 s) for the first match; 1 s asked for the second.
    for asked, window in ((None, "3"), ("1", "1")):
        extra = [] if asked is None else ["--connect-timeout", asked]
        created = match_cli(
            certificate, "create", "random", "remote", "--seed", "tls-3", "--deals", "1",
            "--referee", served, *extra,
        )  # fmt: skip
        assert created.returncode == 0, created.stderr
        start = time.monotonic()
        out = wait_done(certificate, served, created.stdout.split()[1])
        first = out.splitlines()[0]
        assert first.startswith("done, but every game of 'remote' ended in its crash (never "), out
        assert f"no connection within {window} s)" in first
        assert time.monotonic() - start >= float(window)
        games = result_of(out)["games"]
        assert isinstance(games, list)
        assert [g["termination"] for g in games] == ["crash", "crash"]


def test_a_cmd_bot_plays_under_a_tls_referee_with_a_remote_bot_over_tls(
    tmp_path: Path, certificate: tuple[Path, Path]
) -> None:
    require_sandbox()
    cert, key = certificate
    port = free_port()
    local = "cmd:" + shlex.join([sys.executable, "-m", "tavolo_bot.bots.random"])
    play = subprocess.Popen(
        [str(TAVOLO), "play", local, "remote", "--seed", "tls-4", "--deals", "1",
         "--listen", f"127.0.0.1:{port}", "--tls-cert", str(cert), "--tls-key", str(key),
         "--record", str(tmp_path / "m.jsonl"), "--quiet"],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        tickets = read_tickets(play, 2)
        remote = subprocess.run(
            [sys.executable, "-m", "tavolo_bot.bots.random"],
            env={**ENV, "TAVOLO_REFEREE": f"127.0.0.1:{port}", "TAVOLO_TICKET": ",".join(tickets),
                 "TAVOLO_TLS_CA": str(cert)},
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert remote.returncode == 0, remote.stderr
        out, err = play.communicate(timeout=60)
    finally:
        if play.poll() is None:
            play.kill()
    assert play.returncode == 0, out + err
    assert "fault:" not in out
    header = json.loads((tmp_path / "m.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert header["sandbox"] == ["bwrap", "remote", "bwrap", "remote"]
    terminations = [
        json.loads(line)["termination"]
        for line in (tmp_path / "m.jsonl").read_text(encoding="utf-8").splitlines()
        if json.loads(line)["type"] == "result"
    ]
    assert terminations == ["deals_played", "deals_played"]


def test_bad_connect_timeouts_are_one_error_line() -> None:
    for args in (
        ["serve", "--connect-timeout", "0"],
        ["match", "create", "random", "remote", "--seed", "s", "--connect-timeout", "-1"],
        ["play", "random", "random", "--seed", "s", "--connect-timeout", "0"],
        ["match", "create", "random", "remote", "--seed", "s", "--connect-timeout", "1e10"],
    ):
        done = subprocess.run(
            [str(TAVOLO), *args], env=ENV, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.splitlines() == [
            "error: --connect-timeout must be seconds above 0 and at most 86400 (a day), "
            f"got {float(args[-1]):g}"
        ]


def test_serve_help_says_list_tables_hides_the_names() -> None:
    done = subprocess.run(
        [str(TAVOLO), "serve", "--help"],
        env={**ENV, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert "ListTables" in done.stdout and "--public-names" in done.stdout
