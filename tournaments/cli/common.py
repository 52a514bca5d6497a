"""What every command shares: one-line errors, reading rule options, a referee's channel."""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import asyncio
import dataclasses
import json
import re
import signal
import socket
from collections.abc import Coroutine, Iterable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import grpc
import typer

from referee.deal_book_files import read_book, read_book_bytes
from referee.engine.cards import CARD_NAMES
from referee.engine.deal_book import BookError, DealBook, parse_book
from referee.engine.errors import RulesError
from referee.engine.registry import preset
from referee.engine.rules import Rules
from referee.entries import Entry
from referee.sandbox.bwrap import SandboxMode
from referee.service.server import WILDCARD_HOSTS
from tournaments.tls_names import tls_name_warning

FAULT_INCIDENTS = frozenset(
    {"never_connected", "disconnect", "flood", "timeout", "illegal_action", "crash"}
)
"""Record incident kinds that are faults (the last three: ``on_fault = "random"`` played
for the seat)."""

STDERR_SHOWN = 5
"""Lines of a bot's stderr a fault shows on the console (the record keeps up to 20)."""


@dataclasses.dataclass(frozen=True)
class Fault:
    """A fault as a game's record holds it: a forfeit line or a fault incident."""

    kind: str
    """The forfeit's reason (``crash``, ``timeout``, ``illegal_action``) or the incident's kind."""
    seat: int
    detail: str
    forfeit: bool

    @property
    def head(self) -> str:
        """The detail without the end of the bot's stderr (who, where, what, the log)."""
        return self.detail.partition("\n")[0].removesuffix("; stderr ends:")

    @property
    def stderr(self) -> list[str]:
        """The last lines of the bot's stderr that the detail quotes (none if it quotes none)."""
        _, cut, tail = self.detail.partition("; stderr ends:\n")
        return tail.splitlines() if cut else []

    def line(self) -> str:
        """One line: the kind, the head, and the last line of stderr if any."""
        stderr = self.stderr
        last = f"; stderr ends: {stderr[-1].strip()}" if stderr else ""
        return f"{self.kind}: {self.head}{last}"

    def lines(self, shown: int = STDERR_SHOWN) -> list[str]:
        """The fault for a console: its head, then the last ``shown`` lines of stderr."""
        out = [f"{self.kind}: {self.head}"]
        stderr = self.stderr
        if stderr:
            out.append("  its stderr ends:")
            out.extend(f"  | {line}" for line in stderr[-shown:])
        return out


def record_faults(lines: Iterable[str]) -> list[Fault]:
    """The faults in one game's record lines, in order: forfeits and fault incidents."""
    out = []
    for text in lines:
        line = json.loads(text)
        kind = line.get("type")
        if kind == "forfeit":
            out.append(Fault(str(line["reason"]), int(line["seat"]), str(line["detail"]), True))
        elif kind == "incident" and line.get("kind") in FAULT_INCIDENTS:
            out.append(Fault(str(line["kind"]), int(line["seat"]), str(line["detail"]), False))
    return out


def main_fault(lines: Iterable[str]) -> Fault | None:
    """The fault that decided a game (its forfeit), else its last fault, else None."""
    faults = record_faults(lines)
    forfeits = [f for f in faults if f.forfeit]
    return forfeits[-1] if forfeits else (faults[-1] if faults else None)


def always_faulted_line(name: str, played: int, fault: Fault | None) -> str:
    """The error line of an entry that faulted in every game it played."""
    games = "the game it played" if played == 1 else f"all {played} games it played"
    last = f"; the last: {fault.line()}" if fault is not None else ""
    return f"entry {name!r} faulted in {games}{last}"


T = TypeVar("T")


class Interrupted(Exception):
    """Ctrl-C stopped a run, which then cleaned up: its bots are stopped and reaped."""


def run_interruptible(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, where Ctrl-C cancels ``main`` once and waits for it to clean
    up, then raises :class:`Interrupted`; further Ctrl-Cs, meanwhile and until the process
    exits, are ignored.

    asyncio's own handling raises KeyboardInterrupt at the second Ctrl-C wherever the loop
    is, which cuts the bots' cleanup short and leaves tracebacks of half-stopped servers.
    """

    results: list[T] = []
    interrupted = False

    async def guarded() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def on_sigint() -> None:
            nonlocal interrupted
            if not interrupted:
                interrupted = True
                task.cancel()

        loop.add_signal_handler(signal.SIGINT, on_sigint)
        try:
            results.append(await main)
        except asyncio.CancelledError:
            if not interrupted:
                raise
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    asyncio.run(guarded())
    if interrupted or not results:
        # Every caller exits now. Python's shutdown puts back SIGINT's default action, so a
        # Ctrl-C that came then would kill the process by signal instead of exit 130.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise Interrupted
    return results[0]


def read_tls(cert: Path | None, key: Path | None) -> tuple[bytes, bytes] | None:
    """``--tls-cert`` and ``--tls-key`` read: (key, certificate) for the referee, or None."""
    if (cert is None) != (key is None):
        fail("--tls-cert and --tls-key go together")
    if cert is None or key is None:
        return None
    try:
        return key.read_bytes(), cert.read_bytes()
    except OSError as exc:
        fail(f"cannot read {exc.filename}: {exc.strerror}")


def reachable_host(host: str) -> str:
    """``host``, or this machine's name if it is a wildcard listen host: a wildcard address
    is no place to connect to."""
    return socket.getfqdn() if host in WILDCARD_HOSTS else host


def warn_if_unnamed(tls: tuple[bytes, bytes] | None, cert: Path | None, told: str) -> None:
    """One warning line if the referee's certificate does not name the host of ``told``
    (``host:port``, the address bots are told to connect to)."""
    if tls is None or cert is None:
        return
    host = reachable_host(told.rpartition(":")[0])
    line = tls_name_warning(tls[1], host, str(cert))
    if line is not None:
        typer.echo(f"warning: {line}", err=True)


MAX_CONNECT_TIMEOUT = 86400.0
"""The longest connection window: a day (MatchService carries it in whole milliseconds)."""


def check_connect_timeout(seconds: float) -> None:
    """A clean exit unless ``--connect-timeout`` is seconds above 0, a day at most."""
    if not 0 < seconds <= MAX_CONNECT_TIMEOUT:
        fail(
            f"--connect-timeout must be seconds above 0 and at most {MAX_CONNECT_TIMEOUT:g} "
            f"(a day), got {seconds:g}"
        )


def confined(entries: tuple[Entry, ...], sandbox: SandboxMode | None) -> tuple[Entry, ...]:
    """The entries, with ``--sandbox`` (when given) overriding what their manifests ask."""
    if sandbox is None:
        return entries
    return tuple(dataclasses.replace(e, sandbox=None) for e in entries)


def read_token_file(path: Path | None) -> str | None:
    """The admin token in ``path`` (first line), or None without a path."""
    if path is None:
        return None
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        fail(f"cannot read the admin token file {path}: {exc.strerror}")
    if not token:
        fail(f"the admin token file {path} is empty")
    return token


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one error line to stderr and exit with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def load_rules(game: str, knobs: list[str] | None) -> Rules:
    """The preset ``game`` with the ``knob=value`` options applied, or a clean exit."""
    try:
        return preset(game).with_knobs(knobs or [])
    except RulesError as exc:
        fail(str(exc))


def referee_channel(referee: str, tls_ca: Path | None) -> grpc.Channel:
    """A channel to a running referee: plaintext, or TLS trusting ``tls_ca``."""
    if tls_ca is None:
        return grpc.insecure_channel(referee)
    try:
        root = tls_ca.read_bytes()
    except OSError as exc:
        fail(f"cannot read {tls_ca}: {exc.strerror}")
    return grpc.secure_channel(referee, grpc.ssl_channel_credentials(root))


def given_deals(
    rules: Rules,
    book: Path | None,
    hands: str | None,
    dealer: int | None,
    trump: str | None,
    deals: int | None,
) -> tuple[DealBook | None, int | None]:
    """The deal book of ``--book`` or ``--hands`` (a book of one line), and the deals per
    game; a clean exit naming the problem."""
    if hands is None:
        if dealer is not None or trump is not None:
            fail("--dealer and --trump go with --hands")
        if book is None:
            return None, deals
        try:
            return read_book(book, rules), deals
        except BookError as exc:
            fail(str(exc))
    if book is not None:
        fail("give --book or --hands, not both")
    if deals not in (None, 1):
        fail(f"--hands plays a single deal, so --deals must be 1 or left out, not {deals}")
    if dealer is None:
        fail("--hands needs --dealer, the seat that dealt them")
    if rules.family.leftover == "stock":
        fail(f"{rules.game} needs the stock in its order: give the deal in a --book")
    seats = [[c for c in re.split(r"[,\s]+", seat.strip()) if c] for seat in hands.split(";")]
    line: dict[str, object] = {"dealer": dealer, "hands": seats}
    if rules.family.leftover:
        # The widow or the monte: the cards no hand holds.
        held = {c for seat in seats for c in seat}
        line[rules.family.leftover] = [c for c in CARD_NAMES if c not in held]
    if trump is not None:
        line["trump"] = trump
    data = (json.dumps(line) + "\n").encode()
    try:
        return parse_book(data, rules, "--hands"), 1
    except BookError as exc:
        fail(f"--hands: {exc.message}")


def book_to_check(book: Path | None) -> tuple[bytes, str] | None:
    """``--book`` of the verify commands: the book's bytes and name, or None without one."""
    if book is None:
        return None
    try:
        return read_book_bytes(book), str(book)
    except BookError as exc:
        fail(str(exc))
