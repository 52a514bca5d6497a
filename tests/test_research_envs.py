"""The research environments: every preset passes PettingZoo's own API and seed tests, the
Gymnasium wrapper passes Gymnasium's checker, a seed deals what Tavolo deals from its text,
and the wrapper's other seats are played by whom they are given to."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

from referee.engine.registry import new_game, preset, presets
from referee.research.encoding import OBSERVATION_SECTIONS
from referee.research.gym_env import SeatEnv
from referee.research.pettingzoo_env import env, raw_env
from tavolo_bot.turn import Turn

HAND = next(s for s in OBSERVATION_SECTIONS if s.name == "hand")


@pytest.mark.parametrize("name", sorted(presets()))
def test_every_preset_passes_pettingzoos_api_and_seed_tests(name: str) -> None:
    with warnings.catch_warnings():
        # api_test asks for a Box or Discrete space; ours is a Dict with the action mask,
        # as PettingZoo's own card games have it.
        warnings.simplefilter("ignore", UserWarning)
        api_test(env(name), num_cycles=200)
        seed_test(lambda: env(name), num_cycles=200)


def test_the_information_state_and_a_whole_game_pass_too() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        api_test(env("calabresella", deals=None, information_state=True), num_cycles=400)


@pytest.mark.parametrize("name", ["tressette", "calabresella", "briscola-a-quattro"])
def test_a_seed_deals_what_tavolo_deals_from_its_text(name: str) -> None:
    table = raw_env(name)
    table.reset(seed=42)
    tavolo = new_game(preset(name), "42", deals=1)
    for seat, agent in enumerate(table.possible_agents):
        hand = table.observe(agent)["observation"][HAND.start : HAND.start + HAND.size]
        assert sorted(np.flatnonzero(hand)) == sorted(tavolo.observation(seat).hand)
    # The next unseeded reset deals the seed's next game, "42/1".
    table.reset()
    assert table.seed_text == "42/1"
    assert (
        table.state.observation(0).hand
        == new_game(preset(name), "42/1", deals=1).observation(0).hand
    )


def test_partners_get_the_same_reward_and_know_their_side() -> None:
    table = raw_env("tressette")
    table.reset(seed=7)
    rng = np.random.default_rng(7)
    rewards: dict[str, float] = {}
    for agent in table.agent_iter():
        obs, reward, done, _, info = table.last()
        assert info["side"] == table.seat(agent) % 2
        if done:
            rewards[agent] = reward
        table.step(None if done else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert rewards["player_0"] == rewards["player_2"] == -rewards["player_1"] != 0
    assert rewards["player_1"] == rewards["player_3"]


def test_the_gymnasium_wrapper_passes_gymnasiums_checker() -> None:
    check_env(SeatEnv("tressette", opponents="heuristic"), skip_render_check=True)
    check_env(SeatEnv("calabresella", seat=2), skip_render_check=True)


def test_the_other_seats_are_played_by_whom_they_are_given_to() -> None:
    asked: list[int] = []

    def lowest(turn: Turn) -> int:
        asked.append(turn.seat)
        return min(action.id for action in turn.legal)

    table = SeatEnv("tressette", seat=0, opponents={1: lowest, 2: "heuristic", 3: lowest})
    obs, info = table.reset(seed=3)
    assert info == {"seed": "3"}
    done = False
    while not done:
        legal = np.flatnonzero(obs["action_mask"])
        assert table.state.current_player() == 0 and len(legal) > 0
        obs, reward, done, truncated, _ = table.step(int(legal[0]))
    assert set(asked) == {1, 3} and not truncated
    assert reward == table.state.returns()[0] != 0
    with pytest.raises(ValueError, match=r"no opponent given for seat\(s\) \[3\]"):
        SeatEnv("tressette", opponents={1: "random", 2: "random"})


def test_an_action_the_mask_forbids_ends_the_episode_with_minus_one() -> None:
    table = SeatEnv("briscola")
    obs, _ = table.reset(seed=1)
    forbidden = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    _, reward, done, _, info = table.step(forbidden)
    assert (reward, done, info) == (-1.0, True, {"illegal_action": True, "action": forbidden})


def test_a_seeded_episode_repeats_whole() -> None:
    def episode() -> list[int]:
        table = SeatEnv("tressette", seat=1, opponents="heuristic")
        obs, _ = table.reset(seed=11)
        rng = np.random.default_rng(0)
        taken, done = [], False
        while not done:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            taken.append(action)
            obs, _, done, _, _ = table.step(action)
        return [*taken, len(table.state.observation(0).tricks)]

    assert episode() == episode()
