"""Declarations (accuso): napoli, buon gioco (tre) and quattro.

Declaration ids:

- ``0..3``: ``napoli-D`` .. ``napoli-B``, the 3, 2 and ace of one suit;
- ``4 + 4*r + s``: ``tre-R-noS``, three of rank R (3, 2 or A), every suit but S;
- ``16 + r``: ``quattro-R``, all four of rank R.

A player holding all four of a rank may declare only the quattro: a ``tre`` names
the missing suit, and that would be false.
"""

from __future__ import annotations

from referee.engine.cards import RANK_SYMBOLS, SUIT_SYMBOLS, CardSet, make_card

NAPOLI, TRE, QUATTRO = "napoli", "tre", "quattro"
NUM_DECLARATIONS = 19


class DeclarationError(ValueError):
    """Text that names no declaration."""


def _build() -> tuple[tuple[str, ...], tuple[str, ...], tuple[CardSet, ...]]:
    names: list[str] = []
    kinds: list[str] = []
    masks: list[CardSet] = []
    for s in range(4):
        names.append(f"napoli-{SUIT_SYMBOLS[s]}")
        kinds.append(NAPOLI)
        masks.append(sum(1 << make_card(r, s) for r in range(3)))
    for r in range(3):
        for s in range(4):
            names.append(f"tre-{RANK_SYMBOLS[r]}-no{SUIT_SYMBOLS[s]}")
            kinds.append(TRE)
            masks.append(sum(1 << make_card(r, t) for t in range(4) if t != s))
    for r in range(3):
        names.append(f"quattro-{RANK_SYMBOLS[r]}")
        kinds.append(QUATTRO)
        masks.append(sum(1 << make_card(r, t) for t in range(4)))
    return tuple(names), tuple(kinds), tuple(masks)


DECLARATION_NAMES, DECLARATION_KINDS, DECLARATION_CARDS = _build()
"""Per declaration id: its text, its kind and the cards it shows."""

_IDS = {name.lower(): i for i, name in enumerate(DECLARATION_NAMES)}


def honours_key(hand: CardSet) -> int:
    """The 12 bits of the 3s, 2s and aces in a hand, three per suit."""
    return (hand & 7) | ((hand >> 7) & 0x38) | ((hand >> 14) & 0x1C0) | ((hand >> 21) & 0xE00)


def _held(key: int) -> tuple[int, ...]:
    hand = (key & 7) | ((key & 0x38) << 7) | ((key & 0x1C0) << 14) | ((key & 0xE00) << 21)
    out = [d for d in range(4) if hand & DECLARATION_CARDS[d] == DECLARATION_CARDS[d]]
    for r in range(3):
        quattro = 16 + r
        if hand & DECLARATION_CARDS[quattro] == DECLARATION_CARDS[quattro]:
            out.append(quattro)
            continue
        out.extend(
            4 + 4 * r + s
            for s in range(4)
            if hand & DECLARATION_CARDS[4 + 4 * r + s] == DECLARATION_CARDS[4 + 4 * r + s]
        )
    return tuple(out)


HELD: tuple[tuple[int, ...], ...] = tuple(_held(k) for k in range(1 << 12))
"""``HELD[honours_key(hand)]``: the declaration ids a hand may truthfully make."""


def held_declarations(hand: CardSet) -> tuple[int, ...]:
    """Every combination a hand may declare, napoli first."""
    return HELD[honours_key(hand)]


def declaration_points(declaration: int, quattro_points: int) -> int:
    """Game points a declaration is worth."""
    return quattro_points if DECLARATION_KINDS[declaration] == QUATTRO else 3


def parse_declaration(text: str) -> int:
    """The declaration id of a text such as ``napoli-D`` or ``tre-A-noS``."""
    try:
        return _IDS[text.lower()]
    except KeyError:
        raise DeclarationError(
            f"bad declaration {text!r}; write napoli-<suit>, tre-<3|2|A>-no<suit> "
            "or quattro-<3|2|A>, e.g. napoli-D, tre-A-noS, quattro-3"
        ) from None
