"""Engine values to protocol messages (``proto/tavolo/v1/referee.proto``), and back.

Only what a seat may see is ever converted: observations come from
``Observation`` objects the engine builds for one seat, and events from the public
lines of the game record. Nothing a bot sends reaches another bot but its action.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

from referee.engine.action_codec import (
    CALABRESELLA_CODEC,
    TRESSETTE_CODEC,
    ActionCodec,
)
from referee.engine.actions import SIGNAL_NAMES, Action
from referee.engine.calabresella import CalabresellaObservation
from referee.engine.calabresella import Phase as CalabresellaPhase
from referee.engine.calabresella_auction import CONTRACT_NAMES
from referee.engine.cards import CARD_NAMES, cards_of
from referee.engine.declarations import DECLARATION_CARDS, DECLARATION_NAMES, declaration_points
from referee.engine.families import AnyGame
from referee.engine.tressette import Observation
from tavolo_bot.proto import referee_pb2 as pb

PROTOCOL_VERSION = 1

_SIGNALS = {name: i for i, name in enumerate(SIGNAL_NAMES) if name}


_KINDS = {
    "play": pb.ACTION_KIND_PLAY,
    "declare": pb.ACTION_KIND_DECLARE,
    "end-declarations": pb.ACTION_KIND_END_DECLARATIONS,
    "call-out": pb.ACTION_KIND_CALL_OUT,
    "bid": pb.ACTION_KIND_BID,
    "call": pb.ACTION_KIND_CALL,
    "give": pb.ACTION_KIND_GIVE,
    "discard": pb.ACTION_KIND_DISCARD,
    "split": pb.ACTION_KIND_SPLIT,
}
"""The protocol's ``ActionKind`` of each kind of :mod:`referee.engine.action_codec`."""


@functools.cache
def action_message(codec: ActionCodec, action: Action) -> pb.Action:
    """The protocol form of an action, as its family's codec takes it apart (shared:
    protobuf copies it into a parent)."""
    parts = codec.decode(action)
    message = pb.Action(id=action, kind=_KINDS[parts.kind], text=codec.name(action))
    if parts.card is not None:
        message.card = CARD_NAMES[parts.card]
    if parts.signal:
        message.signal = parts.signal  # type: ignore[assignment]
    if parts.declaration is not None:
        message.declaration = DECLARATION_NAMES[parts.declaration]
    if parts.bid is not None:
        message.bid = parts.bid
    return message


def monte_of(deal: object) -> tuple[int, ...]:
    """A Calabresella deal's monte (card ids, ascending), which names the cards of split
    actions; empty for a deal of any other game."""
    monte = getattr(deal, "monte", 0)
    return tuple(cards_of(monte)) if isinstance(monte, int) else ()


def legal_messages(
    codec: ActionCodec, actions: tuple[Action, ...], monte: Sequence[int] = ()
) -> list[pb.Action]:
    """The protocol form of a legal-action list; ``monte`` (card ids, ascending) names the
    cards of Calabresella's split actions."""
    out = [action_message(codec, a) for a in actions]
    # A split decision offers splits only: one look at the first action says if it is one.
    if monte and actions and codec.decode(actions[0]).kind == "split":
        for i, action in enumerate(actions):
            mask = codec.decode(action).mask
            if mask is not None:
                split = pb.Action()
                split.CopyFrom(out[i])
                split.cards.extend(CARD_NAMES[c] for j, c in enumerate(monte) if mask >> j & 1)
                out[i] = split
    return out


def declared_message(seat: int, declaration: int, quattro_points: int) -> pb.Declared:
    """A declaration, as every seat sees it."""
    return pb.Declared(
        seat=seat,
        declaration=DECLARATION_NAMES[declaration],
        cards=[CARD_NAMES[c] for c in cards_of(DECLARATION_CARDS[declaration])],
        points=declaration_points(declaration, quattro_points),
    )


@functools.cache
def _play(codec: ActionCodec, seat: int, action: Action) -> pb.Play:
    return pb.Play(seat=seat, action=action_message(codec, action))


@functools.lru_cache(maxsize=8192)
def _trick(codec: ActionCodec, plays: tuple[tuple[int, Action], ...], winner: int) -> pb.Trick:
    # Every request repeats the finished tricks of the deal: build each one once.
    return pb.Trick(plays=[_play(codec, s, a) for s, a in plays], winner=winner)


_CALABRESELLA_PHASES = {
    CalabresellaPhase.AUCTION: pb.PHASE_AUCTION,
    CalabresellaPhase.CALL: pb.PHASE_CALL,
    CalabresellaPhase.GIVE: pb.PHASE_GIVE,
    CalabresellaPhase.DISCARD: pb.PHASE_DISCARD,
    CalabresellaPhase.SPLIT: pb.PHASE_SPLIT,
    CalabresellaPhase.PLAY: pb.PHASE_PLAY,
    CalabresellaPhase.OVER: pb.PHASE_DONE,
}


class Sent(NamedTuple):
    """What an observation sent to a stream held: its game and deal, and how many items of
    each list that only grows within a deal. A compact observation sends what follows."""

    game: int
    deal: int
    tricks: int
    declarations: int
    draws: int
    bids: int


def fill_observation(
    out: pb.Observation,
    obs: Observation | CalabresellaObservation,
    *,
    game: int,
    deal: int,
    players: int,
    quattro_points: int,
    totals: Sequence[int] = (),
    since: Sent | None = None,
) -> Sent:
    """Write what one seat may know, as the engine built it for that seat, into ``out``;
    return what it holds.

    ``totals``: the game's totals per side, for observations that do not hold them.
    ``since``: what the stream's previous observation held; if it was of this game and
    deal, ``out`` is compact (``Observation.compact``): only the items added since.
    """
    if since is not None and (since.game != game or since.deal != deal):
        since = None
    if isinstance(obs, CalabresellaObservation):
        return _fill_calabresella(out, obs, game=game, deal=deal, totals=totals, since=since)
    out.seat = obs.seat
    out.game = game
    out.deal = deal
    out.dealer = obs.dealer
    out.phase = int(obs.phase) + 1  # type: ignore[assignment]
    out.hand.extend([CARD_NAMES[c] for c in obs.hand])
    out.trick.extend([_play(TRESSETTE_CODEC, s, a) for s, a in obs.trick])
    tricks, declarations, draws = obs.tricks, obs.declarations, obs.draws
    if since is not None:
        out.compact = True
        tricks = tricks[since.tricks :]
        declarations = declarations[since.declarations :]
        draws = draws[since.draws :]
    out.tricks.extend([_trick(TRESSETTE_CODEC, plays, w) for plays, w in tricks])
    if declarations:
        out.declarations.extend([declared_message(s, d, quattro_points) for s, d in declarations])
    out.captured.extend(obs.captured)
    out.totals.extend(obs.totals)
    out.players = players
    out.sides = len(obs.totals)
    if obs.stock_left or obs.draws:  # tressette a due only: nothing to do on the hot path
        out.draws.extend(pb.Draw(seat=s, card=CARD_NAMES[c]) for s, c in draws)
        out.stock_left = obs.stock_left
    if obs.trump is not None:
        out.trump = CARD_NAMES[obs.trump]
    return Sent(game, deal, len(obs.tricks), len(obs.declarations), len(obs.draws), 0)


def _fill_calabresella(
    out: pb.Observation,
    obs: CalabresellaObservation,
    *,
    game: int,
    deal: int,
    totals: Sequence[int],
    since: Sent | None,
) -> Sent:
    out.seat = obs.seat
    out.game = game
    out.deal = deal
    out.dealer = obs.dealer
    out.phase = _CALABRESELLA_PHASES[obs.phase]
    out.hand.extend([CARD_NAMES[c] for c in obs.hand])
    out.trick.extend([_play(CALABRESELLA_CODEC, s, c) for s, c in obs.trick])
    tricks, bids = obs.tricks, obs.bids
    if since is not None:
        out.compact = True
        tricks = tricks[since.tricks :]
        bids = bids[since.bids :]
    out.tricks.extend([_trick(CALABRESELLA_CODEC, plays, w) for plays, w in tricks])
    out.captured.extend(obs.captured)
    out.totals.extend(totals)
    out.players = obs.seats
    out.sides = obs.seats
    view = out.calabresella
    view.bids.extend(pb.Bid(seat=s, bid=CALABRESELLA_CODEC.decode(b).bid) for s, b in bids)
    view.contract = CONTRACT_NAMES[obs.contract] if obs.contract is not None else ""
    view.soloist = -1 if obs.soloist is None else obs.soloist
    view.called = CARD_NAMES[obs.called] if obs.called is not None else ""
    view.called_holder = -1 if obs.called_holder is None else obs.called_holder
    view.called_in_monte = bool(obs.called_in_monte)
    view.received.extend(CARD_NAMES[c] for c in obs.received)
    view.given.extend(CARD_NAMES[c] for c in obs.given)
    view.monte.extend(CARD_NAMES[c] for c in obs.monte)
    if obs.split is not None:
        view.split_made = True
        shown = list(obs.monte)
        view.split.extend(CARD_NAMES[c] for i, c in enumerate(shown) if obs.split >> i & 1)
    view.discards.extend(CARD_NAMES[c] for c in obs.discards)
    view.seats = obs.seats
    return Sent(game, deal, len(obs.tricks), 0, 0, len(obs.bids))


def fill_decision(
    request: pb.DecisionRequest,
    state: AnyGame,
    seat: int,
    legal: tuple[Action, ...],
    game: int,
    since: Sent | None = None,
) -> Sent:
    """Write ``seat``'s observation of ``state`` and its ``legal`` actions into ``request``
    (game ``game`` of the match), in place, as the referee sends a decision; compact
    after ``since`` as :func:`fill_observation` says. Returns what the observation holds."""
    observed = state.observation(seat)
    sent = fill_observation(request.observation, observed, **_seen(state, game), since=since)
    request.legal_actions.extend(legal_messages(state.rules.family.codec, legal, _monte(state)))
    return sent


def _seen(state: AnyGame, game: int) -> dict[str, Any]:
    """What an observation of ``state`` needs besides itself, as keyword arguments."""
    rules = state.rules
    return {
        "game": game,
        "deal": state.deal_number,
        "players": rules.players,
        "quattro_points": rules.quattro_points,
        "totals": state.totals,
    }


def _monte(state: AnyGame) -> Sequence[int]:
    # Only Calabresella's split actions name monte cards.
    return monte_of(state.deal) if state.rules.family.codec is CALABRESELLA_CODEC else ()


# -- requests in the wire format -------------------------------------------------------------
# The referee's hot path writes each request as protobuf's wire format, joined from parts
# encoded once (an action, a card, a play, a finished trick), instead of building messages
# that protobuf then copies into their parents and encodes again: the bytes are those
# SerializeToString gives the message fill_decision builds (tests/test_request_wire.py).


def _varint(n: int) -> bytes:
    if 0 <= n < 0x80:
        return _BYTES[n]
    if 0 <= n < 0x4000:  # a request's numbers and lengths, mostly
        return bytes((n & 0x7F | 0x80, n >> 7))
    n &= 0xFFFF_FFFF_FFFF_FFFF  # a negative int32 is its 64-bit two's complement
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_BYTES = tuple(bytes((i,)) for i in range(0x80))


def _field(tag: bytes, body: bytes) -> bytes:
    """A length-delimited field: its tag, the length, the body."""
    return tag + _varint(len(body)) + body


def _uint(tag: bytes, value: int) -> bytes:
    return tag + _varint(value) if value else b""


def _packed(tag: bytes, values: Sequence[int]) -> bytes:
    if not values:
        return b""
    return _field(tag, b"".join([_varint(v) for v in values]))


# Observation's fields, in field-number order (proto/tavolo/v1/referee.proto).
_HAND = tuple(_field(b"\x32", name.encode()) for name in CARD_NAMES)
_COMPACT = b"\x90\x01\x01"


@functools.cache
def _action_field(codec: ActionCodec, action: Action) -> bytes:
    """DecisionRequest.legal_actions (5): one action."""
    return _field(b"\x2a", action_message(codec, action).SerializeToString())


@functools.cache
def _play_bytes(codec: ActionCodec, seat: int, action: Action) -> bytes:
    return _play(codec, seat, action).SerializeToString()


@functools.cache
def _trick_play_field(codec: ActionCodec, seat: int, action: Action) -> bytes:
    """Observation.trick (7): one play."""
    return _field(b"\x3a", _play_bytes(codec, seat, action))


@functools.cache
def _plays_field(codec: ActionCodec, seat: int, action: Action) -> bytes:
    """Trick.plays (1): one play."""
    return _field(b"\x0a", _play_bytes(codec, seat, action))


@functools.lru_cache(maxsize=8192)
def _trick_field(codec: ActionCodec, plays: tuple[tuple[int, Action], ...], winner: int) -> bytes:
    """Observation.tricks (8): one finished trick."""
    body = b"".join([_plays_field(codec, s, a) for s, a in plays]) + _uint(b"\x10", winner)
    return _field(b"\x42", body)


@functools.cache
def _declared_field(seat: int, declaration: int, quattro_points: int) -> bytes:
    """Observation.declarations (9): one declaration."""
    return _field(b"\x4a", declared_message(seat, declaration, quattro_points).SerializeToString())


@functools.cache
def _draw_field(seat: int, card: int) -> bytes:
    """Observation.draws (16): one card drawn from the stock."""
    return _field(b"\x82\x01", pb.Draw(seat=seat, card=CARD_NAMES[card]).SerializeToString())


@functools.lru_cache(maxsize=4096)
def _observation_head(seat: int, game: int, deal: int, dealer: int, phase: int) -> bytes:
    """Observation's fields 1 - 5: the same for every request of a seat in a phase."""
    return b"".join(
        (
            _uint(b"\x08", seat),
            _uint(b"\x10", game),
            _uint(b"\x18", deal),
            _uint(b"\x20", dealer),
            _uint(b"\x28", phase),
        )
    )


@functools.lru_cache(maxsize=4096)
def _observation_tail(
    captured: tuple[int, ...], totals: tuple[int, ...], players: int, trump: int | None
) -> bytes:
    """Observation's fields 10 - 14: the same for every request until a trick ends."""
    return b"".join(
        (
            _packed(b"\x52", captured),
            _packed(b"\x5a", totals),
            _uint(b"\x60", players),
            b"" if trump is None else _field(b"\x6a", CARD_NAMES[trump].encode()),
            _uint(b"\x70", len(totals)),
        )
    )


def encode_observation(
    obs: Observation | CalabresellaObservation,
    *,
    game: int,
    deal: int,
    players: int,
    quattro_points: int,
    totals: Sequence[int] = (),
    since: Sent | None = None,
) -> tuple[bytes, Sent]:
    """What :func:`fill_observation` writes, as its message's wire bytes; and what it holds."""
    if since is not None and (since.game != game or since.deal != deal):
        since = None
    if isinstance(obs, CalabresellaObservation):
        # Off the hot path: its many optional parts are left to the message.
        out = pb.Observation()
        sent = _fill_calabresella(out, obs, game=game, deal=deal, totals=totals, since=since)
        return out.SerializeToString(), sent
    codec = TRESSETTE_CODEC
    tricks, declarations, draws = obs.tricks, obs.declarations, obs.draws
    if since is not None:
        tricks = tricks[since.tricks :]
        declarations = declarations[since.declarations :]
        draws = draws[since.draws :]
    hand = _HAND
    parts = [_observation_head(obs.seat, game, deal, obs.dealer, int(obs.phase) + 1)]
    parts += [hand[c] for c in obs.hand]
    parts += [_trick_play_field(codec, s, a) for s, a in obs.trick]
    parts += [_trick_field(codec, plays, w) for plays, w in tricks]
    if declarations:
        parts += [_declared_field(s, d, quattro_points) for s, d in declarations]
    parts.append(_observation_tail(obs.captured, obs.totals, players, obs.trump))
    if obs.stock_left or obs.draws:  # tressette a due only, as in fill_observation
        parts += [_draw_field(s, c) for s, c in draws]
        parts.append(_uint(b"\x88\x01", obs.stock_left))
    if since is not None:
        parts.append(_COMPACT)
    sent = Sent(game, deal, len(obs.tricks), len(obs.declarations), len(obs.draws), 0)
    return b"".join(parts), sent


def encode_legal(
    codec: ActionCodec, actions: tuple[Action, ...], monte: Sequence[int] = ()
) -> bytes:
    """What :func:`legal_messages` gives, as DecisionRequest.legal_actions (5) wire bytes."""
    if monte and actions and codec.decode(actions[0]).kind == "split":
        # The cards of a split depend on the monte: built as messages, as they are rare.
        return b"".join(
            [_field(b"\x2a", m.SerializeToString()) for m in legal_messages(codec, actions, monte)]
        )
    return b"".join([_action_field(codec, a) for a in actions])


def encode_decision(
    state: AnyGame, seat: int, legal: tuple[Action, ...], game: int, since: Sent | None = None
) -> tuple[bytes, Sent]:
    """What :func:`fill_decision` writes, as the wire bytes of DecisionRequest's
    observation (4) and legal actions (5); and what the observation holds."""
    observation, sent = encode_observation(
        state.observation(seat), **_seen(state, game), since=since
    )
    legal_bytes = encode_legal(state.rules.family.codec, legal, _monte(state))
    return _field(b"\x22", observation) + legal_bytes, sent


def encode_response(
    events: Sequence[pb.Event],
    *,
    request_id: int,
    deadline_ms: int,
    time_bank_ms: int,
    attempts_left: int,
    body: bytes,
) -> bytes:
    """The wire bytes of a PlayResponse of ``events`` and a request whose observation and
    legal actions are ``body`` (as :func:`encode_decision` gives them)."""
    request = b"".join(
        (
            _uint(b"\x08", request_id),
            _uint(b"\x10", deadline_ms),
            _uint(b"\x18", time_bank_ms),
            body,
            _uint(b"\x30", attempts_left),
        )
    )
    shared = _SHARED_EVENTS.get
    parts = [shared(id(e)) or _field(b"\x0a", e.SerializeToString()) for e in events]
    parts.append(_field(b"\x12", request))
    return b"".join(parts)


def observation_message(
    obs: Observation, *, game: int, deal: int, players: int, quattro_points: int
) -> pb.Observation:
    """What one seat may know, as a new message."""
    out = pb.Observation()
    fill_observation(out, obs, game=game, deal=deal, players=players, quattro_points=quattro_points)
    return out


_SHARED_EVENTS: dict[int, bytes] = {}
"""PlayResponse.events (1) bytes of each shared event, by the event's id: the events are
kept (functools.cache), so no id is reused, and nothing changes one."""


def _shared(event: pb.Event) -> pb.Event:
    _SHARED_EVENTS[id(event)] = _field(b"\x0a", event.SerializeToString())
    return event


@functools.cache
def _card_played(seat: int, card: str, signal: str | None) -> pb.Event:
    # Every play of a match is one of a few hundred events: each is built once, and shared
    # (appending it to a PlayResponse copies it; nothing changes one).
    return _shared(
        pb.Event(
            card_played=pb.CardPlayed(
                seat=seat,
                card=card,
                signal=_SIGNALS[signal] if signal else 0,  # type: ignore[arg-type]
            )
        )
    )


@functools.cache
def _trick_won(trick: int, winner: int) -> pb.Event:
    return _shared(pb.Event(trick_won=pb.TrickWon(trick=trick, winner=winner)))


def public_event(line: dict[str, Any]) -> pb.Event | None:
    """The event every seat sees for a public record line, or None for a private one.

    ``deal`` lines hold every hand: they are private, and each seat gets its own
    ``HandDealt`` instead (see :func:`hand_event`).
    """
    kind = line["type"]
    if kind == "play":
        return _card_played(line["seat"], line["card"], line["signal"])
    if kind == "trick":
        return _trick_won(line["trick"], line["winner"])
    if kind == "declare":
        return pb.Event(
            declared=pb.Declared(
                seat=line["seat"],
                declaration=line["declaration"],
                cards=line["cards"],
                points=line["points"],
            )
        )
    if kind == "end-declarations":
        return pb.Event(declarations_ended=pb.DeclarationsEnded(seat=line["seat"]))
    if kind == "call-out":
        return pb.Event(
            called_out=pb.CalledOut(
                seat=line["seat"], claimed=line["claimed"], correct=line["correct"]
            )
        )
    if kind == "bid":
        return pb.Event(bid_made=pb.BidMade(seat=line["seat"], bid=line["bid"]))
    if kind == "call":
        holder = line["holder"]
        return pb.Event(
            card_called=pb.CardCalled(
                seat=line["seat"], card=line["card"], holder=-1 if holder is None else holder
            )
        )
    if kind == "split":
        return pb.Event(monte_split=pb.MonteSplit(seat=line["seat"], take=line["take"]))
    if kind == "draw":
        return pb.Event(card_drawn=pb.Draw(seat=line["seat"], card=line["card"]))
    # give and discard are face down; contract and redeal follow from the bids.
    return None


def scored_event(line: dict[str, Any], hands: list[list[str]]) -> pb.Event:
    """A deal's score, with every hand as dealt, now public (a Calabresella redeal too)."""
    if line["type"] == "redeal" or "contract" in line:
        return _calabresella_scored(line, hands)
    cappotto = line["cappotto"]
    return pb.Event(
        deal_scored=pb.DealScored(
            deal=line["deal"],
            last_trick=line["last_trick"],
            thirds=line["thirds"],
            card_points=line["card_points"],
            declarations=line["declarations"],
            points=line["points"],
            totals=line["totals"],
            cappotto=-1 if cappotto is None else cappotto,
            hands=[pb.Hand(cards=h) for h in hands],
        )
    )


def _calabresella_scored(line: dict[str, Any], hands: list[list[str]]) -> pb.Event:
    if line["type"] == "redeal":
        return pb.Event(
            deal_scored=pb.DealScored(
                deal=line["deal"], cappotto=-1, soloist=-1,
                hands=[pb.Hand(cards=h) for h in hands],
            )
        )  # fmt: skip
    return pb.Event(
        deal_scored=pb.DealScored(
            deal=line["deal"],
            last_trick=line["last_trick"],
            thirds=line["thirds"],
            points=line["points"],
            totals=line["totals"],
            # Whoever wins every trick wins the last one too.
            cappotto=line["last_trick"] if line["cappotto"] else -1,
            hands=[pb.Hand(cards=h) for h in hands],
            contract=line["contract"],
            soloist=line["soloist"],
            success=line["success"],
            set_aside=line["set_aside"],
        )
    )


def hand_event(deal_line: dict[str, Any], seat: int) -> pb.Event:
    """The seat's own cards from a ``deal`` line."""
    return pb.Event(
        hand_dealt=pb.HandDealt(
            deal=deal_line["deal"],
            dealer=deal_line["dealer"],
            cards=deal_line["hands"][seat],
            trump=deal_line.get("trump", ""),
        )
    )
