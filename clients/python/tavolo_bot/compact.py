"""Compact observations (``Observation.compact``) made complete again, per stream.

The SDK asks for them (``Hello.compact_observations``): a compact observation carries
only the tricks, declarations, draws and Calabresella bids added since the stream's
previous request, so the referee builds and sends less. A bot never sees one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from google.protobuf.internal.containers import RepeatedCompositeFieldContainer
from google.protobuf.message import Message

from tavolo_bot.proto import referee_pb2 as pb

M = TypeVar("M", bound=Message)


class CompactError(ValueError):
    """A compact observation with nothing it can follow on its stream: the referee's fault."""


class Merger:
    """One stream's last complete observation, which the next compact one follows."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: pb.Observation | None = None

    def reset(self) -> None:
        """A new stream: the next observation must be complete."""
        self._last = None

    def complete(self, observation: pb.Observation) -> None:
        """Make ``observation`` complete in place (``compact`` false) and keep it as the
        one the next follows; CompactError if it is compact but nothing came before."""
        if observation.compact:
            last = self._last
            if last is None:
                raise CompactError(
                    "the referee sent a compact observation as the first of this stream"
                )
            if (last.game, last.deal) != (observation.game, observation.deal):
                raise CompactError(
                    f"the referee sent a compact observation of game {observation.game} "
                    f"deal {observation.deal} after one of game {last.game} deal {last.deal}"
                )
            _prepend(observation.tricks, last.tricks)
            _prepend(observation.declarations, last.declarations)
            _prepend(observation.draws, last.draws)
            if observation.HasField("calabresella"):
                _prepend(observation.calabresella.bids, last.calabresella.bids)
            observation.compact = False
        self._last = observation


def _prepend(items: RepeatedCompositeFieldContainer[M], before: Iterable[M]) -> None:
    """Put ``before``'s messages ahead of those of ``items``."""
    earlier = list(before)
    if not earlier:
        return
    new = list(items)
    del items[:]
    items.extend(earlier)
    items.extend(new)
