"""Every preset as a PettingZoo AEC environment (docs/research.md).

``env("tressette")`` gives the environment wrapped as PettingZoo's classic games are
(illegal actions end the episode with -1 for the offender; out-of-range actions and calls
out of order are refused); ``raw_env`` is the bare one. Agents are ``player_0`` .. in seat
order. An episode is ``deals`` deals (1 by default; ``None``: the whole game, to the
target). Each agent's reward comes at the end: the game's return for its seat, 1 for each
seat of the winning side and -1 shared by the losers, so partners (seats 0+2, 1+3) always
get the same reward, as PettingZoo's team games give it; ``infos[agent]["side"]`` says
whose side an agent is on.

``reset(seed=42)`` deals what Tavolo deals from the seed text ``"42"`` (``tavolo deal``);
``options={"seed": text}`` takes any seed text. A reset without a seed after a seeded one
deals the seed's next game (``"42/1"``, ``"42/2"``, ...), so a seeded run repeats whole.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import AgentSelector, wrappers

from referee.engine.cards import CARD_NAMES
from referee.engine.game_base import AnyGame
from referee.engine.registry import new_game, preset
from referee.engine.rules import Rules
from referee.research.arrays import action_mask, information_state_tensor, observation_tensor
from referee.research.encoding import (
    INFORMATION_STATE_SIZE,
    OBSERVATION_SIZE,
    SettledCache,
    num_actions,
)
from referee.research.episode_seeds import EpisodeSeeds


def env(game: str = "tressette", **kwargs: Any) -> AECEnv:
    """:class:`raw_env` wrapped as PettingZoo's classic card games are."""
    out: AECEnv = raw_env(game, **kwargs)
    out = wrappers.TerminateIllegalWrapper(out, illegal_reward=-1)
    out = wrappers.AssertOutOfBoundsWrapper(out)
    return wrappers.OrderEnforcingWrapper(out)


class raw_env(AECEnv):
    """One preset of Tavolo's rules engine, seat by seat."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human"], "name": "tavolo_v1", "is_parallelizable": False,
    }  # fmt: skip

    def __init__(
        self,
        game: str = "tressette",
        *,
        rules: Rules | None = None,
        deals: int | None = 1,
        information_state: bool = False,
        render_mode: str | None = None,
    ) -> None:
        """``game``: a preset's name; ``rules``: rules of your own instead (a preset with
        knobs changed, ``Rules.with_knobs``); ``information_state``: observe the
        information-state tensor (the deal's plays in order) instead of the observation."""
        super().__init__()
        self.rules = rules if rules is not None else preset(game)
        self.deals = deals
        self.information_state = information_state
        self.render_mode = render_mode
        players = self.rules.players
        self.possible_agents = [f"player_{seat}" for seat in range(players)]
        self.agents = self.possible_agents[:]
        size = INFORMATION_STATE_SIZE if information_state else OBSERVATION_SIZE
        actions = num_actions(self.rules.game)
        self.observation_spaces = {
            agent: spaces.Dict({
                "observation": spaces.Box(-1.0, 1.0, (size,), np.float32),
                "action_mask": spaces.Box(0, 1, (actions,), np.int8),
            })
            for agent in self.possible_agents
        }  # fmt: skip
        self.action_spaces = {agent: spaces.Discrete(actions) for agent in self.possible_agents}
        self._seeds = EpisodeSeeds()
        self._settled = SettledCache()
        self.seed_text = ""
        """The seed text of the episode being played."""
        self.state: AnyGame = new_game(self.rules, "unset", deals=deals)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def seat(self, agent: str) -> int:
        """The seat of ``agent``."""
        return self.possible_agents.index(agent)

    def observe(self, agent: str) -> dict[str, Any]:
        seat = self.seat(agent)
        tensor = information_state_tensor if self.information_state else observation_tensor
        return {
            "observation": tensor(self.state, seat, self._settled),
            "action_mask": action_mask(self.state, seat),
        }

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.seed_text = self._seeds.next(seed, options)
        self.state = new_game(self.rules, self.seed_text, deals=self.deals)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {"side": self.rules.side_of(self.seat(a))} for a in self.agents}
        self._selector = AgentSelector(self.agents)
        self._select()

    def step(self, action: int) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._clear_rewards()
        self.state.apply_action(int(action))
        if self.state.is_terminal():
            returns = self.state.returns()
            for a in self.agents:
                self.rewards[a] = returns[self.seat(a)]
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self._select()
        self._accumulate_rewards()
        if self.render_mode == "human":
            print(self.render())

    def _select(self) -> None:
        seat = self.state.current_player()
        if seat is not None:
            self.agent_selection = self.possible_agents[seat]

    def render(self) -> str:
        """The table as text: each seat's hand, the trick, who is to act."""
        state = self.state
        lines = [f"{self.rules.game}, seed {self.seed_text!r}, deal {state.deal_number}"]
        name = state.action_to_string
        for seat in range(self.rules.players):
            obs = state.observation(seat)
            hand = " ".join(CARD_NAMES[card] for card in sorted(obs.hand))
            lines.append(f"  seat {seat}: {hand}")
        trick = state.observation(0).trick
        lines.append("  trick: " + (" ".join(f"{s}:{name(a)}" for s, a in trick) or "-"))
        lines.append(f"  to act: {state.current_player()}")
        return "\n".join(lines)

    def close(self) -> None:
        """Nothing to release."""
