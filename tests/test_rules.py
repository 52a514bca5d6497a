import pytest

from referee.engine.rules import PRESETS, Rules, RulesError, preset


def test_presets():
    assert preset("tressette") == Rules()
    assert preset("tressette").target == 41
    assert preset("tressette-muto").signals == "muto"
    assert preset("treseta").signals == "leader"
    assert preset("treseta").target == 41
    a_tre = preset("tressette-a-tre")
    assert (a_tre.players, a_tre.hand_size, a_tre.target, a_tre.sides) == (3, 12, 21, 3)
    assert set(PRESETS) >= {"tressette", "tressette-muto", "treseta", "tressette-a-tre"}


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
    for rules in PRESETS.values():
        data = rules.to_dict()
        assert Rules.from_dict(data) == rules
    assert set(Rules().to_dict()) == {
        "game", "target", "card_values", "declarations", "quattro_points",
        "declaration_limit", "declare_before_first_card", "auto_declare", "signals",
        "striscio_meaning", "striscio_lengths", "ribusso", "cappotto",
        "cappotto_cancels_declarations", "call_out", "widow", "briscola", "table_seats",
        "stramazzo", "first_lead",
    }  # fmt: skip


def test_record_headers_keep_later_knobs_out_at_their_default():
    """Records written before a knob existed keep their bytes, so they still verify."""
    assert "briscola" not in Rules().record_dict()
    later = {"briscola", "table_seats", "stramazzo", "first_lead"}
    assert Rules().record_dict() == {k: v for k, v in Rules().to_dict().items() if k not in later}
    assert preset("tressette-briscola").record_dict()["briscola"] is True
    for rules in PRESETS.values():
        assert Rules.from_dict(rules.record_dict()) == rules


def test_briscola_needs_four_players():
    with pytest.raises(RulesError, match="'briscola' needs the four-player game"):
        preset("tressette-a-tre").with_knobs(["briscola=true"])


def test_seats_of_each_side():
    assert [preset("tressette").seats_of(side) for side in range(2)] == [[0, 2], [1, 3]]
    assert [preset("tressette-a-tre").seats_of(side) for side in range(3)] == [[0], [1], [2]]
