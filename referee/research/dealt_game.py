"""A Tavolo game whose cards are dealt from outside, one chance outcome at a time: the
state under every OpenSpiel game of :mod:`.openspiel_game`, without OpenSpiel.

The rules engine plays the game (``referee.engine.registry.new_game``); this only deals.
The first chance outcome is the first dealer (a seat); then each deal's 40 cards in deck
order: outcome ``c`` at position ``i`` puts card ``c`` at position ``i`` of that deal's
deck, and the family deals the deck as it deals a seed's shuffle (``Family.deal_deck``).
So ``first_dealer(game, seed, players)`` and then ``shuffled_deck(game, seed, n)`` for
each deal ``n`` deal exactly what ``tavolo`` deals from ``seed`` (:func:`seeded_outcomes`).

The engine starts the next deal the moment a deal ends, so in a game of several deals the
next deal's 40 cards are dealt as soon as a deal starts, before its first action. Nobody
sees them before their deal, so this changes nothing any player knows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.engine.cards import NUM_CARDS
from referee.engine.codec import Action
from referee.engine.deals import Deal, first_dealer, shuffled_deck
from referee.engine.game_base import AnyGame
from referee.engine.registry import new_game
from referee.engine.rules import Rules

MAX_DEALS = 100
"""A game to the target (``deals=None``) that has played this many deals without ending
ends as a draw: OpenSpiel needs a bound on a game's length. Games to the target end in
a handful of deals; none comes near it."""
ENGINE_SEED = "openspiel"
"""The seed text the wrapped engine game is made with; it deals nothing (the chance
outcomes do), but the engine draws its first dealer from it, which :class:`_Decks`
turns into the dealer chance drew."""

Move = tuple[int, int, Action]
"""A player's action as played: ``(deal number, seat, action)``."""


class _Decks:
    """The wrapped engine's deal source: deal ``n`` is the ``n``-th deck dealt, from the
    dealer chance drew. Clones of a game share it (the engine's clone shares its deal
    source), so each game points it at itself before it lets the engine deal."""

    __slots__ = ("table",)

    def __init__(self) -> None:
        self.table: DealtGame | None = None

    def __call__(self, number: int, dealer: int) -> Deal:
        table = self.table
        assert table is not None and table.dealer is not None
        rules = table.rules
        # The engine rotates the dealer from its seed's first dealer; shifted, the rotation
        # starts from the dealer chance drew.
        shift = table.dealer - first_dealer(rules.game, ENGINE_SEED, rules.players)
        seat = (dealer + shift) % rules.players
        return rules.family.deal_deck(rules, table.decks[number - 1], number, seat)


class DealtGame:
    """One game of ``rules``: ``deals`` deals (None: to the target), its cards dealt by
    :meth:`apply` as chance outcomes, its actions played by the engine."""

    __slots__ = (
        "_dealt",
        "_source",
        "dealer",
        "deals",
        "decks",
        "game",
        "history",
        "moves",
        "rules",
    )

    def __init__(self, rules: Rules, deals: int | None = 1) -> None:
        if deals is not None and deals < 1:
            raise ValueError(f"a game plays at least one deal, not {deals}")
        self.rules = rules
        self.deals = deals
        self.dealer: int | None = None
        """The first deal's dealer, once chance drew it."""
        self.decks: list[list[int]] = []
        """Each deal's deck as dealt so far, by deal number from 1; the last may be partial."""
        self.moves: list[Move] = []
        """Every player's action, in order."""
        self.history: list[int] = []
        """Every chance outcome and action, in order."""
        self.game: AnyGame | None = None
        """The engine's game, once the first deal's cards are all dealt."""
        self._dealt = 0
        """The cards of the deck being dealt, as a set."""
        self._source = _Decks()

    # -- the state ----------------------------------------------------------------------

    def is_terminal(self) -> bool:
        """Whether the game is over (or was cut short at :data:`MAX_DEALS`)."""
        game = self.game
        return game is not None and (game.is_terminal() or self.truncated)

    @property
    def truncated(self) -> bool:
        """Whether a game to the target was cut short at :data:`MAX_DEALS` deals."""
        game = self.game
        return (
            self.deals is None
            and game is not None
            and game.deal_number > MAX_DEALS
            and not game.is_terminal()
        )

    def is_chance(self) -> bool:
        """Whether the next outcome is chance's: the dealer, or a card."""
        if self.dealer is None:
            return True
        if self.is_terminal():
            return False
        return len(self.decks) < self._decks_wanted() or len(self.decks[-1]) < NUM_CARDS

    def _decks_wanted(self) -> int:
        game = self.game
        if game is None:
            return 1
        number = game.deal_number
        more = self.deals is None or number < self.deals
        return number + 1 if more else number

    def to_act(self) -> int | None:
        """The seat to act; None at a chance node and once the game is over."""
        if self.is_chance() or self.is_terminal():
            return None
        assert self.game is not None
        return self.game.current_player()

    def chance_outcomes(self) -> list[int]:
        """The outcomes chance may give now, ascending; [] unless :meth:`is_chance`."""
        if not self.is_chance():
            return []
        if self.dealer is None:
            return list(range(self.rules.players))
        _, position = self._next_card()
        dealt = self._dealt if position else 0
        return [c for c in range(NUM_CARDS) if not dealt >> c & 1]

    def _next_card(self) -> tuple[int, int]:
        """Where the next card dealt goes: (deck index, position in that deck)."""
        decks = self.decks
        if not decks or len(decks[-1]) == NUM_CARDS:
            return len(decks), 0
        return len(decks) - 1, len(decks[-1])

    def legal_actions(self) -> list[Action]:
        """The legal actions of the seat to act, ascending; [] at chance nodes and the end."""
        if self.to_act() is None:
            return []
        assert self.game is not None
        return sorted(self.game.legal_actions())

    def returns(self) -> tuple[float, ...]:
        """Per seat, the engine's returns once the game is over (a truncated game is a
        draw, all 0); all 0 before."""
        if self.game is None or not self.is_terminal() or self.truncated:
            return (0.0,) * self.rules.players
        return self.game.returns()

    @property
    def deal_number(self) -> int:
        """The deal being played, from 1; 0 while the first is dealt."""
        return 0 if self.game is None else self.game.deal_number

    # -- moving on ------------------------------------------------------------------------

    def apply(self, action: int) -> None:
        """Apply a chance outcome (at a chance node) or the action of the seat to act;
        ValueError for an outcome chance cannot give, the engine's error for an illegal
        action."""
        if self.is_chance():
            self._deal(action)
        else:
            if self.is_terminal():
                raise ValueError("the game is over")
            game = self.game
            assert game is not None
            seat = game.current_player()
            assert seat is not None
            move = (game.deal_number, seat, action)
            self._source.table = self
            game.apply_action(action)
            self.moves.append(move)
        self.history.append(action)

    def _deal(self, outcome: int) -> None:
        players = self.rules.players
        if self.dealer is None:
            if not 0 <= outcome < players:
                raise ValueError(f"the dealer is a seat 0..{players - 1}, not {outcome}")
            self.dealer = outcome
            return
        _, position = self._next_card()
        dealt = self._dealt if position else 0
        if not 0 <= outcome < NUM_CARDS or dealt >> outcome & 1:
            raise ValueError(f"card {outcome} is not one left to deal")
        if not position:
            self.decks.append([])
        self.decks[-1].append(outcome)
        self._dealt = dealt | 1 << outcome
        if self.game is None and len(self.decks[0]) == NUM_CARDS:
            self._source.table = self
            self.game = new_game(
                self.rules, ENGINE_SEED, deals=self.deals, deal_source=self._source
            )

    def play_along(
        self, decks: Sequence[Sequence[int]], moves: Sequence[tuple[int, Action]]
    ) -> bool:
        """From the dealer on, deal ``decks`` and play ``moves`` (``(seat, action)``) in the
        order the game asks for them, until both run out; False at the first move whose
        seat is not to act or that is not legal (the game is then half played)."""
        i = 0
        while not self.is_terminal():
            if self.is_chance():
                at, position = self._next_card()
                if at >= len(decks) or position >= len(decks[at]):
                    return i == len(moves)
                self.apply(decks[at][position])
                continue
            if i == len(moves):
                return True
            seat, action = moves[i]
            if self.to_act() != seat or action not in self.legal_actions():
                return False
            self.apply(action)
            i += 1
        return i == len(moves)

    # -- copies ----------------------------------------------------------------------------

    def clone(self) -> DealtGame:
        """A copy to play on without changing this game."""
        new = DealtGame.__new__(DealtGame)
        new.rules = self.rules
        new.deals = self.deals
        new.dealer = self.dealer
        new.decks = [list(deck) for deck in self.decks]
        new.moves = list(self.moves)
        new.history = list(self.history)
        new.game = None if self.game is None else self.game.clone()
        new._dealt = self._dealt
        new._source = self._source
        return new

    def __deepcopy__(self, memo: dict[int, Any]) -> DealtGame:
        # OpenSpiel clones a Python state by deep-copying it: the engine's own clone is
        # what a copy needs, and shares the rules' tables instead of copying them.
        return self.clone()

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (OpenSpiel's serialization) as its history, and replayed when loaded.
        return (replayed, (self.rules, self.deals, tuple(self.history)))


def replayed(rules: Rules, deals: int | None, history: Sequence[int]) -> DealtGame:
    """The game of ``rules`` after ``history`` (chance outcomes and actions, in order)."""
    table = DealtGame(rules, deals)
    for action in history:
        table.apply(action)
    return table


def seeded_outcomes(rules: Rules, seed: str, number: int) -> list[int]:
    """The chance outcomes that deal deal ``number`` as ``tavolo`` deals it from ``seed``:
    the first dealer before deal 1, then the deal's deck."""
    deck = shuffled_deck(rules.game, seed, number)
    return [first_dealer(rules.game, seed, rules.players), *deck] if number == 1 else deck
