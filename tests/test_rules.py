import pytest

from referee.engine.errors import RulesError
from referee.engine.registry import preset, presets
from referee.engine.rules import Rules


def test_presets():
    assert preset("tressette") == Rules()
    assert preset("tressette").target == 41
    assert preset("tressette-muto").signals == "muto"
    assert preset("treseta").signals == "leader"
    assert preset("treseta").target == 41
    a_tre = preset("tressette-a-tre")
    assert (a_tre.players, a_tre.hand_size, a_tre.target, a_tre.sides) == (3, 12, 21, 3)
    assert set(presets()) >= {"tressette", "tressette-muto", "treseta", "tressette-a-tre"}


def test_unknown_game_names_choices():
    with pytest.raises(RulesError, match=r"unknown game 'scopa'.*tressette"):
        preset("scopa")


def test_unknown_knob_is_named():
    with pytest.raises(RulesError, match="unknown knob 'trumps'"):
        Rules.from_dict({"trumps": "D"})


@pytest.mark.parametrize(
    ("knob", "value", "message"),
    [
        ("signals", "loud", "knob 'signals' cannot be 'loud'"),
        ("cappotto", "triple", "knob 'cappotto' cannot be 'triple'"),
        ("target", 0, "knob 'target' must be between"),
        ("target", "41", "knob 'target' must be a whole number"),
        ("target", True, "knob 'target' must be a whole number"),
        ("call_out", "yes", "knob 'call_out' must be true or false"),
        ("card_values", [1, 2], "knob 'card_values' must be 10"),
        ("declaration_limit", -1, "knob 'declaration_limit' must be between"),
    ],
)
def test_bad_values_are_named(knob, value, message):
    with pytest.raises(RulesError, match=message):
        Rules.from_dict({knob: value})


def test_command_line_knobs():
    rules = preset("tressette").with_knobs(["signals=muto", "target=31", "call_out=on"])
    assert (rules.signals, rules.target, rules.call_out) == ("muto", 31, True)
    rules = Rules().with_knobs(["card_values=1,1,3,1,1,1,0,0,0,0"])
    assert rules.card_values == (1, 1, 3, 1, 1, 1, 0, 0, 0, 0)
    with pytest.raises(RulesError, match="knob=value"):
        Rules().with_knobs(["muto"])
    with pytest.raises(RulesError, match="unknown knob 'colour'"):
        Rules().with_knobs(["colour=red"])
    with pytest.raises(RulesError, match="whole number"):
        Rules().with_knobs(["target=many"])


def test_every_knob_round_trips():
    for rules in presets().values():
        data = rules.to_dict()
        assert Rules.from_dict(data) == rules
    assert set(Rules().to_dict()) == {
        "game", "target", "card_values", "declarations", "quattro_points",
        "declaration_limit", "declare_before_first_card", "auto_declare", "signals",
        "striscio_meaning", "striscio_lengths", "ribusso", "cappotto",
        "cappotto_cancels_declarations", "call_out", "widow", "briscola", "table_seats",
        "stramazzo", "first_lead", "auction", "striscio_corto",
    }  # fmt: skip


def test_record_headers_keep_later_knobs_out_at_their_default():
    """Records written before a knob existed keep their bytes, so they still verify."""
    assert "briscola" not in Rules().record_dict()
    later = {"briscola", "table_seats", "stramazzo", "first_lead", "auction", "striscio_corto"}
    assert Rules().record_dict() == {k: v for k, v in Rules().to_dict().items() if k not in later}
    assert preset("tressette-briscola").record_dict()["briscola"] is True
    for rules in presets().values():
        assert Rules.from_record(rules.record_dict()) == rules


FORMAT_ONE_CALABRESELLA = {
    "game": "calabresella", "target": 21, "card_values": [1, 1, 3, 1, 1, 1, 0, 0, 0, 0],
    "declarations": False, "quattro_points": 4, "declaration_limit": 0,
    "declare_before_first_card": False, "auto_declare": False, "signals": "muto",
    "striscio_meaning": "more", "striscio_lengths": False, "ribusso": False, "cappotto": "double",
    "cappotto_cancels_declarations": True, "call_out": False, "widow": "last_trick",
}  # fmt: skip
"""The ``rules`` of a Calabresella record header written before 2026-12-01."""


def test_a_header_without_a_later_knob_means_the_rule_before_it():
    old = Rules.from_record(FORMAT_ONE_CALABRESELLA)
    assert old.auction == "open" and old.stramazzo is False
    assert old != preset("calabresella")  # today's preset: once, with stramazzo
    assert preset("calabresella").auction == "once" and preset("calabresella").stramazzo
    assert old.record_dict() == FORMAT_ONE_CALABRESELLA  # the same bytes back
    now = preset("calabresella").record_dict()
    assert now["auction"] == "once" and now["stramazzo"] is True
    lengths = Rules.from_record({"game": "tressette", "striscio_lengths": True})
    assert lengths.striscio_corto == "one_to_three"
    assert Rules.from_record({"game": "tressette"}).striscio_corto == "three"
    new = Rules(striscio_lengths=True)
    assert new.record_dict()["striscio_corto"] == "three"
    assert Rules.from_record(new.record_dict()) == new
    # A knob with no meaning in the game stays out of its header at today's default.
    assert {"auction", "stramazzo", "striscio_corto"}.isdisjoint(Rules().record_dict())
    odd = Rules(auction="open", stramazzo=False)
    assert Rules.from_record(odd.record_dict()) == odd


def test_from_record_is_strict():
    with pytest.raises(RulesError, match="unknown knob 'trumps'"):
        Rules.from_record({"game": "tressette", "trumps": "D"})
    with pytest.raises(RulesError, match="'auction' cannot be 'twice'"):
        Rules.from_record({"game": "calabresella", "auction": "twice"})


def test_briscola_needs_four_players():
    with pytest.raises(RulesError, match="'briscola' needs the four-player game"):
        preset("tressette-a-tre").with_knobs(["briscola=true"])


def test_seats_of_each_side():
    assert [preset("tressette").seats_of(side) for side in range(2)] == [[0, 2], [1, 3]]
    assert [preset("tressette-a-tre").seats_of(side) for side in range(3)] == [[0], [1], [2]]
