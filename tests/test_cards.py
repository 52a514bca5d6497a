import pytest

from referee.engine.cards import (
    CARD_NAMES,
    CardError,
    card_name,
    card_rank,
    card_suit,
    cards_of,
    mask_of,
    parse_card,
)
from referee.engine.codec import ActionError
from referee.families.tressette.actions import (
    CALL_OUT,
    END_DECLARATIONS,
    Signal,
    action_name,
    parse_action,
    play_action,
)


def test_documented_ids():
    assert parse_card("3D") == 0
    assert parse_card("4D") == 9
    assert parse_card("3C") == 10
    assert parse_card("QB") == 34
    assert parse_card("4B") == 39
    assert card_name(2) == "AD"
    assert card_suit(parse_card("AS")) == 2
    assert card_rank(parse_card("JC")) == 5


def test_every_card_round_trips():
    assert len(set(CARD_NAMES)) == 40
    for card in range(40):
        assert parse_card(card_name(card)) == card
        assert parse_card(card_name(card).lower()) == card


@pytest.mark.parametrize("text", ["", "3", "3X", "8D", "10D", "DD", "3D3", "KDX", None, 5])
def test_bad_card_text_is_refused(text):
    with pytest.raises(CardError, match="card"):
        parse_card(text)


def test_bad_card_id():
    with pytest.raises(CardError, match=r"not in 0\.\.39"):
        card_name(40)


def test_masks():
    cards = [0, 9, 17, 39]
    assert cards_of(mask_of(cards)) == cards


def test_actions_round_trip():
    assert parse_action("3D") == 0
    assert parse_action("AS volo") == play_action(parse_card("AS"), Signal.VOLO)
    assert action_name(play_action(parse_card("7B"), Signal.BUSSO)) == "7B busso"
    assert parse_action("declare napoli-D") == 300
    assert parse_action("end-declarations") == END_DECLARATIONS
    assert parse_action("call-out") == CALL_OUT
    for action in [*range(280), *range(300, 319), END_DECLARATIONS, CALL_OUT]:
        assert parse_action(action_name(action)) == action


@pytest.mark.parametrize("text", ["", "3D shout", "3D volo extra", "declare napoli-X", "ZZ"])
def test_bad_action_text(text):
    with pytest.raises(ValueError):
        parse_action(text)


def test_unknown_action_id():
    with pytest.raises(ActionError, match="names no action"):
        action_name(290)
