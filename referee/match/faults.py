"""The fault policy: what a seat's timeout, illegal actions, crash or lost stream costs."""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
import random
from enum import StrEnum
from typing import TYPE_CHECKING

from referee.engine.game_base import AnyGame, Termination
from tavolo_bot.proto import referee_pb2 as pb

if TYPE_CHECKING:
    # Only a type: the match's value types (config, results) load no grpc through here.
    from referee.match.slots import Slot


class FaultPolicy(StrEnum):
    """What happens when a seat times out, runs out of attempts, crashes or disconnects."""

    FORFEIT = "forfeit"
    """The seat's side loses the game; the reason is recorded."""
    RANDOM = "random"
    """The referee plays a random legal action for the seat and the game goes on."""


FAULT_INCIDENTS = frozenset({"never_connected", "flood"})
"""Slot incidents that are faults: the record says who and where, as for a forfeit."""


def at_place(detail: str, where: str) -> str:
    """``detail`` with ``where`` in parentheses after its first clause: ``never connected
    (entry 'x', seat 1, game 2, deal 1): exit status 3; ...``."""
    cuts = [i for i in (detail.find(": "), detail.find("; ")) if i >= 0]
    cut = min(cuts) if cuts else len(detail)
    return f"{detail[:cut]} ({where}){detail[cut:]}"


def apply_fault(
    policy: FaultPolicy,
    state: AnyGame,
    seat: int,
    slot: Slot,
    rng: random.Random,
    termination: Termination,
    detail: str,
    where: str,
) -> None:
    """Apply ``policy`` to ``seat``'s fault: the bot hears ``detail``, and the record says
    it with ``where`` (who and where); a random action needs the slot still connected."""
    told = pb.Event(error=pb.ErrorEvent(reason=termination.value, message=detail))
    recorded = at_place(detail, where)
    if policy is FaultPolicy.RANDOM and slot.connected:
        action = rng.choice(state.legal_actions())
        state.note_incident(seat, termination.value, recorded + "; the referee played at random")
        slot.tell(told)
        state.apply_action(action)
        return
    slot.tell(told)
    state.forfeit(seat, termination, recorded)
