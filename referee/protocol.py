"""Engine values to protocol messages (``proto/tavolo/v1/referee.proto``), and back.

Only what a seat may see is ever converted: observations come from
``Observation`` objects the engine builds for one seat, and events from the public
lines of the game record. Nothing a bot sends reaches another bot but its action.
"""

from __future__ import annotations

import functools
from typing import Any

from referee.engine.actions import (
    CALL_OUT,
    END_DECLARATIONS,
    NUM_PLAY_ACTIONS,
    SIGNAL_NAMES,
    Action,
    action_name,
    is_declaration,
)
from referee.engine.cards import CARD_NAMES, cards_of
from referee.engine.declarations import DECLARATION_CARDS, DECLARATION_NAMES, declaration_points
from referee.engine.tressette import Observation
from referee.proto import referee_pb2 as pb

PROTOCOL_VERSION = 1

_SIGNALS = {name: i for i, name in enumerate(SIGNAL_NAMES) if name}


@functools.cache
def action_message(action: Action) -> pb.Action:
    """The protocol form of an engine action (shared: protobuf copies it into a parent)."""
    if 0 <= action < NUM_PLAY_ACTIONS:
        return pb.Action(
            id=action,
            kind=pb.ACTION_KIND_PLAY,
            card=CARD_NAMES[action % 40],
            signal=action // 40,  # type: ignore[arg-type]
            text=action_name(action),
        )
    if is_declaration(action):
        return pb.Action(
            id=action,
            kind=pb.ACTION_KIND_DECLARE,
            declaration=DECLARATION_NAMES[action - 300],
            text=action_name(action),
        )
    kind = (
        pb.ACTION_KIND_END_DECLARATIONS if action == END_DECLARATIONS else pb.ACTION_KIND_CALL_OUT
    )
    assert action in (END_DECLARATIONS, CALL_OUT)
    return pb.Action(id=action, kind=kind, text=action_name(action))


def legal_messages(actions: tuple[Action, ...]) -> list[pb.Action]:
    """The protocol form of a legal-action list."""
    return [action_message(a) for a in actions]


def declared_message(seat: int, declaration: int, quattro_points: int) -> pb.Declared:
    """A declaration, as every seat sees it."""
    return pb.Declared(
        seat=seat,
        declaration=DECLARATION_NAMES[declaration],
        cards=[CARD_NAMES[c] for c in cards_of(DECLARATION_CARDS[declaration])],
        points=declaration_points(declaration, quattro_points),
    )


@functools.cache
def _play(seat: int, action: Action) -> pb.Play:
    return pb.Play(seat=seat, action=action_message(action))


@functools.lru_cache(maxsize=8192)
def _trick(plays: tuple[tuple[int, Action], ...], winner: int) -> pb.Trick:
    # Every request repeats the finished tricks of the deal: build each one once.
    return pb.Trick(plays=[_play(s, a) for s, a in plays], winner=winner)


def fill_observation(
    out: pb.Observation,
    obs: Observation,
    *,
    game: int,
    deal: int,
    players: int,
    quattro_points: int,
) -> None:
    """Write what one seat may know, as the engine built it for that seat, into ``out``."""
    out.seat = obs.seat
    out.game = game
    out.deal = deal
    out.dealer = obs.dealer
    out.phase = int(obs.phase) + 1  # type: ignore[assignment]
    out.hand.extend([CARD_NAMES[c] for c in obs.hand])
    out.trick.extend([_play(s, a) for s, a in obs.trick])
    out.tricks.extend([_trick(plays, winner) for plays, winner in obs.tricks])
    out.declarations.extend([declared_message(s, d, quattro_points) for s, d in obs.declarations])
    out.captured.extend(obs.captured)
    out.totals.extend(obs.totals)
    out.players = players
    out.sides = len(obs.totals)
    if obs.trump is not None:
        out.trump = CARD_NAMES[obs.trump]


def observation_message(
    obs: Observation, *, game: int, deal: int, players: int, quattro_points: int
) -> pb.Observation:
    """What one seat may know, as a new message."""
    out = pb.Observation()
    fill_observation(out, obs, game=game, deal=deal, players=players, quattro_points=quattro_points)
    return out


def public_event(line: dict[str, Any]) -> pb.Event | None:
    """The event every seat sees for a public record line, or None for a private one.

    ``deal`` lines hold every hand: they are private, and each seat gets its own
    ``HandDealt`` instead (see :func:`hand_event`).
    """
    kind = line["type"]
    if kind == "play":
        signal = line["signal"]
        return pb.Event(
            card_played=pb.CardPlayed(
                seat=line["seat"],
                card=line["card"],
                signal=_SIGNALS[signal] if signal else 0,  # type: ignore[arg-type]
            )
        )
    if kind == "trick":
        return pb.Event(trick_won=pb.TrickWon(trick=line["trick"], winner=line["winner"]))
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
    return None


def scored_event(line: dict[str, Any], hands: list[list[str]]) -> pb.Event:
    """A deal's score, with every hand as dealt, now public."""
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
