"""Every preset as an OpenSpiel game: OpenSpiel's own checks pass on random play (the C++
``random_sim_test`` and the Python ``games_sim_test``), a seed's chance outcomes deal
what Tavolo deals, knobs are parameters, the tensors are the research encoding's, resampled
worlds keep what the seat to act has seen, and OpenSpiel's MCTS, IS-MCTS and a policy
gradient (docs/examples) run on it."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from types import ModuleType

import numpy as np
import pyspiel
import pytest
from open_spiel.python.observation import make_observation
from open_spiel.python.tests import games_sim_test

from referee.engine.cards import NUM_CARDS
from referee.engine.game_base import Termination
from referee.engine.registry import new_game, preset, presets
from referee.engine.rules import Rules
from referee.families.tressette.actions import CALL_OUT
from referee.research import dealt_game
from referee.research.arrays import information_state_tensor, observation_tensor
from referee.research.dealt_game import DealtGame, seeded_outcomes
from referee.research.encoding import INFORMATION_STATE_SIZE, OBSERVATION_SIZE, num_actions
from referee.research.openspiel_game import GAMES, TavoloState, game_name
from referee.research.resample import resample

EXAMPLES = Path(__file__).parent.parent / "docs" / "examples"
NAMES = sorted(presets())


def load(name: str, **params: object) -> pyspiel.Game:
    return pyspiel.load_game(game_name(name), params)


def random_play(state: TavoloState, rng: random.Random) -> None:
    """One chance outcome or legal action, uniformly."""
    if state.is_chance_node():
        state.apply_action(rng.choice(state.chance_outcomes())[0])
    else:
        state.apply_action(rng.choice(state.legal_actions()))


def example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_preset_is_a_game_with_its_familys_facts() -> None:
    assert sorted(GAMES) == sorted(f"tavolo_{n.replace('-', '_')}" for n in NAMES)
    assert "tavolo_tressette_a_due" in [g.short_name for g in pyspiel.registered_games()]
    for name in NAMES:
        game, rules = load(name), preset(name)
        kind = game.get_type()
        assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
        assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
        assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
        assert kind.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
        assert game.num_players() == rules.players
        assert game.num_distinct_actions() == num_actions(rules.game)
        assert game.max_chance_outcomes() == NUM_CARDS
        assert (game.min_utility(), game.max_utility()) == (-1 / (rules.sides - 1), 1.0)
        assert game.information_state_tensor_size() == INFORMATION_STATE_SIZE
        assert game.observation_tensor_size() == OBSERVATION_SIZE
        params = game.get_parameters()
        assert set(params) == set(Rules().to_dict()) - {"game"} | {"deals"}
        assert params["deals"] == 1


@pytest.mark.parametrize("name", NAMES)
def test_every_preset_passes_openspiels_random_simulation_test(name: str) -> None:
    # Legal actions sorted and empty for others, masks, clones, serialization, tensors and
    # strings for every seat at every state, returns summing to 0 within the utility
    # bounds, and the game no longer than max_game_length.
    pyspiel.random_sim_test(load(name), num_sims=3, serialize=True, verbose=False)
    pyspiel.random_sim_test(load(name, deals=2), num_sims=1, serialize=True, verbose=False)
    pyspiel.random_sim_test(load(name, deals=0), num_sims=1, serialize=False, verbose=False)


@pytest.mark.parametrize("name", NAMES)
def test_every_preset_passes_openspiels_python_game_checks(name: str) -> None:
    # The checks OpenSpiel runs on every registered game from Python: pickling the game,
    # its type and states, serializing, cloning, and the returns at the end.
    np.random.seed(7)  # the checks draw from numpy's global generator
    check = games_sim_test.GamesSimTest()  # its checks, not its test cases
    check.sim_game(load(name))
    check.sim_game(load(name, deals=0))


@pytest.mark.parametrize(
    "name", ["tressette", "tressette-briscola", "tressette-a-tre", "tressette-a-due",
             "briscola", "briscola-a-quattro", "calabresella"],
)  # fmt: skip
def test_a_seeds_chance_outcomes_deal_what_tavolo_deals(name: str) -> None:
    rules = preset(name)
    state = load(name, deals=3).new_initial_state()
    for number in (1, 2):
        for outcome in seeded_outcomes(rules, "42", number):
            state.apply_action(outcome)
    tavolo = new_game(rules, "42", deals=3)
    rng = random.Random(5)
    while not state.is_terminal():
        if state.is_chance_node():  # deal 3's deck, dealt once deal 2 starts
            assert tavolo.deal_number == 2
            for outcome in seeded_outcomes(rules, "42", 3):
                state.apply_action(outcome)
            continue
        table = state.table
        assert table.game is not None
        for seat in range(rules.players):
            assert table.game.observation(seat) == tavolo.observation(seat)
        assert state.legal_actions() == sorted(tavolo.legal_actions())
        action = rng.choice(state.legal_actions())
        state.apply_action(action)
        tavolo.apply_action(action)
    assert tavolo.outcome is not None and tavolo.outcome.deals == 3
    assert state.returns() == list(tavolo.returns())


def test_chance_deals_the_dealer_then_each_card_once() -> None:
    state = load("briscola").new_initial_state()
    assert state.chance_outcomes() == [(0, 0.5), (1, 0.5)]
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 1) == "dealer 1"
    state.apply_action(1)
    assert [o for o, _ in state.chance_outcomes()] == list(range(NUM_CARDS))
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 0) == "deal 3D"
    state.apply_action(0)
    assert 0 not in [o for o, _ in state.chance_outcomes()]
    with pytest.raises(ValueError, match="card 0 is not one left to deal"):
        state.table.apply(0)
    for card in range(1, NUM_CARDS):
        state.apply_action(card)
    # Deck 0..39 dealt one card at a time from the seat after dealer 1: seat 0 gets the
    # even cards, the 7th card (6, 7D) is the trump and lies under the stock.
    assert state.current_player() == 0
    table = state.table
    assert table.game is not None
    assert table.game.observation(0).hand == (0, 2, 4)
    assert table.game.observation(1).trump == 6
    assert state.information_state_string(0).splitlines()[:2] == ["deal 1", "game_totals 0 0"]


def test_knobs_are_parameters_and_the_rules_refuse_what_they_refuse() -> None:
    signals = load("tressette")
    muto = load("tressette", signals="muto")
    rng = random.Random(3)
    loud, quiet = signals.new_initial_state(), muto.new_initial_state()
    while quiet.is_chance_node():
        outcome = rng.choice(quiet.chance_outcomes())[0]
        loud.apply_action(outcome)
        quiet.apply_action(outcome)
    assert any(a >= NUM_CARDS for a in loud.legal_actions())  # busso, volo, striscio
    assert all(a < NUM_CARDS for a in quiet.legal_actions())
    names = [loud.action_to_string(loud.current_player(), a) for a in loud.legal_actions()]
    assert any(n.endswith(" busso") for n in names), names
    values = load("tressette", card_values="3 3 3 3 3 3 3 3 3 3")
    assert values.get_parameters()["card_values"] == "3 3 3 3 3 3 3 3 3 3"
    assert pyspiel.load_game(str(values)).get_parameters() == values.get_parameters()
    with pytest.raises(ValueError, match="Briscola always turns its trump up"):
        load("briscola", briscola=True)
    with pytest.raises(ValueError, match="deals is 1 or more, or 0"):
        load("tressette", deals=-1)
    with pytest.raises(ValueError, match="card_values is ten numbers"):
        load("tressette", card_values="1 2 x")
    with pytest.raises(ValueError, match="card_values"):
        load("tressette", card_values="1 2 3")


def test_the_tensors_and_texts_are_the_seats_views() -> None:
    game = load("calabresella")
    state = game.new_initial_state()
    rng = random.Random(11)
    seen_bids = False
    while not state.is_terminal():
        table = state.table
        if table.game is not None:
            for seat in range(game.num_players()):
                assert state.information_state_tensor(seat) == pytest.approx(
                    information_state_tensor(table.game, seat)
                )
                assert state.observation_tensor(seat) == pytest.approx(
                    observation_tensor(table.game, seat)
                )
                text = state.information_state_string(seat)
                assert f"seat {seat}" in text.splitlines()
                hand = " ".join(
                    state.action_to_string(seat, c) for c in table.game.observation(seat).hand
                )
                assert f"hand {hand or '-'}" in text.splitlines()
                seen_bids |= "bid " in text
        random_play(state, rng)
    assert seen_bids
    # The named sections of the information state, as make_observation gives them.
    info = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    info.set_from(state, 1)
    assert list(info.tensor) == list(state.information_state_tensor(1))
    assert info.dict["plays"].any() and not info.dict["hand"].any()  # every card is played
    everyone = pyspiel.IIGObservationType(
        perfect_recall=False, private_info=pyspiel.PrivateInfoType.ALL_PLAYERS
    )
    with pytest.raises(ValueError, match="one seat's view"):
        make_observation(game, everyone)


def test_partners_share_a_return_and_losers_share_minus_one() -> None:
    rng = random.Random(2)
    for name, seats in (("tressette", 4), ("tressette-a-tre", 3), ("ciapano", 4)):
        state = load(name).new_initial_state()
        while not state.is_terminal():
            random_play(state, rng)
        returns = state.returns()
        assert len(returns) == seats and sum(returns) == pytest.approx(0)
        if name == "tressette":
            assert returns[0] == returns[2] and returns[1] == returns[3]
        elif max(returns) == 1:
            assert sorted(returns)[:-1] == pytest.approx([-1 / (seats - 1)] * (seats - 1))


def test_a_game_to_the_target_deals_again_until_a_side_gets_there() -> None:
    rng = random.Random(4)
    state = load("tressette-a-due", deals=0).new_initial_state()
    chance_after_play = 0
    played = False
    while not state.is_terminal():
        played |= not state.is_chance_node()
        chance_after_play += played and state.is_chance_node()
        random_play(state, rng)
    game = state.table.game
    assert game is not None and game.outcome is not None
    assert game.outcome.termination == Termination.TARGET_REACHED
    assert max(game.totals) >= preset("tressette-a-due").target
    assert chance_after_play == NUM_CARDS * (game.deal_number - 1) > 0


def test_a_game_to_the_target_is_cut_short_as_a_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dealt_game, "MAX_DEALS", 1)
    table = DealtGame(preset("tressette"), deals=None)
    rng = random.Random(1)
    while not table.is_terminal():
        options = table.chance_outcomes() if table.is_chance() else table.legal_actions()
        table.apply(rng.choice(options))
    assert table.truncated and table.deal_number == 2
    assert table.returns() == (0.0, 0.0, 0.0, 0.0)


def resampled_along(game: pyspiel.Game, seed: int) -> int:
    """Resample for the seat to act at every decision of a random game (two deals at the
    most), checking what it must keep; how many times another seat's hand changed."""
    rng = random.Random(seed)
    sampler = pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0)
    state = game.new_initial_state()
    moved = 0
    while not state.is_terminal() and state.table.deal_number < 3:
        if state.is_chance_node():
            random_play(state, rng)
            continue
        seat = state.current_player()
        other = state.resample_from_infostate(seat, sampler)
        assert other.current_player() == seat
        assert other.information_state_string(seat) == state.information_state_string(seat)
        assert other.information_state_tensor(seat) == state.information_state_tensor(seat)
        assert other.legal_actions() == state.legal_actions()
        assert len(other.history()) == len(state.history())
        game_now, got = state.table.game, other.table.game
        assert game_now is not None and got is not None
        moved += any(
            game_now.observation(s).hand != got.observation(s).hand
            for s in range(game_now.rules.players)
        )
        random_play(state, rng)
    with pytest.raises(ValueError, match="the seat to act"):
        resample(state.table, (state.table.to_act() or 0) + 1, rng)
    return moved


@pytest.mark.parametrize("name", NAMES)
def test_resampled_worlds_keep_all_the_seat_to_act_has_seen(name: str) -> None:
    for deals in (1, 0):
        # The cards the seat has not seen are drawn again: other hands change, often.
        assert resampled_along(load(name, deals=deals), NAMES.index(name)) > 5


@pytest.mark.parametrize(
    ("name", "knobs"),
    [
        ("tressette", {"declare_before_first_card": True, "call_out": True}),
        ("tressette", {"auto_declare": True, "declaration_limit": 1}),
        ("tressette", {"striscio_lengths": True, "ribusso": True,
                       "striscio_meaning": "more_no_honours"}),
        ("tressette-a-due", {"declarations": False, "deals": 2}),
        ("calabresella", {"table_seats": 4, "auction": "open", "deals": 0}),
    ],
)  # fmt: skip
def test_knobs_that_change_the_play_pass_the_checks_too(
    name: str, knobs: dict[str, object]
) -> None:
    game = load(name, **knobs)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)
    assert resampled_along(game, 5) > 5


def test_the_research_page_shows_the_search_example_whole() -> None:
    page = (EXAMPLES.parent / "research.md").read_text(encoding="utf-8")
    section = page.split("\n## OpenSpiel\n", 1)[1].split("\n## ", 1)[0]
    shown = section.split("```python\n")[2].split("```", 1)[0]
    assert shown == (EXAMPLES / "openspiel_search.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["tressette", "briscola"])
def test_openspiels_mcts_and_ismcts_play_whole_games(name: str) -> None:
    search = example("openspiel_search")
    game = load(name)
    bots = {0: search.mcts_bot(game, 20, seed=1), 1: search.ismcts_bot(game, 20, seed=2)}
    returns = search.play(game, bots, seed=3)
    assert sum(returns) == pytest.approx(0) and max(returns) == 1


def test_a_policy_gradient_learns_to_beat_random() -> None:
    reinforce = example("openspiel_reinforce")
    before, after = reinforce.main(episodes=200, games=200, seed=0)
    # Untrained, the policy is the uniform random player (about 0); trained, it wins most
    # games (+0.82 to +0.90 over seeds 0..5): the margin asked is half of that.
    assert abs(before) < 0.2
    assert after > before + 0.45
    # What it learned above all: a random player's call-out forfeits the game.
    policy = reinforce.train(pyspiel.load_game(reinforce.GAME, reinforce.PARAMS), 200, seed=0)
    assert int(np.argmin(policy.bias)) == CALL_OUT
