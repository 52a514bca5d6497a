"""Seeded deals that any language can reproduce (see ``docs/deals.md``).

A SHA-512 counter-mode stream of (game, seed text, deal number) gives 32-bit words;
rejection sampling turns them into unbiased integers, which drive a Fisher–Yates
shuffle of the deck in card-id order. The stream of deal number 0 draws the first dealer.
"""

from __future__ import annotations

import functools
import hashlib
import operator
import struct
from collections.abc import Sequence
from typing import Any, NamedTuple

from referee.engine.cards import NUM_CARDS, Card, CardSet

DOMAIN = b"tavolo-deal-v1"
_WORDS = struct.Struct(">16I")
_SPAN = 1 << 32


class SeedError(ValueError):
    """A seed that is not text UTF-8 can encode."""


def check_seed(seed: str) -> str:
    """The seed, if UTF-8 can encode it; else :class:`SeedError`."""
    if not isinstance(seed, str):
        raise SeedError(f"a seed must be text, got {type(seed).__name__}")
    try:
        seed.encode("utf-8")
    except UnicodeEncodeError:
        raise SeedError(
            f"seed {seed!r} is not valid Unicode text (UTF-8 cannot encode it)"
        ) from None
    return seed


COMMITMENT_DOMAIN = b"tavolo-seed-commitment-v1\x00"


def seed_commitment(seed: str) -> str:
    """SHA-256 of the domain and the seed's UTF-8, in hex: publish it before play, the seed after.

    It binds the organiser to the seed without showing it, if the seed cannot be guessed.
    """
    return hashlib.sha256(COMMITMENT_DOMAIN + check_seed(seed).encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=64)
def _stream_prefix(game: str, seed: str) -> bytes:
    return b"\x00".join((DOMAIN, game.encode(), check_seed(seed).encode(), b""))


class WordStream:
    """The 32-bit words of SHA-512(DOMAIN 0 game 0 seed 0 deal 0 counter64) for counter 0, 1, …"""

    __slots__ = ("_base", "_counter", "words")

    def __init__(self, game: str, seed: str, deal: int, blocks: int = 1) -> None:
        prefix = _stream_prefix(game, seed) + str(deal).encode() + b"\x00"
        self._base = hashlib.sha512(prefix)
        self._counter = 0
        self.words: list[int] = []
        for _ in range(blocks):
            self.extend()

    def extend(self) -> None:
        """Append the next block's sixteen words to ``words``."""
        block = self._base.copy()
        block.update(self._counter.to_bytes(8, "big"))
        self._counter += 1
        self.words.extend(_WORDS.unpack(block.digest()))

    def below(self, n: int, position: int) -> tuple[int, int]:
        """An unbiased integer in ``[0, n)`` from words at ``position`` on, and the next position.

        Words at or above the largest multiple of ``n`` below 2**32 are skipped.
        """
        limit = _SPAN - _SPAN % n
        words = self.words
        while True:
            if position == len(words):
                self.extend()
            word = words[position]
            position += 1
            if word < limit:
                return word % n, position


_sha512 = hashlib.sha512
_COUNTERS = tuple(c.to_bytes(8, "big") for c in range(3))
_SWAP_POSITIONS = tuple(range(NUM_CARDS - 1, 0, -1))
_DRAW_SPANS = tuple(i + 1 for i in _SWAP_POSITIONS)
_LOWEST_LIMIT = min(_SPAN - _SPAN % n for n in _DRAW_SPANS)


def _draws(game: str, seed: str, deal: int) -> list[int]:
    """The 39 Fisher–Yates draws of a deal: for i from 39 down to 1, j in ``[0, i]``."""
    prefix = _stream_prefix(game, seed) + str(deal).encode() + b"\x00"
    words = [
        *_WORDS.unpack(_sha512(prefix + _COUNTERS[0]).digest()),
        *_WORDS.unpack(_sha512(prefix + _COUNTERS[1]).digest()),
        *_WORDS.unpack(_sha512(prefix + _COUNTERS[2]).digest()),
    ]
    if max(words) < _LOWEST_LIMIT:
        # No word is rejected (each is with p < 1e-8): the 39 draws are the first 39 words.
        draws = list(map(operator.mod, words, _DRAW_SPANS))
    else:
        stream = WordStream(game, seed, deal)
        draws = []
        position = 0
        for n in _DRAW_SPANS:
            j, position = stream.below(n, position)
            draws.append(j)
    return draws


def shuffled_deck(game: str, seed: str, deal: int) -> list[int]:
    """The deck of deal ``deal`` after a Fisher–Yates shuffle from the seeded stream.

    The deck starts in card-id order; for i from 39 down to 1, j is drawn in ``[0, i]``
    and the cards at positions i and j swap.
    """
    deck = list(range(NUM_CARDS))
    for i, j in zip(_SWAP_POSITIONS, _draws(game, seed, deal), strict=True):
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def first_dealer(game: str, seed: str, players: int) -> int:
    """The dealer of deal 1, drawn from the stream of deal number 0."""
    return WordStream(game, seed, 0).below(players, 0)[0]


class Deal(NamedTuple):
    """The cards of one deal."""

    game: str
    seed: str
    number: int
    """Deal number, from 1."""
    dealer: int
    hands: tuple[CardSet, ...]
    """Each seat's cards, by seat."""
    widow: CardSet
    """Cards left undealt (tressette a tre), else 0."""
    last_card: int = -1
    """The card dealt last (four seats: the dealer's last card, the briscola's trump)."""
    stock: tuple[int, ...] = ()
    """Two seats: the undealt cards in draw order, top first (the widow's cards)."""
    book_line: int = 0
    """The deal book line it came from (``referee.engine.deal_book``); 0 for a seeded deal."""


def deal_cards(game: str, seed: str, number: int, dealer: int, players: int) -> Deal:
    """Deal ``number``'s cards in packets, starting with the seat after ``dealer``.

    Four seats get two packets of 5; three seats get three packets of 4 and the last
    4 cards of the deck are the widow; two seats get two packets of 5 and the last 20
    cards are the stock (its order is ``shuffled_deck``'s).
    """
    # The same shuffle as shuffled_deck, on the cards' bits, so a hand is a plain sum.
    deck = list(_BITS)
    for i, j in zip(_SWAP_POSITIONS, _draws(game, seed, number), strict=True):
        deck[i], deck[j] = deck[j], deck[i]
    return _in_packets(game, seed, number, dealer, players, deck)


def deal_deck(game: str, deck: Sequence[Card], number: int, dealer: int, players: int) -> Deal:
    """:func:`deal_cards`' packets from ``deck``, a given order of the 40 cards, instead of
    the seed's shuffle: ``deal_deck(game, shuffled_deck(game, seed, number), ...)`` deals
    what ``deal_cards(game, seed, number, ...)`` deals (its ``seed`` left empty)."""
    return _in_packets(game, "", number, dealer, players, [_BITS[c] for c in check_deck(deck)])


def check_deck(deck: Sequence[Card]) -> Sequence[Card]:
    """``deck``, if it holds each of the 40 cards once; else ValueError."""
    if sorted(deck) != _IDS:
        raise ValueError(f"a deck holds each of the {NUM_CARDS} cards once, got {list(deck)}")
    return deck


def _in_packets(
    game: str, seed: str, number: int, dealer: int, players: int, deck: list[CardSet]
) -> Deal:
    """The deal of ``deck``, the cards' bits in deck order."""
    pickers = _PICKERS[players]
    hands = [0] * players
    for offset in range(players):
        hands[(dealer + 1 + offset) % players] = sum(pickers[offset](deck))
    widow = sum(deck[NUM_CARDS - _LEFT_OVER[players] :])
    last = deck[NUM_CARDS - 1].bit_length() - 1
    stock = (
        tuple(b.bit_length() - 1 for b in deck[NUM_CARDS - _LEFT_OVER[2] :]) if players == 2 else ()
    )
    return Deal(game, seed, number, dealer, tuple(hands), widow, last, stock)


_BITS = tuple(1 << c for c in range(NUM_CARDS))
_IDS = list(range(NUM_CARDS))
_LEFT_OVER = {4: 0, 3: 4, 2: 20}
"""Cards not dealt: none with four, the widow of 4 with three, the stock of 20 with two."""


def _pickers(players: int) -> tuple[operator.itemgetter[Any], ...]:
    """For each seat after the dealer, the deck positions of its packets."""
    packet = 4 if players == 3 else 5
    dealt = NUM_CARDS - _LEFT_OVER[players]
    positions: list[list[int]] = [[] for _ in range(players)]
    for index in range(dealt):
        positions[index // packet % players].append(index)
    return tuple(operator.itemgetter(*p) for p in positions)


_PICKERS = {players: _pickers(players) for players in _LEFT_OVER}


def dealer_of(game: str, seed: str, number: int, players: int) -> int:
    """The dealer of deal ``number`` when the deal passes to the next seat each time."""
    return (first_dealer(game, seed, players) + number - 1) % players
