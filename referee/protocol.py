"""Engine values to protocol messages (``proto/tavolo/v1/referee.proto``), and back.

Only what a seat may see is ever converted: observations come from
``Observation`` objects the engine builds for one seat, and events from the public
lines of the game record. Nothing a bot sends reaches another bot but its action.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
import functools
import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from referee.engine.cards import CARD_NAMES, parse_card
from referee.engine.codec import Action, ActionCodec, ActionError, ActionParts
from referee.engine.events import DealOver, Dealt, Event, Forfeited, Played, TrickTaken
from referee.engine.game_base import AnyGame
from referee.engine.registry import Family
from tavolo_bot.proto import referee_pb2 as pb

PROTOCOL_VERSION = 1

_SIGNALS = {
    name.removeprefix("SIGNAL_").lower().replace("_", "-"): value
    for name, value in pb.Signal.items()
    if value
}
"""A signal's record name (``striscio-lungo``) to the protocol's ``Signal``."""


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
"""The protocol's ``ActionKind`` of each kind of :mod:`referee.engine.codec`."""


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
        message.declaration = message.text.removeprefix("declare ")
    if parts.bid is not None:
        message.bid = parts.bid
    return message


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


@functools.cache
def play_message(codec: ActionCodec, seat: int, action: Action) -> pb.Play:
    return pb.Play(seat=seat, action=action_message(codec, action))


@functools.lru_cache(maxsize=8192)
def trick_message(
    codec: ActionCodec, plays: tuple[tuple[int, Action], ...], winner: int
) -> pb.Trick:
    # Every request repeats the finished tricks of the deal: build each one once.
    return pb.Trick(plays=[play_message(codec, s, a) for s, a in plays], winner=winner)


class Sent(NamedTuple):
    """What an observation sent to a stream held: its game and deal, and how many items of
    each list that only grows within a deal. A compact observation sends what follows."""

    game: int
    deal: int
    tricks: int
    declarations: int
    draws: int
    bids: int


class TrickView(Protocol):
    """What an observation of a trick-taking deal holds that every family shows alike."""

    @property
    def seat(self) -> int: ...
    @property
    def dealer(self) -> int: ...
    @property
    def phase(self) -> int: ...
    @property
    def hand(self) -> tuple[int, ...]: ...
    @property
    def trick(self) -> tuple[tuple[int, Action], ...]: ...
    @property
    def tricks(self) -> tuple[tuple[tuple[tuple[int, Action], ...], int], ...]: ...
    @property
    def captured(self) -> tuple[int, ...]: ...
    @property
    def totals(self) -> tuple[int, ...]: ...
    @property
    def draws(self) -> tuple[tuple[int, int], ...]: ...
    @property
    def stock_left(self) -> int: ...
    @property
    def trump(self) -> int | None: ...


Declared = Callable[[int, int], pb.Declared]
"""``(seat, declaration) -> Declared``: how a family shows a declaration."""


def fill_observation(
    out: pb.Observation,
    obs: Any,
    *,
    family: Family,
    game: int,
    deal: int,
    players: int,
    quattro_points: int,
    totals: Sequence[int] = (),
    since: Sent | None = None,
) -> Sent:
    """Write what one seat may know, as the engine built it for that seat, into ``out``;
    return what it holds, as ``family`` shows it (:func:`adapters_of`).

    ``totals``: the game's totals per side, for observations that do not hold them.
    ``since``: what the stream's previous observation held; if it was of this game and
    deal, ``out`` is compact (``Observation.compact``): only the items added since.
    """
    if since is not None and (since.game != game or since.deal != deal):
        since = None
    return adapters_of(family).fill_observation(
        out, obs, game=game, deal=deal, players=players, quattro_points=quattro_points,
        totals=totals, since=since,
    )  # fmt: skip


def fill_trick_observation(
    out: pb.Observation,
    obs: TrickView,
    codec: ActionCodec,
    *,
    game: int,
    deal: int,
    players: int,
    since: Sent | None,
    declarations: Sequence[tuple[int, int]] = (),
    declared: Declared | None = None,
) -> Sent:
    """:func:`fill_observation` of a deal of plays and tricks, with its draws and trump;
    ``declarations`` shown by ``declared`` where the family has them."""
    out.seat = obs.seat
    out.game = game
    out.deal = deal
    out.dealer = obs.dealer
    out.phase = int(obs.phase) + 1  # type: ignore[assignment]
    out.hand.extend([CARD_NAMES[c] for c in obs.hand])
    out.trick.extend([play_message(codec, s, a) for s, a in obs.trick])
    tricks, draws, shown = obs.tricks, obs.draws, declarations
    if since is not None:
        out.compact = True
        tricks = tricks[since.tricks :]
        shown = shown[since.declarations :]
        draws = draws[since.draws :]
    out.tricks.extend([trick_message(codec, plays, w) for plays, w in tricks])
    if shown and declared is not None:
        out.declarations.extend([declared(s, d) for s, d in shown])
    out.captured.extend(obs.captured)
    out.totals.extend(obs.totals)
    out.players = players
    out.sides = len(obs.totals)
    if obs.stock_left or obs.draws:  # a stock: nothing to do on the hot path otherwise
        out.draws.extend(pb.Draw(seat=s, card=CARD_NAMES[c]) for s, c in draws)
        out.stock_left = obs.stock_left
    if obs.trump is not None:
        out.trump = CARD_NAMES[obs.trump]
    return Sent(game, deal, len(obs.tricks), len(declarations), len(obs.draws), 0)


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
    named = adapters_of(state.rules.family).named_cards(state.deal)
    request.legal_actions.extend(legal_messages(state.rules.family.codec, legal, named))
    return sent


def _seen(state: AnyGame, game: int) -> dict[str, Any]:
    """What an observation of ``state`` needs besides itself, as keyword arguments."""
    rules = state.rules
    return {
        "family": rules.family,
        "game": game,
        "deal": state.deal_number,
        "players": rules.players,
        "quattro_points": rules.quattro_points,
        "totals": state.totals,
    }


# -- requests in the wire format -------------------------------------------------------------
# The referee's hot path writes each request as protobuf's wire format, joined from parts
# encoded once (an action, a card, a play, a finished trick), instead of building messages
# that protobuf then copies into their parents and encodes again: the bytes are those
# SerializeToString gives the message fill_decision builds (tests/test_request_wire.py).


def varint(n: int) -> bytes:
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


def field(tag: bytes, body: bytes) -> bytes:
    """A length-delimited field: its tag, the length, the body."""
    return tag + varint(len(body)) + body


def uint(tag: bytes, value: int) -> bytes:
    return tag + varint(value) if value else b""


def packed(tag: bytes, values: Sequence[int]) -> bytes:
    if not values:
        return b""
    return field(tag, b"".join([varint(v) for v in values]))


# Observation's fields, in field-number order (proto/tavolo/v1/referee.proto).
_HAND = tuple(field(b"\x32", name.encode()) for name in CARD_NAMES)
_COMPACT = b"\x90\x01\x01"


@functools.cache
def _action_field(codec: ActionCodec, action: Action) -> bytes:
    """DecisionRequest.legal_actions (5): one action."""
    return field(b"\x2a", action_message(codec, action).SerializeToString())


@functools.cache
def _play_bytes(codec: ActionCodec, seat: int, action: Action) -> bytes:
    return play_message(codec, seat, action).SerializeToString()


@functools.cache
def _trick_play_field(codec: ActionCodec, seat: int, action: Action) -> bytes:
    """Observation.trick (7): one play."""
    return field(b"\x3a", _play_bytes(codec, seat, action))


@functools.cache
def _plays_field(codec: ActionCodec, seat: int, action: Action) -> bytes:
    """Trick.plays (1): one play."""
    return field(b"\x0a", _play_bytes(codec, seat, action))


@functools.lru_cache(maxsize=8192)
def _trick_field(codec: ActionCodec, plays: tuple[tuple[int, Action], ...], winner: int) -> bytes:
    """Observation.tricks (8): one finished trick."""
    body = b"".join([_plays_field(codec, s, a) for s, a in plays]) + uint(b"\x10", winner)
    return field(b"\x42", body)


@functools.cache
def _draw_field(seat: int, card: int) -> bytes:
    """Observation.draws (16): one card drawn from the stock."""
    return field(b"\x82\x01", pb.Draw(seat=seat, card=CARD_NAMES[card]).SerializeToString())


@functools.lru_cache(maxsize=4096)
def _observation_head(seat: int, game: int, deal: int, dealer: int, phase: int) -> bytes:
    """Observation's fields 1 - 5: the same for every request of a seat in a phase."""
    return b"".join(
        (
            uint(b"\x08", seat),
            uint(b"\x10", game),
            uint(b"\x18", deal),
            uint(b"\x20", dealer),
            uint(b"\x28", phase),
        )
    )


@functools.lru_cache(maxsize=4096)
def _observation_tail(
    captured: tuple[int, ...], totals: tuple[int, ...], players: int, trump: int | None
) -> bytes:
    """Observation's fields 10 - 14: the same for every request until a trick ends."""
    return b"".join(
        (
            packed(b"\x52", captured),
            packed(b"\x5a", totals),
            uint(b"\x60", players),
            b"" if trump is None else field(b"\x6a", CARD_NAMES[trump].encode()),
            uint(b"\x70", len(totals)),
        )
    )


def encode_observation(
    obs: Any,
    *,
    family: Family,
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
    return adapters_of(family).encode_observation(
        obs, game=game, deal=deal, players=players, quattro_points=quattro_points,
        totals=totals, since=since,
    )  # fmt: skip


def encode_trick_observation(
    obs: TrickView,
    codec: ActionCodec,
    *,
    game: int,
    deal: int,
    players: int,
    since: Sent | None,
    declarations: Sequence[tuple[int, int]] = (),
    declared_field: Callable[[int, int], bytes] | None = None,
) -> tuple[bytes, Sent]:
    """What :func:`fill_trick_observation` writes, as its message's wire bytes; and what it
    holds. ``declared_field`` writes one declaration as Observation field 9."""
    tricks, shown, draws = obs.tricks, declarations, obs.draws
    if since is not None:
        tricks = tricks[since.tricks :]
        shown = shown[since.declarations :]
        draws = draws[since.draws :]
    hand = _HAND
    parts = [_observation_head(obs.seat, game, deal, obs.dealer, int(obs.phase) + 1)]
    parts += [hand[c] for c in obs.hand]
    parts += [_trick_play_field(codec, s, a) for s, a in obs.trick]
    parts += [_trick_field(codec, plays, w) for plays, w in tricks]
    if shown and declared_field is not None:
        parts += [declared_field(s, d) for s, d in shown]
    parts.append(_observation_tail(obs.captured, obs.totals, players, obs.trump))
    if obs.stock_left or obs.draws:  # a stock only, as in fill_trick_observation
        parts += [_draw_field(s, c) for s, c in draws]
        parts.append(uint(b"\x88\x01", obs.stock_left))
    if since is not None:
        parts.append(_COMPACT)
    sent = Sent(game, deal, len(obs.tricks), len(declarations), len(obs.draws), 0)
    return b"".join(parts), sent


def encode_legal(
    codec: ActionCodec, actions: tuple[Action, ...], monte: Sequence[int] = ()
) -> bytes:
    """What :func:`legal_messages` gives, as DecisionRequest.legal_actions (5) wire bytes."""
    if monte and actions and codec.decode(actions[0]).kind == "split":
        # The cards of a split depend on the monte: built as messages, as they are rare.
        return b"".join(
            [field(b"\x2a", m.SerializeToString()) for m in legal_messages(codec, actions, monte)]
        )
    return b"".join([_action_field(codec, a) for a in actions])


def encode_decision(
    state: AnyGame, seat: int, legal: tuple[Action, ...], game: int, since: Sent | None = None
) -> tuple[bytes, Sent]:
    """What :func:`fill_decision` writes, as the wire bytes of DecisionRequest's
    observation (4) and legal actions (5); and what the observation holds."""
    # The referee's hot path: the family's adapters are asked directly, once.
    rules = state.rules
    family = rules.family
    adapters = adapters_of(family)
    deal = state.deal_number
    if since is not None and (since.game != game or since.deal != deal):
        since = None
    observation, sent = adapters.encode_observation(
        state.observation(seat), game=game, deal=deal, players=rules.players,
        quattro_points=rules.quattro_points, totals=state.totals, since=since,
    )  # fmt: skip
    legal_bytes = encode_legal(family.codec, legal, adapters.named_cards(state.deal))
    return field(b"\x22", observation) + legal_bytes, sent


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
            uint(b"\x08", request_id),
            uint(b"\x10", deadline_ms),
            uint(b"\x18", time_bank_ms),
            body,
            uint(b"\x30", attempts_left),
        )
    )
    shared = _SHARED_EVENTS.get
    parts = [shared(id(e)) or field(b"\x0a", e.SerializeToString()) for e in events]
    parts.append(field(b"\x12", request))
    return b"".join(parts)


_SHARED_EVENTS: dict[int, bytes] = {}
"""PlayResponse.events (1) bytes of each shared event, by the event's id: the events are
kept (functools.cache), so no id is reused, and nothing changes one."""


def _shared(event: pb.Event) -> pb.Event:
    _SHARED_EVENTS[id(event)] = field(b"\x0a", event.SerializeToString())
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


def public_event(family: Family, event: Event) -> pb.Event | None:
    """What every seat sees of ``event`` in a game of ``family``, or None for a private one.

    Plays and tricks are shown alike in every family; a family's own events (a
    declaration, a bid, a draw from the stock) as the family says
    (``FamilyAdapters.events``). A deal holds every hand: it is private, and each seat gets
    its own ``HandDealt`` instead (see :func:`hand_event`); scores are :func:`scored_event`.
    """
    if type(event) is Played:
        return _card_played(event.seat, event.card, event.signal)
    if type(event) is TrickTaken:
        return _trick_won(event.trick, event.winner)
    shown = adapters_of(family).events.get(type(event))
    return None if shown is None else shown(event)


def scored_event(family: Family, event: DealOver, hands: Sequence[Sequence[str]]) -> pb.Event:
    """A deal's end (its score, or a redeal), with every hand as dealt, now public: as
    ``family`` shows it."""
    return adapters_of(family).scored_event(event, hands)


def hand_event(dealt: Dealt, seat: int) -> pb.Event:
    """The seat's own cards, from its deal."""
    return pb.Event(
        hand_dealt=pb.HandDealt(
            deal=dealt.deal,
            dealer=dealt.dealer,
            cards=dealt.hands[seat],
            trump=getattr(dealt, "trump", None) or "",
        )
    )


class Heard(NamedTuple):
    """What the seats hear of one event: each seat its own (its hand of a deal), or one
    event for all; nothing for a private one."""

    each: Sequence[pb.Event] = ()
    """By seat."""
    everyone: pb.Event | None = None


@functools.cache
def _heard_play(seat: int, card: str, signal: str | None) -> Heard:
    return Heard(everyone=_card_played(seat, card, signal))


def heard(family: Family, event: Event, hands: Sequence[Sequence[str]]) -> Heard:
    """What every seat hears of ``event`` in a game of ``family``, as the match and the
    in-process player send it; ``hands``: the deal's hands, from its ``Dealt``."""
    if type(event) is Played:  # most events: one Heard for each play, made once
        return _heard_play(event.seat, event.card, event.signal)
    if isinstance(event, Dealt):
        return Heard(each=[hand_event(event, seat) for seat in range(len(event.hands))])
    if isinstance(event, DealOver):
        return Heard(everyone=scored_event(family, event, hands))
    if isinstance(event, Forfeited):
        return Heard()
    return Heard(everyone=public_event(family, event))


def card_play_parts(
    line: dict[str, Any], field: Callable[[str, type], Any], family: str
) -> ActionParts:
    """The play of an action line in a family without signals (its ``signal`` null)."""
    kind = line["type"]
    signal = line.get("signal") if kind == "play" else None
    if signal is not None and not isinstance(signal, str):
        raise ValueError(f"'{kind}' line: field 'signal' must be a signal name or null")
    if signal:
        raise ActionError(f"{family} has no signals")
    return ActionParts(kind, card=parse_card(field("card", str)))


# -- the families' adapters ------------------------------------------------------------------


class FamilyAdapters(Protocol):
    """How the protocol and the records show one family's games: the ``ADAPTERS`` of its
    package's ``adapters`` module (``referee/families/<family>/adapters.py``)."""

    events: Mapping[type[Event], Callable[[Any], pb.Event | None]]
    """By type, what every seat sees of each event of its own (None: a face-down step)."""

    def fill_observation(
        self, out: pb.Observation, obs: Any, *, game: int, deal: int, players: int,
        quattro_points: int, totals: Sequence[int], since: Sent | None,
    ) -> Sent:  # fmt: skip
        """:func:`fill_observation` for this family (``since`` already checked)."""
        ...

    def encode_observation(
        self, obs: Any, *, game: int, deal: int, players: int, quattro_points: int,
        totals: Sequence[int], since: Sent | None,
    ) -> tuple[bytes, Sent]:  # fmt: skip
        """:func:`encode_observation` for this family (``since`` already checked)."""
        ...

    def named_cards(self, deal: Any) -> Sequence[int]:
        """The cards (ids, ascending) that a mask in a legal action names; () for none."""
        ...

    def scored_event(self, event: DealOver, hands: Sequence[Sequence[str]]) -> pb.Event:
        """The ``DealScored`` of a deal's score, or of a redeal."""
        ...

    def action_parts(
        self, line: dict[str, Any], state: AnyGame, field: Callable[[str, type], Any]
    ) -> ActionParts:
        """The action a record's action line names, for the family's codec to encode;
        ``field(key, type)`` reads a field, or raises ValueError naming it."""
        ...


def adapters_of(family: Family) -> FamilyAdapters:
    """The adapters of ``family``: its package's ``adapters.ADAPTERS``."""
    try:
        return _ADAPTERS[family.package]
    except KeyError:
        adapters: FamilyAdapters = importlib.import_module(f"{family.package}.adapters").ADAPTERS
        _ADAPTERS[family.package] = adapters
        return adapters


_ADAPTERS: dict[str, FamilyAdapters] = {}
"""Each family package's adapters, once imported."""
