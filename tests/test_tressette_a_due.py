"""Tressette a due (RULES.md §5): the stock, the draws, declarations and scoring."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.cards import CARD_NAMES, FULL_DECK, NUM_CARDS, cards_of, mask_of, parse_card
from referee.engine.deals import deal_cards, first_dealer, shuffled_deck
from referee.engine.errors import IllegalActionError, Reason
from referee.engine.observation import Phase
from referee.engine.rules import CAPPOTTO_MODES, SIGNAL_MODES, Rules
from referee.families.tressette.a_due_deal import STOCK_SIZE, TressetteADueDeal, seeded_stock
from referee.families.tressette.actions import NUM_PLAY_ACTIONS, action_name
from referee.families.tressette.declarations import DECLARATION_CARDS, declaration_points
from tests.helpers import hand, play

A_DUE = Rules(game="tressette-a-due", target=21, signals="muto")


def cards(text: str) -> list[int]:
    return [parse_card(t) for t in text.split()]


def a_due(hands: list[str], stock: str, dealer: int = 1, rules: Rules = A_DUE) -> TressetteADueDeal:
    return TressetteADueDeal(rules, [hand(h) for h in hands], dealer, stock=cards(stock))


def legal_texts(deal: TressetteADueDeal) -> set[str]:
    return {action_name(a) for a in deal.legal_actions()}


def popcount(mask: int) -> int:
    return bin(mask).count("1")


def played_mask(deal: TressetteADueDeal) -> int:
    return mask_of(action % NUM_CARDS for _, action in deal.plays)


# -- a deal worked by hand --------------------------------------------------------------------

# Dealer 1, so seat 0 leads trick 1. Seat 0 holds every denaro, seat 1 every coppa: neither
# can ever follow the other's suit. Spade and bastoni come from the stock, two per trick.
ALL_DENARI = "3D 2D AD KD QD JD 7D 6D 5D 4D"
ALL_COPPE = "3C 2C AC KC QC JC 7C 6C 5C 4C"
STOCK = "4S 3S 5S 2S AB 4B 3B 2B KB QB AS KS QS JS 7S JB 6S 7B 6B 5B"

# (lead, follow, winner, thirds the winner takes). Thirds: A 3; 3 2 K Q J 1; 7 6 5 4 none.
STOCK_TRICKS = [
    ("4D", "4C", 0, 0),  # 1: seat 1 has no denari. Draws: seat 0 4S, seat 1 3S.
    ("4S", "3S", 1, 1),  # 2: seat 1 must follow with its drawn 3S. Draws: 1 5S, 0 2S.
    ("5S", "2S", 0, 1),  # 3: seat 0 must follow with 2S. Draws: 0 AB, 1 4B.
    ("AB", "4B", 0, 3),  # 4: Draws: 0 3B, 1 2B.
    ("3B", "2B", 0, 2),  # 5: Draws: 0 KB, 1 QB.
    ("3D", "5C", 0, 1),  # 6: Draws: 0 AS, 1 KS.
    ("AS", "KS", 0, 4),  # 7: Draws: 0 QS, 1 JS.
    ("KB", "QB", 0, 2),  # 8: Draws: 0 7S, 1 JB.
    ("7S", "JS", 1, 1),  # 9: the fante beats the 7. Draws: 1 6S, 0 7B.
    ("3C", "7B", 1, 1),  # 10: seat 0 has no coppe. Draws: 1 6B, 0 5B; the stock is empty.
]
# Seat 0 now holds 2D AD KD QD JD 7D 6D 5D QS 5B; seat 1 2C AC KC QC JC 7C 6C JB 6S 6B.
HAND_TRICKS = [
    ("6S", "QS", 0, 1),  # 11: QS is seat 0's only spade.
    ("5B", "6B", 1, 0),  # 12: seat 1 follows with a bastone (JB or 6B).
    ("JB", "5D", 1, 1),  # 13: seat 0 has no bastoni left.
    *[
        (c, d, 1, t)  # 14-20: seat 1 leads its coppe, seat 0 throws its denari.
        for c, d, t in zip(
            ["2C", "AC", "KC", "QC", "JC", "7C", "6C"],
            ["2D", "AD", "KD", "QD", "JD", "7D", "6D"],
            [2, 6, 2, 2, 2, 0, 0],
            strict=True,
        )
    ],
]
DRAWS = [
    (0, "4S"), (1, "3S"), (1, "5S"), (0, "2S"), (0, "AB"), (1, "4B"), (0, "3B"), (1, "2B"),
    (0, "KB"), (1, "QB"), (0, "AS"), (1, "KS"), (0, "QS"), (1, "JS"), (0, "7S"), (1, "JB"),
    (1, "6S"), (0, "7B"), (1, "6B"), (0, "5B"),
]  # fmt: skip


def test_a_whole_deal_with_the_stock() -> None:
    deal = a_due([ALL_DENARI, ALL_COPPE], STOCK)
    assert deal.current_player() == 0
    assert deal.stock_left() == 20 and deal.draws() == ()
    captured = [0, 0]
    for number, (lead, follow, winner, thirds) in enumerate(STOCK_TRICKS, start=1):
        play(deal, lead)
        if number in (2, 3, 4, 5, 7, 8, 9):
            # The follower's only card of the suit led is the one it just drew.
            assert legal_texts(deal) == {follow}
        play(deal, follow)
        captured[winner] += thirds
        assert deal.trick_winners[-1] == winner
        assert deal.captured == tuple(captured)
        # Winner first, then loser; both draws are public and the stock counts down.
        assert len(deal.draws()) == 2 * number
        assert deal.draws()[-2:] == tuple(
            (s, parse_card(c)) for s, c in DRAWS[2 * number - 2 : 2 * number]
        )
        assert deal.draws()[-2][0] == winner and deal.draws()[-1][0] == 1 - winner
        assert deal.stock_left() == 20 - 2 * number
        assert all(popcount(deal.hand(s)) == 10 for s in (0, 1))
        if number == 1:
            # Each seat sees its own draw in its hand, and never the other's hand.
            assert parse_card("4S") in deal.observation(0).hand
            assert parse_card("3S") in deal.observation(1).hand
            assert parse_card("3S") not in deal.observation(0).hand
    assert deal.draws() == tuple((s, parse_card(c)) for s, c in DRAWS)
    assert deal.hand(0) == hand("2D AD KD QD JD 7D 6D 5D QS 5B")
    assert deal.hand(1) == hand("2C AC KC QC JC 7C 6C JB 6S 6B")
    assert deal.widow == 0
    for number, (lead, follow, winner, thirds) in enumerate(HAND_TRICKS, start=11):
        play(deal, lead)
        if number == 11:
            assert legal_texts(deal) == {"QS"}
        if number == 12:
            assert legal_texts(deal) == {"JB", "6B"}
        play(deal, follow)
        captured[winner] += thirds
        assert deal.trick_winners[-1] == winner
        assert len(deal.draws()) == 20  # no more draws
        assert all(popcount(deal.hand(s)) == 20 - number for s in (0, 1))
    assert deal.tricks_played == 20
    assert deal.is_terminal() and deal.phase == Phase.DONE
    assert deal.score is not None
    # Seat 0 took 2S 1 + AB 3 + 3B 2B 2 + 3D 1 + AS KS 4 + KB QB 2 + QS 1 = 14 thirds -> 4.
    # Seat 1 took 3S 1 + JS 1 + 3C 1 + JB 1 + coppe 2C AC KC QC JC 7 + denari 2D AD KD QD JD
    # 7 = 18 thirds, and 3 for the last trick: 21 -> 7. 4 + 7 = 11.
    assert captured == [14, 18]
    assert deal.score.thirds == (14, 21)
    assert deal.score.card_points == (4, 7)
    assert deal.score.declarations == (0, 0)
    assert deal.score.points == (4, 7)
    assert deal.score.last_trick == 1 and deal.score.cappotto is None


def test_declarations_open_on_the_first_turn_with_the_dealt_cards() -> None:
    deal = a_due([ALL_DENARI, ALL_COPPE], STOCK)
    assert "declare napoli-D" in legal_texts(deal)
    play(deal, "declare napoli-D", "4D")
    assert "declare napoli-C" in legal_texts(deal)  # the follower's first turn
    play(deal, "4C")
    assert deal.declared == ((0, 0),) and deal.declared_points == (3, 0)
    # After trick 1 both have played: too late, though seat 1 still holds its napoli.
    play(deal, "4S")
    assert not any(a >= NUM_PLAY_ACTIONS for a in deal.legal_actions())
    with pytest.raises(IllegalActionError) as info:
        play(deal, "declare napoli-C")
    assert info.value.reason == Reason.LATE_DECLARATION


def test_a_napoli_completed_by_a_drawn_card_is_not_declarable() -> None:
    # Seat 0 is dealt 3D 2D but not AD, which is the stock's top card; 3S is the next.
    # Seat 1 is dealt 3C 3B and draws 3S: three 3s, but not among the first 10 cards.
    hands = ["3D 2D KD QD JD 7D 6D 5D 4D 4C", "3C 2C AC KC QC JC 7C 6C 5C 3B"]
    stock = "AD 3S 4S 5S 6S 7S JS QS KS AS 2S 2B AB KB QB JB 7B 6B 5B 4B"
    deal = a_due(hands, stock)
    assert legal_texts(deal) == set(hands[0].split())  # nothing to declare
    play(deal, "4D")
    assert legal_texts(deal) == {"declare napoli-C", *hands[1].split()}
    play(deal, "5C")
    assert deal.draws() == ((0, parse_card("AD")), (1, parse_card("3S")))
    assert deal.hand(0) & hand("3D 2D AD") == hand("3D 2D AD")
    assert deal.hand(1) & hand("3C 3B 3S") == hand("3C 3B 3S")
    assert deal.initial_hand(0) == hand(hands[0])
    assert deal.initial_hand(1) == hand(hands[1])
    assert deal.current_player() == 0
    assert not any(a >= NUM_PLAY_ACTIONS for a in deal.legal_actions())
    with pytest.raises(IllegalActionError) as info:
        play(deal, "declare napoli-D")
    assert info.value.reason == Reason.FALSE_DECLARATION
    play(deal, "3D")
    assert not any(a >= NUM_PLAY_ACTIONS for a in deal.legal_actions())
    with pytest.raises(IllegalActionError) as info:
        play(deal, "declare tre-3-noD")
    assert info.value.reason == Reason.FALSE_DECLARATION
    assert deal.declared == ()


def test_declare_before_first_card_and_auto_declare_use_the_dealt_hands() -> None:
    hands = ["3D 2D KD QD JD 7D 6D 5D 4D 4C", "3C 2C AC KC QC JC 7C 6C 5C 3B"]
    stock = "AD 3S 4S 5S 6S 7S JS QS KS AS 2S 2B AB KB QB JB 7B 6B 5B 4B"
    auto = Rules(game="tressette-a-due", target=21, signals="muto", auto_declare=True)
    deal = a_due(hands, stock, rules=auto)
    assert deal.declared == ((1, 1),)  # napoli-C only
    before = Rules(
        game="tressette-a-due", target=21, signals="muto", declare_before_first_card=True
    )
    deal = a_due(hands, stock, rules=before)
    assert deal.phase == Phase.DECLARE and deal.current_player() == 1
    play(deal, "declare napoli-C")
    assert (deal.phase, deal.current_player()) == (Phase.PLAY, 0)


def test_bad_stocks_are_refused() -> None:
    hands = [hand(ALL_DENARI), hand(ALL_COPPE)]
    stock = cards(STOCK)
    with pytest.raises(ValueError, match="draw order"):
        TressetteADueDeal(A_DUE, hands, 1, widow=mask_of(stock))
    with pytest.raises(ValueError, match="draw order"):
        TressetteADueDeal(A_DUE, hands, 1, stock=stock, widow=mask_of(stock[1:]))
    with pytest.raises(ValueError, match="distinct"):
        TressetteADueDeal(A_DUE, hands, 1, stock=[*stock[:-1], stock[0]])
    with pytest.raises(ValueError, match="even"):
        TressetteADueDeal(A_DUE, hands, 1, stock=stock[:-1])
    with pytest.raises(ValueError, match="both"):
        TressetteADueDeal(A_DUE, hands, 1, stock=[*stock[:-1], parse_card("3D")])
    with pytest.raises(ValueError, match="two-seat"):
        TressetteADueDeal(Rules(), [*hands, 0, 0], 1, stock=stock)
    # The widow may come along if it is the stock's cards.
    deal = TressetteADueDeal(A_DUE, hands, 1, stock=stock, widow=mask_of(stock))
    assert deal.widow == mask_of(stock) and deal.stock == tuple(stock)


# -- seeded deals -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", ["tavolo", "", "caffè ☕", "a-due"])
@pytest.mark.parametrize("number", [1, 2, 7])
def test_the_seeded_stock_is_the_rest_of_the_shuffled_deck(seed: str, number: int) -> None:
    deck = shuffled_deck("tressette-a-due", seed, number)
    assert seeded_stock(seed, number) == tuple(deck[20:])
    for dealer in (0, 1):
        dealt = deal_cards("tressette-a-due", seed, number, dealer, 2)
        eldest = 1 - dealer
        # Two packets of 5 each, starting after the dealer; positions 20..39 are the stock.
        assert dealt.hands[eldest] == mask_of(deck[0:5] + deck[10:15])
        assert dealt.hands[dealer] == mask_of(deck[5:10] + deck[15:20])
        assert dealt.widow == mask_of(deck[20:])
        deal = TressetteADueDeal.from_seed(A_DUE, seed, number, dealer)
        assert [deal.hand(s) for s in (0, 1)] == list(dealt.hands)
        assert deal.stock == tuple(deck[20:]) and len(deal.stock) == STOCK_SIZE
        assert deal.widow == dealt.widow
        assert deal.dealer == dealer and deal.current_player() == eldest


# -- invariants over seeded deals with random legal play ----------------------------------------

KNOBS = {
    "signals": st.sampled_from(SIGNAL_MODES),
    "declare_before_first_card": st.booleans(),
    "auto_declare": st.booleans(),
    "declaration_limit": st.integers(0, 2),
    "cappotto": st.sampled_from(CAPPOTTO_MODES),
    "call_out": st.booleans(),
    "target": st.sampled_from((3, 11, 21)),
}


def check_state(deal: TressetteADueDeal, hands_at_start: list[int]) -> None:
    hands = [deal.hand(0), deal.hand(1)]
    played = played_mask(deal)
    parts = [*hands, played, deal.widow]
    assert sum(popcount(p) for p in parts) == NUM_CARDS, "cards overlap or are missing"
    union = 0
    for part in parts:
        assert union & part == 0
        union |= part
    assert union == FULL_DECK
    left = deal.stock_left()
    assert deal.widow == mask_of(deal.stock[STOCK_SIZE - left :])
    done = deal.tricks_played
    draws = deal.draws()
    assert len(draws) == 2 * min(done, 10) == STOCK_SIZE - left
    assert [c for _, c in draws] == list(deal.stock[: len(draws)])
    for i, winner in enumerate(deal.trick_winners[: len(draws) // 2]):
        assert draws[2 * i] == (winner, deal.stock[2 * i])
        assert draws[2 * i + 1] == (1 - winner, deal.stock[2 * i + 1])
    for seat in (0, 1):
        drawn = mask_of(c for s, c in draws if s == seat)
        assert deal.drawn(seat) == drawn
        assert deal.initial_hand(seat) == hands_at_start[seat]
        obs = deal.observation(seat)
        assert mask_of(obs.hand) == hands[seat]
        seen = set(obs.hand) | {a % NUM_CARDS for _, a in obs.trick}
        seen |= {a % NUM_CARDS for plays, _ in obs.tricks for _, a in plays}
        assert not mask_of(seen) & (hands[1 - seat] | deal.widow)
    if deal.phase != Phase.DONE and len(deal.plays) % 2 == 0:
        # A trick starts: 10 cards each while the stock lasts, then one fewer each trick.
        assert [popcount(h) for h in hands] == [10 - max(0, done - 10)] * 2


def play_deal(deal: TressetteADueDeal, rng: random.Random) -> None:
    start = [deal.hand(0), deal.hand(1)]
    while not deal.is_terminal():
        check_state(deal, start)
        legal = deal.legal_actions()
        assert legal
        deal.apply_action(legal[rng.randrange(len(legal))])
    check_state(deal, start)
    assert deal.legal_actions() == ()
    if deal.call_out is not None:
        return
    assert deal.tricks_played == 20 and len(deal.draws()) == 20 and deal.stock_left() == 0
    score = deal.score
    assert score is not None
    rules = deal.rules
    assert sum(score.thirds) == 35
    assert score.last_trick == deal.trick_winners[-1]
    declared = [0, 0]
    for seat, declaration in deal.declared:
        declared[seat] += declaration_points(declaration, rules.quattro_points)
        # Only combinations of the 10 cards first dealt.
        assert DECLARATION_CARDS[declaration] & ~deal.initial_hand(seat) == 0
    if score.cappotto is None:
        assert sum(score.card_points) == 11
        assert list(score.declarations) == declared
        assert list(score.points) == [
            c + d for c, d in zip(score.card_points, declared, strict=True)
        ]
    else:
        assert score.thirds[score.cappotto] == 35
        assert set(deal.trick_winners) == {score.cappotto}


@settings(max_examples=120, deadline=None)
@given(
    knobs=st.fixed_dictionaries({}, optional=KNOBS),
    seed=st.text(max_size=8),
    choice_seed=st.integers(0, 2**32 - 1),
    deals=st.integers(1, 3),
)
def test_random_deals_keep_the_invariants(
    knobs: dict[str, object], seed: str, choice_seed: int, deals: int
) -> None:
    rules = Rules.from_dict(knobs, base=A_DUE)
    rng = random.Random(choice_seed)
    totals = [0, 0]
    dealer = first_dealer(rules.game, seed, 2)
    for number in range(1, deals + 1):
        deal = TressetteADueDeal.from_seed(rules, seed, number, dealer, totals=totals)
        assert deal.totals == tuple(totals)
        play_deal(deal, rng)
        if deal.call_out is not None:
            break
        assert deal.score is not None
        totals = [t + p for t, p in zip(totals, deal.score.points, strict=True)]
        dealer = 1 - dealer


# -- through the stack -----------------------------------------------------------------------


def test_the_game_records_the_stock_and_every_draw() -> None:
    from referee.engine.deals import shuffled_deck
    from referee.engine.registry import preset
    from referee.families.tressette.game import TressetteGame

    rules = preset("tressette-a-due")
    state = TressetteGame(rules, "due-rec", deals=1, record=True)
    rng = random.Random(5)
    while not state.is_terminal():
        state.apply_action(rng.choice(state.legal_actions()))
    assert state.events is not None
    deal_line = state.lines()[1]
    stock = [CARD_NAMES[c] for c in shuffled_deck("tressette-a-due", "due-rec", 1)[20:]]
    assert deal_line["stock"] == stock and "widow" not in deal_line
    kinds = [e["type"] for e in state.lines()]
    draws = [e for e in state.lines() if e["type"] == "draw"]
    assert [d["card"] for d in draws] == stock, "the stock is drawn top first"
    # Each of the first 10 tricks is followed by two draws, the winner's first.
    for i, event in enumerate(state.lines()):
        if event["type"] == "trick" and event["trick"] <= 10:
            assert kinds[i + 1 : i + 3] == ["draw", "draw"]
            assert state.lines()[i + 1]["seat"] == event["winner"]
    assert kinds.count("trick") == 20


def test_protocol_observations_name_only_own_played_and_drawn_cards() -> None:
    from referee.engine.registry import preset
    from referee.families.tressette.game import TressetteGame
    from referee.protocol import fill_observation
    from tavolo_bot.proto import referee_pb2 as pb

    rules = preset("tressette-a-due")
    for n in range(5):
        state = TressetteGame(rules, f"due-hide-{n}", deals=1)
        rng = random.Random(n)
        while not state.is_terminal():
            deal = state.deal
            for seat in (0, 1):
                obs = state.observation(seat)
                out = pb.Observation()
                fill_observation(
                    out,
                    obs,
                    family=state.rules.family,
                    game=1,
                    deal=1,
                    players=2,
                    quattro_points=4,
                )
                allowed = {CARD_NAMES[c] for c in obs.hand}
                allowed |= {CARD_NAMES[a % 40] for _, a in obs.trick}
                allowed |= {CARD_NAMES[a % 40] for plays, _ in obs.tricks for _, a in plays}
                allowed |= {CARD_NAMES[c] for _, c in obs.draws}
                # A declaration shows its cards to both players.
                for _, d in obs.declarations:
                    allowed |= {CARD_NAMES[c] for c in cards_of(DECLARATION_CARDS[d])}
                named = set(re.findall(r"\b[32AKQJ7654][DCSB]\b", str(out)))
                assert named <= allowed, f"seat {seat} is shown {named - allowed}"
                assert out.stock_left == len(deal.stock) - len(deal.draws())
            state.apply_action(rng.choice(state.legal_actions()))
