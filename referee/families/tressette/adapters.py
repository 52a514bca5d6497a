"""How the protocol and the records show the Tressette families' games: observations with
declarations, the declaration and call-out events, the deal's score, action lines read."""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
import functools
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from referee.engine.cards import CARD_NAMES, cards_of, parse_card
from referee.engine.codec import ActionParts
from referee.engine.events import DealOver, Drew, Event
from referee.engine.game_base import AnyGame
from referee.engine.observation import Observation
from referee.families.tressette.actions import parse_signal
from referee.families.tressette.codec import TRESSETTE_CODEC
from referee.families.tressette.declarations import (
    DECLARATION_CARDS,
    DECLARATION_NAMES,
    declaration_points,
    parse_declaration,
)
from referee.families.tressette.events import (
    CalledOut,
    DeclarationsEnded,
    Declared,
    TressetteScored,
)
from referee.protocol import Sent, encode_trick_observation, field, fill_trick_observation
from tavolo_bot.proto import referee_pb2 as pb


def declared_message(seat: int, declaration: int, quattro_points: int) -> pb.Declared:
    """A declaration, as every seat sees it."""
    return pb.Declared(
        seat=seat,
        declaration=DECLARATION_NAMES[declaration],
        cards=[CARD_NAMES[c] for c in cards_of(DECLARATION_CARDS[declaration])],
        points=declaration_points(declaration, quattro_points),
    )


@functools.cache
def _declared_field(seat: int, declaration: int, quattro_points: int) -> bytes:
    """Observation.declarations (9): one declaration."""
    return field(b"\x4a", declared_message(seat, declaration, quattro_points).SerializeToString())


@functools.cache
def _declared_by(quattro_points: int) -> Callable[[int, int], pb.Declared]:
    """How a declaration is shown where the quattro is worth ``quattro_points`` (made once
    for each worth: observations are written on the referee's hot path)."""
    return lambda seat, declaration: declared_message(seat, declaration, quattro_points)


@functools.cache
def _declared_fields(quattro_points: int) -> Callable[[int, int], bytes]:
    """:func:`_declared_by`, as Observation field 9's wire bytes."""
    return lambda seat, declaration: _declared_field(seat, declaration, quattro_points)


def _declared(event: Declared) -> pb.Event:
    return pb.Event(
        declared=pb.Declared(
            seat=event.seat,
            declaration=event.declaration,
            cards=event.cards,
            points=event.points,
        )
    )


def _called_out(event: CalledOut) -> pb.Event:
    return pb.Event(
        called_out=pb.CalledOut(seat=event.seat, claimed=event.claimed, correct=event.correct)
    )


def _declarations_ended(event: DeclarationsEnded) -> pb.Event:
    return pb.Event(declarations_ended=pb.DeclarationsEnded(seat=event.seat))


def _drew(event: Drew) -> pb.Event:
    return pb.Event(card_drawn=pb.Draw(seat=event.seat, card=event.card))


class TressetteAdapters:
    """The Tressette families' adapters (``referee.protocol.FamilyAdapters``)."""

    events: ClassVar[dict[type[Event], Callable[[Any], pb.Event | None]]] = {
        Declared: _declared,
        DeclarationsEnded: _declarations_ended,
        CalledOut: _called_out,
        # Tressette a due's draws are shown to both players.
        Drew: _drew,
    }

    def fill_observation(
        self, out: pb.Observation, obs: Observation, *, game: int, deal: int, players: int,
        quattro_points: int, totals: Sequence[int], since: Sent | None,
    ) -> Sent:  # fmt: skip
        return fill_trick_observation(
            out, obs, TRESSETTE_CODEC, game=game, deal=deal, players=players, since=since,
            declarations=obs.declarations,
            declared=_declared_by(quattro_points),
        )  # fmt: skip

    def encode_observation(
        self, obs: Observation, *, game: int, deal: int, players: int, quattro_points: int,
        totals: Sequence[int], since: Sent | None,
    ) -> tuple[bytes, Sent]:  # fmt: skip
        return encode_trick_observation(
            obs, TRESSETTE_CODEC, game=game, deal=deal, players=players, since=since,
            declarations=obs.declarations,
            declared_field=_declared_fields(quattro_points),
        )  # fmt: skip

    def named_cards(self, deal: Any) -> Sequence[int]:
        return ()

    def scored_event(self, event: DealOver, hands: Sequence[Sequence[str]]) -> pb.Event:
        assert isinstance(event, TressetteScored)
        cappotto = event.cappotto
        return pb.Event(
            deal_scored=pb.DealScored(
                deal=event.deal,
                last_trick=event.last_trick,
                thirds=event.thirds,
                card_points=event.card_points,
                declarations=event.declarations,
                points=event.points,
                totals=event.totals,
                cappotto=-1 if cappotto is None else cappotto,
                hands=[pb.Hand(cards=h) for h in hands],
            )
        )

    def action_parts(
        self, line: dict[str, Any], state: AnyGame, field: Callable[[str, type], Any]
    ) -> ActionParts:
        kind = line["type"]
        if kind == "play":
            card = parse_card(field("card", str))
            signal = line.get("signal")
            if signal is not None and not isinstance(signal, str):
                raise ValueError(f"'{kind}' line: field 'signal' must be a signal name or null")
            return ActionParts("play", card=card, signal=int(parse_signal(signal)) if signal else 0)
        if kind == "declare":
            return ActionParts("declare", declaration=parse_declaration(field("declaration", str)))
        return ActionParts(kind)


ADAPTERS = TressetteAdapters()
