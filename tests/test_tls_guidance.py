"""TLS without guesswork: the certificate names the address, a plain-text bot is told TLS
is expected, and gRPC core's handshake lines are counted, not printed.

Real certificates from openssl, a real ``tavolo play`` serving TLS, a real SDK bot.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_clients import require
from tests.test_tls_bots import ENV, TAVOLO, free_port, read_tickets
from tournaments.tls_names import certificate_names, names_host, tls_name_warning


def _certificate(folder: Path, names: str | None) -> tuple[Path, Path]:
    """A self-signed certificate with subjectAltName ``names`` (none if None), and its key."""
    folder.mkdir(parents=True, exist_ok=True)
    key, cert = folder / "key.pem", folder / "cert.pem"
    extra = [] if names is None else ["-addext", f"subjectAltName={names}"]
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "1", "-subj", "/CN=cup", *extra, "-keyout", str(key),
         "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def _tls_play(cert: Path, key: Path, port: int, connect_timeout: int) -> subprocess.Popen[str]:
    """``tavolo play random remote`` serving TLS on ``port``: it prints the remote tickets."""
    return subprocess.Popen(
        [str(TAVOLO), "play", "random", "remote", "--seed", "tls-guide", "--deals", "1",
         "--listen", f"127.0.0.1:{port}", "--tls-cert", str(cert), "--tls-key", str(key),
         "--connect-timeout", str(connect_timeout), "--sandbox", "off"],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_the_names_a_certificate_gives(tmp_path: Path) -> None:
    cert, _ = _certificate(
        tmp_path / "a", "DNS:cup.example.org,DNS:*.bots.example.org,IP:203.0.113.7"
    )
    names = certificate_names(cert.read_bytes())
    assert names == ["DNS:cup.example.org", "DNS:*.bots.example.org", "IP:203.0.113.7"]
    assert names_host(names, "cup.example.org")
    assert names_host(names, "CUP.example.org.")
    assert names_host(names, "eu.bots.example.org")
    assert not names_host(names, "a.eu.bots.example.org")  # a wildcard is one label
    assert names_host(names, "203.0.113.7")
    assert not names_host(names, "203.0.113.8")
    assert not names_host(names, "example.org")
    bare, _ = _certificate(tmp_path / "b", None)
    assert certificate_names(bare.read_bytes()) == []
    line = tls_name_warning(bare.read_bytes(), "cup.example.org", "bare.pem")
    assert line is not None and "names no address (it has no subjectAltName)" in line
    assert tls_name_warning(cert.read_bytes(), "203.0.113.7", "cert.pem") is None
    assert tls_name_warning(b"not a certificate", "x", "junk.pem") is not None


def test_a_wrong_certificate_and_a_plain_text_bot(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path, "DNS:localhost")  # not 127.0.0.1, which bots are told
    port = free_port()
    play = _tls_play(cert, key, port, connect_timeout=20)
    try:
        tickets = read_tickets(play, 2)
        # A bot without TAVOLO_TLS_CA: told at once what is wrong, not after its retries.
        plain = subprocess.run(
            [sys.executable, "-m", "tavolo_bot.bots.random"],
            env={**ENV, "TAVOLO_REFEREE": f"127.0.0.1:{port}", "TAVOLO_TICKET": tickets[0]},
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        _, err = play.communicate(timeout=90)
    finally:
        if play.poll() is None:
            play.kill()
    assert plain.returncode == 1
    assert "it serves TLS, and this bot spoke plain text" in plain.stderr, plain.stderr
    assert "TAVOLO_TLS_CA" in plain.stderr
    assert "gave up after retrying" not in plain.stderr  # told at once, not after retries
    warnings = [line for line in err.splitlines() if line.startswith("warning: the TLS")]
    assert len(warnings) == 1, err
    assert "names DNS:localhost, not 127.0.0.1, the address bots are told" in warnings[0]
    # gRPC core's line for the refused handshake is counted, not shown.
    assert "ssl_transport_security" not in err, err
    notes = [line for line in err.splitlines() if line.startswith("note: gRPC logged")]
    assert len(notes) == 1 and "TLS handshakes failed" in notes[0], err


def test_a_tournament_warns_at_start(tmp_path: Path) -> None:
    advertise = "cup.example.org:50777"
    cert, key = _certificate(tmp_path, "DNS:localhost,IP:127.0.0.1")
    file = tmp_path / "t.toml"
    file.write_text(
        'name = "t"\nseed = "s"\n[game]\ndeals = 1\n[match]\ngames = 2\nconnect_timeout = 1\n'
        '[[entry]]\nname = "a"\nbot = "random"\n[[entry]]\nname = "far"\nbot = "remote"\n',
        encoding="utf-8",
    )
    done = subprocess.run(
        [str(TAVOLO), "tournament", "run", str(file), "--db", str(tmp_path / "t.db"),
         "--listen", "127.0.0.1:0", "--advertise", advertise, "--tls-cert", str(cert),
         "--tls-key", str(key), "--quiet"],
        env=ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: the TLS")]
    assert len(warnings) == 1, done.stderr
    assert "not cup.example.org, the address bots are told" in warnings[0]


CLIENT_LANGS = ["go", "rust", "java", "typescript", "cpp"]


@pytest.mark.parametrize("lang", CLIENT_LANGS)
def test_every_clients_plain_text_bot_is_told_tls_is_expected(tmp_path: Path, lang: str) -> None:
    bot = require(lang)
    cert, key = _certificate(tmp_path, "DNS:localhost,IP:127.0.0.1")
    port = free_port()
    play = _tls_play(cert, key, port, connect_timeout=60)
    try:
        tickets = read_tickets(play, 2)
        plain = subprocess.run(
            [str(bot)],
            env={**ENV, "TAVOLO_REFEREE": f"127.0.0.1:{port}", "TAVOLO_TICKET": tickets[0]},
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    finally:
        play.kill()
        play.wait()
    said = plain.stdout + plain.stderr
    assert plain.returncode != 0, said
    assert "it serves TLS, and this bot spoke plain text" in said, said
    assert "TAVOLO_TLS_CA" in said and "gave up after retrying" not in said, said
