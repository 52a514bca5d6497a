"""Player slots, their tickets and their streams.

A ticket is the secret that lets one connection act for one player slot of one match.
The slot's seat may change between the games of a duplicate set; the ticket never
lets a connection act for any other slot.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import asyncio
import secrets
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple

import grpc
from google.protobuf.message import DecodeError

from referee.protocol import Sent, encode_response
from tavolo_bot.proto import referee_pb2 as pb

if TYPE_CHECKING:
    from referee.entrant_keys import EntrantKeys

FLOOD_LIMIT = 32
FLUSH_LIMIT = 10.0
"""Seconds a write of events (no request) may wait on a bot that does not read its stream
before the stream is ended: a request's write waits as long as the decision's clock."""
"""Messages a bot may send between two requests beyond its one answer before it is cut off."""


def parse_request(raw: bytes) -> pb.PlayRequest:
    """A bot's message from its bytes; SlotError if they are not a PlayRequest."""
    try:
        return pb.PlayRequest.FromString(raw)
    except DecodeError:
        raise SlotError(
            grpc.StatusCode.INVALID_ARGUMENT, "malformed", "the message is not a PlayRequest"
        ) from None


FillRequest = Callable[[Sent | None], tuple[bytes, Sent]]
"""Encodes a request's observation and legal actions (``protocol.encode_decision``),
compact after what the stream was sent last (None: complete), and says what the
observation holds."""


class Request(NamedTuple):
    """A decision request to send: its numbers, and how to encode the rest."""

    request_id: int
    deadline_ms: int
    time_bank_ms: int
    attempts_left: int
    fill: FillRequest


class SlotError(Exception):
    """A reason to end a bot's stream with a gRPC status."""

    def __init__(self, code: grpc.StatusCode, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message


class Wait(Enum):
    """How waiting for a decision ended."""

    DECISION = "decision"
    TIMEOUT = "timeout"
    GONE = "gone"


@dataclass
class Incident:
    """Something a slot did wrong outside a decision, for the record."""

    kind: str
    detail: str


class SlotState(Enum):
    """Where a slot is, as its table sees it (:attr:`Slot.state`)."""

    AWAITED = "awaited"
    """No stream has come with its ticket yet."""
    CONNECTED = "connected"
    """A stream is attached."""
    DISCONNECTED = "disconnected"
    """Its stream went; it may come back with its ticket."""
    EXITED = "exited"
    """Its bot process ended: nothing connects for it until a new process plays it."""
    CLOSED = "closed"
    """The match is over for it, or it was given up: its ticket opens nothing."""


@dataclass
class Slot:
    """One player slot of a match: its ticket, its stream, and what it still has to hear."""

    match_id: str
    slot: int
    """Index of the slot in the match: entry * slots-per-entry + k."""
    ticket: str
    label: str
    """Who this is in logs and records, e.g. "heuristic#1"; never sent to other bots."""
    socket: str | None = None
    """The Unix socket this slot's process must connect on; None: the TCP listener (remote)."""
    _incidents_noted: int = 0
    """How many of ``incidents`` :meth:`unnoted_incidents` has given the table."""
    _told: list[pb.Event] = field(default_factory=list)
    """Events for the slot, sent with its next request or :meth:`flush`."""
    pending: bytes | None = None
    """The last response that carried a request, as :meth:`send_request` encoded it;
    re-sent on reconnection."""
    expected: int | None = None
    """The request id the slot must answer now."""
    ever_connected: bool = False
    closed: bool = False
    """The match is over or the slot was given up: the ticket opens nothing any more."""
    incidents: list[Incident] = field(default_factory=list)
    _context: Any = None
    _decisions: deque[pb.Decision] = field(default_factory=deque)
    sent_at: float = 0.0
    """When the last :meth:`send` began writing, its request complete (time.monotonic)."""
    answered_at: float = 0.0
    """When the answer to the open request arrived (time.monotonic)."""
    connected_at: float = 0.0
    """When the current stream was welcomed (time.monotonic); 0 before the first."""
    _waiter: asyncio.Future[None] | None = None
    """The table's wait for an answer, woken by an answer, a lost stream or the clock."""
    _timer: asyncio.TimerHandle | None = None
    """The clock's wake-up of the wait, kept from one request to the next until it fires."""
    _serve_task: asyncio.Task[Any] | None = None
    _stream_task: asyncio.Task[Any] | None = None
    """The task of the current stream's handler, to end a stream whose bot does not read."""
    stalled: bool = False
    """A write to the current stream waited out its time: the bot does not read it."""
    _finishing: bool = False
    _connected: asyncio.Event = field(default_factory=asyncio.Event)
    _unsolicited: int = 0
    _write_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _tasks: set[asyncio.Future[None]] = field(default_factory=set)
    process_exit: str | None = None
    """Set (by :meth:`mark_exited`) when this slot's bot process has exited."""
    _exited: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    """Set by :meth:`finish`: an entrant key's stream then leaves this slot for the next."""
    _compact: bool = False
    """The current stream asked for compact observations."""
    _sent: Sent | None = None
    """What the current stream's last request held; None: the next one is complete."""
    _pending_request: Request | None = None
    """``pending``'s request if it was compact, to encode it complete on reconnection."""
    _pending_events: list[pb.Event] = field(default_factory=list)
    """The events ``pending`` carries before its request."""
    _pending_sent: Sent | None = None
    """What ``pending``'s observation holds."""

    def restarted(self, events: list[pb.Event]) -> None:
        """A new bot process plays this slot: it will hear ``events``, nothing older."""
        self.process_exit = None
        self._exited.clear()
        self._told = list(events)
        self.pending = None
        self._pending_request = None
        self.expected = None

    def mark_exited(self, note: str) -> None:
        """The slot's bot process has ended: it will not connect again."""
        self.process_exit = note
        self._exited.set()

    @property
    def connected(self) -> bool:
        """Whether a stream is attached now."""
        return self._context is not None

    @property
    def state(self) -> SlotState:
        """Where the slot is: closed, its process gone, connected, or waiting for one."""
        if self.closed:
            return SlotState.CLOSED
        if self.process_exit is not None:
            return SlotState.EXITED
        if self._context is not None:
            return SlotState.CONNECTED
        return SlotState.DISCONNECTED if self.ever_connected else SlotState.AWAITED

    async def wait_connected(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a stream; False if none came or the process ended."""
        if self._context is not None:
            return True
        if self._exited.is_set():
            return False
        connected = asyncio.ensure_future(self._connected.wait())
        exited = asyncio.ensure_future(self._exited.wait())
        try:
            await asyncio.wait(
                {connected, exited}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            connected.cancel()
            exited.cancel()
        return self._context is not None

    # -- the servicer's side -------------------------------------------------------------

    async def attach(self, context: Any, *, compact: bool = False) -> None:
        """Take a new stream (``compact``: its Hello asked for compact observations):
        welcome it and re-send a pending request, complete."""
        welcome = pb.Event(welcome=pb.Welcome(match_id=self.match_id, slot=self.slot))
        # Under the write lock, so the table's first message cannot overtake the welcome.
        async with self._write_lock:
            self._context = context
            self._stream_task = asyncio.current_task()
            self.stalled = False
            self._compact = compact
            self._sent = None
            self.ever_connected = True
            self.connected_at = time.monotonic()
            self._connected.set()
            await self._write_now(context, pb.PlayResponse(events=[welcome]))
            pending = self.pending
            if pending is not None:
                request = self._pending_request
                if request is not None:
                    # Compact for the stream before: this one needs it complete. The table
                    # waits for this answer, so the game is as it was when it was sent.
                    pending = self._encode(self._pending_events, request, None)
                    self.pending = pending
                    self._pending_request = None
                self._sent = self._pending_sent
                await self._write_now(context, pending)

    async def serve(self, context: Any) -> None:
        """Read the slot's messages until the match ends or the stream goes."""
        task = asyncio.current_task()
        self._serve_task = task
        if self._finishing:  # the match ended while this stream was being welcomed
            self.detach(context)
            return
        try:
            while (raw := await context.read()) is not grpc.aio.EOF:
                self.receive(raw)
        except asyncio.CancelledError:
            # finish() cancels this read to end the stream with OK; any other cancel
            # (the RPC itself cancelled) goes on up.
            if not self._finishing or task is None:
                raise
            task.uncancel()
        finally:
            if self._serve_task is task:
                self._serve_task = None
            self.detach(context)

    def detach(self, context: Any) -> None:
        """Forget a stream that ended, unless a newer one replaced it."""
        if self._context is context:
            self._context = None
            self._connected.clear()
            self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _ring(self) -> None:
        self._timer = None
        self._wake()

    def receive(self, raw: bytes) -> None:
        """Take one message the slot's stream sent; SlotError ends the stream."""
        message = parse_request(raw)
        decision = message.decision if message.HasField("decision") else None
        if decision is not None and decision.request_id == self.expected:
            self.answered_at = time.monotonic()
            self._decisions.append(decision)
            self._wake()
            return
        if message.HasField("hello"):
            raise SlotError(
                grpc.StatusCode.INVALID_ARGUMENT, "repeated_hello", "Hello is sent only once"
            )
        self._unsolicited += 1
        if self._unsolicited > FLOOD_LIMIT:
            self.note("flood", f"more than {FLOOD_LIMIT} unasked messages")
            raise SlotError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "flood",
                f"more than {FLOOD_LIMIT} messages that answer no request",
            )
        if decision is not None:
            # Refused at once, so a late answer hears so even if no request follows.
            task = asyncio.ensure_future(self.reject_stale(decision))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    # -- the table's side ---------------------------------------------------------------

    def note(self, kind: str, detail: str) -> None:
        """Keep something the slot did wrong outside a decision, for the record."""
        self.incidents.append(Incident(kind, detail))

    def unnoted_incidents(self) -> Sequence[Incident]:
        """The incidents since the last call, for the table to put into the record."""
        if len(self.incidents) == self._incidents_noted:
            return ()  # the usual case, twice a decision
        new = self.incidents[self._incidents_noted :]
        self._incidents_noted = len(self.incidents)
        return new

    def tell(self, event: pb.Event) -> None:
        """Queue ``event`` for the slot: it goes with the next request, or :meth:`flush`."""
        self._told.append(event)

    def take_told(self) -> list[pb.Event]:
        """The events queued for the slot, which it no longer holds."""
        events, self._told = self._told, []
        return events

    async def send_request(
        self, events: list[pb.Event], request: Request, *, within: float = FLUSH_LIMIT
    ) -> None:
        """Send ``events`` and ``request`` to the slot if it is connected, its observation
        compact if the stream asked for it; if not, it hears the request on reconnection.

        A write the bot does not take within ``within`` seconds (its decision's clock,
        which runs from :attr:`sent_at`) ends the stream and sets :attr:`stalled`."""
        async with self._write_lock:
            context = self._context
            # Encoded under the lock, for the stream it is written to: a reconnection
            # (attach) cannot come between, and then writes the request exactly once.
            since = self._sent if self._compact and context is not None else None
            self.pending = self._encode(events, request, since)
            self._pending_events = events
            self._pending_request = None if since is None else request
            self.expected = request.request_id
            self._unsolicited = 0
            self.sent_at = time.monotonic()
            if context is not None:
                await self._write_now(context, self.pending, within)

    def _encode(self, events: list[pb.Event], request: Request, since: Sent | None) -> bytes:
        """The response's bytes; what they hold becomes what the stream was sent last."""
        body, sent = request.fill(since)
        self._pending_sent = self._sent = sent
        return encode_response(
            events,
            request_id=request.request_id,
            deadline_ms=request.deadline_ms,
            time_bank_ms=request.time_bank_ms,
            attempts_left=request.attempts_left,
            body=body,
        )

    async def flush(self) -> None:
        """Send the events queued for the slot, without a request."""
        if self._told:
            await self._write(pb.PlayResponse(events=self.take_told()))

    async def _write(self, response: pb.PlayResponse) -> None:
        # One write at a time: gRPC refuses a second write while one is in flight.
        async with self._write_lock:
            context = self._context
            if context is not None:
                await self._write_now(context, response)

    async def _write_now(
        self, context: Any, response: pb.PlayResponse | bytes, within: float = FLUSH_LIMIT
    ) -> None:
        try:
            # HTTP/2 flow control holds a write until the bot reads: unbounded, a bot that
            # never reads would hold its table, and with it the tournament, for ever.
            await asyncio.wait_for(context.write(response), within)
        except TimeoutError:
            self.stalled = True
            self.note(
                "not_reading",
                f"a write waited {within * 1000:.0f} ms: the bot does not read its stream",
            )
            self.detach(context)
            if self._stream_task is not None and not self._stream_task.done():
                self._stream_task.cancel()  # ends the RPC, and with it the connection's hold
        except (
            asyncio.InvalidStateError,
            grpc.aio.AioRpcError,
            grpc.aio.InternalError,
            RuntimeError,
        ):
            # The stream ended under us (a write on a dead call raises ExecuteBatchError, an
            # InternalError): the slot is disconnected, which the table handles (grace
            # period, then the fault policy).
            self.detach(context)

    async def next_decision(
        self, request_id: int, timeout: float
    ) -> tuple[Wait, pb.Decision | None]:
        """The slot's answer to ``request_id``, or why none came within ``timeout``.

        Answers to other (stale) requests are refused and skipped.
        """
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            while self._decisions:
                decision = self._decisions.popleft()
                if decision.request_id == request_id:
                    self.expected = None
                    self.pending = None
                    self._pending_request = None
                    return Wait.DECISION, decision
                await self.reject_stale(decision)
            if self._context is None:
                return Wait.GONE, None
            if end <= loop.time():
                return Wait.TIMEOUT, None
            # A timer per request cost more than the rest of the wait: one due no later
            # than this end is kept, and it wakes the wait at worst early, to look again.
            timer = self._timer
            if timer is None or timer.when() > end:
                if timer is not None:
                    timer.cancel()
                self._timer = loop.call_at(end, self._ring)
            self._waiter = loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    async def reject_stale(self, decision: pb.Decision) -> None:
        """Tell the slot an answer came for a request that is no longer open."""
        detail = f"request {decision.request_id} is not open"
        self.note("stale_request", detail)
        event = pb.Event(
            action_rejected=pb.ActionRejected(
                request_id=decision.request_id,
                action_id=decision.action_id,
                reason="stale_request",
                message=detail + " (answered too late, or twice)",
            )
        )
        await self._write(pb.PlayResponse(events=[event]))

    def close_request(self) -> None:
        """The open request is over without an answer (timeout, forfeit): never re-send it."""
        self.expected = None
        self.pending = None
        self._pending_request = None

    def finish(self) -> None:
        """The match is over: end the stream and refuse the ticket from now on."""
        self.closed = True
        self.expected = None
        self.pending = None
        self._pending_request = None
        self._finishing = True
        self.finished.set()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._serve_task is not None:
            self._serve_task.cancel()


class TicketBook:
    """Every open ticket of this referee."""

    def __init__(self) -> None:
        self._links: dict[str, Slot] = {}
        self.keys: EntrantKeys | None = None
        """The entrant keys a tournament run takes on the TCP listener; None: tickets only."""

    def issue(self, match_id: str, slot: int, label: str) -> Slot:
        """A new slot with a fresh unguessable ticket."""
        link = Slot(match_id, slot, secrets.token_urlsafe(24), label)
        self._links[link.ticket] = link
        return link

    def reissue(self, link: Slot) -> None:
        """A new process plays ``link``: a fresh ticket, and the old one opens nothing."""
        self._links.pop(link.ticket, None)
        link.ticket = secrets.token_urlsafe(24)
        self._links[link.ticket] = link

    def claim(self, ticket: str, via: Slot | None = None) -> Slot:
        """The slot a ticket opens, on the socket of slot ``via`` (None: the TCP listener).

        A local slot's ticket works only on its own socket, and only while the process
        it was made for lives. SlotError says why a ticket opens nothing.
        """
        link = self._links.get(ticket)
        if link is None:
            if via is not None:
                via.note("unknown_ticket", "a ticket that opens nothing")
            raise SlotError(grpc.StatusCode.UNAUTHENTICATED, "unknown_ticket", "unknown ticket")
        if link is not via and (via is not None or link.socket is not None):
            if via is not None:
                via.note("foreign_ticket", "refused another slot's ticket on this socket")
            raise SlotError(
                grpc.StatusCode.PERMISSION_DENIED,
                "wrong_socket",
                "this ticket works only on its own slot's socket",
            )
        if link.process_exit is not None:
            raise SlotError(
                grpc.StatusCode.PERMISSION_DENIED,
                "process_gone",
                "the bot process this ticket was made for has ended",
            )
        if link.closed:
            raise SlotError(
                grpc.StatusCode.ALREADY_EXISTS,
                "ticket_used",
                "this ticket has been used and its seat is closed",
            )
        if link.connected:
            link.note("second_connection", "refused a second stream")
            raise SlotError(
                grpc.StatusCode.ALREADY_EXISTS,
                "seat_taken",
                "a connection for this seat is already open",
            )
        return link

    def retire(self, links: list[Slot]) -> None:
        """Close slots whose match is over; their tickets stay known, as used."""
        for link in links:
            link.finish()
