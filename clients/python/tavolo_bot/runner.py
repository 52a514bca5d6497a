"""Playing tickets: one gRPC stream per ticket, reconnection, and the process exit code.

Environment (read when :func:`run` gets no arguments):

- ``TAVOLO_REFEREE``: the referee's ``host:port``, or ``unix:/path`` of a Unix-domain socket.
- ``TAVOLO_TICKET``: one ticket, or several separated by commas (one stream and one bot each).
- ``TAVOLO_KEY``: an entrant key instead of tickets: its streams are seated in each of the
  entrant's matches in turn, with a fresh bot for each match (docs/protocol.md).
- ``TAVOLO_STREAMS``: how many streams to open with ``TAVOLO_KEY`` (2): a table of a
  partnership game takes two, otherwise one, so more streams play more tables at once.
- ``TAVOLO_TLS_CA``: a PEM file of the root certificate; unset means no TLS.
- ``TAVOLO_RECONNECT_SECONDS``: how long to keep reconnecting after the stream breaks (10).
- ``TAVOLO_SEED``: seed text for the bots' randomness (unset: each stream's ticket).

A refusal that trying again cannot change ends the stream at once: ``ticket_used`` (the
match is over), ``unknown_ticket``, ``wrong_socket``, ``process_gone``, ``unknown_key``,
``key_revoked``, and any other status that is the referee's answer. ``seat_taken``
(another connection still holds the seat, as right after a drop) is retried within
``TAVOLO_RECONNECT_SECONDS``, like a broken connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NoReturn

import grpc
import grpc.aio

from tavolo_bot.bot import Bot, stream_seed
from tavolo_bot.compact import CompactError, Merger
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc
from tavolo_bot.turn import Turn

PROTOCOL_VERSION = 1
"""The protocol version this SDK speaks (``Hello.protocol_version``)."""

EXIT_OK = 0
"""Every stream ended after ``MatchOver``."""
EXIT_FAILED = 1
"""A stream failed: refused by the referee, connection lost, or the bot raised."""
EXIT_USAGE = 2
"""The settings are missing or wrong; nothing was played."""

DEFAULT_RECONNECT_SECONDS = 10.0
DEFAULT_KEY_STREAMS = 2
"""Streams opened with an entrant key unless ``TAVOLO_STREAMS`` says otherwise."""
TLS_EXPECTED_AFTER = 3
"""Attempts in a row closed at once before a bot without TLS is told the referee serves TLS:
one such close also happens when a referee goes down in the middle of a connection."""
_FIRST_DELAY = 0.1
_MAX_DELAY = 1.0

# Statuses a broken connection or a restarting referee produce: worth reconnecting.
# Every other status is the referee's answer and reconnecting would get the same one.
_TRANSIENT = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.ABORTED,
    }
)

# ALREADY_EXISTS with this reason word: another connection holds the seat now, which a
# drop the referee has not noticed yet explains; worth retrying like a transient status.
# ``ticket_used`` (the match is over) and every other reason are final.
_SEAT_TAKEN = "seat_taken"

# What the reason word that starts a status's details means.
_REASON_HINTS = {
    "ticket_used": "the match of this ticket is over",
    "seat_taken": "another connection is playing this ticket",
    "unknown_ticket": "the referee does not know this ticket",
    "wrong_socket": "this ticket works only on the socket the referee gave its bot",
    "process_gone": "the bot process this ticket was made for has ended",
    "protocol_version": f"this SDK speaks protocol version {PROTOCOL_VERSION}",
    "unknown_key": "the referee knows no entrant with this key",
    "key_revoked": "the organiser revoked this key",
}

_HINTS = {
    grpc.StatusCode.UNAUTHENTICATED: "the referee does not know this ticket",
    grpc.StatusCode.ALREADY_EXISTS: "another connection plays this ticket, or its match is over",
    grpc.StatusCode.PERMISSION_DENIED: "the referee does not accept this ticket here",
    grpc.StatusCode.INVALID_ARGUMENT: "the referee refused a message of this bot",
    grpc.StatusCode.FAILED_PRECONDITION: "the referee cannot play this ticket now",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "the referee is over a limit",
}

# The channel's own reconnection backoff defaults to 1 s growing to 120 s; ours is shorter,
# and a channel in backoff fails every call at once, so it must not be slower than ours.
_CHANNEL_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", int(_FIRST_DELAY * 1000)),
    ("grpc.min_reconnect_backoff_ms", int(_FIRST_DELAY * 1000)),
    ("grpc.max_reconnect_backoff_ms", int(_MAX_DELAY * 1000)),
)

BotFactory = Callable[[], Bot]
"""A ``Bot`` subclass, or anything that makes a fresh bot when called."""


class ConfigError(ValueError):
    """Missing or malformed settings (arguments or environment)."""


@dataclass(frozen=True)
class Settings:
    """Where to connect and what to play."""

    referee: str
    """``host:port``."""
    tickets: tuple[str, ...]
    """Empty with an entrant key."""
    tls_ca: bytes | None = None
    """PEM root certificate; None for an insecure channel."""
    reconnect_seconds: float = DEFAULT_RECONNECT_SECONDS
    seed: str = ""
    """``TAVOLO_SEED`` as given; empty when unset (each stream then uses its ticket)."""
    key: str = ""
    """``TAVOLO_KEY``: an entrant key, played on ``streams`` streams; empty with tickets."""
    streams: int = DEFAULT_KEY_STREAMS


def load_settings(
    referee: str | None = None,
    tickets: str | Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Settings from the arguments, the environment filling in what they leave as None."""
    env = os.environ if env is None else env
    if referee is None:
        referee = env.get("TAVOLO_REFEREE", "")
    referee = referee.strip()
    if not referee:
        raise ConfigError("no referee address: set TAVOLO_REFEREE to host:port")
    key = env.get("TAVOLO_KEY", "").strip() if tickets is None else ""
    if tickets is None:
        tickets = env.get("TAVOLO_TICKET", "")
    if isinstance(tickets, str):
        tickets = tickets.split(",")
    cleaned = tuple(t.strip() for t in tickets if t.strip())
    if key and cleaned:
        raise ConfigError("set TAVOLO_TICKET or TAVOLO_KEY, not both")
    if not cleaned and not key:
        raise ConfigError(
            "no ticket: set TAVOLO_TICKET (several tickets: comma-separated), "
            "or TAVOLO_KEY to play an entrant key"
        )
    streams = DEFAULT_KEY_STREAMS
    text = env.get("TAVOLO_STREAMS", "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            raise ConfigError(f"TAVOLO_STREAMS must be a whole number from 1, not {text!r}")
        streams = int(text)
    tls_ca = None
    ca_path = env.get("TAVOLO_TLS_CA", "").strip()
    if ca_path:
        try:
            with open(ca_path, "rb") as f:
                tls_ca = f.read()
        except OSError as exc:
            raise ConfigError(f"cannot read TAVOLO_TLS_CA {ca_path!r}: {exc.strerror}") from None
    text = env.get("TAVOLO_RECONNECT_SECONDS", "").strip()
    reconnect = DEFAULT_RECONNECT_SECONDS
    if text:
        try:
            reconnect = float(text)
        except ValueError:
            reconnect = -1.0
        if not reconnect >= 0:  # also refuses nan
            raise ConfigError(f"TAVOLO_RECONNECT_SECONDS must be seconds >= 0, not {text!r}")
    return Settings(referee, cleaned, tls_ca, reconnect, env.get("TAVOLO_SEED", ""), key, streams)


def _say(line: str) -> None:
    """One line to stderr; newlines in gRPC details would break the one-line promise."""
    print("tavolo_bot: " + " ".join(line.split()), file=sys.stderr, flush=True)


def _reason(details: str) -> str:
    """The reason word that starts the referee's details (``ticket_used: ...``), or ""."""
    word, colon, _ = details.partition(":")
    return word.strip() if colon else ""


def retryable(code: grpc.StatusCode, details: str) -> bool:
    """Whether a stream that ended with this status is worth opening again.

    A broken connection or a restarting referee (``UNAVAILABLE``, ...) is, and so is
    ``ALREADY_EXISTS`` ``seat_taken``; any other status is the referee's answer for good.
    """
    if code in _TRANSIENT:
        return True
    return code == grpc.StatusCode.ALREADY_EXISTS and _reason(details) == _SEAT_TAKEN


def _tls_expected(settings: Settings, code: grpc.StatusCode, details: str) -> bool:
    """Whether a TCP connection made without TLS was closed at once, as a referee that
    serves TLS closes a plain-text one (a restarting referee refuses the connection
    instead; a slot's own Unix socket never serves TLS)."""
    closed = "Socket closed" in details or "server preface" in details
    tcp = not settings.referee.startswith("unix:")
    return settings.tls_ca is None and tcp and code == grpc.StatusCode.UNAVAILABLE and closed


def _hint(code: grpc.StatusCode, details: str) -> str | None:
    return _REASON_HINTS.get(_reason(details)) or _HINTS.get(code)


def _make_channel(settings: Settings) -> grpc.aio.Channel:
    if settings.tls_ca is not None:
        credentials = grpc.ssl_channel_credentials(root_certificates=settings.tls_ca)
        return grpc.aio.secure_channel(settings.referee, credentials, options=_CHANNEL_OPTIONS)
    return grpc.aio.insecure_channel(settings.referee, options=_CHANNEL_OPTIONS)


def action_id(choice: object, turn: Turn) -> int:
    """The action id ``choose`` returned (an ``int`` or an ``Action``); raises if neither."""
    if isinstance(choice, pb.Action):
        return choice.id
    if isinstance(choice, int) and not isinstance(choice, bool):
        if not 0 <= choice < 2**32:
            raise ValueError(f"choose() returned {choice}, which is no action id")
        return choice
    raise TypeError(
        f"choose() must return an action id (int) or an Action of turn.legal, "
        f"not {type(choice).__name__}"
    )


class _Stream:
    """One ticket's stream, reconnected while the match is not over; or one stream of an
    entrant key, seated in match after match with a fresh bot each (``make_bot``)."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        bot: Bot,
        ticket: str,
        label: str,
        settings: Settings,
        make_bot: Callable[[int], Bot] | None = None,
        left: dict[tuple[str, int], tuple[Bot, tuple[int, int] | None, int | None]] | None = None,
    ) -> None:
        self._stub = referee_pb2_grpc.RefereeServiceStub(channel)  # type: ignore[no-untyped-call]
        self._bot = bot
        self._ticket = ticket
        self._label = label
        self._settings = settings
        self._make_bot = make_bot
        """Key mode: makes the bot of the stream's n-th match (from 1)."""
        self._match: tuple[str, int] | None = None
        """Key mode: (match id, slot) the stream plays now or played last."""
        self._matches = 0
        self._left = {} if left is None else left
        """Key mode, shared by the process's key streams: the bot (and its last answer) of
        each seat a lost stream left mid-match, for whichever stream is seated there next."""
        self._match_over = False
        self._established = False
        # The last (request_id, action_id) sent: a request re-sent after a reconnection gets
        # the same answer without asking the bot twice (a random bot would drift otherwise).
        self._answered: tuple[int, int] | None = None
        self._seen_request: int | None = None
        self._merger = Merger()
        """What the observations of this stream so far add up to (compact ones follow it)."""

    def _say(self, line: str) -> None:
        _say(self._label + line)

    async def play(self) -> int:
        """Play the ticket to the end of the match; the exit code of this stream."""
        try:
            return await self._play()
        except CompactError as exc:
            self._say(f"{exc}; this stream stops")
            return EXIT_FAILED
        except Exception:  # the bot's own code failed: show where, and stop this stream
            self._say("the bot raised an exception; this stream stops:")
            traceback.print_exc()
            return EXIT_FAILED

    async def _play(self) -> int:
        loop = asyncio.get_running_loop()
        window = self._settings.reconnect_seconds
        give_up_at: float | None = None
        delay = _FIRST_DELAY
        ever_established = False
        closed_at_once = 0  # attempts in a row closed at once, as TLS closes plain text
        while True:
            self._established = False
            try:
                await self._session()
            except grpc.aio.AioRpcError as err:
                if self._match_over and self._make_bot is None:
                    return EXIT_OK  # how the stream ended no longer matters
                self._leave_seat()
                code, details = err.code(), err.details() or ""
                if not retryable(code, details):
                    hint = _hint(code, details)
                    self._say(
                        f"the referee at {self._settings.referee} ended the stream: "
                        f"{code.name}: {details}" + (f" ({hint})" if hint else "")
                    )
                    return EXIT_FAILED
                outcome = f"{code.name}: {details}"
                seat_taken = code == grpc.StatusCode.ALREADY_EXISTS
                closed_at_once = (
                    closed_at_once + 1
                    if not (ever_established or self._established)
                    and _tls_expected(self._settings, code, details)
                    else 0
                )
                if closed_at_once >= TLS_EXPECTED_AFTER:
                    self._say(
                        f"the referee at {self._settings.referee} closed the connection "
                        f"before a word was said ({outcome}): it serves TLS, and this bot "
                        "spoke plain text; give it the referee's certificate in "
                        "TAVOLO_TLS_CA"
                    )
                    return EXIT_FAILED
            else:
                if self._make_bot is not None and self._established:
                    # With a key the referee ends the stream once the entrant has no match
                    # left: between matches, never in the middle of one.
                    if self._match is None or self._match_over:
                        return EXIT_OK
                    self._say(
                        f"the referee ended the stream before match {self._match[0]} was over"
                    )
                    return EXIT_FAILED
                if self._match_over:
                    return EXIT_OK
                self._say("the referee ended the stream before the match was over")
                return EXIT_FAILED
            ever_established = ever_established or self._established
            now = loop.time()
            if self._established or give_up_at is None:
                give_up_at, delay = now + window, _FIRST_DELAY
            if now + delay > give_up_at:
                if seat_taken:
                    what = "another connection still holds the seat of this ticket"
                elif ever_established:
                    what = "lost the referee"
                else:
                    what = "cannot reach the referee"
                self._say(
                    f"{what} at {self._settings.referee} ({outcome}); "
                    f"gave up after retrying for {window:g} s (TAVOLO_RECONNECT_SECONDS)"
                )
                return EXIT_FAILED
            await asyncio.sleep(delay)
            delay = min(delay * 2, _MAX_DELAY)

    async def _session(self) -> None:
        """One stream, from Hello to its end; raises ``AioRpcError`` unless it ends OK."""
        call: grpc.aio.StreamStreamCall[pb.PlayRequest, pb.PlayResponse] = self._stub.Play()
        self._merger.reset()
        try:
            # Compact observations: the merger makes each complete before the bot sees it.
            if self._make_bot is not None:
                hello = pb.Hello(
                    key=self._settings.key,
                    protocol_version=PROTOCOL_VERSION,
                    compact_observations=True,
                )
            else:
                hello = pb.Hello(
                    ticket=self._ticket,
                    protocol_version=PROTOCOL_VERSION,
                    compact_observations=True,
                )
            await _write(call, pb.PlayRequest(hello=hello))
            while True:
                response = await call.read()
                if not isinstance(response, pb.PlayResponse):
                    return  # EOF: the referee closed the stream with status OK
                self._established = True
                decision = self._handle(response)
                if decision is not None:
                    await _write(call, pb.PlayRequest(decision=decision))
        finally:
            call.cancel()  # a no-op once the call is over; otherwise tells the referee we left

    def _handle(self, response: pb.PlayResponse) -> pb.Decision | None:
        """Pass the events to the bot; the decision to send if the response asks for one."""
        bot = self._bot
        request_id = None
        if response.HasField("request"):
            request_id = response.request.request_id
            self._merger.complete(response.request.observation)
        # After a reconnection the referee re-sends the open request with its events: the
        # bot has heard those events already if it saw this request.
        repeated = request_id is not None and request_id == self._seen_request
        self._seen_request = request_id if request_id is not None else self._seen_request
        for event in () if repeated else response.events:
            kind = event.WhichOneof("event")
            if kind == "welcome" and self._make_bot is not None:
                self._seat(event.welcome)
            if kind == "action_rejected":
                r = event.action_rejected
                # A stale answer (re-sent, or too late) closes no attempt: no count to show.
                left = "" if r.reason == "stale_request" else f"; {r.attempts_left} attempts left"
                self._say(f"action {r.action_id} was rejected ({r.reason}: {r.message}){left}")
            elif kind == "error":
                self._say(f"referee reports {event.error.reason}: {event.error.message}")
            bot = self._bot  # a Welcome may have brought a new bot (key mode)
            bot.on_event(event)
            if kind == "match_over" and not self._match_over:
                self._match_over = True
                bot.on_match_over()
        if not response.HasField("request"):
            return None
        bot = self._bot
        request = response.request
        if self._answered is not None and self._answered[0] == request.request_id:
            chosen = self._answered[1]
        else:
            turn = Turn(request)
            chosen = action_id(bot.choose(turn), turn)
            if all(a.id != chosen for a in request.legal_actions):
                self._say(f"choose() returned {chosen}, not a legal action id; sending it anyway")
            self._answered = (request.request_id, chosen)
        return pb.Decision(request_id=request.request_id, action_id=chosen)

    def _seat(self, welcome: pb.Welcome) -> None:
        """Key mode: a Welcome to a match not played yet brings a fresh bot; one to the
        match being played (after a reconnection) keeps the bot it has."""
        seat = (welcome.match_id, welcome.slot)
        if seat == self._match:
            return
        self._leave_seat()
        self._match = seat
        self._match_over = False
        if seat in self._left:
            # All streams of a process share a channel: after a drop, this one may be seated
            # where another stream was playing, and that seat's bot plays on here.
            self._bot, self._answered, self._seen_request = self._left.pop(seat)
            return
        assert self._make_bot is not None
        self._matches += 1
        self._bot = self._make_bot(self._matches)
        self._answered = None
        self._seen_request = None

    def _leave_seat(self) -> None:
        """Key mode: the stream is lost, or seated elsewhere, in the middle of a match: keep
        that seat's bot for the stream that comes back to it."""
        if self._make_bot is None or self._match is None or self._match_over:
            return
        self._left[self._match] = (self._bot, self._answered, self._seen_request)
        self._match = None


async def _write(
    call: grpc.aio.StreamStreamCall[pb.PlayRequest, pb.PlayResponse], message: pb.PlayRequest
) -> None:
    # Once the call is over, write() raises; the next read() reports how it ended.
    with contextlib.suppress(asyncio.InvalidStateError):
        await call.write(message)


async def run_async(
    bot_class: BotFactory,
    *,
    referee: str | None = None,
    tickets: str | Sequence[str] | None = None,
) -> int:
    """:func:`run` inside a running event loop."""
    try:
        settings = load_settings(referee, tickets)
    except ConfigError as exc:
        _say(str(exc))
        return EXIT_USAGE
    # gRPC's C core logs connection chatter at INFO; keep stderr for our own lines.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    if settings.key:
        return await _run_key(bot_class, settings)
    count = len(settings.tickets)
    bots = []
    for index, ticket in enumerate(settings.tickets):
        try:
            bot = bot_class()
        except Exception:
            _say("making the bot raised an exception:")
            traceback.print_exc()
            return EXIT_FAILED
        bot.ticket, bot.stream_index, bot.stream_count = ticket, index, count
        bot.seed = stream_seed(settings.seed, ticket, index, count)
        bots.append(bot)
    channel = _make_channel(settings)
    try:
        streams = [
            _Stream(
                channel, bot, bot.ticket, f"ticket {i + 1}/{count}: " if count > 1 else "", settings
            )
            for i, bot in enumerate(bots)
        ]
        codes = await asyncio.gather(*(s.play() for s in streams))
    finally:
        await channel.close()
    return max(codes, default=EXIT_OK)


async def _run_key(bot_class: BotFactory, settings: Settings) -> int:
    """Play an entrant key on ``settings.streams`` streams until its matches are over."""
    count = settings.streams

    def maker(index: int) -> Callable[[int], Bot]:
        def make(match: int) -> Bot:
            bot = bot_class()
            bot.ticket, bot.stream_index, bot.stream_count = settings.key, index, count
            bot.seed = f"{stream_seed(settings.seed, settings.key, index, count)}/match/{match}"
            return bot

        return make

    try:
        bot_class()  # made now too, so a bot that cannot be made fails before connecting
    except Exception:
        _say("making the bot raised an exception:")
        traceback.print_exc()
        return EXIT_FAILED
    channel = _make_channel(settings)
    left: dict[tuple[str, int], tuple[Bot, tuple[int, int] | None, int | None]] = {}
    try:
        streams = [
            _Stream(
                channel,
                Bot(),
                "",
                f"key stream {i + 1}/{count}: " if count > 1 else "",
                settings,
                make_bot=maker(i),
                left=left,
            )
            for i in range(count)
        ]
        codes = await asyncio.gather(*(s.play() for s in streams))
    finally:
        await channel.close()
    return max(codes, default=EXIT_OK)


def run(
    bot_class: BotFactory,
    *,
    referee: str | None = None,
    tickets: str | Sequence[str] | None = None,
) -> int:
    """Play every ticket with a fresh ``bot_class()`` each; the process exit code.

    Each bot is made once, before its stream opens, and keeps its ticket's stream (also
    across reconnections); ``ticket``, ``stream_index``, ``stream_count`` and ``seed`` are
    set on it before the first hook is called.

    ``referee`` (``host:port``) and ``tickets`` (a list, or comma-separated text) default
    to ``TAVOLO_REFEREE`` and ``TAVOLO_TICKET``. Returns 0 when every stream ended after
    ``MatchOver``, 1 when one failed, 2 when the settings are missing or wrong.
    """
    try:
        return asyncio.run(run_async(bot_class, referee=referee, tickets=tickets))
    except KeyboardInterrupt:
        return 130  # the shell's code for Ctrl-C


def main(bot_class: BotFactory) -> NoReturn:
    """Run ``bot_class`` with the settings from the environment and exit with its code."""
    raise SystemExit(run(bot_class))
