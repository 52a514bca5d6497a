"""How the protocol and the records show Briscola's games: the trick-taking observation
(each seat's own draws and the trump), face-down draws, the deal's card points."""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from referee.engine.codec import ActionParts
from referee.engine.events import DealOver, Drew, Event
from referee.engine.game_base import AnyGame
from referee.engine.observation import Observation
from referee.families.briscola.codec import BRISCOLA_CODEC
from referee.families.briscola.events import BriscolaScored
from referee.protocol import (
    Sent,
    card_play_parts,
    encode_trick_observation,
    fill_trick_observation,
)
from tavolo_bot.proto import referee_pb2 as pb


class BriscolaAdapters:
    """Briscola's adapters (``referee.protocol.FamilyAdapters``)."""

    # A card drawn from the stock is seen by its drawer alone (the trump, drawn last, by
    # all): each seat's observation holds what it saw.
    events: ClassVar[dict[type[Event], Callable[[Any], pb.Event | None]]] = {
        Drew: lambda event: None,
    }

    def fill_observation(
        self, out: pb.Observation, obs: Observation, *, game: int, deal: int, players: int,
        quattro_points: int, totals: Sequence[int], since: Sent | None,
    ) -> Sent:  # fmt: skip
        return fill_trick_observation(
            out, obs, BRISCOLA_CODEC, game=game, deal=deal, players=players, since=since
        )

    def encode_observation(
        self, obs: Observation, *, game: int, deal: int, players: int, quattro_points: int,
        totals: Sequence[int], since: Sent | None,
    ) -> tuple[bytes, Sent]:  # fmt: skip
        return encode_trick_observation(
            obs, BRISCOLA_CODEC, game=game, deal=deal, players=players, since=since
        )

    def named_cards(self, deal: Any) -> Sequence[int]:
        return ()

    def scored_event(self, event: DealOver, hands: Sequence[Sequence[str]]) -> pb.Event:
        assert isinstance(event, BriscolaScored)
        return pb.Event(
            deal_scored=pb.DealScored(
                deal=event.deal,
                card_points=event.card_points,
                points=event.points,
                totals=event.totals,
                cappotto=-1,
                hands=[pb.Hand(cards=h) for h in hands],
            )
        )

    def action_parts(
        self, line: dict[str, Any], state: AnyGame, field: Callable[[str, type], Any]
    ) -> ActionParts:
        return card_play_parts(line, field, "briscola")


ADAPTERS = BriscolaAdapters()
