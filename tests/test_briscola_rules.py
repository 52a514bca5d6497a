"""Briscola's rules, worked by hand: tricks, any card legal, draws, deals of 120 card points, a
game to the target; and a property: random legal play always ends a deal cleanly."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.cards import CARD_NAMES, NUM_CARDS, SUIT_SYMBOLS, cards_of, parse_card
from referee.engine.codec import ActionError
from referee.engine.deals import Deal, first_dealer, shuffled_deck
from referee.engine.errors import IllegalActionError, Reason
from referee.engine.game_base import Termination
from referee.engine.observation import Phase
from referee.engine.registry import new_game
from referee.engine.rules import Rules
from referee.families.briscola.codec import BRISCOLA_CODEC
from referee.families.briscola.deal import (
    HAND_SIZE,
    BriscolaDeal,
    deal_briscola,
    trick_winner,
)
from referee.families.briscola.game import BriscolaGame
from referee.families.briscola.knobs import CARD_VALUES, check_knobs
from tests.helpers import hand, play

TWO = Rules(game="briscola", target=2, card_values=CARD_VALUES, signals="muto", declarations=False)
FOUR = Rules(
    game="briscola-a-quattro", target=2, card_values=CARD_VALUES, signals="muto", declarations=False
)


def cards(text: str) -> list[int]:
    return [parse_card(t) for t in text.split()]


def briscola(rules: Rules, hands: list[str], stock: str, dealer: int) -> BriscolaDeal:
    return BriscolaDeal(rules, [hand(h) for h in hands], dealer, stock=cards(stock))


def names_of(actions: Sequence[int]) -> set[str]:
    return {CARD_NAMES[a] for a in actions}


# -- who takes a trick ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plays", "trump", "winner", "why"),
    [
        ("AD 3D", "B", 0, "the ace is the highest card of a suit"),
        ("3D KD", "B", 0, "the 3 is second, above the king"),
        ("2D 4D", "B", 1, "the 2 is the lowest card of a suit"),
        ("JD QD", "B", 1, "the cavallo beats the fante"),
        ("AD 2B", "B", 1, "the lowest trump beats the ace of the suit led"),
        ("AD 3C", "B", 0, "a card of another suit, not trump, loses whatever its rank"),
        ("4C AD 2D 3S", "S", 3, "a trump beats the led suit and the higher card of another"),
        ("4B 2B AB 3B", "B", 2, "trumps led: the highest trump wins"),
        ("5C 3D 7C KC", "B", 3, "no trump: the highest card of the suit led"),
        ("QC 7S 4S 6S", "S", 1, "several trumps: the highest, though led by no one"),
    ],
)
def test_who_takes_a_trick(plays: str, trump: str, winner: int, why: str) -> None:
    seated = list(enumerate(cards(plays)))
    assert trick_winner(seated, SUIT_SYMBOLS.index(trump)) == winner, why


def test_any_card_in_hand_is_legal_whatever_was_led() -> None:
    # Seat 1 holds denari when seat 0 leads the 3 of denari: it may still throw the 4C.
    deal = briscola(TWO, ["3D 5S 6S", "KD AD 4C"], "7S 2S 4S 5B 6B 4B", dealer=1)
    assert deal.current_player() == 0
    assert names_of(deal.legal_actions()) == {"3D", "5S", "6S"}
    play(deal, "3D")
    assert names_of(deal.legal_actions()) == {"KD", "AD", "4C"}
    play(deal, "4C")
    assert deal.trick_winners == (0,)
    assert deal.captured == (10, 0)


def test_refused_actions_change_nothing_and_say_why() -> None:
    deal = briscola(TWO, ["3D 5S 6S", "KD AD 4C"], "7S 2S 4S 5B 6B 4B", dealer=1)
    before = deal.observation(0)
    for action, reason in (
        (parse_card("KD"), Reason.CARD_NOT_IN_HAND),
        (NUM_CARDS, Reason.UNKNOWN_ACTION),
        (-1, Reason.UNKNOWN_ACTION),
    ):
        with pytest.raises(IllegalActionError) as info:
            deal.apply_action(action)
        assert info.value.reason == reason
        assert deal.explain_refusal(action).reason == reason
        assert deal.observation(0) == before
    with pytest.raises(ValueError, match="legal"):
        deal.explain_refusal(parse_card("3D"))


# -- a two-seat deal, worked by hand: 60 each, a drawn deal ------------------------------------

# Dealer 1: seat 0 leads. The trump is the 4 of bastoni, the stock's last card. From trick 2
# on, each seat plays the card it has just drawn, so the stock's pairs are the tricks: the
# winner draws the first card of a pair and leads it. The other two cards of each hand wait
# until tricks 19 and 20.
TWO_HANDS = ["AD 2D 5B", "3D 7B 6B"]
TWO_STOCK = (
    "AC 3C KC 2B AS 3S QC KS 7S JS JC 7C 4D AB 3B KB 2C QS 5D KD QD JD 6D 7D 4C 5C "
    "6C 4S 5S 6S 2S QB JB 4B"
)
# (lead, follow, winner, card points). Points: A 11, 3 10, K 4, Q 3, J 2, the rest 0.
TWO_TRICKS = [
    ("AD", "3D", 0, 21),  # 1: the ace above the 3
    ("AC", "3C", 0, 21),  # 2
    ("KC", "2B", 1, 4),  # 3: the lowest trump takes the king led
    ("AS", "3S", 1, 21),  # 4
    ("QC", "KS", 1, 7),  # 5: a higher card of another suit, not trump, loses
    ("7S", "JS", 0, 2),  # 6: the higher card of the suit led wins
    ("JC", "7C", 0, 2),  # 7
    ("4D", "AB", 1, 11),  # 8
    ("3B", "KB", 1, 14),  # 9: trumps led, the higher takes
    ("2C", "QS", 1, 3),  # 10
    ("5D", "KD", 0, 4),  # 11
    ("QD", "JD", 0, 5),  # 12
    ("6D", "7D", 1, 0),  # 13
    ("4C", "5C", 0, 0),  # 14
    ("6C", "4S", 0, 0),  # 15
    ("5S", "6S", 1, 0),  # 16
    ("2S", "QB", 0, 3),  # 17: the loser, seat 1, draws the face-up 4B last
    ("JB", "4B", 0, 2),  # 18: the stock is empty; three cards each remain
    ("2D", "6B", 1, 0),  # 19
    ("7B", "5B", 1, 0),  # 20
]
# Seat 0: 21 + 21 + 2 + 2 + 4 + 5 + 3 + 2 = 60. Seat 1: 4 + 21 + 7 + 11 + 14 + 3 = 60.


def pairs(stock: str) -> list[tuple[str, str]]:
    words = stock.split()
    return list(zip(words[::2], words[1::2], strict=True))


def test_a_two_seat_deal_of_120_drawn_at_60_each() -> None:
    deal = briscola(TWO, TWO_HANDS, TWO_STOCK, dealer=1)
    assert deal.trump == parse_card("4B") and deal.stock_left() == 34
    drawn = pairs(TWO_STOCK)
    captured = [0, 0]
    for number, (lead, follow, winner, points) in enumerate(TWO_TRICKS, start=1):
        leader = deal.current_player()
        assert leader is not None
        play(deal, lead, follow)
        captured[winner] += points
        assert deal.trick_winners[-1] == winner
        assert deal.captured == tuple(captured)
        assert deal.current_player() == winner or deal.is_terminal()
        if number <= 17:
            # The winner draws first, then the other seat; both hold three cards again.
            first, second = drawn[number - 1]
            assert deal.draws()[-2:] == (
                (winner, parse_card(first)),
                (1 - winner, parse_card(second)),
            )
            assert deal.stock_left() == 34 - 2 * number
            assert all(deal.hand(s).bit_count() == 3 for s in (0, 1))
        else:
            assert len(deal.draws()) == 34 and deal.stock_left() == 0
            assert all(deal.hand(s).bit_count() == 20 - number for s in (0, 1))
    assert deal.draws()[-1] == (1, parse_card("4B")), "the face-up trump is drawn last"
    assert deal.is_terminal() and deal.phase == Phase.DONE
    assert deal.score is not None
    assert deal.score.card_points == (60, 60)
    assert deal.score.winner is None and deal.score.points == (0, 0)


def test_each_seat_sees_its_own_draws_and_the_trump() -> None:
    deal = briscola(TWO, TWO_HANDS, TWO_STOCK, dealer=1)
    play(deal, "AD", "3D")  # seat 0 draws AC, seat 1 3C
    assert deal.observation(0).draws == ((0, parse_card("AC")),)
    assert deal.observation(1).draws == ((1, parse_card("3C")),)
    assert parse_card("3C") not in deal.observation(0).hand
    assert deal.drawn(0) == hand("AC") and deal.initial_hand(0) == hand(TWO_HANDS[0])
    for lead, follow, _, _ in TWO_TRICKS[1:17]:
        play(deal, lead, follow)
    trump_draw = (1, parse_card("4B"))
    seen = deal.observation(0)
    assert seen.draws[-1] == trump_draw, "everyone saw the face-up trump drawn"
    assert all(s == 0 for s, _ in seen.draws[:-1])
    assert seen.stock_left == 0 and seen.trump == parse_card("4B")
    assert seen.captured == deal.captured and seen.declarations == ()


def test_a_drawn_card_can_be_played_at_once() -> None:
    # After trick 2 seat 1 has drawn 2B; trick 3 it trumps seat 0's KC with it.
    deal = briscola(TWO, TWO_HANDS, TWO_STOCK, dealer=1)
    play(deal, "AD", "3D", "AC", "3C", "KC")
    assert names_of(deal.legal_actions()) == {"2B", "7B", "6B"}


# -- a four-seat deal, worked by hand: partners 0+2 win 61 to 59 -------------------------------

# Dealer 3: seat 0 leads. The trump is the 2 of denari. As in the two-seat deal, every seat
# plays the card it has just drawn; the drawing starts with the trick's winner, so each
# group of four in the stock is written in the order its seats draw it.
FOUR_HANDS = ["AS 6S 7C", "3S 2S 6C", "4S 5S 4B", "KS 5D 4C"]
FOUR_STOCK = (
    "3C AC 2C QC  5C 4D KC JC  3B AB 7D 6D  KB QB JB 7B  2B AD 3D 5B  QS JS KD 7S  QD JD 6B 2D"
)
# (plays from the leader, winner, card points).
FOUR_TRICKS = [
    ("AS 3S 4S KS", 0, 25),  # 1: seat 0 leads; no trump: the ace
    ("3C AC 2C QC", 1, 24),  # 2: the ace above the 3
    ("5C 4D KC JC", 2, 6),  # 3: seat 1 leads; seat 2's low trump takes it
    ("3B AB 7D 6D", 0, 21),  # 4: seat 2 leads; two trumps: the 7 above the 6
    ("KB QB JB 7B", 0, 9),  # 5
    ("2B AD 3D 5B", 1, 21),  # 6: the ace of trumps above the 3 of trumps
    ("QS JS KD 7S", 3, 9),  # 7: seat 1 leads; seat 3 trumps
    ("QD JD 6B 2D", 3, 5),  # 8: seat 3 leads trumps; seat 2 drew the face-up 2D last
    ("4C 7C 6C 5S", 0, 0),  # 9: from the hands
    ("6S 2S 4B 5D", 3, 0),  # 10
]
# Seats 0+2: 25 + 6 + 21 + 9 = 61. Seats 1+3: 24 + 21 + 9 + 5 = 59.


def test_a_four_seat_deal_won_by_partners_with_61() -> None:
    deal = briscola(FOUR, FOUR_HANDS, FOUR_STOCK, dealer=3)
    groups = [FOUR_STOCK.split()[i : i + 4] for i in range(0, 28, 4)]
    captured = [0, 0]
    leader = 0
    for number, (plays, winner, points) in enumerate(FOUR_TRICKS, start=1):
        assert deal.current_player() == leader
        play(deal, *plays.split())
        assert [s for s, _ in deal.plays[-4:]] == [(leader + i) % 4 for i in range(4)]
        captured[winner % 2] += points
        assert deal.trick_winners[-1] == winner
        assert deal.captured == tuple(captured)
        if number <= 7:
            # The winner draws first, then the seats after it in order.
            assert deal.draws()[-4:] == tuple(
                ((winner + i) % 4, parse_card(c)) for i, c in enumerate(groups[number - 1])
            )
            assert all(deal.hand(s).bit_count() == 3 for s in range(4))
        leader = winner
    assert deal.draws()[-1] == (2, parse_card("2D"))
    # Partners see nothing of each other's draws but the face-up trump.
    assert {s for s, _ in deal.observation(0).draws} == {0, 2}
    assert [c for s, c in deal.observation(0).draws if s == 2] == [parse_card("2D")]
    assert deal.score is not None
    assert deal.score.card_points == (61, 59)
    assert deal.score.winner == 0 and deal.score.points == (1, 0)


@pytest.mark.parametrize(
    ("hands", "stock", "trump", "why"),
    [
        (["3D 5S 6S", "KD AD 4C"], "7S 2S 4S 5B 6B 3D", None, "a card twice"),
        (["3D 5S 6S", "KD AD 4C"], "7S 2S 4S 5B 6B", None, "a draw short of a card"),
        (["3D 5S", "KD AD 4C"], "7S 2S 4S 5B 6B 4B", None, "hands of two sizes"),
        (["3D 5S 6S", "KD AD 4C"], "7S 2S 4S 5B 6B 4B", "7S", "a trump not under the stock"),
        (["3D 5S 6S", "KD AD 4C"], "", None, "neither a stock nor a trump"),
    ],
)
def test_a_deal_that_cannot_be_played_is_refused(
    hands: list[str], stock: str, trump: str | None, why: str
) -> None:
    shown = None if trump is None else parse_card(trump)
    with pytest.raises(ValueError):
        BriscolaDeal(TWO, [hand(h) for h in hands], 1, stock=cards(stock), trump=shown)


# -- the seeded deal --------------------------------------------------------------------------


@pytest.mark.parametrize(("rules", "dealer"), [(TWO, 0), (TWO, 1), (FOUR, 2), (FOUR, 3)])
def test_the_seeded_deal_goes_one_card_at_a_time_from_the_seat_after_the_dealer(
    rules: Rules, dealer: int
) -> None:
    players = rules.players
    deck = shuffled_deck(rules.game, "seed", 5)
    dealt = deal_briscola(rules, "seed", 5, dealer)
    assert dealt == deal_briscola(rules, "seed", 5, dealer)
    for i in range(HAND_SIZE * players):
        assert dealt.hands[(dealer + 1 + i) % players] >> deck[i] & 1
    turned = deck[HAND_SIZE * players]
    assert dealt.last_card == turned and dealt.stock[-1] == turned
    assert dealt.stock[:-1] == tuple(deck[HAND_SIZE * players + 1 :])
    assert sum(dealt.hands) | dealt.widow == (1 << NUM_CARDS) - 1
    deal = BriscolaDeal(rules, dealt.hands, dealer, stock=dealt.stock)
    assert deal.current_player() == (dealer + 1) % players
    assert deal.trump == turned


# -- a game to the target ---------------------------------------------------------------------

# The drawn deal with KS and 4S swapped in the stock: seat 1 takes 4S instead of KS in
# trick 5, and seat 0 KS instead of 4S in trick 15: 64 to 56.
WON_STOCK = TWO_STOCK.replace("KS", "xx").replace("4S", "KS").replace("xx", "4S")
WON_TRICKS = [
    *TWO_TRICKS[:4],
    ("QC", "4S", 1, 3),
    *TWO_TRICKS[5:14],
    ("6C", "KS", 0, 4),
    *TWO_TRICKS[15:],
]


def two_seat_deal(number: int, dealer: int) -> Deal:
    stock = tuple(cards(TWO_STOCK if number == 1 else WON_STOCK))
    return Deal("book", "", number, 1, tuple(hand(h) for h in TWO_HANDS), 0, stock[-1], stock)


def test_a_drawn_deal_counts_for_nobody_and_the_game_ends_at_the_target() -> None:
    game = BriscolaGame(TWO, "hand-worked", record=True, deal_source=two_seat_deal)
    for tricks in (TWO_TRICKS, WON_TRICKS, WON_TRICKS):
        for lead, follow, _, _ in tricks:
            game.apply_action(parse_card(lead))
            game.apply_action(parse_card(follow))
    assert game.outcome is not None
    assert game.outcome.termination == Termination.TARGET_REACHED
    assert game.outcome.totals == (2, 0) and game.outcome.deals == 3
    assert game.outcome.winner == 0 and game.returns() == (1.0, -1.0)
    assert game.events is not None
    scores = [e for e in game.lines() if e["type"] == "score"]
    assert scores == [
        {"type": "score", "deal": 1, "card_points": [60, 60], "points": [0, 0], "totals": [0, 0]},
        {"type": "score", "deal": 2, "card_points": [64, 56], "points": [1, 0], "totals": [1, 0]},
        {"type": "score", "deal": 3, "card_points": [64, 56], "points": [1, 0], "totals": [2, 0]},
    ]
    deal_line = game.lines()[1]
    assert deal_line == {
        "type": "deal",
        "deal": 1,
        "dealer": 1,
        "hands": [["2D", "AD", "5B"], ["3D", "7B", "6B"]],
        "stock": TWO_STOCK.split(),
        "trump": "4B",
    }
    assert game.lines()[2:7] == [
        {"type": "play", "seat": 0, "card": "AD", "signal": None},
        {"type": "play", "seat": 1, "card": "3D", "signal": None},
        {"type": "trick", "trick": 1, "winner": 0},
        {"type": "draw", "seat": 0, "card": "AC"},
        {"type": "draw", "seat": 1, "card": "3C"},
    ]
    assert game.lines()[-1] == {
        "type": "result",
        "termination": "target_reached",
        "winner": 0,
        "totals": [2, 0],
        "deals": 3,
    }


def test_the_four_seat_game_sides_are_partners() -> None:
    def source(number: int, dealer: int) -> Deal:
        stock = tuple(cards(FOUR_STOCK))
        return Deal("book", "", number, 3, tuple(hand(h) for h in FOUR_HANDS), 0, stock[-1], stock)

    game = BriscolaGame(FOUR, "hand-worked", deal_source=source)
    for _ in range(2):
        for plays, _, _ in FOUR_TRICKS:
            for card in plays.split():
                game.apply_action(parse_card(card))
    assert game.outcome is not None and game.outcome.totals == (2, 0)
    assert game.returns() == (1.0, -1.0, 1.0, -1.0)


@pytest.mark.parametrize("rules", [TWO, FOUR])
def test_seeded_games_rotate_the_dealer_and_replay_alike(rules: Rules) -> None:
    def played(seed: str) -> list[dict[str, Any]]:
        game = new_game(rules, seed, record=True)
        rng = random.Random(seed)
        while not game.is_terminal():
            game.apply_action(rng.choice(game.legal_actions()))
        assert game.events is not None
        assert game.outcome is not None and max(game.outcome.totals) == rules.target
        return game.lines()

    events = played("a")
    assert events == played("a")
    dealers = [e["dealer"] for e in events if e["type"] == "deal"]
    first = first_dealer(rules.game, "a", rules.players)
    assert dealers == [(first + i) % rules.players for i in range(len(dealers))]
    assert all(sum(e["card_points"]) == 120 for e in events if e["type"] == "score")


# -- the codec and the knobs ------------------------------------------------------------------


def test_the_codec_reads_and_writes_plain_cards() -> None:
    for card in range(NUM_CARDS):
        assert BRISCOLA_CODEC.parse(BRISCOLA_CODEC.name(card)) == card
        assert BRISCOLA_CODEC.encode(BRISCOLA_CODEC.decode(card)) == card
    for text in ("3D volo", "declare napoli-D", "XX"):
        with pytest.raises(ActionError):
            BRISCOLA_CODEC.parse(text)
    with pytest.raises(ActionError):
        BRISCOLA_CODEC.decode(NUM_CARDS)


def test_the_knobs_briscola_refuses() -> None:
    assert check_knobs(TWO) is None
    assert "briscola" in (check_knobs(Rules(game="briscola", briscola=True)) or "")
    assert "call_out" in (check_knobs(Rules(game="briscola", call_out=True)) or "")


# -- random legal play ------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    four=st.booleans(),
    seed=st.text(max_size=8),
    number=st.integers(1, 50),
    dealer=st.integers(0, 3),
    moves=st.randoms(use_true_random=False),
)
def test_random_play_ends_with_120_points_and_empty_hands(
    four: bool, seed: str, number: int, dealer: int, moves: random.Random
) -> None:
    rules = FOUR if four else TWO
    dealer %= rules.players
    dealt = deal_briscola(rules, seed, number, dealer)
    deal = BriscolaDeal(rules, dealt.hands, dealer, stock=dealt.stock)
    while not deal.is_terminal():
        seat = deal.current_player()
        assert seat is not None
        legal = deal.legal_actions()
        assert legal == tuple(cards_of(deal.hand(seat)))
        copy = deal.clone()
        copy.apply_action(moves.choice(legal))  # a clone plays on without this deal
        assert deal.legal_actions() == legal
        deal.apply_action(moves.choice(legal))
    assert deal.score is not None and sum(deal.score.card_points) == 120
    assert all(deal.hand(s) == 0 for s in range(rules.players)) and deal.stock_left() == 0
    played = [card for _, card in deal.plays]
    assert sorted(played) == list(range(NUM_CARDS))
    assert deal.draws()[-1][1] == deal.trump
    assert deal.tricks_played == NUM_CARDS // rules.players
