"""Worlds for Briscola: the hidden cards consistent with one seat's observation.

A seat knows its own hand, every card played, its own draws and the face-up trump (the
stock's last card, so the last drawn). Nothing narrows the rest: any seat may play any
card, so no play says what a hand lacks. A world deals the unseen cards at random into
the other hands (each to its size now) and the stock left, in an order, the trump under
it.

To replay the deal through the engine the world needs its start too: the hands dealt
and the stock's cards already drawn. Which of another seat's cards it was dealt and
which it drew is not seen by anyone else and changes nothing still to come, so the
world takes them in the one order that held every card in hand before it was played.
The world is kept only if the engine accepts every play and shows the seat exactly the
observation it was given.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from referee.engine.cards import FULL_DECK, NUM_CARDS, CardSet, cards_of, mask_of
from referee.engine.errors import IllegalActionError
from referee.engine.observation import Observation
from referee.engine.rules import Rules
from referee.families.briscola.deal import HAND_SIZE, TRICK_PLACE, BriscolaDeal
from referee.search.world_checks import Inconsistent, plays_in_order, same_view, without_twins


@dataclass(frozen=True)
class Constraints:
    """What one seat's observation says of the cards it cannot see."""

    unknown: CardSet
    """Cards whose place the seat does not know: the other hands' and the stock's, the
    trump left out."""
    need: tuple[int, ...]
    """Per seat, how many unknown cards it holds now (0 for the observing seat)."""
    held: tuple[CardSet, ...]
    """Per seat, the cards known to be in its hand now: the trump, once drawn, until its
    drawer plays it (0 for the observing seat)."""
    stock: int
    """Unknown cards left in the stock, above the trump while it lies there."""
    drawers: tuple[int, ...]
    """The seat that drew each card of the stock drawn so far, in draw order."""


def constraints(rules: Rules, obs: Observation) -> Constraints:
    """The constraints ``obs`` puts on the hidden cards; :class:`Inconsistent` if it has none."""
    players = rules.players
    me = obs.seat
    if obs.trump is None:
        raise Inconsistent("a Briscola deal always shows its trump")
    stock_size = NUM_CARDS - HAND_SIZE * players
    rounds, odd = divmod(stock_size - obs.stock_left, players)
    if odd or rounds != min(len(obs.tricks), stock_size // players):
        raise Inconsistent(f"{obs.stock_left} cards in the stock after {len(obs.tricks)} tricks")
    # Each draw after trick r: its winner first, then the other seats in seat order.
    drawers = tuple((obs.tricks[r][1] + i) % players for r in range(rounds) for i in range(players))
    played = [0] * players
    for seat, card in plays_in_order(obs):
        played[seat] |= 1 << card
    trump = 1 << obs.trump
    held = [0] * players
    if rounds * players == stock_size and drawers[-1] != me:
        held[drawers[-1]] = trump & ~played[drawers[-1]]
    unknown = FULL_DECK & ~mask_of(obs.hand) & ~trump
    for mask in played:
        unknown &= ~mask
    need = tuple(
        0 if s == me else HAND_SIZE + rounds - played[s].bit_count() - held[s].bit_count()
        for s in range(players)
    )
    stock = max(obs.stock_left - 1, 0)
    if min(need) < 0 or sum(need) + stock != unknown.bit_count():
        raise Inconsistent(f"{unknown.bit_count()} unseen cards cannot fill the hands {need}")
    return Constraints(unknown, need, tuple(held), stock, drawers)


def _start(
    rules: Rules, obs: Observation, lim: Constraints, hands: list[CardSet], rest: list[int]
) -> tuple[list[CardSet], list[int]] | None:
    """The hands dealt and the whole stock in draw order of a world whose hands now are
    ``hands`` and whose stock left is ``rest`` (the trump not in it); None if no start
    leads there."""
    players = rules.players
    me = obs.seat
    trump = obs.trump
    assert trump is not None
    drawn = len(lim.drawers)
    stock = [-1] * drawn + rest + ([trump] if obs.stock_left else [])
    mine = [card for seat, card in obs.draws if seat == me]
    slots = [i for i, seat in enumerate(lim.drawers) if seat == me]
    if len(mine) != len(slots):
        return None
    for i, card in zip(slots, mine, strict=True):
        stock[i] = card
    tricks = [*(plays for plays, _ in obs.tricks), obs.trick]
    dealt = [0] * players
    ever = mask_of(obs.hand) | mask_of(c for s, c in plays_in_order(obs) if s == me)
    dealt[me] = ever & ~mask_of(mine)
    for seat in range(players):
        if seat == me:
            continue
        # Back from now to the deal: a card played is put back in hand, a card drawn is
        # taken out of it (the trump at the stock's last place, else any other).
        hand = hands[seat] | lim.held[seat]
        for k in range(len(tricks) - 1, -1, -1):
            hand |= mask_of(c for s, c in tricks[k] if s == seat)
            first = (k - 1) * players
            if not 0 <= first < drawn:
                continue
            i = first + lim.drawers[first : first + players].index(seat)
            card = trump if i == len(stock) - 1 else (hand & ~(1 << trump)).bit_length() - 1
            if card < 0 or not hand >> card & 1:
                return None
            hand ^= 1 << card
            stock[i] = card
        dealt[seat] = hand
    if any(h.bit_count() != HAND_SIZE for h in dealt):
        return None
    return dealt, stock


def sample_world(
    rules: Rules, obs: Observation, lim: Constraints, rng: random.Random
) -> BriscolaDeal | None:
    """One world consistent with ``obs``, at the point ``obs`` describes; None when the
    engine refused it."""
    unseen = list(cards_of(lim.unknown))
    rng.shuffle(unseen)
    hands = [0] * rules.players
    at = 0
    for seat, n in enumerate(lim.need):
        hands[seat] = mask_of(unseen[at : at + n])
        at += n
    start = _start(rules, obs, lim, hands, unseen[at:])
    if start is None:
        return None
    dealt, stock = start
    deal = BriscolaDeal(rules, dealt, obs.dealer, stock=stock, totals=obs.totals)
    try:
        for seat, card in plays_in_order(obs):
            if deal.current_player() != seat:
                return None
            deal.apply_action(card)
    except IllegalActionError:
        return None
    if not same_view(deal.observation(obs.seat), obs):
        return None
    return deal


def twins_removed(rules: Rules, obs: Observation, cards: list[int]) -> list[int]:
    """``cards`` (the seat's own) with one of each set of twins (:func:`without_twins`),
    read in Briscola's trick order (A 3 K Q J 7 6 5 4 2) rather than the card ids'."""
    # Ids renumbered so that within a suit a lower id takes the trick, as in Tressette.
    place = [card - card % 10 + TRICK_PLACE[card % 10] for card in range(NUM_CARDS)]
    card_at = {p: card for card, p in enumerate(place)}
    out_of_play = mask_of(place[c] for c in obs.hand)
    out_of_play |= mask_of(place[c] for _, c in plays_in_order(obs))
    worth = [rules.card_values[card_at[p] % 10] for p in range(NUM_CARDS)]
    return [card_at[p] for p in without_twins([place[c] for c in cards], out_of_play, worth)]
