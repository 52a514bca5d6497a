"""This machine's addresses, for tests that listen and connect for real."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def other_address() -> str | None:
    """An address of this machine that is not loopback, if it has one (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: only a route is looked up
        except OSError:
            return None
        address = str(s.getsockname()[0])
    return None if address.startswith("127.") else address
