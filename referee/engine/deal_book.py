"""Deal books: given deals, one JSON line each, played in order instead of seeded deals.

A line is what ``tavolo deal --json`` prints: ``hands`` (by seat) and ``dealer``; the
``widow``, ``monte`` or ``stock`` where the game leaves cards undealt (the stock in draw
order, top first); the ``trump`` card with the briscola. ``game``, ``seed`` and ``deal``
may be there too: ``game`` must then name the rules' family, the others are ignored.

Every line is checked against the rules before anything is played: the number of hands,
each hand's card count, unknown and repeated cards, and that the 40 cards are all there.
The book is read from bytes here; the caller reads the file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from referee.engine.cards import CARD_NAMES, NUM_CARDS, CardError, CardSet, parse_card
from referee.engine.deals import Deal
from referee.engine.errors import FileLineError
from referee.engine.rules import Rules

_UNDEALT = ("widow", "monte", "stock")
"""What the families call the cards they leave undealt."""
"""How many cards each kind of ``Family.leftover`` holds."""
_KEYS = {"game", "seed", "deal", "dealer", "hands", "widow", "monte", "stock", "trump"}


class BookError(FileLineError):
    """A deal book line that is not a deal of the rules: names the file, line and problem."""


@dataclass(frozen=True)
class BookDeal:
    """One line of a book."""

    line: int
    """Its line number in the book, from 1."""
    dealer: int
    hands: tuple[CardSet, ...]
    undealt: CardSet
    """The widow or monte (a due: the stock's cards); 0 where all are dealt."""
    stock: tuple[int, ...] = ()
    """Tressette a due: the stock in draw order, top first."""
    trump: int = -1
    """The briscola's shown card, one of the dealer's; -1 without the briscola."""

    def deal(self, number: int) -> Deal:
        """This line as deal ``number`` of a game."""
        return Deal(
            "book", "", number, self.dealer, self.hands, self.undealt, self.trump, self.stock,
            self.line,
        )  # fmt: skip


@dataclass(frozen=True)
class DealBook:
    """A whole book, checked against one rule set."""

    source: str
    """The file it came from, for messages."""
    sha256: str
    """SHA-256 of the book's bytes, in hex: what a record header names."""
    deals: tuple[BookDeal, ...]

    def at(self, index: int) -> BookDeal:
        """The deal at position ``index`` from 0, going round to the first line after the last."""
        return self.deals[index % len(self.deals)]

    def source_from(self, start: int) -> Callable[[int, int], Deal]:
        """A game's ``deal_source``: its deal ``n`` (from 1) is the book's deal at ``start +
        n - 1``, with that line's own dealer."""

        def source(number: int, dealer: int) -> Deal:
            return self.at(start + number - 1).deal(number)

        return source


def book_digest(data: bytes) -> str:
    """SHA-256 of a book's bytes, in hex."""
    return hashlib.sha256(data).hexdigest()


def parse_book(data: bytes, rules: Rules, source: str) -> DealBook:
    """Every line of ``data`` as a deal of ``rules``; raise :class:`BookError` at the first
    line that is not one. Blank lines are refused too: a line number must mean a deal."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BookError(source, None, f"not UTF-8 text (byte {exc.start})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    if not lines:
        raise BookError(source, None, "the book has no deals")
    deals = tuple(
        _parse_line(line.removesuffix("\r"), number, rules, source)
        for number, line in enumerate(lines, start=1)
    )
    return DealBook(source, book_digest(data), deals)


def deal_line(deal: Deal, rules: Rules) -> dict[str, Any]:
    """A deal's book line, as ``tavolo deal --json`` prints it after ``game``, ``seed`` and
    ``deal``: seeded or given, any deal reads back as itself."""
    out: dict[str, Any] = {
        "dealer": deal.dealer,
        "hands": [_names(h) for h in deal.hands],
    }
    leftover = rules.family.leftover
    if leftover == "stock":
        out["stock"] = [CARD_NAMES[c] for c in deal.stock]
    elif leftover:
        out[leftover] = _names(deal.widow)
    if rules.briscola:
        out["trump"] = CARD_NAMES[deal.last_card]
    return out


def _names(cards: CardSet) -> list[str]:
    return [CARD_NAMES[c] for c in range(NUM_CARDS) if cards >> c & 1]


def _parse_line(text: str, number: int, rules: Rules, source: str) -> BookDeal:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BookError(source, number, f"not JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise BookError(source, number, "not a deal (JSON nested too deeply)") from None
    if not isinstance(obj, dict):
        raise BookError(source, number, "a deal must be a JSON object with 'hands' and 'dealer'")
    unknown = sorted(set(obj) - _KEYS)
    if unknown:
        raise BookError(
            source, number, f"unknown field {unknown[0]!r}; a deal has {', '.join(sorted(_KEYS))}"
        )
    return read_deal(obj, rules, number, source)


def read_deal(obj: dict[str, Any], rules: Rules, number: int, source: str) -> BookDeal:
    """The deal a book line's fields give (other fields are not looked at); raise
    :class:`BookError` for line ``number`` of ``source`` if it is not a deal of ``rules``."""

    def fail(message: str) -> BookError:
        return BookError(source, number, message)

    game = obj.get("game", rules.game)
    if game != rules.game:
        raise fail(f"a deal of {game!r}, but the game is {rules.game!r}")
    players = rules.players
    hands_field = obj.get("hands")
    if not isinstance(hands_field, list):
        raise fail("missing field 'hands' (a list of hands, one per seat)")
    if len(hands_field) != players:
        raise fail(f"{len(hands_field)} hands, but {rules.game} has {players} seats")
    dealer = obj.get("dealer")
    if not isinstance(dealer, int) or isinstance(dealer, bool) or not 0 <= dealer < players:
        raise fail(f"field 'dealer' must be a seat from 0 to {players - 1}, got {dealer!r}")
    seen: dict[int, str] = {}

    def cards(value: Any, where: str) -> list[int]:
        if not isinstance(value, list):
            raise fail(f"{where} must be a list of cards")
        out = []
        for item in value:
            try:
                card = parse_card(item) if isinstance(item, str) else None
            except CardError:
                card = None
            if card is None:
                raise fail(f"{where}: {item!r} is not a card (rank then suit, e.g. 3D)")
            if card in seen:
                raise fail(f"{CARD_NAMES[card]} is dealt twice: to {seen[card]} and to {where}")
            seen[card] = where
            out.append(card)
        return out

    # More seats than the deck can deal a hand each (Calabresella at four): the dealer sits out.
    sitting_out = dealer if players * rules.hand_size > NUM_CARDS else None
    held = [cards(value, f"seat {seat}") for seat, value in enumerate(hands_field)]
    field = rules.family.leftover
    seated = players - (sitting_out is not None)
    count = NUM_CARDS - rules.hand_size * seated  # what the family leaves undealt
    for other in _UNDEALT:
        if other != field and other in obj:
            raise fail(f"field {other!r} has no place in {rules.game}")
    if field and field not in obj:
        raise fail(f"missing field {field!r} ({count} cards)")
    left = cards(obj[field], field) if field else []
    # Counts are checked once every card is read, so a short hand names what is missing.
    missing = " ".join(CARD_NAMES[c] for c in range(NUM_CARDS) if c not in seen)
    why = f"; missing from the deal: {missing}" if missing else ""
    for seat, cards_held in enumerate(held):
        size = 0 if seat == sitting_out else rules.hand_size
        if len(cards_held) != size:
            out = " (the dealer sits out)" if seat == sitting_out else ""
            raise fail(f"seat {seat} holds {len(cards_held)} cards, not {size}{out}{why}")
    if len(left) != count:
        raise fail(f"field {field!r} holds {len(left)} cards, not {count}{why}")
    hands = [sum(1 << c for c in h) for h in held]
    undealt = sum(1 << c for c in left)
    stock = tuple(left) if field == "stock" else ()
    trump = -1
    if rules.briscola:
        shown = obj.get("trump")
        if not isinstance(shown, str):
            raise fail("missing field 'trump' (the briscola: one of the dealer's cards)")
        try:
            trump = parse_card(shown)
        except CardError:
            raise fail(f"field 'trump': {shown!r} is not a card") from None
        if not hands[dealer] >> trump & 1:
            raise fail(f"field 'trump' is {shown}, which the dealer (seat {dealer}) does not hold")
    elif rules.family.trump_under_stock and left:
        shown = obj.get("trump", CARD_NAMES[left[-1]])
        if shown != CARD_NAMES[left[-1]]:
            raise fail(f"field 'trump' must be the stock's last card, {CARD_NAMES[left[-1]]}")
    elif "trump" in obj:
        raise fail("field 'trump' has no place without the briscola")
    return BookDeal(number, dealer, tuple(hands), undealt, stock, trump)
