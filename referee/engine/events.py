"""The engine's events: what happened in a game, as frozen values.

A game's ``events`` are these, in order; each one's :meth:`Event.line` is its record line
(``docs/records.md``), with the keys in the order the record writes them. The events every
family shares are here; a family's own (a declaration, a bid, its deal and its score) are in
its package's ``events`` module. The match and the in-process player turn them into
protocol events in one place (``referee.protocol.heard``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

Cards = tuple[str, ...]
"""Card names, e.g. ``("3D", "QB")``."""


@dataclass(frozen=True, slots=True)
class Event:
    """One event of a game. Sequences are tuples, so that nothing can change one."""

    TYPE: ClassVar[str] = ""
    """The record line's ``type``."""
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()
    """Fields left out of the line while they are None."""
    KEEPS_TEXT: ClassVar[bool] = False
    """Whether :meth:`text` is kept for each value: for the classes of a few hundred values
    that make most of a record."""

    def line(self) -> dict[str, Any]:
        """The record line: ``type``, then the fields in order (lists for tuples)."""
        cls = type(self)
        write = _LINES.get(cls) or _line_writer(cls)
        return write(self)

    def text(self) -> str:
        """The record line's canonical text (:func:`line_text`), without a think time."""
        if not self.KEEPS_TEXT:
            return line_text(self.line())
        text = _TEXTS.get(self)
        if text is None:
            text = _TEXTS[self] = line_text(self.line())
        return text


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""What ``json.dumps(line, separators=(",", ":"), ensure_ascii=False)`` makes anew on each
call."""


_TEXTS: dict[Event, str] = {}


def line_text(line: dict[str, Any]) -> str:
    """The canonical text of one record line, without the newline (``docs/records.md``)."""
    return _ENCODER.encode(line)


def _plain(value: Any) -> Any:
    if type(value) is str:  # most values are card names: no ABC check for them
        return value
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


_SCALARS = frozenset({"int", "str", "bool", "int | None", "str | None", "bool | None"})
"""Field annotations whose values go into a line as they are."""

_LINES: dict[type[Event], Callable[[Event], dict[str, Any]]] = {}


def _line_writer(cls: type[Event]) -> Callable[[Event], dict[str, Any]]:
    """The function that writes ``cls``'s lines, made once per class (as ``dataclasses``
    makes ``__init__``): every record line of a match goes through one."""
    always, body = [f'"type": {cls.TYPE!r}'], []
    for f in dataclasses.fields(cls):
        value = f"e.{f.name}" if f.type in _SCALARS else f"plain(e.{f.name})"
        if f.name in cls.OPTIONAL:
            body.append(f"    if e.{f.name} is not None: out[{f.name!r}] = {value}")
        elif body:  # keys keep their order: after an optional one, each is added in turn
            body.append(f"    out[{f.name!r}] = {value}")
        else:
            always.append(f"{f.name!r}: {value}")
    source = "\n".join(
        ["def line(e):", f"    out = {{{', '.join(always)}}}", *body, "    return out"]
    )
    scope: dict[str, Any] = {"plain": _plain}
    # The source holds only our own classes' field names (identifiers) and TYPE (a repr).
    exec(source, scope)
    write: Callable[[Event], dict[str, Any]] = scope["line"]
    _LINES[cls] = write
    return write


def frozen(value: Any) -> Any:
    """``value`` (read from JSON, or a fresh dict) with every list a tuple and every dict a
    read-only view: for an event's fields."""
    if isinstance(value, list | tuple):
        return tuple(frozen(v) for v in value)
    if isinstance(value, Mapping):
        return MappingProxyType({k: frozen(v) for k, v in value.items()})
    return value


# -- the events of every family ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameBegun(Event):
    """A game's header: its rules, seed and seats; where its deals came from; what each
    seat's bot ran under (the match adds that)."""

    TYPE: ClassVar[str] = "game"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"book", "sandbox"})
    format: str
    game: str
    rules: Mapping[str, Any]
    seed: str
    deals: int | None
    seats: Cards | None
    book: Mapping[str, Any] | None = None
    """The deal book's ``sha256`` and the game's first deal in it (``start``), if dealt from one."""
    sandbox: tuple[str, ...] | None = None
    """By seat, the sandbox its bot ran in: a fact of the match, not of the game."""


@dataclass(frozen=True, slots=True)
class Dealt(Event):
    """A deal's cards: every hand, so private to the record. A family adds what else it
    deals (a stock, a widow, a trump) in its own subclass."""

    TYPE: ClassVar[str] = "deal"
    deal: int
    dealer: int
    hands: tuple[Cards, ...]


@dataclass(frozen=True, slots=True)
class Played(Event):
    """A card played, with its signal (None in families without signals)."""

    TYPE: ClassVar[str] = "play"
    KEEPS_TEXT: ClassVar[bool] = True
    seat: int
    card: str
    signal: str | None = None


@dataclass(frozen=True, slots=True)
class TrickTaken(Event):
    """Trick ``trick`` (from 1) of the deal was won by ``winner``."""

    TYPE: ClassVar[str] = "trick"
    KEEPS_TEXT: ClassVar[bool] = True
    trick: int
    winner: int


@dataclass(frozen=True, slots=True)
class Drew(Event):
    """``seat`` drew ``card`` from the stock (shown to the table or not, as its family says)."""

    TYPE: ClassVar[str] = "draw"
    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class DealOver(Event):
    """Deal ``deal`` is over: scored, or (Calabresella) dealt again."""

    deal: int


@dataclass(frozen=True, slots=True)
class Scored(DealOver):
    """A deal's score; each family's subclass has its fields, ``points`` (this deal's, by
    side) and ``totals`` (the game's so far) among them."""

    TYPE: ClassVar[str] = "score"

    @property
    def points(self) -> tuple[int, ...]:
        """This deal's points, by side (a field of each family's subclass)."""
        raise NotImplementedError

    @property
    def totals(self) -> tuple[int, ...]:
        """The game's totals after this deal (a field of each family's subclass)."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Forfeited(Event):
    """The game ended here: ``seat``'s side lost for ``reason`` (a termination's value)."""

    TYPE: ClassVar[str] = "forfeit"
    seat: int
    reason: str
    detail: str


@dataclass(frozen=True, slots=True)
class Rejected(Event):
    """``seat`` answered with an action the rules refused, for ``reason``."""

    TYPE: ClassVar[str] = "rejected"
    seat: int
    action_id: int
    reason: str


@dataclass(frozen=True, slots=True)
class Incident(Event):
    """Something the referee saw ``seat`` do outside the rules' actions."""

    TYPE: ClassVar[str] = "incident"
    seat: int
    kind: str
    detail: str


@dataclass(frozen=True, slots=True)
class Ended(Event):
    """The game's result: how it ended, the winning side (None: a draw), the totals."""

    TYPE: ClassVar[str] = "result"
    termination: str
    winner: int | None
    totals: tuple[int, ...]
    deals: int


@functools.cache
def played(seat: int, card: str, signal: str | None = None) -> Played:
    """The play of ``card`` by ``seat``: made once and shared, as values may be (a match
    makes tens of thousands, of a few hundred kinds)."""
    return Played(seat, card, signal)


@functools.cache
def trick_taken(trick: int, winner: int) -> TrickTaken:
    """Trick ``trick`` won by ``winner``, made once and shared."""
    return TrickTaken(trick, winner)
