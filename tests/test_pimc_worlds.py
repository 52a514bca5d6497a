"""The worlds pimc searches: never against what the seat has seen, and never excluding the truth.

Deals of every Tressette family, under random knobs (every signal mode, striscio meaning
and length, declaration mode), are played by random legal actions, signals and
declarations included, to a random point. The seat to act's observation is then given
to the sampler, and:

- the true deal meets the limits the sampler reads from it (so the inference is sound:
  what a play, a signal or a declaration rules out, the true hands do not hold);
- every sampled world, rebuilt here from its dealt hands and replayed with the true
  history of actions, is accepted by the engine at every step and shows the seat exactly
  the observation it was given.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.cards import CARD_NAMES, NUM_CARDS, SUIT_MASKS, CardSet, parse_card
from referee.engine.codec import Action
from referee.engine.observation import Observation, Phase
from referee.engine.registry import preset
from referee.engine.rules import Rules
from referee.families.tressette.actions import END_DECLARATIONS, is_declaration
from referee.families.tressette.deal import TressetteDeal
from referee.families.tressette.game import new_deal
from referee.search.tressette_worlds import Constraints, constraints, sample_world, twins_removed
from tests.test_properties import rule_sets


def _deal(rules: Rules, seed: str, dealer: int) -> TressetteDeal:
    dealt = rules.family.deal(rules, seed, 1, dealer)
    trump = dealt.last_card if rules.briscola else None
    return new_deal(rules, dealt.hands, dealt.dealer, dealt.widow, None, trump, dealt.stock)


class Playable(Protocol):
    def current_player(self) -> int | None: ...
    def legal_actions(self) -> tuple[int, ...]: ...
    def apply_action(self, action: int) -> None: ...
    def is_terminal(self) -> bool: ...


D = TypeVar("D", bound=Playable)


def play_randomly(
    deal: D,
    steps: int,
    rng: random.Random,
    pool: Callable[[tuple[int, ...]], Sequence[int]] = lambda legal: legal,
) -> tuple[D, list[tuple[int, Action]]] | None:
    """``deal`` after ``steps`` actions drawn by ``rng`` from ``pool`` of the legal ones, and
    those (seat, action); None if it ended on the way."""
    history: list[tuple[int, Action]] = []
    for _ in range(steps):
        seat = deal.current_player()
        if seat is None:
            return None
        action = rng.choice(pool(deal.legal_actions()))
        deal.apply_action(action)
        history.append((seat, action))
    return None if deal.is_terminal() else (deal, history)


def played_to(
    rules: Rules, seed: str, dealer: int, steps: int, rng: random.Random
) -> tuple[TressetteDeal, list[tuple[int, Action]]] | None:
    return play_randomly(_deal(rules, seed, dealer), steps, rng)


def _meets(lim: Constraints, truth: TressetteDeal, me: int) -> None:
    """The true deal's hidden cards are where the limits allow them."""
    hidden = 0
    for seat in range(truth.players):
        if seat == me:
            assert lim.need[seat] == 0
            continue
        held = truth.hand(seat)
        assert held & lim.known[seat] == lim.known[seat], f"seat {seat} lacks a known card"
        unknown_held = held & ~lim.known[seat]
        assert unknown_held & ~lim.unknown == 0
        assert unknown_held & ~lim.allowed[seat] == 0, (
            f"seat {seat} holds a card the limits rule out: "
            f"{[c for c in range(NUM_CARDS) if (unknown_held & ~lim.allowed[seat]) >> c & 1]}"
        )
        assert unknown_held.bit_count() == lim.need[seat]
        for suit, lo, hi in lim.counts[seat]:
            n = (unknown_held & SUIT_MASKS[suit]).bit_count()
            assert lo <= n <= hi, f"seat {seat} holds {n} of suit {suit}, limits {lo}..{hi}"
        hidden |= unknown_held
    assert (lim.unknown & ~hidden).bit_count() == lim.pile


def _replay(deal: TressetteDeal, history: list[tuple[int, Action]], me: int, phase: Phase) -> None:
    """The true actions, on another deal. Which seats a declaration round asks is not in the
    observation (it asks those holding a combination), so its ends are the world's own."""
    for seat, action in history:
        if action == END_DECLARATIONS:
            continue
        while deal.phase == Phase.DECLARE and (
            deal.current_player() != seat or not is_declaration(action)
        ):
            deal.apply_action(END_DECLARATIONS)
        deal.apply_action(action)
    while deal.phase == Phase.DECLARE and (deal.current_player() != me or phase != deal.phase):
        deal.apply_action(END_DECLARATIONS)


def _dealt(world: TressetteDeal, seat: int) -> CardSet:
    return world.initial_hand(seat)


@settings(max_examples=200, deadline=None)
@given(
    rules=rule_sets(),
    seed=st.text(max_size=8),
    dealer=st.integers(0, 3),
    steps=st.integers(0, 38),
    choices=st.integers(0, 2**32 - 1),
)
def test_sampled_worlds_agree_with_everything_the_seat_saw(
    rules: Rules, seed: str, dealer: int, steps: int, choices: int
) -> None:
    rng = random.Random(choices)
    played = played_to(rules, seed, dealer % rules.players, steps, rng)
    if played is None:
        return
    truth, history = played
    me = truth.current_player()
    assert me is not None
    obs = truth.observation(me)
    lim = constraints(rules, obs)
    _meets(lim, truth, me)
    found = 0
    for _ in range(60):
        world = sample_world(rules, obs, lim, rng)
        if world is None:
            continue
        found += 1
        # Rebuilt from the world's dealt cards and replayed with the true actions.
        hands = [_dealt(world, s) for s in range(rules.players)]
        stock = list(getattr(world, "stock", ()))
        widow = 0 if stock else world.widow
        again = new_deal(rules, hands, obs.dealer, widow, None, obs.trump, stock)
        assert hands[me] == truth.initial_hand(me)
        _replay(again, history, me, obs.phase)  # raises if the world contradicts an action
        assert again.observation(me) == obs
        if found == 5:
            break
    assert found, f"no world in 60 draws for {rules}"


def test_twin_cards_are_searched_once() -> None:
    """KD and QD touch and are worth a third each: one card to the search. 7D, 5D and 4D are
    worth nothing, and the 6D between them has been played: one card too. AD is worth more
    than KD, so it is not KD's twin."""
    rules = preset("tressette")
    names = ["AD", "KD", "QD", "7D", "5D", "4D", "3S"]
    hand = tuple(sorted(parse_card(c) for c in names))
    trick = tuple((s, parse_card(c)) for s, c in ((1, "6D"), (2, "JS"), (3, "2S"), (0, "3S")))
    obs = Observation(
        seat=0, dealer=3, phase=Phase.PLAY, hand=hand, current_player=0, legal_actions=(),
        trick=trick[:1], tricks=(), declarations=(), captured=(0, 0), totals=(0, 0),
    )  # fmt: skip
    kept = twins_removed(rules, obs, [parse_card(c) for c in names])
    assert [CARD_NAMES[c] for c in kept] == ["AD", "KD", "7D", "3S"]
    # Without the 6D played, 7D and 5D are not twins (the 6D may take a trick between).
    alone = dataclasses.replace(obs, trick=())
    kept = twins_removed(rules, alone, [parse_card(c) for c in names])
    assert [CARD_NAMES[c] for c in kept] == ["AD", "KD", "7D", "5D", "3S"]
