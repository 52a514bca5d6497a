"""Tressette con la briscola, worked by hand: the dealer's last card is shown; its suit is trump."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.engine.cards import CARD_NAMES, cards_of, parse_card
from referee.engine.deals import deal_cards
from referee.engine.registry import preset
from referee.families.tressette.game import TressetteGame, new_deal
from tests.helpers import hand, play

BRISCOLA = preset("tressette-briscola")
# Dealer 3, so seat 0 leads. Trump: the 7 of bastoni, in the dealer's hand.
HANDS = [
    "3D 2D AD KD QD 3C 2C AC KC QC",
    "JD 7D 6D 5D 4D JC 7C 6C 5C 4C",  # the only bastoni are below; none here
    "3S 2S AS KS QS JS 7S 6S 5S AB",
    "4S 3B 2B KB QB JB 7B 6B 5B 4B",
]


def briscola_deal(hands: list[str] = HANDS, trump: str = "7B"):  # type: ignore[no-untyped-def]
    return new_deal(BRISCOLA, [hand(h) for h in hands], 3, trump=parse_card(trump))


@pytest.mark.parametrize(
    ("plays", "winner", "why"),
    [
        (["3D", "4D", "AB", "3B"], 3, "the 3 of trumps beats the ace of trumps and the 3 led"),
        (["3D", "4D", "AB", "4S"], 2, "a trump from a void hand beats the 3 of the suit led"),
        (["3D", "4D", "3S", "4S"], 0, "no trump: the highest card of the suit led"),
        (["3C", "4C", "AB", "4B"], 2, "the ace of trumps beats the 4 of trumps"),
    ],
)
def test_trumps_win_tricks(plays: list[str], winner: int, why: str) -> None:
    deal = briscola_deal()
    play(deal, *plays)
    assert deal.trick_winners == (winner,), why


def test_trumps_led_are_just_the_suit_led() -> None:
    deal = briscola_deal()
    play(deal, "3D", "4D", "AB", "3B")  # seat 3 wins and leads trumps
    play(deal, "2B", "2D", "4C", "6S")  # seats 0, 1, 2 hold no bastoni: they discard
    assert deal.trick_winners == (3, 3)


def test_follow_suit_first_trump_only_when_void() -> None:
    deal = briscola_deal()
    play(deal, "3D")  # seat 0 leads denari
    legal = {CARD_NAMES[a % 40] for a in deal.legal_actions() if a < 280}
    assert legal == {"JD", "7D", "6D", "5D", "4D"}, "seat 1 holds denari: no trumping"
    play(deal, "4D")
    legal = {CARD_NAMES[a % 40] for a in deal.legal_actions() if a < 280}
    assert legal == set(HANDS[2].split()), "seat 2 is void in denari: any card, trump or not"


def test_without_briscola_the_same_cards_follow_the_suit_led() -> None:
    deal = new_deal(preset("tressette"), [hand(h) for h in HANDS], 3)
    play(deal, "3D", "4D", "AB", "3B")
    assert deal.trick_winners == (0,)
    assert deal.trump is None


def test_the_trump_is_the_dealers_last_card_and_everyone_sees_it() -> None:
    state = TressetteGame(BRISCOLA, "brisc-1", deals=1, record=True)
    dealt = deal_cards("tressette", "brisc-1", 1, state.deal.dealer, 4)
    assert state.deal.trump == dealt.last_card
    assert dealt.hands[dealt.dealer] >> dealt.last_card & 1, "the dealer holds it"
    for seat in range(4):
        assert state.observation(seat).trump == dealt.last_card
    assert state.events is not None
    deal_line = state.lines()[1]
    assert deal_line["type"] == "deal" and deal_line["trump"] == CARD_NAMES[dealt.last_card]
    # The dealer's second packet is the last five cards dealt: the trump is among them.
    assert dealt.last_card in cards_of(dealt.hands[dealt.dealer])


def test_same_seed_same_cards_with_and_without_briscola() -> None:
    a = TressetteGame(preset("tressette"), "same", deals=1)
    b = TressetteGame(BRISCOLA, "same", deals=1)
    assert [a.deal.hand(s) for s in range(4)] == [b.deal.hand(s) for s in range(4)]


def test_a_tampered_trump_does_not_verify(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from referee.records import RecordError, verify_file

    golden = Path(__file__).parent / "golden" / "golden-6-tressette-briscola.jsonl"
    lines = golden.read_text(encoding="utf-8").splitlines()
    deal = json.loads(lines[1])
    other = next(c for c in deal["hands"][deal["dealer"]] if c != deal["trump"])
    deal["trump"] = other  # still a card of the dealer's, but not the last one dealt
    lines[1] = json.dumps(deal, separators=(",", ":"))
    tampered = tmp_path / "t.jsonl"
    tampered.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"t\.jsonl:2: .*trump"):
        verify_file(tampered)
