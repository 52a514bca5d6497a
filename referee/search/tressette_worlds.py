"""Worlds for the Tressette families: hidden hands consistent with one seat's observation.

What one seat knows narrows the other hands. Its own hand and every card played are
known; declared cards, the briscola's shown card and the cards drawn in tressette a due
are known to be in their holder's hand until played. Failing to follow suit and volo
make a seat void in a suit; a tre declaration names the card it lacks; striscio says the
seat kept more of the suit (under ``striscio_meaning = more_no_honours`` none of them a
3, 2 or ace; under ``striscio_lengths`` how many). These become, per seat, cards it
cannot hold and how many hidden cards of a suit it must hold.

A world deals the hidden cards within those constraints, then replays the deal's public
history through the engine from the hands it implies. It is kept only if the engine
accepts every action (every signal is checked as the referee checks it, and
``auto_declare`` declares what the world's hands hold) and the replayed deal shows the
seat exactly the observation it was given. So no kept world contradicts what the seat saw.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from referee.engine.cards import (
    FULL_DECK,
    NUM_CARDS,
    SUIT_MASKS,
    CardSet,
    card_rank,
    card_suit,
    make_card,
    mask_of,
)
from referee.engine.codec import Action
from referee.engine.errors import IllegalActionError
from referee.engine.observation import Observation, Phase
from referee.engine.rules import Rules
from referee.families.tressette.actions import END_DECLARATIONS, Signal, declare_action
from referee.families.tressette.deal import TressetteDeal
from referee.families.tressette.declarations import (
    DECLARATION_CARDS,
    DECLARATION_KINDS,
    TRE,
    held_declarations,
)
from referee.families.tressette.game import new_deal
from referee.search.world_checks import Inconsistent, plays_in_order, same_view, without_twins

_HONOURS = tuple(0b111 << (10 * s) for s in range(4))
"""The 3, 2 and ace of each suit."""


@dataclass(frozen=True)
class Constraints:
    """What one seat's observation says of the cards it cannot see."""

    unknown: CardSet
    """Cards whose place the seat does not know."""
    known: tuple[CardSet, ...]
    """Per seat, unplayed cards known to be in its hand (0 for the observing seat)."""
    need: tuple[int, ...]
    """Per seat, how many unknown cards it holds (0 for the observing seat)."""
    pile: int
    """How many unknown cards are undealt: the widow of a tre, the stock of a due."""
    allowed: tuple[CardSet, ...]
    """Per seat, the unknown cards it may hold."""
    counts: tuple[tuple[tuple[int, int, int], ...], ...]
    """Per seat, ``(suit, least, most)``: how many unknown cards of the suit it holds."""
    dealt: tuple[CardSet, ...]
    """Per seat, the cards it was dealt that the observing seat knows of (its own, played,
    declared, shown), draws left out: a world's dealt hand adds the unknown cards it holds."""


def constraints(rules: Rules, obs: Observation) -> Constraints:
    """The constraints ``obs`` puts on the hidden cards; :class:`Inconsistent` if it has none."""
    players = rules.players
    me = obs.seat
    plays = plays_in_order(obs)
    mine = 0
    for card in obs.hand:
        mine |= 1 << card
    played = [0] * players
    for seat, action in plays:
        played[seat] |= 1 << (action % NUM_CARDS)
    all_played = 0
    for mask in played:
        all_played |= mask
    # When each known card came into its holder's hand: the deal (trick 0), or the draw
    # after trick k (trick k + 1) in tressette a due.
    since: dict[int, int] = {}
    drawn = [0] * players
    for i, (seat, card) in enumerate(obs.draws):
        drawn[seat] |= 1 << card
        since[card] = i // 2 + 1
    known = [0] * players
    forbidden = [0] * players
    for seat, declaration in obs.declarations:
        cards = DECLARATION_CARDS[declaration]
        known[seat] |= cards
        if DECLARATION_KINDS[declaration] == TRE:
            # tre-R-noS: the named rank's card of suit S is not in the hand.
            missing = next(
                make_card(card_rank(c), s)
                for c in range(NUM_CARDS)
                if cards >> c & 1
                for s in range(4)
                if not cards >> make_card(card_rank(c), s) & 1
            )
            forbidden[seat] |= 1 << missing
    if obs.trump is not None:
        known[obs.dealer] |= 1 << obs.trump
    for seat in range(players):
        known[seat] = (known[seat] | drawn[seat]) & ~played[seat]
    known[me] = 0
    unknown = FULL_DECK & ~mine & ~all_played
    for mask in known:
        unknown &= ~mask
    counts: list[dict[int, list[int]]] = [{} for _ in range(players)]
    _read_plays(rules, obs, plays, played, known, since, forbidden, counts)
    hand_size = rules.hand_size
    need = [0] * players
    for seat in range(players):
        if seat == me:
            continue
        held = hand_size - played[seat].bit_count() + drawn[seat].bit_count()
        need[seat] = held - known[seat].bit_count()
        if need[seat] < 0:
            raise Inconsistent(f"seat {seat} is shown more known cards than it holds")
    pile = unknown.bit_count() - sum(need)
    undealt = obs.stock_left if rules.game == "tressette-a-due" else NUM_CARDS - players * hand_size
    if pile != undealt:
        raise Inconsistent(f"{unknown.bit_count()} unseen cards cannot fill the hands {need}")
    allowed = tuple(0 if s == me else unknown & ~forbidden[s] for s in range(players))
    dealt = tuple(((mine if s == me else known[s]) | played[s]) & ~drawn[s] for s in range(players))
    return Constraints(
        unknown=unknown,
        known=tuple(known),
        need=tuple(need),
        pile=pile,
        allowed=allowed,
        counts=tuple(tuple((suit, lo, hi) for suit, (lo, hi) in sorted(c.items())) for c in counts),
        dealt=dealt,
    )


def _read_plays(
    rules: Rules,
    obs: Observation,
    plays: list[tuple[int, int]],
    played: list[int],
    known: list[int],
    since: dict[int, int],
    forbidden: list[int],
    counts: list[dict[int, list[int]]],
) -> None:
    """Voids, and striscio's counts, from each play of another seat."""
    players = rules.players
    led = -1
    for i, (seat, action) in enumerate(plays):
        card = action % NUM_CARDS
        suit = card_suit(card)
        trick, k = divmod(i, players)
        if k == 0:
            led = suit
        if seat == obs.seat:
            continue
        if k and suit != led:
            forbidden[seat] |= SUIT_MASKS[led]
        signal = action // NUM_CARDS
        if signal in (Signal.NONE, Signal.BUSSO, Signal.RIBUSSO):
            continue
        if signal == Signal.VOLO:
            forbidden[seat] |= SUIT_MASKS[suit]
            continue
        # Striscio: of the suit's cards the seat kept, those it is known to hold (played
        # later, or declared or drawn), counted if they were in its hand then.
        later = 0
        for seat2, action2 in plays[i + 1 :]:
            if seat2 == seat:
                later |= 1 << (action2 % NUM_CARDS)
        candidates = (later | known[seat]) & SUIT_MASKS[suit]
        have = sum(1 for c in range(NUM_CARDS) if candidates >> c & 1 and since.get(c, 0) <= trick)
        if rules.striscio_meaning == "more_no_honours":
            forbidden[seat] |= _HONOURS[suit]
        if signal == Signal.STRISCIO:
            lo, hi = 1, 9
        elif signal == Signal.STRISCIO_LUNGO:
            lo, hi = 4, 9
        else:  # corto
            lo, hi = (1, 3) if rules.striscio_corto == "one_to_three" else (3, 3)
        bounds = counts[seat].setdefault(suit, [0, 9])
        bounds[0] = max(bounds[0], lo - have)
        bounds[1] = min(bounds[1], hi - have)


def _subset_tables(n: int) -> tuple[list[list[int]], list[list[int]]]:
    """For ``n`` agents: the agent sets that include each set, and those holding each agent."""
    full = (1 << n) - 1
    supersets = [[s for s in range(1, full + 1) if m & ~s == 0] for m in range(full + 1)]
    holding = [[s for s in range(1, full + 1) if s >> a & 1] for a in range(n)]
    return supersets, holding


_TABLES = {n: _subset_tables(n) for n in range(1, 6)}


def _place(
    cards: list[int],
    masks: dict[int, int],
    left: list[int],
    seats: list[int],
    hands: list[CardSet],
    pile: list[int],
    rng: random.Random,
) -> bool:
    """Deal ``cards`` to the agents (``seats``, then the pile) their ``masks`` allow, each
    to a capacity ``left``; False if they cannot all be placed.

    Hall's condition is kept after every card: every set of agents has room for the cards
    that may go nowhere else (``only[s] <= room[s]``), so no choice strands a card later.
    """
    n = len(left)
    supersets, holding = _TABLES[n]
    full = (1 << n) - 1
    room = [0] * (full + 1)
    only = [0] * (full + 1)
    for s in range(1, full + 1):
        room[s] = sum(left[a] for a in range(n) if s >> a & 1)
    for c in cards:
        for s in supersets[masks[c]]:
            only[s] += 1
    if any(only[s] > room[s] for s in range(1, full + 1)):
        return False
    # The most constrained cards first, so the capacity-weighted choices rarely need undoing.
    for c in sorted(cards, key=lambda c: masks[c].bit_count()):
        mask = masks[c]
        for s in supersets[mask]:
            only[s] -= 1
        options = [a for a in range(n) if mask >> a & 1 and left[a] > 0]
        while True:
            if not options:
                return False
            (a,) = rng.choices(options, [left[x] for x in options])
            if all(only[s] < room[s] for s in holding[a]):
                break
            options.remove(a)
        for s in holding[a]:
            room[s] -= 1
        left[a] -= 1
        if a == n - 1:
            pile.append(c)
        else:
            hands[seats[a]] |= 1 << c
    return True


def deal_hidden(
    rules: Rules, obs: Observation, lim: Constraints, rng: random.Random
) -> tuple[list[CardSet], list[int]] | None:
    """One draw of the hidden cards: each seat's and the pile's (in an order); None when
    this draw found no way to meet the constraints."""
    players = rules.players
    me = obs.seat
    seats = [s for s in range(players) if s != me]
    agents = [*seats, -1]  # -1: the pile
    hands = [0] * players
    left = [lim.need[s] for s in seats] + [lim.pile]
    cards = [c for c in range(NUM_CARDS) if lim.unknown >> c & 1]
    taken = 0
    # Hold first what striscio says a seat kept.
    for a, seat in enumerate(seats):
        for suit, lo, _ in lim.counts[seat]:
            if lo <= 0:
                continue
            pool = [
                c
                for c in cards
                if card_suit(c) == suit and lim.allowed[seat] >> c & 1 and not taken >> c & 1
            ]
            if len(pool) < lo or left[a] < lo:
                return None
            for c in rng.sample(pool, lo):
                hands[seat] |= 1 << c
                taken |= 1 << c
            left[a] -= lo
    rest = [c for c in cards if not taken >> c & 1]
    rng.shuffle(rest)

    def allowed_mask(card: int) -> int:
        mask = 1 << (len(agents) - 1)
        for a, seat in enumerate(seats):
            if lim.allowed[seat] >> card & 1:
                mask |= 1 << a
        return mask

    n = len(agents)
    full = (1 << n) - 1
    masks = {c: allowed_mask(c) for c in rest}
    pile: list[int] = []
    if all(m == full for m in masks.values()):
        # Nothing rules a card out: the shuffled cards are dealt in turn.
        i = 0
        for a, seat in enumerate(seats):
            for c in rest[i : i + left[a]]:
                hands[seat] |= 1 << c
            i += left[a]
        pile = rest[i:]
    elif not _place(rest, masks, left, seats, hands, pile, rng):
        return None
    for seat in seats:
        for suit, lo, hi in lim.counts[seat]:
            n = (hands[seat] & SUIT_MASKS[suit]).bit_count()
            if not max(lo, 0) <= n <= hi:
                return None
    return hands, pile


def _replay(
    rules: Rules, obs: Observation, dealt: list[CardSet], pile: list[int]
) -> TressetteDeal | None:
    """The deal dealt ``dealt`` (and the pile), played on to where ``obs`` stands; None if
    the engine refuses any of its public actions."""
    stock: list[int] = []
    widow = 0
    if rules.game == "tressette-a-due":
        stock = [card for _, card in obs.draws] + pile
    else:
        for c in pile:
            widow |= 1 << c
    deal = new_deal(
        rules, dealt, obs.dealer, widow=widow, totals=obs.totals, trump=obs.trump, stock=stock
    )
    return deal if play_public(rules, obs, deal, deal.apply_action) else None


def play_public(
    rules: Rules, obs: Observation, deal: TressetteDeal, apply: Callable[[Action], None]
) -> bool:
    """Play the public history of ``obs`` on ``deal``, from its start to where ``obs``
    stands, each action through ``apply`` (the deal's own ``apply_action``, or that of a
    game whose deal ``deal`` is): the declarations (unless ``auto_declare``) where the deal
    allows them, the end of declaring, the plays. False if the engine refuses one."""
    plays = plays_in_order(obs)
    pending: list[list[int]] = [[] for _ in range(rules.players)]
    if not rules.auto_declare:
        for seat, declaration in obs.declarations:
            pending[seat].append(declare_action(declaration))
    me = obs.seat
    i = 0
    try:
        while (to_act := deal.current_player()) is not None:
            seat = to_act
            if pending[seat] and (deal.phase == Phase.DECLARE or deal.tricks_played == 0):
                apply(pending[seat].pop(0))
            elif i == len(plays) and seat == me and deal.phase == obs.phase:
                break
            elif deal.phase == Phase.DECLARE:
                apply(END_DECLARATIONS)
            elif i < len(plays):
                if plays[i][0] != seat:
                    return False
                apply(plays[i][1])
                i += 1
            else:
                return False
    except IllegalActionError:
        return False
    return True


def sample_world(
    rules: Rules, obs: Observation, lim: Constraints, rng: random.Random
) -> TressetteDeal | None:
    """One world consistent with ``obs``, at the point ``obs`` describes; None when this
    try did not find one (try again with the same ``rng``)."""
    drawn = deal_hidden(rules, obs, lim, rng)
    if drawn is None:
        return None
    hidden, pile = drawn
    players = rules.players
    dealt = [lim.dealt[seat] | hidden[seat] for seat in range(players)]
    if rules.auto_declare and rules.declarations and not rules.declaration_limit:
        # The engine declares every combination a hand holds: a world whose hands hold one
        # more than was declared is refused here, before the costlier replay.
        declared = [0] * players
        for seat, _ in obs.declarations:
            declared[seat] += 1
        if any(len(held_declarations(h)) != declared[s] for s, h in enumerate(dealt)):
            return None
    rng.shuffle(pile)
    deal = _replay(rules, obs, dealt, pile)
    if deal is None or not same_view(deal.observation(obs.seat), obs):
        return None
    return deal


def twins_removed(rules: Rules, obs: Observation, cards: list[int]) -> list[int]:
    """``cards`` (the seat's own) with one of each set of twins (:func:`without_twins`)."""
    played = mask_of(action % NUM_CARDS for _, action in plays_in_order(obs))
    out_of_play = mask_of(obs.hand) | played
    worth = [rules.card_values[c % 10] for c in range(NUM_CARDS)]
    return without_twins(cards, out_of_play, worth)
