"""The registry of game families: each family registers itself here once, and everything
else looks it up here.

A family is the code that plays a game: its seats and sides, its hand, how its deals are
dealt from a seed, its game class, the codec of its action ids, its presets, and how the
protocol and the records show it. Each lives in a package of its own under
``referee/families/`` whose ``__init__`` calls :func:`register`. This module imports
nothing of the engine at run time, so every engine module may import it: the family
packages are found (``referee.families``) the first time a family is looked up, as
plugins are.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from referee.engine.errors import RulesError

if TYPE_CHECKING:
    from referee.engine.codec import ActionCodec
    from referee.engine.deal_book import DealBook
    from referee.engine.deals import Deal
    from referee.engine.game_base import AnyGame, DealSource
    from referee.engine.rules import Rules


class UnknownFamilyError(KeyError):
    """No family of that name is registered."""


@dataclass(frozen=True)
class Family:
    """Everything that makes a game family what it is."""

    name: str
    """``Rules.game``; the deal generator hashes it, so it never changes."""
    players: Callable[[Rules], int]
    """Seats at the table, for these rules."""
    partnerships: bool
    """Whether seats play in two sides of two (0+2, 1+3); else each seat is its own side."""
    lower_wins: bool
    """Whether points count against (ciapanò): the lowest total wins."""
    hand_size: int
    """Cards dealt to each seat that plays a deal."""
    codec: ActionCodec
    """How its action ids are read and written."""
    kinds: tuple[str, ...]
    """The kinds of action its deals ask for, in the order they first come."""
    deal_class: type[Any]
    """One deal: ``deal_class(rules, hands, dealer, ...)``."""
    deal: Callable[[Rules, str, int, int], Deal]
    """``(rules, seed, number, dealer)``: deal ``number``'s cards by seat, as the game deals."""
    deal_deck: Callable[[Rules, Sequence[int], int, int], Deal]
    """``(rules, deck, number, dealer)``: the same deal from a given order of the 40 cards
    instead of the seed's shuffle (``shuffled_deck``), e.g. one dealt card by card."""
    game: Callable[..., AnyGame]
    """The game class: ``game(rules, seed, deals=, seats=, record=, deal_source=, book=,
    book_start=)``."""
    leftover: str = ""
    """What the cards left undealt are called: tressette a tre's ``widow``, the ``monte``,
    the ``stock`` of tressette a due; empty where every card is dealt."""
    check: Callable[[Rules], str | None] | None = None
    """What the family's own rules refuse of the knobs, as an error text; None: all well."""
    presets: Mapping[str, Rules] = field(default_factory=dict)
    """Its named rule sets, in the order help lists them."""
    trump_under_stock: bool = False
    """Whether the stock's last card is turned up for trump (Briscola): a deal line names it
    as ``trump``, and it is drawn last."""
    warm_up: Callable[[Rules], object] | None = None
    """Builds what its deals look up (tables of the rules), so that a referee can do so
    once, before play, and freeze it for the garbage collector."""
    package: str = ""
    """The module name of its package, whose ``adapters`` module says how the protocol and
    the records show its games (read by the referee, never by the engine)."""


_FAMILIES: dict[str, Family] = {}
_PRESETS: dict[str, Rules] = {}
_FAMILY_PACKAGES = "referee.families"


def register(*families: Family) -> None:
    """Add families (a package's, in the order help lists them) and their presets."""
    for fam in families:
        if fam.name in _FAMILIES:
            raise ValueError(f"family {fam.name!r} is registered twice")
        if not fam.package:
            raise ValueError(f"family {fam.name!r} names no package")
        for name, rules in fam.presets.items():
            if name in _PRESETS:
                raise ValueError(f"preset {name!r} is registered twice")
            if rules.game != fam.name:
                raise ValueError(f"preset {name!r} plays {rules.game!r}, not {fam.name!r}")
        _FAMILIES[fam.name] = fam
        _PRESETS.update(fam.presets)


def _loaded() -> dict[str, Family]:
    if not _FAMILIES:
        importlib.import_module(_FAMILY_PACKAGES)
    return _FAMILIES


def families() -> Mapping[str, Family]:
    """Every family, by name."""
    return _loaded()


def family(name: str) -> Family:
    """The family named ``name``; :class:`UnknownFamilyError` for no such family."""
    try:
        return _loaded()[name]
    except KeyError:
        raise UnknownFamilyError(name) from None


def presets() -> Mapping[str, Rules]:
    """Every preset, by name: each family's, in the families' order."""
    _loaded()
    return _PRESETS


def preset(name: str) -> Rules:
    """The rule set of a preset name; raises ``RulesError`` naming the choices."""
    try:
        return presets()[name]
    except KeyError:
        raise RulesError(f"unknown game {name!r}; choose one of {', '.join(_PRESETS)}") from None


def new_game(
    rules: Rules,
    seed: str,
    *,
    deals: int | None = None,
    seats: Sequence[str] | None = None,
    record: bool = False,
    deal_source: DealSource | None = None,
    book: DealBook | None = None,
    book_start: int = 0,
) -> AnyGame:
    """A new game of ``rules.game`` (see :class:`~referee.engine.game_base.GameBase`)."""
    return family(rules.game).game(
        rules,
        seed,
        deals=deals,
        seats=seats,
        record=record,
        deal_source=deal_source,
        book=book,
        book_start=book_start,
    )
