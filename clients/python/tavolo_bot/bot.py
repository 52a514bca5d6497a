"""The class a bot author subclasses, what a Python object plays as, and the seed texts the
SDK gives every stream."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable

from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.turn import Turn


def stream_seed(seed: str, ticket: str, index: int = 0, count: int = 1) -> str:
    """The seed text of stream ``index`` (from 0) of ``count``: what :attr:`Bot.seed` holds.

    ``seed`` is ``TAVOLO_SEED`` (:attr:`Settings.seed <tavolo_bot.Settings.seed>`); empty
    means unset, and then the stream's own ticket is the seed. With several tickets,
    ``f"/{index}"`` is appended, so no two streams of a process share a seed.
    """
    text = seed or ticket
    return f"{text}/{index}" if count > 1 else text


def game_seed(seed: str, game: int) -> str:
    """The seed text of game ``game`` (``GameStarted.game``) of a stream seeded ``seed``.

    ``f"{seed}/game/{game}"``: seeding each game afresh from it makes a match resumed at a
    later game (by a new process) play that game exactly as an uninterrupted run would.
    """
    return f"{seed}/game/{game}"


class Bot:
    """A player for one ticket: implement :meth:`choose`; the hooks are optional.

    :func:`tavolo_bot.run` makes one instance per ticket, so instance attributes are
    per-stream state. It sets ``ticket``, ``stream_index``, ``stream_count`` and ``seed``
    before the first hook is called (after ``__init__``).
    """

    ticket: str = ""
    """The ticket this instance plays (a secret: do not print it)."""
    stream_index: int = 0
    """Position of the ticket in the ticket list, from 0."""
    stream_count: int = 1
    """How many tickets this process plays."""
    seed: str = ""
    """This stream's seed text for any randomness: ``TAVOLO_SEED``, or the ticket when that
    is unset, with ``f"/{stream_index}"`` appended when the process plays several tickets
    (:func:`stream_seed`)."""

    def game_seed(self, game: int) -> str:
        """The seed text of game ``game`` of this stream: ``f"{self.seed}/game/{game}"``.

        Seed a fresh generator with it when ``GameStarted`` arrives (``event.game_started
        .game``), and a resumed match replays the game exactly.
        """
        return game_seed(self.seed, game)

    def choose(self, turn: Turn) -> int | pb.Action:
        """The id of one of ``turn.legal`` (or that ``Action`` itself)."""
        raise NotImplementedError(f"{type(self).__name__} must implement choose(self, turn)")

    def on_event(self, event: pb.Event) -> None:
        """Called for every event the referee sends, in order, before any request that follows."""

    def on_match_over(self) -> None:
        """Called once, right after the ``MatchOver`` event."""


BotFunction = Callable[[Turn], int | pb.Action]
"""A bot that is one function: ``choose`` without the class."""


class FunctionBot(Bot):
    """A bot that is one function of the :class:`Turn`: ``choose`` asks it; it hears nothing."""

    def __init__(self, function: BotFunction) -> None:
        self.function = function

    def choose(self, turn: Turn) -> int | pb.Action:
        """What the function returns for ``turn``."""
        return self.function(turn)


def bot_factory(target: object) -> Callable[[], Bot]:
    """What ``target`` plays as: a callable that makes a fresh bot of it each time.

    - a :class:`Bot` subclass: the class itself (it must take no arguments);
    - a :class:`Bot` instance: a copy of it (``copy.deepcopy``), so every stream starts
      from the bot as it is;
    - a function of one argument: ``choose`` itself, given the :class:`Turn`
      (:class:`FunctionBot`);
    - a function of none: a factory, whose every result must be a :class:`Bot`.

    TypeError, saying what ``target`` is, for anything else.
    """
    if isinstance(target, Bot):
        return lambda: copy.deepcopy(target)
    if isinstance(target, type):
        if not issubclass(target, Bot):
            raise TypeError(f"class {target.__name__} is not a tavolo_bot.Bot subclass")
        needed = _required(target)
        if needed:
            raise TypeError(
                f"class {target.__name__} needs {needed} argument(s) to be made; "
                "give a function that makes the bot instead"
            )
        return target
    if not callable(target):
        raise TypeError(
            f"{type(target).__name__} is not a bot: give a tavolo_bot.Bot subclass or "
            "instance, a function of the Turn, or a function that makes a Bot"
        )
    needed = _required(target)
    if needed == 1:
        return lambda: FunctionBot(target)
    if needed == 0:

        def make() -> Bot:
            bot = target()
            if not isinstance(bot, Bot):
                raise TypeError(
                    f"{_name(target)}() made a {type(bot).__name__}, not a tavolo_bot.Bot"
                )
            return bot

        return make
    takes = "arguments it cannot be given" if needed is None else f"{needed} arguments"
    raise TypeError(
        f"{_name(target)} takes {takes}: a bot function takes one (the Turn), "
        "a function that makes a bot none"
    )


def _required(function: Callable[..., object]) -> int | None:
    """How many arguments ``function`` must be given; None when it needs a keyword or its
    signature cannot be read."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    needed = [p for p in parameters if p.default is p.empty]
    if any(p.kind is p.KEYWORD_ONLY for p in needed):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in needed)


def _name(target: object) -> str:
    return str(getattr(target, "__qualname__", None) or type(target).__name__)
