"""How the protocol and the records show Calabresella's games: its observation with the
auction and the contract, its bid, call and split events, the deal's score and payouts,
and its action lines read."""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from referee.engine.cards import CARD_NAMES, cards_of, parse_card
from referee.engine.codec import ActionParts
from referee.engine.events import DealOver, Event
from referee.engine.game_base import AnyGame
from referee.families.calabresella.auction import CONTRACT_NAMES
from referee.families.calabresella.codec import CALABRESELLA_CODEC
from referee.families.calabresella.deal import CalabresellaObservation
from referee.families.calabresella.deal import Phase as CalabresellaPhase
from referee.families.calabresella.events import (
    Bid,
    CalabresellaScored,
    Called,
    Discarded,
    Given,
    Split,
)
from referee.protocol import Sent, card_play_parts, play_message, trick_message
from tavolo_bot.proto import referee_pb2 as pb

_PHASES = {
    CalabresellaPhase.AUCTION: pb.PHASE_AUCTION,
    CalabresellaPhase.CALL: pb.PHASE_CALL,
    CalabresellaPhase.GIVE: pb.PHASE_GIVE,
    CalabresellaPhase.DISCARD: pb.PHASE_DISCARD,
    CalabresellaPhase.SPLIT: pb.PHASE_SPLIT,
    CalabresellaPhase.PLAY: pb.PHASE_PLAY,
    CalabresellaPhase.OVER: pb.PHASE_DONE,
}


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
    out.phase = _PHASES[obs.phase]
    out.hand.extend([CARD_NAMES[c] for c in obs.hand])
    out.trick.extend([play_message(CALABRESELLA_CODEC, s, c) for s, c in obs.trick])
    tricks, bids = obs.tricks, obs.bids
    if since is not None:
        out.compact = True
        tricks = tricks[since.tricks :]
        bids = bids[since.bids :]
    out.tricks.extend([trick_message(CALABRESELLA_CODEC, plays, w) for plays, w in tricks])
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


def _call(event: Called) -> pb.Event:
    holder = event.holder
    return pb.Event(
        card_called=pb.CardCalled(
            seat=event.seat, card=event.card, holder=-1 if holder is None else holder
        )
    )


def _bid(event: Bid) -> pb.Event:
    return pb.Event(bid_made=pb.BidMade(seat=event.seat, bid=event.bid))


def _split(event: Split) -> pb.Event:
    return pb.Event(monte_split=pb.MonteSplit(seat=event.seat, take=event.take))


def _face_down(event: Event) -> None:
    return None


class CalabresellaAdapters:
    """Calabresella's adapters (``referee.protocol.FamilyAdapters``)."""

    # give and discard are face down; contract and redeal follow from the bids.
    events: ClassVar[dict[type[Event], Callable[[Any], pb.Event | None]]] = {
        Bid: _bid,
        Called: _call,
        Split: _split,
        Given: _face_down,
        Discarded: _face_down,
    }

    def fill_observation(
        self, out: pb.Observation, obs: CalabresellaObservation, *, game: int, deal: int,
        players: int, quattro_points: int, totals: Sequence[int], since: Sent | None,
    ) -> Sent:  # fmt: skip
        return _fill_calabresella(out, obs, game=game, deal=deal, totals=totals, since=since)

    def encode_observation(
        self, obs: CalabresellaObservation, *, game: int, deal: int, players: int,
        quattro_points: int, totals: Sequence[int], since: Sent | None,
    ) -> tuple[bytes, Sent]:  # fmt: skip
        # Off the hot path: its many optional parts are left to the message.
        out = pb.Observation()
        sent = _fill_calabresella(out, obs, game=game, deal=deal, totals=totals, since=since)
        return out.SerializeToString(), sent

    def named_cards(self, deal: Any) -> Sequence[int]:
        """The monte (card ids, ascending), which names the cards of split actions."""
        return tuple(cards_of(deal.monte))

    def scored_event(self, event: DealOver, hands: Sequence[Sequence[str]]) -> pb.Event:
        if not isinstance(event, CalabresellaScored):
            return pb.Event(
                deal_scored=pb.DealScored(
                    deal=event.deal, cappotto=-1, soloist=-1,
                    hands=[pb.Hand(cards=h) for h in hands],
                )
            )  # fmt: skip
        return pb.Event(
            deal_scored=pb.DealScored(
                deal=event.deal,
                last_trick=event.last_trick,
                thirds=event.thirds,
                points=event.points,
                totals=event.totals,
                # Whoever wins every trick wins the last one too.
                cappotto=event.last_trick if event.cappotto else -1,
                hands=[pb.Hand(cards=h) for h in hands],
                contract=event.contract,
                soloist=event.soloist,
                success=event.success,
                set_aside=event.set_aside,
            )
        )

    def action_parts(
        self, line: dict[str, Any], state: AnyGame, field: Callable[[str, type], Any]
    ) -> ActionParts:
        kind = line["type"]
        if kind == "bid":
            return ActionParts("bid", bid=field("bid", str))
        if kind in ("call", "give", "discard", "play"):
            return card_play_parts(line, field, "calabresella")
        if kind == "split":
            take = field("take", list)
            monte = list(cards_of(state.deal.monte))
            cards = [parse_card(c) if isinstance(c, str) else -1 for c in take]
            if any(c not in monte for c in cards) or len(set(cards)) != len(cards):
                raise ValueError(
                    f"'{kind}' line: field 'take' must name distinct cards of the monte"
                )
            return ActionParts("split", mask=sum(1 << monte.index(c) for c in cards))
        return ActionParts(kind)


ADAPTERS = CalabresellaAdapters()
