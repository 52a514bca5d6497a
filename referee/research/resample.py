"""Worlds for IS-MCTS: a game like this one in all that one seat has seen, its hidden
cards drawn again (what OpenSpiel's ``resample_from_infostate`` returns).

The hidden cards of the deal being played are drawn by the family's world sampler, the
one the ``pimc`` bot searches (``referee.search``): it keeps every card the seat has seen
where it saw it (its hand, every card played, the shown trump, draws it saw, declared
combinations, the monte it was shown), keeps each seat's number of cards, respects the
voids a seat showed by not following suit (and what its signals and declarations say),
and replays the deal's public history through the engine from the world's hands. The
hidden steps the seat did not see (another seat's discards and the card given in chiamo)
are the world's. Earlier deals are kept as they were (they are over: only their totals
count on), and the decks of deals still to come are shuffled anew.

The world is then made a game by its chance outcomes: the deck order that deals it
(:func:`deck_of`), so the new game's history is one the rules allow. It is kept only if
every action of that history is legal for the seat that took it and the seat sees the
same observation, totals and deal: so the seat's information state is the same.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

from referee.engine.cards import NUM_CARDS, CardSet, cards_of, mask_of
from referee.engine.codec import Action
from referee.engine.deals import Deal
from referee.engine.observation import Observation
from referee.engine.rules import Rules
from referee.families.briscola.deal import BriscolaDeal
from referee.families.calabresella.deal import (
    DISCARD_BASE,
    GIVE_BASE,
    CalabresellaDeal,
    CalabresellaObservation,
)
from referee.families.tressette.a_due_deal import TressetteADueDeal
from referee.families.tressette.deal import TressetteDeal
from referee.research.dealt_game import DealtGame
from referee.search import briscola_worlds, calabresella_worlds, tressette_worlds
from referee.search.world_checks import plays_in_order

TRIES = 2000
"""Worlds drawn, at the most, before :func:`resample` gives up."""
_IDENTITY = tuple(range(NUM_CARDS))

World = TressetteDeal | BriscolaDeal | CalabresellaDeal


def resample(table: DealtGame, seat: int, rng: random.Random) -> DealtGame:
    """A game in which ``seat``, the seat to act, has seen all it has seen in ``table``,
    the cards it has not seen drawn again with ``rng``; RuntimeError if :data:`TRIES`
    draws found none (ValueError if ``seat`` is not to act)."""
    game = table.game
    if game is None or table.to_act() != seat:
        raise ValueError(f"worlds are drawn for the seat to act, and seat {seat} is not")
    rules = table.rules
    obs = game.observation(seat)
    number = game.deal_number
    earlier = [(s, a) for n, s, a in table.moves if n < number]
    now = [(s, a) for n, s, a in table.moves if n == number]
    for _ in range(TRIES):
        world = _sample(rules, obs, rng)
        if world is None:
            continue
        deck = deck_of(rules, _start(rules, world, number))
        later = [rng.sample(_IDENTITY, len(d)) for d in table.decks[number:]]
        candidate = DealtGame(rules, table.deals)
        assert table.dealer is not None
        candidate.apply(table.dealer)
        decks = [*table.decks[: number - 1], deck, *later]
        if not candidate.play_along(decks, earlier + _hidden_steps(world, seat, now)):
            continue
        got = candidate.game
        if (
            candidate.to_act() == seat
            and got is not None
            and got.deal_number == number
            and got.totals == game.totals
            and got.observation(seat) == obs
        ):
            return candidate
    raise RuntimeError(f"no world consistent with seat {seat}'s view in {TRIES} draws")


def game_from_view(
    rules: Rules, obs: Observation | CalabresellaObservation, rng: random.Random
) -> DealtGame:
    """A game of one deal in which ``obs.seat`` is to act and has seen in the deal what
    ``obs`` shows, the cards it has not seen drawn with ``rng`` by the world samplers
    :func:`resample` draws with: what a bot that knows only its observation searches
    from. The game starts at no points (the totals before the deal are not in it), so an
    action that depends on them (a call-out) may not be legal in it. RuntimeError if
    :data:`TRIES` draws found none."""
    seat = obs.seat
    for _ in range(TRIES):
        world = _sample(rules, obs, rng)
        if world is None:
            continue
        table = DealtGame(rules, 1)
        table.apply(obs.dealer)
        for card in deck_of(rules, _start(rules, world, 1)):
            table.apply(card)
        game = table.game
        assert game is not None
        if isinstance(world, CalabresellaDeal):
            assert isinstance(obs, CalabresellaObservation)
            replayed = _play(table, _story_actions(obs, world))
        elif isinstance(world, BriscolaDeal):
            replayed = _play(table, [card for _, card in plays_in_order(obs)])
        else:
            assert isinstance(obs, Observation) and isinstance(game.deal, TressetteDeal)
            replayed = tressette_worlds.play_public(rules, obs, game.deal, table.apply)
        if replayed and table.to_act() == seat and _same_deal(game.observation(seat), obs):
            return table
    raise RuntimeError(f"no world consistent with seat {seat}'s view in {TRIES} draws")


def _play(table: DealtGame, actions: Sequence[Action]) -> bool:
    """Play ``actions`` on ``table`` in order; False at the first that is not legal."""
    for action in actions:
        if action not in table.legal_actions():
            return False
        table.apply(action)
    return True


def _story_actions(obs: CalabresellaObservation, world: CalabresellaDeal) -> list[Action]:
    """The actions that bring ``world`` from its deal to where ``obs`` stands, the steps
    the seat did not see (the give, other seats' discards) the world's."""
    seats = range(world.seats)
    given = () if world.soloist is None else world.observation(world.soloist).given
    told = calabresella_worlds.Story(
        dealt=tuple(world.dealt_hand(s) for s in seats),
        monte=world.monte,
        give=given[0] if given else None,
        discards=tuple(world.discards(s) for s in seats),
    )
    return calabresella_worlds.story_actions(obs, calabresella_worlds.setting(obs), told)


def _same_deal(
    got: Observation | CalabresellaObservation, obs: Observation | CalabresellaObservation
) -> bool:
    """Whether ``got`` shows what ``obs`` does of the deal: all but the totals and what
    follows from them (the legal actions, a score)."""
    if isinstance(got, CalabresellaObservation):
        return dataclasses.replace(got, legal_actions=obs.legal_actions, score=None) == obs
    assert isinstance(obs, Observation)
    return got == dataclasses.replace(obs, legal_actions=got.legal_actions, totals=got.totals)


def _sample(
    rules: Rules, obs: Observation | CalabresellaObservation, rng: random.Random
) -> World | None:
    """One world from the family's sampler (None: a draw it threw away)."""
    deal_class = rules.family.deal_class
    if isinstance(obs, CalabresellaObservation):
        lim = calabresella_worlds.constraints(rules, obs)
        return calabresella_worlds.sample_world(rules, obs, lim, rng)
    if deal_class is BriscolaDeal:
        return briscola_worlds.sample_world(
            rules, obs, briscola_worlds.constraints(rules, obs), rng
        )
    return tressette_worlds.sample_world(rules, obs, tressette_worlds.constraints(rules, obs), rng)


def _start(rules: Rules, world: World, number: int) -> Deal:
    """The cards ``world`` was dealt: hands, and the widow, stock or monte."""
    seats = range(rules.players)
    if isinstance(world, CalabresellaDeal):
        hands = tuple(world.dealt_hand(s) for s in seats)
        return Deal(rules.game, "", number, world.dealer, hands, world.monte)
    initial = tuple(world.initial_hand(s) for s in seats)
    if isinstance(world, BriscolaDeal):
        stock = world.stock
        return Deal(
            rules.game, "", number, world.dealer, initial, mask_of(stock), world.trump, stock
        )
    trump = -1 if world.trump is None else world.trump
    if isinstance(world, TressetteADueDeal):
        stock = world.stock
        return Deal(rules.game, "", number, world.dealer, initial, mask_of(stock), trump, stock)
    return Deal(rules.game, "", number, world.dealer, initial, world.widow, trump)


def deck_of(rules: Rules, start: Deal) -> list[int]:
    """A deck order the family deals as ``start`` (its hands, widow or monte, the stock in
    order, and the shown trump where there is one): ``Family.deal_deck`` undone. Where the
    cards go is read off the deal of the deck ``0..39``: a card of a hand goes to one of
    that hand's places, in card order."""
    where = rules.family.deal_deck(rules, _IDENTITY, start.number, start.dealer)
    deck = [-1] * NUM_CARDS
    placed: CardSet = 0
    for position, card in zip(where.stock, start.stock, strict=True):
        deck[position] = card
        placed |= 1 << card
    if start.last_card >= 0 and deck[where.last_card] < 0:
        deck[where.last_card] = start.last_card
        placed |= 1 << start.last_card
    for positions, cards in (
        *zip(where.hands, start.hands, strict=True),
        (where.widow, start.widow),
    ):
        free = [p for p in cards_of(positions) if deck[p] < 0]
        left = cards_of(cards & ~placed)
        if len(free) != len(left):
            raise ValueError(f"no deck of {rules.game} deals {start}")
        for position, card in zip(free, left, strict=True):
            deck[position] = card
        placed |= cards
    dealt = rules.family.deal_deck(rules, deck, start.number, start.dealer)
    if (dealt.hands, dealt.widow, dealt.stock) != (start.hands, start.widow, start.stock):
        raise ValueError(f"no deck of {rules.game} deals {start}")
    return deck


def _hidden_steps(
    world: World, seat: int, moves: Sequence[tuple[int, Action]]
) -> list[tuple[int, Action]]:
    """The deal's ``moves`` with the steps ``seat`` did not see taken from ``world``: in
    Calabresella the card given in chiamo and another seat's discards (where ``seat``
    saw them, the world's are the same)."""
    if not isinstance(world, CalabresellaDeal):
        return list(moves)
    left = {s: cards_of(world.discards(s)) for s in range(world.seats) if s != seat}
    give = None if world.soloist is None else world.observation(world.soloist).given
    out = []
    for s, action in moves:
        if GIVE_BASE <= action < GIVE_BASE + NUM_CARDS and give:
            action = GIVE_BASE + give[0]
        elif DISCARD_BASE <= action < DISCARD_BASE + NUM_CARDS and s != seat:
            action = DISCARD_BASE + left[s].pop(0)
        out.append((s, action))
    return out
