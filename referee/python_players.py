"""Python bots as players in this process: a function of the SDK's ``Turn``, or an SDK bot.

A Python object plays as :func:`tavolo_bot.bot.bot_factory` says (the same rule the SDK's
``py:`` runner follows in a bot process), and each of its slots is an
:class:`~referee.players.SdkPlayer` of a fresh bot: it hears the events and answers the
``DecisionRequest`` messages the referee would send that process, built by
:mod:`referee.protocol`. :func:`imported_bot` imports a ``py:`` entry's bot here.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
from collections.abc import Callable
from dataclasses import dataclass

from referee.entries import EntryError, PythonTarget, check_name
from referee.players import PlayerMaker, SdkPlayer, UnknownPlayerError
from tavolo_bot.bot import Bot, bot_factory
from tavolo_bot.py_entry import TargetError, load

BotFactory = Callable[[], Bot]


@dataclass(frozen=True)
class PythonEntry:
    """A Python bot as an entry of a match played in this process."""

    name: str
    """Its name in the match: the seats of the record, and the seed of each of its slots."""
    make: BotFactory
    """Makes a fresh bot, one per slot, as over gRPC each slot is a process of its own."""


def python_entry(bot: object, name: str | None = None) -> PythonEntry:
    """``bot`` as an entry named ``name`` (by default the function's or class's name, or an
    instance's class name): a function of the ``Turn``, a ``Bot`` subclass or instance, or a
    function that makes a ``Bot`` (:func:`tavolo_bot.bot.bot_factory`).

    EntryError, naming the entry, for anything else or a bad name.
    """
    if name is None:
        name = str(getattr(bot, "__name__", None) or type(bot).__name__)
    where = f"entry {name!r}"
    check_name(name, where)
    try:
        return PythonEntry(name, bot_factory(bot))
    except TypeError as exc:
        raise EntryError(f"{where}: {exc}") from None


def bot_player(make: BotFactory) -> PlayerMaker:
    """The players of a bot made by ``make``: a fresh bot for each slot, seeded as its bot
    process would be."""
    return lambda seed: SdkPlayer(make(), seed)


def imported_bot(name: str, target: PythonTarget) -> BotFactory:
    """The bot of the ``py:`` entry ``name``, its module imported in this process from its
    folders (put first on ``sys.path``, where they stay), as the SDK's runner imports it.

    UnknownPlayerError, naming the entry, if it cannot be: the exception the module's own
    code raised as it was imported is its cause.
    """
    where = f"entry {name!r} (py:{target.module}:{target.name})"
    try:
        return load(target.module, target.name, target.roots)
    except TargetError as exc:
        raise UnknownPlayerError(f"{where}: {exc}") from None
    except Exception as exc:
        raise UnknownPlayerError(
            f"{where}: importing {target.module} raised {type(exc).__name__}: {exc}"
        ) from exc
