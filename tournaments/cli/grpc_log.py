"""gRPC C-core's own log lines kept off the organiser's terminal, and counted.

A referee that serves TLS gets a line from gRPC core (``ssl_transport_security.cc:…]
Handshake failed …``) for every client that speaks plain text or does not trust its
certificate: a port scanner fills the terminal with them. They are written to file
descriptor 2 by C code, below Python, so the filter sits there: a pipe takes fd 2, and a
thread passes every other line on to the real stderr.
"""

from __future__ import annotations

import os
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import typer

CORE_LINE = re.compile(rb"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ (\S+?\.cc):\d+\] (.*)$")
"""A gRPC core log line: level, date, time, thread, source file and line, message."""


def _kind(source: bytes, message: bytes) -> str:
    if b"Handshake failed" in message:
        return (
            "TLS handshakes failed (clients that spoke plain text or did not trust the certificate)"
        )
    return f"other lines from {source.decode(errors='replace')}"


@contextmanager
def core_lines_counted(say: Callable[[str], None]) -> Iterator[Counter[str]]:
    """While inside, gRPC core's log lines on fd 2 are counted, not shown; every other
    line passes through. On the way out ``say`` gets one line with the counts, if any."""
    saved = os.dup(2)
    read, write = os.pipe()
    os.dup2(write, 2)
    os.close(write)
    counts: Counter[str] = Counter()

    def pump() -> None:
        with os.fdopen(read, "rb", buffering=0) as stream:
            pending = b""
            while chunk := stream.read(65536):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    found = CORE_LINE.match(line)
                    if found:
                        counts[_kind(found[1], found[2])] += 1
                    else:
                        os.write(saved, line + b"\n")
            if pending:
                os.write(saved, pending)

    thread = threading.Thread(target=pump, name="grpc-core-log", daemon=True)
    thread.start()
    try:
        yield counts
    finally:
        os.dup2(saved, 2)  # the pipe's last writer gone: the pump reads to its end
        thread.join(timeout=5)
        os.close(saved)
        if counts:
            said = "; ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
            say(f"gRPC logged {said}")


@contextmanager
def grpc_lines_counted(serving_tls: bool) -> Iterator[None]:
    """:func:`core_lines_counted` while a referee serves TLS, its count said as a ``note:``
    line on stderr; nothing otherwise."""
    if not serving_tls:
        yield
        return
    with core_lines_counted(lambda line: typer.echo(f"note: {line}", err=True)):
        yield
