"""Each rule and knob of RULES.md §1–3, on hands worked out by hand."""

from __future__ import annotations

import dataclasses

import pytest

from referee.engine.cards import cards_of, names
from referee.engine.deals import Deal, first_dealer
from referee.engine.errors import IllegalActionError, Reason
from referee.engine.game_base import Termination
from referee.engine.observation import Phase
from referee.engine.registry import preset
from referee.families.tressette.actions import action_name, parse_action
from referee.families.tressette.deal import score_deal
from referee.families.tressette.game import TressetteGame
from tests.helpers import ONE_SUIT_EACH, deal_from, hand, play, run_out_leading_own_suit

TRESSETTE = preset("tressette")

# Seat 0 leads (dealer 3). Seat 3 holds no denari.
FOLLOW_HANDS = [
    "5D 6D 7D JD QD 4C 5C 6C 7C JC",
    "KD AD 4D 3C 2C AC KC QC 4S 5S",
    "2D 3D 6S 7S JS QS KS AS 2S 3S",
    "4B 5B 6B 7B JB QB KB AB 2B 3B",
]


def refused(deal, text: str) -> Reason:
    """The reason the deal refuses an action; the state must not change."""
    before = (deal.legal_actions(), [deal.hand(s) for s in range(deal.players)], deal.plays)
    with pytest.raises(IllegalActionError) as info:
        deal.apply_action(parse_action(text))
    after = (deal.legal_actions(), [deal.hand(s) for s in range(deal.players)], deal.plays)
    assert before == after
    assert info.value.message
    return info.value.reason


def legal_texts(deal) -> set[str]:
    return {action_name(a) for a in deal.legal_actions()}


# -- follow suit and the trick winner ------------------------------------------------------


def test_follow_suit_and_highest_of_the_led_suit_wins():
    deal = deal_from(TRESSETTE, FOLLOW_HANDS, dealer=3)
    assert deal.current_player() == 0
    play(deal, "5D")
    assert refused(deal, "3C") == Reason.MUST_FOLLOW_SUIT
    assert refused(deal, "3D") == Reason.CARD_NOT_IN_HAND
    play(deal, "KD", "2D")
    # Seat 3 has no denari: any card, and its 3 of bastoni cannot win.
    assert len([a for a in deal.legal_actions() if a < 40]) == 10
    play(deal, "3B")
    assert deal.trick_winners == (2,)
    assert deal.current_player() == 2
    # KD, 2D and 3B are a third each; 5D is worth nothing.
    assert deal.captured == (3, 0)


@pytest.mark.parametrize(
    ("cards", "winner"),
    [
        ("4D 5D AD KD", 2),  # the ace beats the re
        ("AD 2D KD QD", 1),  # the 2 beats the ace
        ("2D 3D AD 4D", 1),  # the 3 beats everything
        ("QD JD KD 7D", 2),  # re, cavallo, fante
        ("7D 6D 5D 4D", 0),
        ("4D 3C 3S 3B", 0),  # cards of another suit never win
        ("JD QC QD 2S", 2),
    ],
)
def test_rank_order_is_3_2_a_k_q_j_7_6_5_4(cards, winner):
    deal = deal_from(TRESSETTE, cards.split(), dealer=3)  # one-card hands: one trick
    play(deal, *cards.split())
    assert deal.trick_winners == (winner,)
    assert deal.is_terminal()


# -- signals --------------------------------------------------------------------------------


def test_any_mode_offers_exactly_the_truthful_signals():
    deal = deal_from(TRESSETTE, FOLLOW_HANDS, dealer=3)
    lead = legal_texts(deal)
    assert {"5D", "5D busso", "5D striscio"} <= lead  # 4 more denari after it
    assert "5D volo" not in lead
    assert {"JC volo", "JC striscio"} & lead == {"JC striscio"}
    play(deal, "5D busso")
    # Seat 1 keeps two denari whichever it plays: striscio is true, volo false, busso late.
    assert legal_texts(deal) == {
        "KD", "KD striscio", "AD", "AD striscio", "4D", "4D striscio",
        "declare napoli-C",  # seat 1 holds 3C 2C AC and has not played yet
    }  # fmt: skip
    assert refused(deal, "KD busso") == Reason.BUSSO_NOT_LEADING
    assert refused(deal, "KD volo") == Reason.FALSE_SIGNAL
    play(deal, "KD striscio")
    assert refused(deal, "2D volo") == Reason.FALSE_SIGNAL  # 3D stays behind
    play(deal, "2D striscio")
    assert refused(deal, "3B volo") == Reason.FALSE_SIGNAL
    play(deal, "3B striscio")  # a discard may signal about its own suit
    assert deal.current_player() == 2
    play(deal, "3D volo")  # seat 2's last denari
    plays = deal.plays
    assert [action_name(a) for _, a in plays] == [
        "5D busso", "KD striscio", "2D striscio", "3B striscio", "3D volo",
    ]  # fmt: skip


def test_muto_allows_no_signal():
    deal = deal_from(dataclasses.replace(TRESSETTE, signals="muto"), FOLLOW_HANDS, dealer=3)
    assert all(a < 40 for a in deal.legal_actions())
    assert refused(deal, "5D busso") == Reason.SIGNAL_NOT_ALLOWED
    play(deal, "5D")
    assert refused(deal, "KD striscio") == Reason.SIGNAL_NOT_ALLOWED


def test_leader_mode_signals_only_on_leads_from_the_second_trick():
    deal = deal_from(preset("treseta"), FOLLOW_HANDS, dealer=3)
    assert refused(deal, "5D busso") == Reason.SIGNAL_NOT_ALLOWED  # first trick
    play(deal, "5D")
    assert refused(deal, "KD striscio") == Reason.SIGNAL_NOT_ALLOWED
    play(deal, "KD", "2D", "3B")
    assert deal.current_player() == 2
    assert {"3D busso", "3D volo"} <= legal_texts(deal)
    play(deal, "3D volo")
    assert refused(deal, "4B striscio") == Reason.SIGNAL_NOT_ALLOWED  # followers stay silent
    play(deal, "4B")


def test_striscio_without_honours():
    rules = dataclasses.replace(TRESSETTE, striscio_meaning="more_no_honours")
    deal = deal_from(rules, FOLLOW_HANDS, dealer=3)
    play(deal, "5D")
    # After KD seat 1 keeps AD and 4D: more cards, but the ace is an honour.
    assert refused(deal, "KD striscio") == Reason.FALSE_SIGNAL
    # After AD it keeps KD and 4D: no honour left.
    play(deal, "AD striscio")
    assert refused(deal, "2D striscio") == Reason.FALSE_SIGNAL  # keeps 3D


def test_striscio_lengths_count_the_cards_left():
    rules = dataclasses.replace(TRESSETTE, striscio_lengths=True)
    deal = deal_from(rules, FOLLOW_HANDS, dealer=3)
    lead = legal_texts(deal)
    assert "5D striscio-lungo" in lead  # 6D 7D JD QD stay: four
    assert "JC striscio-lungo" in lead  # 4C 5C 6C 7C stay: four
    assert "5D striscio-corto" not in lead and "5D striscio" not in lead
    assert refused(deal, "5D striscio-corto") == Reason.FALSE_SIGNAL
    assert refused(deal, "5D striscio") == Reason.SIGNAL_NOT_ALLOWED  # plain is not said
    play(deal, "5D striscio-lungo")
    # Seat 1 keeps AD 4D after KD: two more is no striscio at all, corto is exactly three.
    assert {a for a in legal_texts(deal) if a.startswith("KD")} == {"KD"}
    assert refused(deal, "KD striscio-lungo") == Reason.FALSE_SIGNAL
    assert refused(deal, "KD striscio-corto") == Reason.FALSE_SIGNAL
    play(deal, "KD")
    assert refused(deal, "2D striscio-corto") == Reason.FALSE_SIGNAL  # one stays
    play(deal, "2D", "3B striscio-lungo")  # nine bastoni stay


LENGTH_HANDS = [
    "5D 6D 7D JD QD 4C 5C 6C 7C JC",
    "KD AD 4D 2D 3C 2C AC KC QC 4S",
    "3D 6S 7S JS QS KS AS 2S 3S 5S",
    "4B 5B 6B 7B JB QB KB AB 2B 3B",
]


def test_striscio_corto_is_exactly_three_more():
    deal = deal_from(dataclasses.replace(TRESSETTE, striscio_lengths=True), LENGTH_HANDS, 3)
    play(deal, "5D striscio-lungo")
    # After KD seat 1 keeps AD 4D 2D: exactly three, so corto and nothing longer.
    assert {a for a in legal_texts(deal) if a.startswith("KD")} == {"KD", "KD striscio-corto"}
    assert refused(deal, "KD striscio-lungo") == Reason.FALSE_SIGNAL
    play(deal, "KD striscio-corto", "3D volo", "3B striscio-lungo")
    assert [action_name(a) for _, a in deal.plays] == [
        "5D striscio-lungo", "KD striscio-corto", "3D volo", "3B striscio-lungo",
    ]  # fmt: skip


def test_striscio_corto_one_to_three_is_the_first_reading():
    """Records before 2026-12-01 said corto for 1 to 3 more; that reading stays playable."""
    rules = dataclasses.replace(TRESSETTE, striscio_lengths=True, striscio_corto="one_to_three")
    deal = deal_from(rules, FOLLOW_HANDS, dealer=3)
    play(deal, "5D striscio-lungo")
    assert "KD striscio-corto" in legal_texts(deal)  # two stay
    play(deal, "KD striscio-corto", "2D striscio-corto")  # one stays
    assert refused(deal, "3B striscio-corto") == Reason.FALSE_SIGNAL  # nine stay


def test_false_corto_names_what_corto_says():
    deal = deal_from(dataclasses.replace(TRESSETTE, striscio_lengths=True), FOLLOW_HANDS, 3)
    play(deal, "5D")
    with pytest.raises(IllegalActionError, match=r"would keep 2 denari.*exactly 3"):
        deal.apply_action(parse_action("KD striscio-corto"))


def test_ribusso_only_where_allowed():
    deal = deal_from(TRESSETTE, FOLLOW_HANDS, dealer=3)
    assert refused(deal, "5D ribusso") == Reason.SIGNAL_NOT_ALLOWED
    deal = deal_from(dataclasses.replace(TRESSETTE, ribusso=True), FOLLOW_HANDS, dealer=3)
    assert "5D ribusso" in legal_texts(deal)
    play(deal, "5D ribusso")
    assert refused(deal, "KD ribusso") == Reason.BUSSO_NOT_LEADING


# -- declarations ---------------------------------------------------------------------------

DECLARE_HANDS = [
    "3D 2D AD AC AS 3C 3S 4D 4C 4S",  # napoli-D, three aces and three 3s (no bastoni)
    "KD QD JD 7D 6D 5D 2C KC QC JC",
    "7C 6C 5C 2S KS QS JS 7S 6S 5S",
    "3B 2B AB KB QB JB 7B 6B 5B 4B",  # napoli-B
]


def test_several_declarations_count_together():
    deal = deal_from(TRESSETTE, DECLARE_HANDS, dealer=3)
    declares = {t for t in legal_texts(deal) if t.startswith("declare")}
    assert declares == {"declare napoli-D", "declare tre-3-noB", "declare tre-A-noB"}
    play(deal, "declare napoli-D", "declare tre-A-noB", "declare tre-3-noB")
    assert deal.current_player() == 0  # declaring does not pass the turn
    play(deal, "4D", "5D", "5C")
    assert "declare napoli-B" in legal_texts(deal)
    play(deal, "declare napoli-B", "4B")
    # Declarations are public: every seat sees them, with the cards they show.
    obs = deal.observation(1)
    assert [(s, action_name(300 + d)) for s, d in obs.declarations] == [
        (0, "declare napoli-D"), (0, "declare tre-A-noB"), (0, "declare tre-3-noB"),
        (3, "declare napoli-B"),
    ]  # fmt: skip
    while not deal.is_terminal():
        deal.apply_action(next(a for a in deal.legal_actions() if a < 40))
    assert deal.score is not None
    # napoli in denari + three aces + three 3s = 9; napoli in bastoni = 3.
    assert deal.score.declarations == (9, 3)
    assert deal.score.points == tuple(
        c + d for c, d in zip(deal.score.card_points, (9, 3), strict=True)
    )


def test_false_and_repeated_declarations():
    deal = deal_from(TRESSETTE, DECLARE_HANDS, dealer=3)
    assert refused(deal, "declare napoli-C") == Reason.FALSE_DECLARATION
    assert refused(deal, "declare tre-A-noD") == Reason.FALSE_DECLARATION  # holds AD
    assert refused(deal, "declare quattro-3") == Reason.FALSE_DECLARATION
    play(deal, "declare napoli-D")
    assert refused(deal, "declare napoli-D") == Reason.ALREADY_DECLARED


def test_late_declaration():
    deal = deal_from(TRESSETTE, DECLARE_HANDS, dealer=3)
    play(deal, "4D", "5D", "5C", "4B")  # seat 3 plays without declaring napoli-B
    assert deal.trick_winners == (1,)
    play(deal, "2C", "7C")
    assert deal.current_player() == 3
    assert not any(t.startswith("declare") for t in legal_texts(deal))
    assert refused(deal, "declare napoli-B") == Reason.LATE_DECLARATION


def test_quattro_is_four_points_or_the_knob():
    hands = [
        "AD AC AS AB 4D 4C 4S 4B 5D 5C",
        "3D KD QD JD 7D 3C KC QC JC 7C",
        "2D 6D 2C 6C 5S 6S 7S JS QS KS",
        "3S 2S 3B 2B 5B 6B 7B JB QB KB",
    ]
    deal = deal_from(TRESSETTE, hands, dealer=3)
    # With all four aces only the quattro is true: a tre names a missing suit.
    assert {t for t in legal_texts(deal) if t.startswith("declare")} == {"declare quattro-A"}
    play(deal, "declare quattro-A")
    assert deal.observation(2).declarations == ((0, 18),)
    assert deal.declared_points == (4, 0)
    deal = deal_from(dataclasses.replace(TRESSETTE, quattro_points=3), hands, dealer=3)
    play(deal, "declare quattro-A")
    assert deal.declared_points == (3, 0)


def test_declaration_limit():
    rules = dataclasses.replace(TRESSETTE, declaration_limit=1)
    deal = deal_from(rules, DECLARE_HANDS, dealer=3)
    play(deal, "declare tre-A-noB")
    assert not any(t.startswith("declare") for t in legal_texts(deal))
    assert refused(deal, "declare napoli-D") == Reason.DECLARATION_LIMIT


def test_auto_declare():
    rules = dataclasses.replace(TRESSETTE, auto_declare=True)
    deal = deal_from(rules, DECLARE_HANDS, dealer=3)
    assert [(s, action_name(300 + d)) for s, d in deal.declared] == [
        (0, "declare napoli-D"), (0, "declare tre-3-noB"), (0, "declare tre-A-noB"),
        (3, "declare napoli-B"),
    ]  # fmt: skip
    assert not any(t.startswith("declare") for t in legal_texts(deal))
    assert refused(deal, "declare napoli-D") == Reason.DECLARATIONS_OFF
    # With a limit, the referee declares the most valuable first.
    rules = dataclasses.replace(TRESSETTE, auto_declare=True, declaration_limit=2)
    deal = deal_from(rules, DECLARE_HANDS, dealer=3)
    assert [d for s, d in deal.declared if s == 0] == [0, 7]


def test_declare_before_first_card():
    rules = dataclasses.replace(TRESSETTE, declare_before_first_card=True)
    deal = deal_from(rules, DECLARE_HANDS, dealer=3)
    assert deal.phase == Phase.DECLARE
    assert deal.current_player() == 0
    assert legal_texts(deal) == {
        "declare napoli-D", "declare tre-3-noB", "declare tre-A-noB", "end-declarations",
    }  # fmt: skip
    assert refused(deal, "4D") == Reason.DECLARATIONS_FIRST
    play(deal, "declare napoli-D", "end-declarations")
    assert deal.current_player() == 3  # seats 1 and 2 have nothing to declare
    play(deal, "end-declarations")
    assert deal.phase == Phase.PLAY
    assert deal.current_player() == 0
    assert refused(deal, "declare tre-A-noB") == Reason.LATE_DECLARATION
    assert refused(deal, "end-declarations") == Reason.NOT_DECLARING
    assert deal.declared_points == (3, 0)


def test_no_declarations_knob():
    deal = deal_from(dataclasses.replace(TRESSETTE, declarations=False), DECLARE_HANDS, dealer=3)
    assert not any(t.startswith("declare") for t in legal_texts(deal))
    assert refused(deal, "declare napoli-D") == Reason.DECLARATIONS_OFF


# -- scoring ----------------------------------------------------------------------------------


def test_floor_arithmetic():
    # 18 and 14 thirds, the last trick (3/3) to the first side: 21 -> 7 and 14 -> 4.
    score = score_deal(TRESSETTE, [18, 14], [6, 4], [0, 0], last_trick=0)
    assert score.thirds == (21, 14)
    assert score.card_points == (7, 4)
    assert score.points == (7, 4)
    # The same cards with the last trick to the other side: 18 -> 6 and 17 -> 5.
    assert score_deal(TRESSETTE, [18, 14], [6, 4], [0, 0], last_trick=1).points == (6, 5)


def test_card_values_knob():
    # Seed 002's table: 3 and 2 a full point each.
    rules = dataclasses.replace(TRESSETTE, card_values=(3, 3, 3, 1, 1, 1, 0, 0, 0, 0))
    deal = deal_from(rules, FOLLOW_HANDS, dealer=3)
    play(deal, "5D", "KD", "2D", "3B")
    assert deal.captured == (7, 0)  # KD 1 + 2D 3 + 3B 3


NINE_AND_ONE = [
    "3D 2D AD KD QD JD 7D 6D 5D 4C",
    "3C 2C AC KC QC JC 7C 6C 5C 4D",
    "3S 2S AS KS QS JS 7S 6S 5S 4S",
    "3B 2B AB KB QB JB 7B 6B 5B 4B",
]


def test_a_whole_deal_with_the_last_trick():
    deal = deal_from(TRESSETTE, NINE_AND_ONE, dealer=3)
    play(deal, "3D", "4D", "4S", "4B")
    discards = zip(
        ["2D", "AD", "KD", "QD", "JD", "7D", "6D", "5D"],
        ["2C", "AC", "KC", "QC", "JC", "7C", "6C", "5C"],
        ["5S", "6S", "7S", "JS", "QS", "KS", "2S", "3S"],
        ["5B", "6B", "7B", "JB", "QB", "KB", "2B", "3B"],
        strict=True,
    )
    for trick in discards:
        play(deal, *trick)
    assert deal.trick_winners == (0,) * 9
    play(deal, "4C", "3C", "AS", "AB")
    assert deal.is_terminal()
    assert deal.score is not None
    # Side 1 takes 3C, AS, AB (7 thirds) and the last trick: 10 -> 3. Side 0: 25 -> 8.
    assert deal.score.thirds == (25, 10)
    assert deal.score.card_points == (8, 3)
    assert deal.score.points == (8, 3)
    assert deal.score.last_trick == 1
    assert deal.score.cappotto is None


def cappotto_deal(**knobs: object):
    rules = dataclasses.replace(TRESSETTE, **knobs)  # type: ignore[arg-type]
    deal = deal_from(rules, ONE_SUIT_EACH, dealer=3)
    for seat in range(4):
        assert deal.current_player() == seat
        play(deal, f"declare napoli-{'DCSB'[seat]}")
        deal.apply_action(min(a for a in deal.legal_actions() if a < 40))
    run_out_leading_own_suit(deal)
    assert deal.score is not None
    assert deal.trick_winners == (0,) * 10
    return deal.score


@pytest.mark.parametrize(
    ("knobs", "card_points", "declarations", "points"),
    [
        # fixed: the winners score 11 + 1 for the cards; the side shut out loses its napoli.
        ({}, (12, 0), (6, 0), (18, 0)),
        ({"cappotto_cancels_declarations": False}, (12, 0), (6, 6), (18, 6)),
        # double: the whole deal counts twice.
        ({"cappotto": "double"}, (11, 0), (6, 0), (34, 0)),
        ({"cappotto": "double", "cappotto_cancels_declarations": False}, (11, 0), (6, 6), (34, 12)),
        # none: a deal like any other.
        ({"cappotto": "none"}, (11, 0), (6, 6), (17, 6)),
    ],
)
def test_cappotto_knobs(knobs, card_points, declarations, points):
    score = cappotto_deal(**knobs)
    assert score.cappotto == 0
    assert score.thirds == (35, 0)
    assert (score.card_points, score.declarations, score.points) == (
        card_points,
        declarations,
        points,
    )


# -- tressette a tre ----------------------------------------------------------------------------


def test_a_tre_widow_goes_to_the_last_trick():
    rules = preset("tressette-a-tre")
    hands = [
        "3D 2D AD KD QD JD 7D 6D 5D 4D 4C 5C",
        "3C 2C AC KC QC JC 7C 6C 3S 2S AS KS",
        "QS JS 7S 6S 5S 4S 3B 2B QB JB 5B 4B",
    ]
    deal = deal_from(rules, hands, dealer=2, widow="AB KB 7B 6B")
    assert deal.current_player() == 0
    seat1 = ["AC", "KC", "QC", "JC", "7C", "6C", "3S", "2S", "AS", "KS"]
    seat2 = ["QS", "JS", "7S", "6S", "5S", "4S", "3B", "2B", "QB", "JB"]
    leads = ["3D", "2D", "AD", "KD", "QD", "JD", "7D", "6D", "5D", "4D"]
    for lead, d1, d2 in zip(leads, seat1, seat2, strict=True):
        play(deal, lead, d1, d2)
    play(deal, "5C", "3C", "5B")
    assert deal.current_player() == 1
    play(deal, "2C", "4B", "4C")
    assert deal.score is not None
    # Seat 0: denari 8 + seat 1's discards 12 + seat 2's 6 = 26 thirds -> 8.
    # Seat 1: 3C, 2C, the last trick and the widow's AB KB: 1 + 1 + 3 + 4 = 9 -> 3.
    assert deal.score.thirds == (26, 9, 0)
    assert deal.score.points == (8, 3, 0)
    assert sum(deal.score.points) == 11


def test_a_tre_observation_hides_the_widow():
    rules = preset("tressette-a-tre")
    state = TressetteGame(rules, "widow")
    widow = state.deal.widow
    assert len(cards_of(widow)) == 4
    for seat in range(3):
        obs = state.observation(seat)
        assert not set(obs.hand) & set(cards_of(widow))
        assert len(obs.hand) == 12


# -- games over deals ----------------------------------------------------------------------------


def seed_with_first_dealer(dealer: int) -> str:
    return next(s for s in map(str, range(100)) if first_dealer("tressette", s, 4) == dealer)


def one_suit_each(number: int, dealer: int) -> Deal:
    return Deal("tressette", "crafted", number, dealer, tuple(hand(h) for h in ONE_SUIT_EACH), 0)


def declare_then_play_highest(state: TressetteGame) -> None:
    while not state.is_terminal():
        legal = state.legal_actions()
        declares = [a for a in legal if 300 <= a < 320]
        state.apply_action(declares[0] if declares else min(a for a in legal if a < 40))


def test_a_tie_at_the_target_plays_one_more_deal():
    rules = dataclasses.replace(
        TRESSETTE, target=20, cappotto="none", cappotto_cancels_declarations=False
    )
    state = TressetteGame(rules, seed_with_first_dealer(3), deal_source=one_suit_each, record=True)
    # Whoever leads wins every trick: 11 + 6 declared against 6 declared.
    declare_then_play_highest(state)
    assert state.outcome is not None
    assert state.outcome.deals == 3
    assert state.outcome.totals == (40, 29)
    assert state.outcome.winner == 0
    assert state.outcome.termination == Termination.TARGET_REACHED
    assert state.events is not None
    totals = [e["totals"] for e in state.lines() if e["type"] == "score"]
    assert totals == [[17, 6], [23, 23], [40, 29]]


def test_when_both_reach_the_target_the_higher_wins():
    rules = dataclasses.replace(
        TRESSETTE, target=6, cappotto="none", cappotto_cancels_declarations=False
    )
    state = TressetteGame(rules, seed_with_first_dealer(3), deal_source=one_suit_each)
    declare_then_play_highest(state)
    assert state.outcome is not None
    assert (state.outcome.deals, state.outcome.totals, state.outcome.winner) == (1, (17, 6), 0)


def test_fixed_number_of_deals():
    rules = dataclasses.replace(TRESSETTE, cappotto="none", cappotto_cancels_declarations=False)
    state = TressetteGame(rules, seed_with_first_dealer(3), deals=2, deal_source=one_suit_each)
    declare_then_play_highest(state)
    assert state.outcome is not None
    assert state.outcome.termination == Termination.DEALS_PLAYED
    assert state.outcome.totals == (23, 23)
    assert state.outcome.winner is None  # a draw


def test_the_dealer_rotates():
    state = TressetteGame(TRESSETTE, "rotate")
    first = state.deal.dealer
    for expected in range(1, 4):
        while state.deal_number == expected:
            state.apply_action(state.legal_actions()[0])
        assert state.deal.dealer == (first + expected) % 4
        assert state.deal.current_player() == (first + expected + 1) % 4


def test_calling_out_right_wins_and_wrong_loses():
    rules = dataclasses.replace(TRESSETTE, call_out=True, target=3)
    seed = seed_with_first_dealer(3)
    right = TressetteGame(rules, seed, deal_source=one_suit_each, record=True)
    play_game_actions(right, "declare napoli-D", "call-out")
    assert right.outcome is not None
    assert (right.outcome.termination, right.outcome.winner) == (Termination.CALLED_OUT, 0)
    assert right.events is not None
    assert right.lines()[-2] == {"type": "call-out", "seat": 0, "claimed": 3, "correct": True}

    wrong = TressetteGame(rules, seed, deal_source=one_suit_each)
    play_game_actions(wrong, "call-out")
    assert wrong.outcome is not None
    assert (wrong.outcome.termination, wrong.outcome.winner) == (Termination.CALLED_OUT, 1)


def test_calling_out_only_when_leading_and_allowed():
    deal = deal_from(dataclasses.replace(TRESSETTE, call_out=True), ONE_SUIT_EACH, dealer=3)
    assert "call-out" in legal_texts(deal)
    play(deal, "3D")
    assert "call-out" not in legal_texts(deal)
    assert refused(deal, "call-out") == Reason.CALL_OUT_NOT_ALLOWED
    deal = deal_from(TRESSETTE, ONE_SUIT_EACH, dealer=3)
    assert "call-out" not in legal_texts(deal)
    assert refused(deal, "call-out") == Reason.CALL_OUT_NOT_ALLOWED


def play_game_actions(state: TressetteGame, *actions: str) -> None:
    for text in actions:
        state.apply_action(parse_action(text))


def test_forfeit_ends_the_game_against_the_seat():
    state = TressetteGame(TRESSETTE, "forfeit", record=True)
    state.forfeit(3, Termination.TIMEOUT, "no answer in 1 s")
    assert state.outcome is not None
    assert (state.outcome.termination, state.outcome.winner) == (Termination.TIMEOUT, 0)
    with pytest.raises(IllegalActionError) as info:
        state.apply_action(state.deal.legal_actions()[0])
    assert info.value.reason == Reason.GAME_OVER


def test_observation_shows_own_hand_and_public_play_only():
    deal = deal_from(TRESSETTE, FOLLOW_HANDS, dealer=3)
    play(deal, "5D busso", "KD")
    obs = deal.observation(2)
    assert set(names(obs.hand)) == set(FOLLOW_HANDS[2].split())
    assert [(s, action_name(a)) for s, a in obs.trick] == [(0, "5D busso"), (1, "KD")]
    assert obs.current_player == 2
    assert obs.legal_actions == deal.legal_actions()
    other = deal.observation(3)
    assert other.legal_actions == ()
    assert set(names(other.hand)) == set(FOLLOW_HANDS[3].split())


def test_illegal_actions_after_the_end():
    deal = deal_from(TRESSETTE, ONE_SUIT_EACH, dealer=3)
    run_out_leading_own_suit(deal)
    assert deal.legal_actions() == ()
    assert refused(deal, "3D") == Reason.GAME_OVER
