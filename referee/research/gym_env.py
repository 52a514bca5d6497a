"""One seat of a preset as a Gymnasium environment: the learner plays ``seat``, and every
other seat (its partner's too) is played by an entry as :func:`referee.local_play.play_bots`
takes one: a built-in bot's name, a ``py:`` entry, a function of the SDK's ``Turn``, or an
SDK ``Bot`` (docs/research.md).

Observations are the PettingZoo environment's (:mod:`.pettingzoo_env`): the tensor and the
action mask. The reward comes at the end of the episode: the learner's return (1 if its
side won, -1 shared by the losing sides, 0 for a draw). An action the mask does not allow
ends the episode with -1 and ``info["illegal_action"]``, as PettingZoo's classic games do.
``reset(seed=42)`` deals what Tavolo deals from the seed text ``"42"``, and seeds the
other seats' bots as ``tavolo`` seeds them in a game of that seed (``play_game``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from referee.engine.game_base import AnyGame
from referee.engine.registry import new_game, preset
from referee.engine.rules import Rules
from referee.local_play import entry_of, made_player, tell
from referee.match.match import match_started_event
from referee.players import Decision, Player, PlayerMaker
from referee.research.arrays import action_mask, information_state_tensor, observation_tensor
from referee.research.encoding import (
    INFORMATION_STATE_SIZE,
    OBSERVATION_SIZE,
    SettledCache,
    num_actions,
)
from referee.research.episode_seeds import EpisodeSeeds

Opponent = object
"""Who plays a seat: anything :func:`referee.local_play.play_bots` takes as an entry."""


class SeatEnv(gymnasium.Env[dict[str, Any], int]):
    """Seat ``seat`` of a game of ``game`` (a preset's name, or ``rules``) against
    ``opponents``: one for every other seat (a mapping by seat, or one for all)."""

    def __init__(
        self,
        game: str = "tressette",
        *,
        seat: int = 0,
        opponents: Opponent | Mapping[int, Opponent] = "random",
        rules: Rules | None = None,
        deals: int | None = 1,
        information_state: bool = False,
    ) -> None:
        self.rules = rules if rules is not None else preset(game)
        if not 0 <= seat < self.rules.players:
            raise ValueError(f"seat {seat} is not at a table of {self.rules.players}")
        self.seat = seat
        others = [s for s in range(self.rules.players) if s != seat]
        if isinstance(opponents, Mapping):
            missing = sorted(set(others) - set(opponents))
            if missing:
                raise ValueError(f"no opponent given for seat(s) {missing}")
            chosen = {s: opponents[s] for s in others}
        else:
            chosen = dict.fromkeys(others, opponents)
        # Checked here, not at the first reset: an entry that cannot play raises now.
        self._opponents: dict[int, tuple[str, PlayerMaker]] = {}
        for s, who in chosen.items():
            entry, make = entry_of(who)
            self._opponents[s] = (entry.name, make)
        self.deals = deals
        self.information_state = information_state
        size = INFORMATION_STATE_SIZE if information_state else OBSERVATION_SIZE
        actions = num_actions(self.rules.game)
        self.observation_space = spaces.Dict({
            "observation": spaces.Box(-1.0, 1.0, (size,), np.float32),
            "action_mask": spaces.Box(0, 1, (actions,), np.int8),
        })  # fmt: skip
        self.action_space: spaces.Space[int] = spaces.Discrete(actions)  # type: ignore[assignment]
        self.seed_text = ""
        self._seeds = EpisodeSeeds()
        self._settled = SettledCache()
        self.state: AnyGame = new_game(self.rules, "unset", deals=deals)
        self._players: dict[int, Player] = {}
        self._hearing: list[tuple[int, Player]] = []
        self._sent = 0
        self._hands: Sequence[Sequence[str]] = ()
        self._requests = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        self.seed_text = self._seeds.next(seed, options)
        self._players = {
            s: made_player(make, f"{self.seed_text}/seat/{s}", name)
            for s, (name, make) in self._opponents.items()
        }
        self._hearing = [(s, p) for s, p in self._players.items() if p.hears]
        started = match_started_event(self.rules, "local", 1, self.deals)
        for _, player in self._hearing:
            player.hear(started)
        self.state = new_game(
            self.rules, self.seed_text, deals=self.deals, record=bool(self._hearing)
        )
        self._sent, self._hands, self._requests = 0, (), 0
        self._play_others()
        return self._observe(), {"seed": self.seed_text}

    def step(self, action: int) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        state = self.state
        if state.is_terminal():
            raise RuntimeError("the episode is over: reset() first")
        if int(action) not in state.legal_actions():
            info = {"illegal_action": True, "action": int(action)}
            return self._observe(), -1.0, True, False, info
        self._requests += 1
        state.apply_action(int(action))
        self._play_others()
        done = state.is_terminal()
        reward = state.returns()[self.seat] if done else 0.0
        return self._observe(), reward, done, False, {}

    def _play_others(self) -> None:
        """Play the other seats until the learner is to act or the episode is over."""
        state = self.state
        while True:
            if self._hearing and state.events is not None:
                new = state.events[self._sent :]
                self._hands = tell(state.rules.family, new, self._hearing, self._hands)
                self._sent = len(state.events)
            seat = state.current_player()
            if seat is None or seat == self.seat:
                return
            self._requests += 1
            legal = state.legal_actions()
            decision = Decision(state, seat, legal, 1, self._requests)
            state.apply_action(self._players[seat].act(decision))

    def _observe(self) -> dict[str, Any]:
        tensor = information_state_tensor if self.information_state else observation_tensor
        return {
            "observation": tensor(self.state, self.seat, self._settled),
            "action_mask": action_mask(self.state, self.seat),
        }
