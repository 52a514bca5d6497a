"""``tavolo conformance``: a scripted referee that checks one bot process against the protocol.

The bot is started as the referee starts it (in its sandbox, with ``TAVOLO_REFEREE`` naming
its own Unix socket, ``TAVOLO_TICKET``, ``TAVOLO_SEED``, logs kept outside) and connects to
a scripted ``RefereeService``.
On its one stream it must: say Hello with its ticket and protocol version 1; survive every
event type; answer a request holding each kind of action in each game with a legal action,
in time, naming the request; answer the new request after a refusal; answer within a near
deadline; send nothing unasked; and exit 0 once the match is over.

Positions are real: each request is built by the engine from a seeded game, so the
observation and legal actions are exactly what a referee would send.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import asyncio
import contextlib
import secrets
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from referee.engine.errors import RulesError
from referee.engine.game_base import AnyGame
from referee.engine.registry import new_game, preset, presets
from referee.engine.rules import Rules
from referee.entries import Entry
from referee.families.calabresella.auction import BID_PASS
from referee.families.tressette.actions import NUM_PLAY_ACTIONS
from referee.match.slots import parse_request
from referee.protocol import (
    PROTOCOL_VERSION,
    adapters_of,
    fill_observation,
    legal_messages,
)
from referee.sandbox.bot_process import BotProcess, start_bot
from referee.sandbox.bwrap import SandboxMode
from tavolo_bot.proto import referee_pb2 as pb

GAMES = tuple(presets())
"""Every game a bot may be seated at (each preset of each family): each kind of action is
asked in each."""
PLAY_KINDS = ("lead", "follow")
"""A play is asked twice: leading a trick, and following."""
_CONTRACT_FOR = {"call": 1, "give": 1, "discard": 2, "split": 5, "lead": 3, "follow": 3}
"""The contract (bid - BID_PASS) whose steps reach each kind soonest."""
REFUSAL_REASON = "conformance_refusal"
"""The reason of the refusal the checker makes on purpose, to see the bot answer again."""
SEARCH_SEEDS = 400
_METHOD = "/tavolo.v1.RefereeService/Play"


@dataclass
class Check:
    """One line of the report."""

    name: str
    ok: bool | None = None
    """None: not reached (an earlier failure ended the session)."""
    detail: str = ""


@dataclass
class Position:
    """A request a real referee would send, from a seeded game."""

    game: str
    kind: str
    rules: Rules
    seat: int
    observation: pb.Observation
    legal: tuple[int, ...]
    monte: tuple[int, ...] = ()
    """Calabresella: the monte's cards, which name the cards of split actions."""


def _kind_present(kind: str, state: AnyGame, legal: tuple[int, ...]) -> bool:
    codec = state.rules.family.codec
    if kind in PLAY_KINDS:
        plays = any(codec.decode(a).kind == "play" for a in legal)
        leading = not state.observation(state.current_player() or 0).trick
        return plays and leading == (kind == "lead")
    return any(codec.decode(a).kind == kind for a in legal)


def kinds_of(game: str) -> tuple[str, ...]:
    """The kinds of decision ``game`` can ask: no declarations when its rules have none or
    make them for the players, no call-out where the rules refuse the knob (ciapanò)."""
    rules = preset(game)
    kinds = [k for kind in rules.family.kinds for k in (PLAY_KINDS if kind == "play" else (kind,))]
    if not rules.declarations or rules.auto_declare:  # the referee declares for them
        kinds = [k for k in kinds if k not in ("declare", "end-declarations")]
    if "call-out" in kinds:
        try:
            rules.with_knobs(["call_out=true"])
        except RulesError:
            kinds.remove("call-out")
    return tuple(kinds)


def find_position(game: str, kind: str) -> Position:
    """The first decision of ``kind`` in seeded games of ``game``, with its knob switched on."""
    rules = preset(game)
    # Call-outs and the declaration round are knobs, off by default: switch them on.
    if kind == "call-out":
        rules = rules.with_knobs(["call_out=true"])
    if kind == "end-declarations":
        rules = rules.with_knobs(["declare_before_first_card=true"])
    for n in range(SEARCH_SEEDS):
        state = new_game(rules, f"conformance-{n}", deals=1)
        step = 0
        while not state.is_terminal():
            legal = state.legal_actions()
            seat = state.current_player()
            assert seat is not None
            if _kind_present(kind, state, legal):
                out = pb.Observation()
                fill_observation(
                    out,
                    state.observation(seat),
                    family=rules.family,
                    game=1,
                    deal=state.deal_number,
                    players=rules.players,
                    quattro_points=rules.quattro_points,
                )
                return Position(
                    game,
                    kind,
                    rules,
                    seat,
                    out,
                    legal,
                    tuple(adapters_of(rules.family).named_cards(state.deal)),
                )
            # Declarations are made first; later, play on to reach a trick in progress.
            plays = [a for a in legal if a < NUM_PLAY_ACTIONS] or list(legal)
            if legal[0] == BID_PASS:  # Calabresella's auction: bid the contract wanted
                wanted = BID_PASS + _CONTRACT_FOR.get(kind, 1)
                plays = [wanted if wanted in legal else BID_PASS]
            state.apply_action(plays[step % len(plays)])
            step += 1
    raise LookupError(f"no {kind} decision in {SEARCH_SEEDS} seeded games of {game}")


def every_event() -> list[pb.Event]:
    """One event of every type, with plausible contents."""
    return [
        pb.Event(welcome=pb.Welcome(match_id="conformance", slot=0)),
        pb.Event(
            match_started=pb.MatchStarted(
                match_id="conformance", game="tressette", rules_json="{}", games=1
            )
        ),
        pb.Event(game_started=pb.GameStarted(game=1, seat=0)),
        pb.Event(hand_dealt=pb.HandDealt(deal=1, dealer=3, cards=["3D", "2D", "AD"])),
        pb.Event(
            declared=pb.Declared(seat=1, declaration="napoli-D", cards=["3D", "2D", "AD"], points=3)
        ),
        pb.Event(declarations_ended=pb.DeclarationsEnded(seat=1)),
        pb.Event(card_played=pb.CardPlayed(seat=0, card="4B", signal=pb.SIGNAL_VOLO)),
        pb.Event(trick_won=pb.TrickWon(trick=1, winner=2)),
        pb.Event(called_out=pb.CalledOut(seat=2, claimed=41, correct=False)),
        pb.Event(
            deal_scored=pb.DealScored(
                deal=1,
                last_trick=1,
                thirds=[20, 15],
                card_points=[6, 5],
                declarations=[3, 0],
                points=[9, 5],
                totals=[9, 5],
                cappotto=-1,
                hands=[pb.Hand(cards=["4B"]) for _ in range(4)],
            )
        ),
        pb.Event(
            game_over=pb.GameOver(
                game=1, termination="target_reached", winner=0, totals=[41, 20], forfeit_seat=-1
            )
        ),
        pb.Event(
            action_rejected=pb.ActionRejected(
                request_id=999_999,
                action_id=0,
                reason="stale_request",
                message="request 999999 is not open (a test of the event)",
            )
        ),
        pb.Event(error=pb.ErrorEvent(reason="conformance", message="a test of the error event")),
        pb.Event(bid_made=pb.BidMade(seat=1, bid="solo")),
        pb.Event(card_called=pb.CardCalled(seat=1, card="3D", holder=2)),
        pb.Event(monte_split=pb.MonteSplit(seat=2, take=["AD", "KC"])),
        pb.Event(card_drawn=pb.Draw(seat=0, card="7S")),
    ]


@dataclass
class Session:
    """The scripted side of the bot's stream, and what it found."""

    ticket: str
    positions: list[Position]
    deadline_ms: int = 1000
    near_deadline_ms: int = 200
    checks: list[Check] = field(default_factory=list)
    unasked: int = 0
    done: asyncio.Event = field(default_factory=asyncio.Event)
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    _next_id: int = 0
    _asking: Check | None = None
    """The check whose request awaits its answer."""

    def __post_init__(self) -> None:
        # Every check is listed from the start: those an early failure leaves are "not reached".
        names = [
            "connects",
            "hello: ticket and protocol version 1",
            f"every event type ({len(every_event())}), then a request",
            *(f"{p.game}: {p.kind}" for p in self.positions),
            "a refused answer, then the new request answered",
            f"answer within a near deadline ({self.near_deadline_ms} ms)",
            "sends nothing unasked",
            "match over: the stream ends, the process exits 0",
        ]
        self.checks = [Check(n) for n in names]

    def check(self, name: str) -> Check:
        found = next((c for c in self.checks if c.name == name), None)
        if found is None:
            found = Check(name)
            self.checks.append(found)
        return found

    async def play(self, raw_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        try:
            await self._script(context)
        finally:
            # A bot that closes its stream mid-request may have gRPC cancel this handler
            # before a read sees the end: the check it was answering failed all the same.
            asking = self._asking
            if asking is not None and asking.ok is None:
                asking.ok, asking.detail = False, "the stream ended before an answer"
            self.done.set()

    async def _script(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        self.connected.set()
        self.check("connects").ok = True
        hello = self.check("hello: ticket and protocol version 1")
        first = await self._read(context, self.deadline_ms / 1000 * 5)
        if first is None or not first.HasField("hello"):
            hello.ok, hello.detail = False, "the first message is not a Hello"
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "hello_expected: say Hello first")
            return
        if first.hello.ticket != self.ticket or first.hello.protocol_version != PROTOCOL_VERSION:
            hello.ok = False
            hello.detail = (
                f"ticket {'right' if first.hello.ticket == self.ticket else 'wrong'}, "
                f"protocol_version {first.hello.protocol_version} (want {PROTOCOL_VERSION})"
            )
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown_ticket: bad hello")
            return
        hello.ok = True

        events = self.check(f"every event type ({len(every_event())}), then a request")
        if await self._ask(context, events, self.positions[0], every_event()) is None:
            return
        for position in self.positions:
            name = f"{position.game}: {position.kind}"
            if await self._ask(context, self.check(name), position) is None:
                return

        retry = self.check("a refused answer, then the new request answered")
        position = self.positions[0]
        answer = await self._ask(context, Check("(refused)"), position, attempts=2)
        if answer is None:
            retry.ok, retry.detail = False, "no answer to refuse"
            return
        rejected = pb.Event(
            action_rejected=pb.ActionRejected(
                request_id=self._next_id, action_id=answer, reason=REFUSAL_REASON,
                message="refused on purpose by tavolo conformance: answer the new request",
                attempts_left=1,
            )
        )  # fmt: skip
        if await self._ask(context, retry, position, [rejected], attempts=1) is None:
            return

        near = self.check(f"answer within a near deadline ({self.near_deadline_ms} ms)")
        if await self._ask(context, near, position, deadline_ms=self.near_deadline_ms) is None:
            return

        quiet = self.check("sends nothing unasked")
        quiet.ok = self.unasked == 0
        quiet.detail = f"{self.unasked} message(s) answered no open request" if self.unasked else ""

        over = [
            pb.Event(
                game_over=pb.GameOver(
                    game=1, termination="deals_played", winner=0, totals=[1, 0], forfeit_seat=-1
                )
            ),
            pb.Event(match_over=pb.MatchOver(match_id="conformance")),
        ]
        await context.write(pb.PlayResponse(events=over).SerializeToString())
        self.check("match over: the stream ends, the process exits 0")

    async def _ask(
        self,
        context: grpc.aio.ServicerContext[Any, Any],
        check: Check,
        position: Position,
        events: Sequence[pb.Event] = (),
        *,
        deadline_ms: int | None = None,
        attempts: int = 3,
    ) -> int | None:
        """Send one request; the action id answered, or None (``check`` says why)."""
        deadline = deadline_ms or self.deadline_ms
        self._next_id += 1
        request_id = self._next_id
        response = pb.PlayResponse(events=list(events))
        request = response.request
        request.request_id = request_id
        request.deadline_ms = deadline
        request.observation.CopyFrom(position.observation)
        request.legal_actions.extend(
            legal_messages(position.rules.family.codec, position.legal, position.monte)
        )
        request.attempts_left = attempts
        started = time.monotonic()
        self._asking = check
        await context.write(response.SerializeToString())
        while True:
            left = deadline / 1000 - (time.monotonic() - started)
            message = await self._read(context, max(left, 0.0))
            elapsed_ms = (time.monotonic() - started) * 1000
            if message is None:
                check.ok = False
                check.detail = f"no answer within {deadline} ms"
                self._asking = None
                return None
            if not message.HasField("decision") or message.decision.request_id != request_id:
                self.unasked += 1  # an old answer or a stray message: refused, as a referee would
                continue
            action = message.decision.action_id
            self._asking = None
            if action not in position.legal:
                check.ok = False
                check.detail = f"action {action} is not in the legal list ({len(position.legal)})"
                return None
            check.ok = True
            check.detail = f"answered in {elapsed_ms:.0f} ms"
            return action

    async def _read(
        self, context: grpc.aio.ServicerContext[Any, Any], timeout: float
    ) -> pb.PlayRequest | None:
        try:
            raw = await asyncio.wait_for(context.read(), timeout)
        except TimeoutError:
            return None
        if raw is grpc.aio.EOF:
            return None
        try:
            return parse_request(raw)
        except Exception:  # parse_request raises its own error for garbage bytes
            self.unasked += 1
            return None


@dataclass(frozen=True)
class Report:
    """The checks and how the bot process ended."""

    checks: tuple[Check, ...]
    exit_status: int | None
    stderr_tail: str

    @property
    def passed(self) -> bool:
        return all(c.ok for c in self.checks)


async def run_conformance(
    command: Sequence[str] | Entry,
    *,
    sandbox: SandboxMode = SandboxMode.OFF,
    games: Sequence[str] = GAMES,
    connect_timeout: float = 20.0,
    deadline_ms: int = 1000,
    near_deadline_ms: int = 200,
    workdir: Path | None = None,
) -> Report:
    """Start ``command`` (an argv, or an entry such as a manifest's) as a bot, confined as
    ``sandbox`` says, and run every check against it."""
    entry = command if isinstance(command, Entry) else Entry("bot", command=tuple(command))
    positions = [find_position(g, k) for g in games for k in kinds_of(g)]
    session = Session(secrets.token_urlsafe(24), positions, deadline_ms, near_deadline_ms)
    server = grpc.aio.server()
    handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.stream_stream_rpc_method_handler(
        session.play
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("tavolo.v1.RefereeService", {"Play": handler}),)
    )
    process: BotProcess | None = None
    try:
        with contextlib.ExitStack() as stack:
            root = workdir or Path(
                stack.enter_context(tempfile.TemporaryDirectory(prefix="tavolo-"))
            )
            root.mkdir(parents=True, exist_ok=True)
            socket_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tavolo-")))
            address = f"unix:{socket_dir / 'referee.sock'}"
            if server.add_insecure_port(address) == 0:
                raise OSError(f"cannot listen on {address}")
            await server.start()
            env = {"TAVOLO_TICKET": session.ticket, "TAVOLO_SEED": "conformance"}
            process = await start_bot(
                entry,
                "bot",
                root / "bot",
                env,
                sandbox=sandbox,
                socket=socket_dir / "referee.sock",
            )
            connect = session.check("connects")
            waits = {
                asyncio.ensure_future(session.connected.wait()),
                asyncio.ensure_future(process.process.wait()),
            }
            await asyncio.wait(waits, timeout=connect_timeout, return_when=asyncio.FIRST_COMPLETED)
            for w in waits:
                w.cancel()
            if not session.connected.is_set():
                connect.ok = False
                connect.detail = (
                    f"exited before connecting ({process.process.returncode})"
                    if process.process.returncode is not None
                    else f"no connection within {connect_timeout:g} s"
                )
            else:
                total = deadline_ms / 1000 * (len(positions) + 6) + 10
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(session.done.wait(), total)
                end = session.check("match over: the stream ends, the process exits 0")
                if (
                    end.ok is None
                    and session.done.is_set()
                    and all(c.ok for c in session.checks if c is not end)
                ):
                    try:
                        code = await asyncio.wait_for(process.process.wait(), 10)
                        end.ok = code == 0
                        end.detail = f"exit status {code}"
                    except TimeoutError:
                        end.ok, end.detail = False, "still running 10 s after the match ended"
            await process.stop(0.5)
            return Report(tuple(session.checks), process.process.returncode, process.stderr_tail(5))
    finally:
        if process is not None:
            await process.stop(0)
        await server.stop(0)
