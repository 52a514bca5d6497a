"""Property tests: random rule sets, seeds and legal playouts through :class:`TressetteGame`.

Every step checks card conservation, that the legal actions are non-empty and apply,
that no observation holds another seat's hidden card, the deal scores, and that a
record replays byte for byte and verifies.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.cards import FULL_DECK, NUM_CARDS, SUIT_MASKS, CardSet, cards_of, mask_of
from referee.engine.codec import Action
from referee.engine.deals import Deal
from referee.engine.errors import IllegalActionError
from referee.engine.observation import Observation
from referee.engine.registry import preset
from referee.engine.rules import (
    CAPPOTTO_MODES,
    SIGNAL_MODES,
    STANDARD_CARD_VALUES,
    STRISCIO_CORTO_MEANINGS,
    STRISCIO_MEANINGS,
    Rules,
)
from referee.families.tressette.actions import NUM_PLAY_ACTIONS
from referee.families.tressette.deal import TressetteDeal
from referee.families.tressette.declarations import declaration_points
from referee.families.tressette.game import TressetteGame, new_deal
from referee.records import dumps, replay, verify_lines

PRESET_NAMES = (
    "tressette", "tressette-muto", "treseta", "tressette-a-tre", "tressette-briscola", "ciapano",
    "tressette-a-due",
)  # fmt: skip

KNOBS: dict[str, st.SearchStrategy[Any]] = {
    "signals": st.sampled_from(SIGNAL_MODES),
    "striscio_meaning": st.sampled_from(STRISCIO_MEANINGS),
    "striscio_lengths": st.booleans(),
    "striscio_corto": st.sampled_from(STRISCIO_CORTO_MEANINGS),
    "ribusso": st.booleans(),
    "declare_before_first_card": st.booleans(),
    "auto_declare": st.booleans(),
    "declaration_limit": st.integers(0, 3),
    "cappotto": st.sampled_from(CAPPOTTO_MODES),
    "cappotto_cancels_declarations": st.booleans(),
    "call_out": st.booleans(),
    "quattro_points": st.sampled_from((3, 4)),
    # A low target makes correct call-outs possible, not just wrong ones.
    "target": st.sampled_from((3, 11, 21, 41)),
}

OBSERVATION_FIELDS = {
    "seat",
    "dealer",
    "phase",
    "hand",
    "current_player",
    "legal_actions",
    "trick",
    "tricks",
    "declarations",
    "captured",
    "totals",
    "trump",
    "draws",
    "stock_left",
}
"""The fields checked for hidden cards below; a new field must be added to the check."""

# Every action id there is, and a few that name nothing.
ALL_ACTION_IDS = range(-3, 330)


@st.composite
def rule_sets(draw: st.DrawFn) -> Rules:
    """A preset with random knob overrides."""
    base = preset(draw(st.sampled_from(PRESET_NAMES)))
    knobs = draw(st.fixed_dictionaries({}, optional=KNOBS))
    if base.lower_wins:
        knobs.pop("call_out", None)  # refused in ciapanò (tests/test_ciapano.py)
    return Rules.from_dict(knobs, base=base)


seeds = st.text(min_size=0, max_size=12)
deal_kinds = st.sampled_from(("seeded", "seeded", "shuffled", "one-suit"))
"""How deals are made: from the seed, as in a real game, or by ``TressetteGame``'s deal_source."""

choice_seeds = st.integers(0, 2**32 - 1)
deal_counts = st.integers(1, 3)


def popcount(mask: CardSet) -> int:
    return bin(mask).count("1")


def played_mask(deal: TressetteDeal) -> CardSet:
    return mask_of(action % NUM_CARDS for _, action in deal.plays)


def check_conservation(deal: TressetteDeal) -> None:
    """Hands, played cards and the widow are disjoint and make the 40 cards."""
    parts = [deal.hand(s) for s in range(deal.players)]
    parts.append(played_mask(deal))
    parts.append(deal.widow)
    assert len(deal.plays) == popcount(parts[-2]), "a card was played twice"
    assert sum(popcount(p) for p in parts) == NUM_CARDS, "cards overlap or are missing"
    union = 0
    for p in parts:
        assert union & p == 0, "a card is in two places"
        union |= p
    assert union == FULL_DECK


def observed_cards(obs: Observation) -> set[int]:
    """Every card an observation shows, apart from public declarations."""
    cards = set(obs.hand)
    cards.update(action % NUM_CARDS for _, action in obs.trick)
    for plays, _winner in obs.tricks:
        cards.update(action % NUM_CARDS for _, action in plays)
    cards.update(a % NUM_CARDS for a in obs.legal_actions if 0 <= a < NUM_PLAY_ACTIONS)
    if obs.trump is not None:
        cards.add(obs.trump)
    cards.update(card for _, card in obs.draws)
    return cards


def check_observations(deal: TressetteDeal) -> None:
    """No seat sees another seat's unplayed card, nor the widow."""
    played = played_mask(deal)
    to_act = deal.current_player()
    for seat in range(deal.players):
        obs = deal.observation(seat)
        assert {f.name for f in dataclasses.fields(obs)} == OBSERVATION_FIELDS, (
            "Observation has new fields: check them for hidden cards here"
        )
        assert obs.seat == seat
        own = deal.hand(seat)
        assert mask_of(obs.hand) == own
        # The briscola's trump card is shown to everyone: public, though in the dealer's hand.
        public = own | played | (1 << deal.trump if deal.trump is not None else 0)
        # Tressette a due: each card drawn from the stock is shown to both players.
        public |= mask_of(card for _, card in obs.draws)
        assert obs.trump == deal.trump
        for card in observed_cards(obs):
            assert public >> card & 1, f"seat {seat} sees hidden card {card}"
            assert not deal.widow >> card & 1, f"seat {seat} sees widow card {card}"
        if seat == to_act:
            assert obs.legal_actions == deal.legal_actions()
        else:
            assert obs.legal_actions == ()
        assert obs.current_player == to_act


def check_trick_winners(deal: TressetteDeal) -> None:
    """Each finished trick went to its highest trump, else to the highest card of the suit led."""
    plays, n = deal.plays, deal.players
    for i, winner in enumerate(deal.trick_winners):
        trick = [(seat, action % NUM_CARDS) for seat, action in plays[i * n : (i + 1) * n]]
        trumps = [p for p in trick if deal.trump is not None and p[1] // 10 == deal.trump // 10]
        led = trick[0][1] // 10
        # Within a suit the lower card id is the stronger card.
        best = min(trumps or [p for p in trick if p[1] // 10 == led], key=lambda p: p[1])
        assert winner == best[0], f"trick {i + 1}: {trick} went to {winner}"


def check_score(rules: Rules, deal: TressetteDeal) -> None:
    """The arithmetic of a finished deal's score."""
    score = deal.score
    assert score is not None
    total_thirds = 4 * sum(rules.card_values) + 3
    assert sum(score.thirds) == total_thirds
    assert score.last_trick == deal.trick_winners[-1]
    declared = [0] * rules.sides
    for seat, declaration in deal.declared:
        declared[rules.side_of(seat)] += declaration_points(declaration, rules.quattro_points)
    if score.cappotto is None or rules.cappotto == "none":
        assert list(score.declarations) == declared
        assert list(score.card_points) == [t // 3 for t in score.thirds]
        assert list(score.points) == [
            c + d for c, d in zip(score.card_points, score.declarations, strict=True)
        ]
    if score.cappotto is None:
        assert sum(score.points) == sum(score.card_points) + sum(score.declarations)
        if rules.card_values == STANDARD_CARD_VALUES:
            if rules.sides == 2:
                assert sum(score.card_points) == 11
                assert sum(score.points) == 11 + sum(score.declarations)
            else:
                # 35 thirds floored seat by seat: each seat may lose up to 2 thirds.
                lowest = 11 - (2 * rules.sides - 2) // 3
                assert lowest <= sum(score.card_points) <= 11
    else:
        winners = rules.side_of(score.last_trick)
        assert score.cappotto == winners
        assert score.thirds[winners] == total_thirds
        if rules.cappotto == "fixed":
            assert score.card_points[winners] == total_thirds // 3 + 1
        if rules.cappotto != "none" and rules.cappotto_cancels_declarations:
            assert list(score.declarations) == [
                d if side == winners else 0 for side, d in enumerate(declared)
            ]
        if rules.cappotto == "double":
            assert list(score.points) == [
                2 * (c + d) for c, d in zip(score.card_points, score.declarations, strict=True)
            ]


def replica(deal: TressetteDeal, actions: list[Action]) -> TressetteDeal:
    """The same deal rebuilt from its dealt cards and replayed through ``actions``."""
    hands = [deal.initial_hand(s) for s in range(deal.players)]
    stock = getattr(deal, "stock", ())
    widow = 0 if stock else deal.widow
    copy = new_deal(deal.rules, hands, deal.dealer, widow, deal.totals, deal.trump, stock)
    for action in actions:
        copy.apply_action(action)
    return copy


def snapshot(state: TressetteGame) -> tuple[Any, ...]:
    deal = state.deal
    return (
        state.deal_number,
        state.current_player(),
        state.legal_actions(),
        tuple(deal.hand(s) for s in range(deal.players)),
        deal.plays,
        deal.declared,
        deal.captured,
        tuple(state.totals),
        state.outcome,
        None if state.events is None else len(state.lines()),
    )


DealSource = Callable[[int, int], Deal]


def deal_source(kind: str, rules: Rules, seed: str) -> DealSource | None:
    """None for seeded deals; else deals shuffled by ``random``, or one suit per seat.

    One suit per seat (4 seats) is a sure cappotto: nobody can follow the eldest's suit.
    """
    if kind == "seeded":
        return None

    def source(number: int, dealer: int) -> Deal:
        players, size = rules.players, rules.hand_size
        if kind == "one-suit" and players == 4:
            hands = tuple(SUIT_MASKS[(seat + number) % 4] for seat in range(4))
            last = min(cards_of(hands[dealer]))
            return Deal(rules.game, seed, number, dealer, hands, 0, last)
        deck = list(range(NUM_CARDS))
        random.Random(f"{seed}/{number}").shuffle(deck)
        hands = tuple(mask_of(deck[i * size : (i + 1) * size]) for i in range(players))
        last = min(cards_of(hands[dealer]))  # stands in for the dealer's last card
        rest = deck[players * size :]
        stock = tuple(rest) if players == 2 else ()  # a due draws the rest in this order
        return Deal(rules.game, seed, number, dealer, hands, mask_of(rest), last, stock)

    return source


def play_out(
    rules: Rules,
    seed: str,
    deals: int,
    choice_seed: int,
    *,
    check_all_every: float = 0.0,
    source: DealSource | None = None,
) -> TressetteGame:
    """Play random legal actions to the end, checking the invariants at every step."""
    rng = random.Random(choice_seed)
    state = TressetteGame(rules, seed, deals=deals, record=True, deal_source=source)
    deal_actions: list[Action] = []
    deal = state.deal
    totals = [0] * rules.sides
    steps = 0
    while not state.is_terminal():
        deal = state.deal
        check_conservation(deal)
        check_observations(deal)
        legal = state.legal_actions()
        assert legal, "no legal action in a game that is not over"
        assert len(set(legal)) == len(legal), "a legal action is listed twice"
        if check_all_every and rng.random() < check_all_every:
            for action in legal:
                replica(deal, deal_actions).apply_action(action)
        action = legal[rng.randrange(len(legal))]
        state.apply_action(action)
        steps += 1
        assert steps < 1000, "the game does not end"
        if deal is state.deal and not state.is_terminal():
            deal_actions.append(action)
            continue
        # The deal is over (the game moved on to a new deal, or ended).
        assert deal.is_terminal()
        assert deal.legal_actions() == ()
        check_conservation(deal)
        check_observations(deal)
        check_trick_winners(deal)
        if deal.call_out is None:
            check_score(rules, deal)
            assert deal.score is not None
            totals = [t + p for t, p in zip(totals, deal.score.points, strict=True)]
            assert state.totals == totals
        else:
            assert deal.score is None
            assert state.is_terminal()
        deal_actions = []
    assert state.legal_actions() == ()
    assert state.outcome is not None
    assert state.outcome.deals <= deals
    return state


@settings(max_examples=600, deadline=None)
@given(rules=rule_sets(), seed=seeds, deals=deal_counts, choice_seed=choice_seeds, kind=deal_kinds)
def test_random_games_keep_the_invariants(
    rules: Rules, seed: str, deals: int, choice_seed: int, kind: str
) -> None:
    source = deal_source(kind, rules, seed)
    state = play_out(rules, seed, deals, choice_seed, check_all_every=0.05, source=source)
    assert state.events is not None
    if source is not None:
        return  # a record replays seeded deals only
    lines = [dumps(e) for e in state.lines()]
    assert replay(lines) == lines
    verified = verify_lines(lines)
    assert verified.outcome == state.outcome
    assert verified.lines == len(lines)


@settings(max_examples=200, deadline=None)
@given(
    rules=rule_sets(),
    seed=seeds,
    choice_seed=choice_seeds,
    stop=st.floats(0, 1, exclude_max=True),
)
def test_illegal_actions_raise_and_change_nothing(
    rules: Rules, seed: str, choice_seed: int, stop: float
) -> None:
    """Stop a random game part way; every action not listed as legal is refused cleanly."""
    rng = random.Random(choice_seed)
    full = TressetteGame(rules, seed, deals=1)
    length = 0
    while not full.is_terminal():
        legal = full.legal_actions()
        full.apply_action(legal[rng.randrange(len(legal))])
        length += 1
    rng = random.Random(choice_seed)
    state = TressetteGame(rules, seed, deals=1, record=True)
    for _ in range(int(stop * length)):
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
    before = snapshot(state)
    legal = set(state.legal_actions())
    seat = state.current_player()
    assert seat is not None
    hand = state.deal.hand(seat)
    not_held = [c for c in range(NUM_CARDS) if not hand >> c & 1]
    assert not_held
    for action in [*not_held, *(a for a in ALL_ACTION_IDS if a not in legal)]:
        try:
            state.apply_action(action)
        except IllegalActionError:
            pass
        else:
            raise AssertionError(f"action {action} is not listed as legal but was applied")
        assert snapshot(state) == before, f"refused action {action} changed the state"


@settings(max_examples=30, deadline=None)
@given(rules=rule_sets(), seed=seeds, choice_seed=choice_seeds)
def test_finished_game_refuses_everything(rules: Rules, seed: str, choice_seed: int) -> None:
    state = play_out(rules, seed, 1, choice_seed)
    before = snapshot(state)
    for action in (0, 39, 300, 320, 321):
        try:
            state.apply_action(action)
        except IllegalActionError:
            pass
        else:
            raise AssertionError(f"action {action} applied after the game is over")
        assert snapshot(state) == before


@settings(max_examples=200, deadline=None)
@given(
    rules=rule_sets(),
    auction=st.sampled_from(("once", "open")),
    stramazzo=st.booleans(),
    game=st.sampled_from(("keep", "calabresella")),
)
def test_a_record_header_keeps_its_rules(
    rules: Rules, auction: str, stramazzo: bool, game: str
) -> None:
    """Whatever the knobs, a header's ``rules`` reads back as the rules it was written from."""
    if game == "calabresella":
        rules = dataclasses.replace(preset("calabresella"), auction=auction, stramazzo=stramazzo)
    else:
        rules = dataclasses.replace(rules, auction=auction, stramazzo=stramazzo)
    assert Rules.from_record(json.loads(json.dumps(rules.record_dict()))) == rules
