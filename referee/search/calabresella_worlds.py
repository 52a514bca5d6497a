"""Worlds for Calabresella: hidden hands, monte and hidden steps consistent with one seat's view.

The seat to act knows its own cards as dealt and now, its own discards and swaps, every
card played, the auction, the called card and who held it, the monte cards it was shown
and the split. Where every other card is *now* is hidden: in another active seat's hand,
among another seat's face-down discards, or in the monte still aside. Those places are
the *agents* of a draw; each hidden card may go only to the agents the observation
allows (a seat that failed to follow a suit holds none of it; the called card is the
soloist's; a scegliete share is its defender's; the card the seat gave in chiamo is its
holder's).

A draw deals the hidden cards to the agents within those constraints, then works back to the
deal: which cards were the monte (chiamo and solo: four of the soloist's cards, the
called card among them if it was in the monte; dividete: two of each defender's, the
first defender's the two lowest), the card the soloist gave in chiamo (one of the
holder's), and so each seat's dealt hand. It then replays the public history with the
world's hidden steps through the engine, and keeps the world only if the engine accepts
every action and shows the seat exactly the observation it was given.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from referee.engine.cards import FULL_DECK, SUIT_MASKS, CardSet, cards_of, mask_of
from referee.engine.codec import Action
from referee.engine.errors import IllegalActionError
from referee.engine.rules import Rules
from referee.families.calabresella.auction import Contract
from referee.families.calabresella.deal import (
    CALL_BASE,
    DISCARD_BASE,
    GIVE_BASE,
    HAND_SIZE,
    SPLIT_BASE,
    CalabresellaDeal,
    CalabresellaObservation,
    Phase,
)
from referee.search.world_checks import plays_in_order, same_view

HAND, DISCARDS, MONTE = "hand", "discards", "monte"
"""What an agent is: a seat's hand now, a seat's face-down discards, the monte aside."""


class Inconsistent(ValueError):
    """An observation no deal can produce, or one this sampler does not take."""


@dataclass(frozen=True)
class Setting:
    """The shape of the deal the observation implies: seats, contract, and steps done."""

    order: tuple[int, int, int]
    """The active seats, the eldest first."""
    defenders: tuple[int, int] | None
    queue: tuple[int, ...]
    """Who discards, in order (empty before the contract's exchange is known)."""
    done: int
    """Discards made so far (a prefix of ``queue``)."""
    played: tuple[CardSet, ...]
    """Per seat, the cards it has played."""
    taken: tuple[CardSet, ...]
    """Per seat, the monte cards it took, where the seat knows them (0 where not)."""


@dataclass(frozen=True)
class Constraints:
    """What one seat's observation says of the cards it cannot see."""

    setting: Setting
    agents: tuple[tuple[str, int], ...]
    """The places hidden cards are now: ``(HAND, seat)``, ``(DISCARDS, seat)``, ``(MONTE, -1)``."""
    room: tuple[int, ...]
    """Per agent, how many hidden cards it holds."""
    unknown: CardSet
    """Cards whose place the seat does not know."""
    allowed: tuple[CardSet, ...]
    """Per agent, the unknown cards it may hold."""


def _queue(obs: CalabresellaObservation, soloist: int, defenders: tuple[int, int]) -> list[int]:
    contract = obs.contract
    first, second = defenders
    if contract in (Contract.CHIAMO, Contract.SOLO):
        return [soloist] * 4
    if contract is Contract.DIVIDETE:
        return [first, first, second, second]
    if contract is Contract.SCEGLIETE and obs.split is not None:
        k = obs.split.bit_count()
        return [first] * k + [second] * (4 - k)
    return []


def setting(obs: CalabresellaObservation) -> Setting:
    """The deal's shape from ``obs``; :class:`Inconsistent` if ``obs``'s seat is not to act."""
    me = obs.seat
    if obs.current_player != me or obs.phase is Phase.OVER:
        raise Inconsistent(f"seat {me} is not to act: worlds are drawn for the seat to act")
    seats, dealer = obs.seats, obs.dealer
    a, b, c = ((dealer + 1 + i) % seats for i in range(3))
    order = (a, b, c)
    if me not in order:
        raise Inconsistent(f"seat {me} sits out this deal")
    played = [0] * seats
    for seat, card in plays_in_order(obs):
        played[seat] |= 1 << card
    defenders = None
    queue: list[int] = []
    done = 0
    taken = [0] * seats
    soloist = obs.soloist
    if soloist is not None:
        at = order.index(soloist)
        defenders = (order[(at + 1) % 3], order[(at + 2) % 3])
        queue = _queue(obs, soloist, defenders)
        if obs.phase is Phase.DISCARD:
            done = queue.index(me) + len(obs.discards)
        elif obs.phase is Phase.PLAY:
            done = len(queue)
        exchanged = obs.phase in (Phase.DISCARD, Phase.PLAY)
        if exchanged and obs.contract in (Contract.CHIAMO, Contract.SOLO, Contract.DIVIDETE):
            taken[me] = mask_of(obs.monte)
        elif exchanged and obs.contract is Contract.SCEGLIETE:
            assert obs.split is not None
            share = sum(1 << c for i, c in enumerate(obs.monte) if obs.split >> i & 1)
            taken[defenders[0]] = share
            taken[defenders[1]] = mask_of(obs.monte) & ~share
    return Setting(order, defenders, tuple(queue), done, tuple(played), tuple(taken))


def constraints(rules: Rules, obs: CalabresellaObservation) -> Constraints:
    """The constraints ``obs`` puts on the hidden cards; :class:`Inconsistent` if it has none."""
    st = setting(obs)
    me = obs.seat
    others = [s for s in st.order if s != me]
    phase, contract, soloist = obs.phase, obs.contract, obs.soloist
    mine = mask_of(obs.hand) | st.played[me] | mask_of(obs.discards)
    known = mine
    for mask in st.played:
        known |= mask
    shown_aside = contract is Contract.SCEGLIETE and phase is Phase.SPLIT
    if shown_aside:
        known |= mask_of(obs.monte)
    unknown = FULL_DECK & ~known
    hidden_discards = {s: st.queue[: st.done].count(s) for s in others}
    monte_aside = phase in (Phase.AUCTION, Phase.CALL, Phase.GIVE) or (
        contract is Contract.SOLISSIMO
    )
    agents: list[tuple[str, int]] = [(HAND, s) for s in others]
    agents += [(DISCARDS, s) for s in others if hidden_discards[s]]
    if monte_aside:
        agents.append((MONTE, -1))
    room: list[int] = []
    exchanged = phase in (Phase.DISCARD, Phase.PLAY)
    for kind, seat in agents:
        if kind == MONTE:
            room.append(4)
            continue
        if kind == DISCARDS:
            room.append(hidden_discards[seat])
            continue
        size = HAND_SIZE - st.played[seat].bit_count() - hidden_discards[seat]
        if phase is Phase.GIVE:
            size += 1 if seat == soloist else -1 if seat == obs.called_holder else 0
        if exchanged and contract in (Contract.CHIAMO, Contract.SOLO) and seat == soloist:
            size += 4
        elif exchanged and contract is Contract.DIVIDETE and seat != soloist:
            size += 2
        elif exchanged and contract is Contract.SCEGLIETE and seat != soloist:
            size += st.taken[seat].bit_count()
        room.append(size)
    if sum(room) != unknown.bit_count():
        raise Inconsistent(f"{unknown.bit_count()} unseen cards cannot fill the places {room}")
    allowed = [unknown] * len(agents)
    where = {agent: i for i, agent in enumerate(agents)}
    # Voids: a seat that did not follow the suit led holds none of it now.
    led = -1
    for i, (seat, card) in enumerate(plays_in_order(obs)):
        if i % 3 == 0:
            led = card // 10
        elif card // 10 != led and seat != me:
            allowed[where[HAND, seat]] &= ~SUIT_MASKS[led]

    def only(cards: CardSet, seat: int) -> None:
        """``cards`` (where hidden) are in ``seat``'s hand or among its discards."""
        places = [i for i, (_, s) in enumerate(agents) if s == seat]
        for i in range(len(agents)):
            if i not in places:
                allowed[i] &= ~cards

    if obs.called is not None and soloist is not None and soloist != me:
        only(1 << obs.called, soloist)  # the soloist holds it or discarded it
    if obs.given and soloist == me and obs.called_holder is not None:
        only(mask_of(obs.given), obs.called_holder)
    if st.defenders is not None:
        for seat in st.defenders:
            if seat != me and st.taken[seat]:
                only(st.taken[seat], seat)
    return Constraints(st, tuple(agents), tuple(room), unknown, tuple(allowed))


def _feasible(left: list[int], groups: dict[int, int], agents: int) -> bool:
    """Hall's condition: every set of agents has room for the cards that may go nowhere else."""
    for subset in range(1, 1 << agents):
        room = sum(left[a] for a in range(agents) if subset >> a & 1)
        only = sum(n for mask, n in groups.items() if mask & ~subset == 0)
        if only > room:
            return False
    return True


def deal_hidden(lim: Constraints, rng: random.Random) -> list[CardSet] | None:
    """One draw of where the hidden cards are: a card set per agent; None when this draw
    found no way to meet the constraints."""
    n = len(lim.agents)
    left = list(lim.room)
    cards = cards_of(lim.unknown)
    masks = {c: sum(1 << a for a in range(n) if lim.allowed[a] >> c & 1) for c in cards}
    groups: dict[int, int] = {}
    for c in cards:
        groups[masks[c]] = groups.get(masks[c], 0) + 1
    if not _feasible(left, groups, n):
        return None
    rng.shuffle(cards)
    # The most constrained cards first, so the room-weighted choices rarely strand one;
    # cards allowed alike end up together.
    cards.sort(key=lambda c: (masks[c].bit_count(), masks[c]))
    out = [0] * n
    for i, c in enumerate(cards):
        mask = masks[c]
        if mask == masks[cards[-1]] and all(left[a] == 0 or mask >> a & 1 for a in range(n)):
            # The rest (all alike, being sorted) may go anywhere there is room: deal them.
            rest = cards[i:]
            for a in range(n):
                for card in rest[: left[a]]:
                    out[a] |= 1 << card
                rest = rest[left[a] :]
            return out
        groups[mask] -= 1
        options = [a for a in range(n) if mask >> a & 1 and left[a] > 0]
        while options:
            (a,) = rng.choices(options, [left[o] for o in options])
            left[a] -= 1
            if _feasible(left, groups, n):
                break
            left[a] += 1
            options.remove(a)
        else:
            return None
        out[a] |= 1 << c
    return out


def _pick(rng: random.Random, pool: CardSet, k: int) -> CardSet | None:
    cards = cards_of(pool)
    if len(cards) < k:
        return None
    return mask_of(rng.sample(cards, k))


@dataclass(frozen=True)
class Story:
    """A world's deal and the hidden steps that bring it to the observation."""

    dealt: tuple[CardSet, ...]
    monte: CardSet
    give: int | None
    """The card the soloist gave in chiamo, once given."""
    discards: tuple[CardSet, ...]
    """Per seat, its discards so far."""


def story(
    obs: CalabresellaObservation, lim: Constraints, placed: list[CardSet], rng: random.Random
) -> Story | None:
    """Work back from where the hidden cards are now to the deal (None: this draw cannot)."""
    st = lim.setting
    me = obs.seat
    seats = obs.seats
    hand = [0] * seats
    discards = [0] * seats
    monte = 0
    for (kind, seat), cards in zip(lim.agents, placed, strict=True):
        if kind == HAND:
            hand[seat] = cards
        elif kind == DISCARDS:
            discards[seat] = cards
        else:
            monte = cards
    hand[me] = mask_of(obs.hand)
    discards[me] = mask_of(obs.discards)
    # Every card each seat has held since the exchanges.
    had = [hand[s] | st.played[s] | discards[s] for s in range(seats)]
    taken = list(st.taken)
    contract, soloist, called = obs.contract, obs.soloist, obs.called
    exchanged = obs.phase in (Phase.DISCARD, Phase.PLAY)
    if obs.contract is Contract.SCEGLIETE:
        monte = mask_of(obs.monte)
    elif exchanged and contract in (Contract.CHIAMO, Contract.SOLO):
        assert soloist is not None
        if soloist == me:
            monte = mask_of(obs.monte)
        elif obs.called_in_monte:
            assert called is not None
            rest = _pick(rng, had[soloist] & ~(1 << called), 3)
            if rest is None:
                return None
            monte = rest | 1 << called
        else:
            pool = had[soloist] & ~(1 << called) if called is not None else had[soloist]
            picked = _pick(rng, pool, 4)
            if picked is None:
                return None
            monte = picked
        taken[soloist] = monte
    elif exchanged and contract is Contract.DIVIDETE:
        assert st.defenders is not None
        first, second = st.defenders
        # The first defender was handed the two lowest monte cards, the second the others.
        low: CardSet | None
        high: CardSet | None
        if me == first:
            low = taken[first]
            high = _pick(rng, had[second] & ~((2 << max(cards_of(low))) - 1), 2)
        elif me == second:
            high = taken[second]
            low = _pick(rng, had[first] & ((1 << min(cards_of(high))) - 1), 2)
        else:
            low = _pick(rng, had[first], 2)
            high = None
            if low is not None:
                high = _pick(rng, had[second] & ~((2 << max(cards_of(low))) - 1), 2)
        if low is None or high is None:
            return None
        taken[first], taken[second] = low, high
        monte = low | high
    dealt = [had[s] & ~taken[s] for s in range(seats)]
    give: int | None = None
    holder = obs.called_holder
    if holder is not None:
        assert soloist is not None and called is not None
        if obs.phase is Phase.GIVE:
            dealt[soloist] &= ~(1 << called)
            dealt[holder] |= 1 << called
        else:
            if soloist == me:
                (give,) = obs.given
            elif holder == me:
                (give,) = obs.received
            else:
                could = cards_of(had[holder] & ~(1 << called))
                if not could:
                    return None
                give = rng.choice(could)
            dealt[soloist] = (dealt[soloist] & ~(1 << called)) | 1 << give
            dealt[holder] = (dealt[holder] & ~(1 << give)) | 1 << called
    for s in range(seats):
        if dealt[s].bit_count() != (HAND_SIZE if s in st.order else 0):
            return None
    return Story(tuple(dealt), monte, give, tuple(discards))


def replay(
    rules: Rules, obs: CalabresellaObservation, st: Setting, told: Story
) -> CalabresellaDeal | None:
    """The deal of ``told`` played on to where ``obs`` (whose setting is ``st``) stands: the
    public history with the story's hidden steps; None if the engine refuses any of them."""
    deal = CalabresellaDeal(rules, told.dealt, obs.dealer, told.monte)
    try:
        for action in story_actions(obs, st, told):
            deal.apply_action(action)
    except IllegalActionError:
        return None
    return deal


def story_actions(obs: CalabresellaObservation, st: Setting, told: Story) -> list[Action]:
    """Every action of the deal of ``told`` up to where ``obs`` (whose setting is ``st``)
    stands, in order: the public history with the story's hidden steps."""
    actions = [bid for _, bid in obs.bids]
    if obs.called is not None:
        actions.append(CALL_BASE + obs.called)
    if told.give is not None:
        actions.append(GIVE_BASE + told.give)
    if obs.split is not None:
        actions.append(SPLIT_BASE + obs.split)
    left = [cards_of(d) for d in told.discards]
    for seat in st.queue[: st.done]:
        actions.append(DISCARD_BASE + left[seat].pop())
    actions.extend(card for _, card in plays_in_order(obs))
    return actions


def sample_world(
    rules: Rules,
    obs: CalabresellaObservation,
    lim: Constraints,
    rng: random.Random,
    keep: Callable[[Story, random.Random], bool] | None = None,
) -> CalabresellaDeal | None:
    """One world consistent with ``obs``, at the point ``obs`` describes; None when this
    try did not find one (try again with the same ``rng``). ``keep``, if given, may throw
    a consistent story away before it is replayed (to weigh worlds by how likely they
    make what the other seats did)."""
    placed = deal_hidden(lim, rng)
    if placed is None:
        return None
    told = story(obs, lim, placed, rng)
    if told is None or (keep is not None and not keep(told, rng)):
        return None
    deal = replay(rules, obs, lim.setting, told)
    if deal is None or not same_view(deal.observation(obs.seat), obs):
        return None
    return deal
