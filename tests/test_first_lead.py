"""``first_lead``: the eldest leads, or the holder of the 4 of denari; the tressette-study preset.

Worked by hand with one suit a seat (tests/helpers.py): whoever leads takes every trick.
"""

from __future__ import annotations

import pytest

from referee.engine.errors import RulesError
from referee.engine.registry import new_game, preset
from referee.engine.rules import Rules
from referee.records import dumps, verify_lines
from tests.helpers import ONE_SUIT_EACH, deal_from, hand, run_out_leading_own_suit

STUDY = preset("tressette-study")


def test_the_preset_is_the_studys_rules() -> None:
    assert (STUDY.target, STUDY.signals, STUDY.auto_declare, STUDY.cappotto) == (
        21,
        "muto",
        True,
        "none",
    )
    assert STUDY.first_lead == "four_of_denari" and STUDY.partnerships


def test_the_holder_of_the_four_of_denari_leads_the_first_trick() -> None:
    # Dealer 2: the eldest would be seat 3. Seat 0 holds every denaro, 4D among them.
    rules = Rules(first_lead="four_of_denari", declarations=False)
    deal = deal_from(rules, ONE_SUIT_EACH, dealer=2)
    assert deal.current_player() == 0 and deal.eldest == 0
    eldest = deal_from(Rules(declarations=False), ONE_SUIT_EACH, dealer=2)
    assert eldest.current_player() == 3
    # Seat 0 leads its denari and takes all ten tricks: 11 card points and the last trick.
    run_out_leading_own_suit(deal)
    assert deal.score is not None and deal.trick_winners == (0,) * 10


def test_the_four_of_denari_moves_with_its_holder() -> None:
    rules = Rules(first_lead="four_of_denari", declarations=False)
    hands = list(ONE_SUIT_EACH)
    hands[0], hands[2] = hands[2], hands[0]  # the denari go to seat 2
    assert hand(hands[2]) >> 9 & 1
    assert deal_from(rules, hands, dealer=0).current_player() == 2


def test_every_seeded_deal_starts_with_the_four_of_denari() -> None:
    game = new_game(STUDY, "study", deals=5)
    started = 0
    while not game.is_terminal():
        seat = game.current_player()
        assert seat is not None
        if not game.deal.trick_winners and not game.deal.observation(seat).trick:
            assert game.deal.hand(seat) >> 9 & 1, seat  # the first to play holds 4D
            started += 1
        game.apply_action(game.legal_actions()[0])
    assert started == 5


@pytest.mark.parametrize("name", ["tressette-a-tre", "tressette-a-due", "calabresella"])
def test_only_a_game_that_deals_every_card_may_use_it(name: str) -> None:
    with pytest.raises(RulesError, match="first_lead' = four_of_denari needs every card dealt"):
        preset(name).with_knobs(["first_lead=four_of_denari"])


def test_records_name_the_knob_only_when_it_is_not_the_eldest() -> None:
    assert "first_lead" not in Rules().record_dict()
    assert STUDY.record_dict()["first_lead"] == "four_of_denari"
    game = new_game(STUDY, "study-record", deals=1, record=True)
    while not game.is_terminal():
        game.apply_action(game.legal_actions()[0])
    assert game.events is not None
    verify_lines([dumps(e) for e in game.lines()])
