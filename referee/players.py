"""Players that run inside the referee's process (``--in-process``): the built-in ones, and
any bot of the Python SDK.

Each built-in player makes the decisions its bot process (``python -m
tavolo_bot.bots.<name>``, see :data:`referee.entries.BUILT_IN_BOTS`) makes when seeded
alike, so a match played in this process gives the record the same match over gRPC gives.
``random`` draws as the SDK's random bot draws, without building protocol messages (it only
needs the legal actions); ``heuristic`` *is* the SDK's heuristic bot, asked with the very
messages the referee would send it (:mod:`referee.protocol`, :class:`SdkPlayer`), so no
second heuristic exists to drift. Python bots of the SDK (:mod:`referee.python_players`)
are played the same way.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from referee.engine.codec import Action
from referee.engine.game_base import AnyGame
from referee.protocol import fill_decision
from tavolo_bot.bot import Bot
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.runner import action_id
from tavolo_bot.turn import Turn

ATTEMPTS = 3
"""Attempts the requests say; an in-process player never gets a second one."""


@dataclass(frozen=True)
class Decision:
    """One decision of one seat: the game as it stands, and what the seat may do."""

    state: AnyGame
    seat: int
    legal: tuple[Action, ...]
    game: int
    """The game's number in the match, from 1 (``GameStarted.game``)."""
    request_id: int
    """Counted over the match, from 1, as the referee counts its requests."""
    deadline_ms: int = 1000
    """The deadline its request says: the match's (``--deadline-ms``); nothing is timed
    in this process, but a player that sizes its thinking by it (pimc) does so here too."""


class Player(Protocol):
    """Chooses the actions of one slot: what one bot process of the match would play."""

    hears: bool
    """Whether it takes the protocol's events (:meth:`hear`); they are built only for
    players that do."""

    def start_game(self, game: int, seat: int) -> None:
        """Game ``game`` starts with this player at ``seat`` (``GameStarted``)."""
        ...

    def hear(self, event: pb.Event) -> None:
        """An event the referee would send this slot, in the order it would."""
        ...

    def act(self, decision: Decision) -> Action:
        """One of ``decision.legal`` (a match in this process stops at another:
        :class:`PlayerError`)."""
        ...


PlayerMaker = Callable[[str], Player]
"""Makes the player of one slot from the seed text its bot process would get
(``TAVOLO_SEED``)."""


class PlayerError(RuntimeError):
    """A player in this process raised, or chose an action that is not legal: the match
    stops there (over gRPC the referee would apply the match's fault policy instead)."""


class RandomPlayer:
    """A uniformly random legal action: ``tavolo_bot.bots.random`` without the protocol.

    Made from the bot's seed text (its ``TAVOLO_SEED``). Like the bot, each game started
    draws from a fresh generator seeded ``f"{seed}/game/{n}"`` (``tavolo_bot.game_seed``);
    before any game is started, from one seeded with ``seed`` itself.
    """

    hears = False

    def __init__(self, seed: str) -> None:
        self._seed = seed
        self._rng = random.Random(seed)

    def start_game(self, game: int, seat: int) -> None:
        """A fresh generator for the game, as the bot makes on ``GameStarted``."""
        self._rng = random.Random(f"{self._seed}/game/{game}")

    def hear(self, event: pb.Event) -> None:
        """Nothing to hear."""

    def act(self, decision: Decision) -> Action:
        """A uniform choice among the legal actions (``randrange``, as the bot draws)."""
        legal = decision.legal
        return legal[self._rng.randrange(len(legal))]


class SdkPlayer:
    """A bot of the Python SDK (a ``tavolo_bot.Bot``) played in this process.

    It hears the events and answers the ``DecisionRequest`` messages the referee would
    send its process, built by :mod:`referee.protocol` as the referee builds them.
    """

    hears = True

    def __init__(self, bot: Bot, seed: str) -> None:
        bot.seed = seed  # what the SDK's runner sets from TAVOLO_SEED, for one ticket
        self._bot = bot

    def start_game(self, game: int, seat: int) -> None:
        """``GameStarted``, as the referee sends it before the game's first event."""
        self.hear(pb.Event(game_started=pb.GameStarted(game=game, seat=seat)))

    def hear(self, event: pb.Event) -> None:
        """Pass the event to the bot (and ``on_match_over`` after ``MatchOver``)."""
        self._bot.on_event(event)
        if event.WhichOneof("event") == "match_over":
            self._bot.on_match_over()

    def act(self, decision: Decision) -> Action:
        """The action id the bot chooses for the request the referee would send (an int or
        an ``Action``, as the SDK's runner takes; anything else raises TypeError)."""
        turn = Turn(decision_request(decision))
        return action_id(self._bot.choose(turn), turn)


def decision_request(decision: Decision) -> pb.DecisionRequest:
    """The request the referee sends for ``decision`` (as ``Match`` fills it)."""
    request = pb.DecisionRequest(
        request_id=decision.request_id,
        deadline_ms=decision.deadline_ms,
        time_bank_ms=0,
        attempts_left=ATTEMPTS,
    )
    fill_decision(request, decision.state, decision.seat, decision.legal, decision.game)
    return request


def heuristic_player(seed: str) -> SdkPlayer:
    """``tavolo_bot.bots.heuristic``: deterministic, so ``seed`` changes nothing."""
    from tavolo_bot.bots.heuristic import HeuristicBot

    return SdkPlayer(HeuristicBot(), seed)


def pimc_player(seed: str) -> SdkPlayer:
    """``referee.bots.pimc`` with the knobs of this process's environment (its defaults
    where unset), seeded as its process would be."""
    from referee.bots.pimc import PimcBot, knobs

    worlds, ms = knobs([], os.environ)
    return SdkPlayer(PimcBot(worlds, ms), seed)


BUILT_IN: dict[str, PlayerMaker] = {
    "random": RandomPlayer,
    "heuristic": heuristic_player,
    "pimc": pimc_player,
}
"""Built-in players by entry name (those of ``BUILT_IN_BOTS``); each is made from the
seed text its bot process would get as ``TAVOLO_SEED``."""


class UnknownPlayerError(ValueError):
    """An entry no player in this process can play: a name that is no built-in player, bad
    knobs, or a ``py:`` entry whose bot cannot be imported."""


def check_player(name: str) -> None:
    """Raise :class:`UnknownPlayerError` unless ``name`` is a built-in player whose knobs
    (pimc's, from the environment) are good."""
    if name not in BUILT_IN:
        raise UnknownPlayerError(
            f"unknown built-in player {name!r}; built-in players are {', '.join(BUILT_IN)} "
            "(--in-process plays built-in players and py: entries only)"
        )
    if name == "pimc":
        from referee.bots.pimc import PimcConfigError, knobs

        try:
            knobs([], os.environ)
        except PimcConfigError as exc:
            raise UnknownPlayerError(f"built-in player pimc: {exc}") from None


def make_player(name: str, seed: str) -> Player:
    """The built-in player ``name``, seeded with ``seed``."""
    check_player(name)
    return BUILT_IN[name](seed)
