"""The research encoding: one trick worked out by hand, entry by entry, from two seats;
and, by Hypothesis, what holds for every preset: entries inside their sections, masks that
are the legal actions, nothing of another seat's hidden cards in a seat's tensor, and the
environments' caches giving what is computed afresh."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.cards import mask_of, parse_card
from referee.engine.deals import Deal
from referee.engine.registry import new_game, preset, presets
from referee.families.tressette.actions import parse_action
from referee.families.tressette.game import TressetteGame
from referee.research.encoding import (
    HISTORY_SECTIONS,
    INFORMATION_STATE_SIZE,
    OBSERVATION_SECTIONS,
    OBSERVATION_SIZE,
    SettledCache,
    action_table,
    information_state_entries,
    legal_ids,
    num_actions,
    observation_entries,
)

AT = {s.name: s.start for s in (*OBSERVATION_SECTIONS, *HISTORY_SECTIONS)}
TRESSETTE = preset("tressette")


def one_suit_each(number: int, dealer: int) -> Deal:
    """The eldest (the seat after the dealer) holds denari, the next coppe, then spade,
    then bastoni."""
    hands = tuple(mask_of(range(10 * ((s - dealer - 1) % 4), 10 * ((s - dealer - 1) % 4) + 10))
                  for s in range(4))  # fmt: skip
    return Deal("tressette", "hand-worked", number, dealer, hands, 0)


def first_trick() -> TressetteGame:
    """Seat 3 (the eldest; seat 2 deals this seed) leads 3D with a busso; the others,
    void, throw their 4s; seat 3 takes the trick (a 3 is a third of a point)."""
    state = TressetteGame(TRESSETTE, "hw", deals=1, deal_source=one_suit_each)
    assert (state.deal.dealer, state.current_player()) == (2, 3)
    for text in ("3D busso", "4C", "4S", "4B"):
        state.apply_action(parse_action(text))
    return state


def cards(section: str, texts: str, offset: int = 0) -> dict[int, float]:
    return {AT[section] + offset + parse_card(t): 1.0 for t in texts.split()}


def test_seat_0_after_the_first_trick_by_hand() -> None:
    state = first_trick()
    # Seat 0 holds coppe: all but its 4. Relative seats from 0 are the seats themselves.
    expected = cards("hand", "3C 2C AC KC QC JC 7C 6C 5C")
    expected |= cards("played", "3D", 3 * 40) | cards("played", "4C")
    expected |= cards("played", "4S", 40) | cards("played", "4B", 80)
    # Seat 3 is of the other side (1+3): the four cards are in "won by another side".
    expected |= cards("won", "3D 4C 4S 4B", 40)
    # A busso (signal 1) by relative seat 3 on denari (suit 0): (3*6 + 0)*4 + 0.
    expected[AT["signals"] + 72] = 1.0
    expected[AT["phase"] + 1] = 1.0  # play
    expected[AT["to_act"] + 3] = 1.0
    expected[AT["dealer"] + 2] = 1.0
    expected[AT["captured"] + 1] = 1 / 32  # the other side's third, of the 32 tricks hold
    expected[AT["progress"]] = 1 / 10
    assert observation_entries(state, 0) == expected


def test_seat_1_sees_the_same_trick_from_its_own_chair() -> None:
    state = first_trick()
    entries = observation_entries(state, 1)
    # From seat 1, seat 3 is relative seat 2 (its partner), seat 0 relative seat 3.
    assert entries[AT["played"] + 2 * 40 + parse_card("3D")] == 1.0
    assert entries[AT["played"] + 3 * 40 + parse_card("4C")] == 1.0
    assert all(entries[i] == 1.0 for i in cards("won", "3D 4C 4S 4B"))  # its side's
    assert entries[AT["captured"]] == 1 / 32
    assert entries[AT["signals"] + (2 * 6 + 0) * 4 + 0] == 1.0
    assert entries[AT["to_act"] + 2] == 1.0 and entries[AT["dealer"] + 1] == 1.0
    assert set(cards("hand", "3S 2S AS KS QS JS 7S 6S 5S")) <= set(entries)


def test_the_information_state_adds_the_plays_in_order() -> None:
    state = first_trick()
    history = {
        i: v for i, v in information_state_entries(state, 0).items() if i >= OBSERVATION_SIZE
    }
    play = 40 + 4 + 7
    expected: dict[int, float] = {}
    for i, (card, seat, signal) in enumerate(((0, 3, 1), (19, 0, 0), (29, 1, 0), (39, 2, 0))):
        at = AT["plays"] + i * play
        expected |= {at + card: 1.0, at + 40 + seat: 1.0, at + 44 + signal: 1.0}
    assert history == expected


def test_the_action_table_is_the_codecs() -> None:
    rows = action_table("tressette")
    assert num_actions("tressette") == 322 and len(rows) == 301
    assert (rows[0].id, rows[0].kind, rows[0].text) == (0, "play", "3D")
    assert (rows[40].id, rows[40].text) == (40, "3D busso")
    assert [r.text for r in rows[-2:]] == ["end-declarations", "call-out"]
    assert num_actions("calabresella") == 576 and num_actions("briscola") == 40
    calls = [r for r in action_table("calabresella") if r.kind == "call"]
    assert (calls[0].id, calls[0].text) == (440, "call 3D")


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(presets())), seed=st.integers(0, 10**6))
def test_every_entry_is_in_its_tensor_and_every_mask_is_the_legal_actions(
    name: str, seed: int
) -> None:
    rules = preset(name)
    state = new_game(rules, f"h{seed}", deals=1)
    rng = random.Random(seed)
    while not state.is_terminal():
        for seat in range(rules.players):
            entries = information_state_entries(state, seat)
            assert all(0 <= i < INFORMATION_STATE_SIZE for i in entries)
            assert all(-1.0 <= v <= 1.0 and v != 0 for v in entries.values())
            legal = legal_ids(state, seat)
            assert (len(legal) > 0) == (state.current_player() == seat)
            assert all(0 <= a < num_actions(rules.game) for a in legal)
        state.apply_action(rng.choice(state.legal_actions()))


@settings(max_examples=25, deadline=None)
@given(order=st.permutations(range(20)))
def test_nothing_of_the_others_hidden_cards_reaches_a_seat(order: list[int]) -> None:
    """Seats 0 and 3 keep their suits; spade and bastoni go round seats 1 and 2 in any
    order: seat 0's tensors are the same, at the start and after seat 3's lead."""
    rest = [20 + i for i in order]

    def shuffled(number: int, dealer: int) -> Deal:
        hands = (mask_of(range(10, 20)), mask_of(rest[:10]), mask_of(rest[10:]), mask_of(range(10)))
        return Deal("tressette", "hand-worked", number, dealer, hands, 0)

    plain = TressetteGame(TRESSETTE, "hw", deals=1, deal_source=one_suit_each)
    mixed = TressetteGame(TRESSETTE, "hw", deals=1, deal_source=shuffled)
    assert information_state_entries(plain, 0) == information_state_entries(mixed, 0)
    for state in (plain, mixed):
        state.apply_action(parse_action("AD striscio"))
    assert information_state_entries(plain, 0) == information_state_entries(mixed, 0)
    same_hands = set(order[:10]) == set(range(10))
    assert (plain.observation(1).hand == mixed.observation(1).hand) == same_hands


@pytest.mark.parametrize("name", sorted(presets()))
def test_the_layout_has_no_gap(name: str) -> None:
    sections = (*OBSERVATION_SECTIONS, *HISTORY_SECTIONS)
    ends = [s.start + s.size for s in sections]
    assert [s.start for s in sections[1:]] == ends[:-1] and ends[-1] == INFORMATION_STATE_SIZE
    state = new_game(preset(name), "layout", deals=1)
    assert max(observation_entries(state, 0)) < OBSERVATION_SIZE


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(presets())), seed=st.integers(0, 10**6))
def test_what_the_caches_keep_gives_the_encoding_computed_afresh(name: str, seed: int) -> None:
    """The environments' cache of the completed tricks' part gives every seat's encoding
    as computed from nothing, whichever seats are asked when, so that several tricks may
    end between two asks, and from one deal to the next."""
    rules = preset(name)
    state = new_game(rules, f"c{seed}", deals=2)
    rng = random.Random(seed)
    cache = SettledCache()
    while not state.is_terminal():
        for seat in range(rules.players):
            if rng.random() < 0.3:
                continue
            observed = observation_entries(state, seat)
            history = information_state_entries(state, seat)
            assert observation_entries(state, seat, cache) == observed
            assert information_state_entries(state, seat, cache) == history
        state.apply_action(rng.choice(state.legal_actions()))
