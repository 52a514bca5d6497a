"""The research benchmark: environment steps a second with masks and tensors, Tavolo's
environments beside RLCard's own card games, and Parquet export rows a second, in one
process on one core.

Every loop is the same: observe, draw a uniformly random legal action from the mask (or
RLCard's legal actions) with one numpy generator (``integers``), step; episodes are reset
as they end, and a step is an action taken (resets and chance outcomes are not counted,
but their time is). Each figure is the median of ``rounds`` timed rounds.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from referee.engine.registry import preset
from tournaments.benchmarks.dataset import bench_dataset

GOAL = 3.0
"""Tavolo's PettingZoo Tressette over RLCard's fastest card game: at least this."""
RLCARD_GAMES = ("uno", "doudizhu", "limit-holdem", "leduc-holdem")
"""RLCard's card games that are timed (its fastest decides the goal)."""


CEILING = "pettingzoo, no game (ceiling)"
"""The row of :func:`ceiling_loop`."""


@dataclass(frozen=True)
class StepRate:
    """One environment's steps a second."""

    name: str
    steps_per_second: float
    rounds: tuple[float, ...]


Loop = Callable[[int], None]
"""Plays ``n`` steps (resetting episodes as they end)."""


def one_core() -> str:
    """Pin this process to one core, the first it may run on; which one."""
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[0]})
    return str(cores[0])


def timed(name: str, loop: Loop, seconds: float, rounds: int) -> StepRate:
    """Steps a second of ``loop``: ``rounds`` rounds of ``seconds`` each, after a warm-up."""
    loop(200)
    rates = []
    batch = 500
    for _ in range(rounds):
        steps, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            loop(batch)
            steps += batch
        rates.append(steps / elapsed)
    return StepRate(name, statistics.median(rates), tuple(rates))


def pettingzoo_loop(game: str, *, wrapped: bool, floor: bool = False) -> Loop:
    """Random legal play of Tavolo's PettingZoo environment of ``game``; ``floor``: the raw
    one handing out its mask and a tensor of zeros, to measure what the rest costs."""
    from referee.research.arrays import action_mask
    from referee.research.encoding import OBSERVATION_SIZE
    from referee.research.pettingzoo_env import env, raw_env

    class Floor(raw_env):
        """The environment without its encoding: the engine, the mask, PettingZoo."""

        zeros = np.zeros(OBSERVATION_SIZE, np.float32)

        def observe(self, agent: str) -> dict[str, Any]:
            mask = action_mask(self.state, self.seat(agent))
            return {"observation": self.zeros.copy(), "action_mask": mask}

    return _aec_loop(Floor(game) if floor else env(game) if wrapped else raw_env(game))


def ceiling_loop(game: str) -> Loop:
    """Random legal play of a PettingZoo environment with no game in it (:class:`NoGame`):
    the most any PettingZoo environment can make in this loop."""
    return _aec_loop(no_game(game))


def no_game(game: str) -> Any:
    """An AEC environment shaped as Tavolo's ``game`` that plays nothing: its agents take
    turns, each observing a copy of one tensor and one mask (ten legal ids), and an episode
    ends after 40 steps with no reward; PettingZoo's bookkeeping as Tavolo's own."""
    from pettingzoo import AECEnv
    from pettingzoo.utils import AgentSelector

    from referee.research.encoding import OBSERVATION_SIZE, num_actions

    rules = preset(game)

    class NoGame(AECEnv):  # type: ignore[misc]  # PettingZoo is not typed
        metadata: ClassVar[dict[str, Any]] = {"name": "no_game_v0"}

        def __init__(self) -> None:
            super().__init__()
            self.possible_agents = [f"player_{seat}" for seat in range(rules.players)]
            self.tensor = np.zeros(OBSERVATION_SIZE, np.float32)
            self.mask = np.zeros(num_actions(rules.game), np.int8)
            self.mask[:10] = 1
            self.steps = 0

        def observe(self, agent: str) -> dict[str, Any]:
            return {"observation": self.tensor.copy(), "action_mask": self.mask.copy()}

        def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
            self.agents = self.possible_agents[:]
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
            self.terminations = dict.fromkeys(self.agents, False)
            self.truncations = dict.fromkeys(self.agents, False)
            self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
            self._selector = AgentSelector(self.agents)
            self.agent_selection = self._selector.next()
            self.steps = 0

        def step(self, action: int) -> None:
            self._clear_rewards()
            self.steps += 1
            if self.steps == 40:
                self.terminations = dict.fromkeys(self.agents, True)
            else:
                self.agent_selection = self._selector.next()
            self._accumulate_rewards()

    return NoGame()


def _aec_loop(table: Any) -> Loop:
    table.reset(seed=1)
    rng = np.random.default_rng(0)

    def loop(n: int) -> None:
        while n:
            observation, _, termination, truncation, _ = table.last()
            if termination or truncation:
                table.reset()
                continue
            legal = np.flatnonzero(observation["action_mask"])
            table.step(int(legal[rng.integers(len(legal))]))
            n -= 1

    return loop


def gymnasium_loop(game: str) -> Loop:
    """Random legal play of seat 0 of ``game`` against random bots (their steps are the
    wrapper's; one counted step is one learner's step)."""
    from referee.research.gym_env import SeatEnv

    seat = SeatEnv(game, opponents="random")
    observation, _ = seat.reset(seed=1)
    rng = np.random.default_rng(0)

    def loop(n: int) -> None:
        nonlocal observation
        for _ in range(n):
            legal = np.flatnonzero(observation["action_mask"])
            observation, _, done, _, _ = seat.step(int(legal[rng.integers(len(legal))]))
            if done:
                observation, _ = seat.reset()

    return loop


def openspiel_loop(game: str) -> Loop | None:
    """Random legal play of the OpenSpiel game ``tavolo_<game>`` through ``apply_action``
    (chance outcomes drawn alike), with its observation tensor; None if it is not there."""
    if importlib.util.find_spec("pyspiel") is None:
        return None
    if importlib.util.find_spec("referee.research.openspiel_game") is None:
        return None
    import pyspiel

    importlib.import_module("referee.research.openspiel_game")  # it registers the games
    spiel = pyspiel.load_game(f"tavolo_{game}")
    rng = np.random.default_rng(0)
    state = spiel.new_initial_state()

    def loop(n: int) -> None:
        nonlocal state
        while n:
            if state.is_terminal():
                state = spiel.new_initial_state()
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
                continue
            state.observation_tensor(state.current_player())
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
            n -= 1

    return loop


def rlcard_loop(game: str) -> Loop | None:
    """Random legal play of RLCard's ``game`` (its observation is made by every step);
    None if RLCard is not installed."""
    if importlib.util.find_spec("rlcard") is None:
        return None
    import rlcard

    table = rlcard.make(game, config={"seed": 0})
    rng = np.random.default_rng(0)
    state, _ = table.reset()

    def loop(n: int) -> None:
        nonlocal state
        while n:
            if table.is_over():
                state, _ = table.reset()
                continue
            legal = list(state["legal_actions"])
            state, _ = table.step(legal[int(rng.integers(len(legal)))])
            n -= 1

    return loop


@dataclass(frozen=True)
class ResearchBench:
    """Every figure of one run."""

    core: str
    tavolo: list[StepRate]
    rlcard: list[StepRate]
    export: StepRate
    """``tavolo dataset export``'s rows (decisions) a second, of random games' records."""
    missing: list[str]
    """What could not be timed here, and why."""

    def ratio(self, index: int = 0) -> float | None:
        """Tavolo's environment ``index`` (0: the raw PettingZoo one, 1: wrapped) over
        RLCard's fastest card game; None without RLCard."""
        if not self.rlcard:
            return None
        fastest = max(r.steps_per_second for r in self.rlcard)
        return self.tavolo[index].steps_per_second / fastest

    def ceiling(self) -> float | None:
        """The environment with no game (:func:`no_game`) over RLCard's fastest: no
        PettingZoo environment's ratio in this loop goes above it; None without RLCard."""
        index = next(i for i, r in enumerate(self.tavolo) if r.name == CEILING)
        return self.ratio(index)


def bench_research(game: str, seconds: float, rounds: int) -> ResearchBench:
    """Time every environment on one core."""
    core = one_core()
    tavolo = [
        timed(f"pettingzoo {game} (raw)", pettingzoo_loop(game, wrapped=False), seconds, rounds),
        timed(f"pettingzoo {game} (wrapped)", pettingzoo_loop(game, wrapped=True), seconds, rounds),
        timed(f"gymnasium {game} seat", gymnasium_loop(game), seconds, rounds),
        timed(
            f"pettingzoo {game}, zero tensor (floor)",
            pettingzoo_loop(game, wrapped=False, floor=True),
            seconds,
            rounds,
        ),
        timed(CEILING, ceiling_loop(game), seconds, rounds),
    ]
    missing = []
    spiel = openspiel_loop(game)
    if spiel is None:
        missing.append("openspiel: the tavolo games are not here (pip install open-spiel)")
    else:
        tavolo.append(timed(f"openspiel {game} apply_action", spiel, seconds, rounds))
    rlcard = []
    for name in RLCARD_GAMES:
        loop = rlcard_loop(name)
        if loop is None:
            missing.append("rlcard: not installed (pip install rlcard)")
            break
        rlcard.append(timed(f"rlcard {name}", loop, seconds, rounds))
    exported = bench_dataset(preset(game), games=20, rounds=rounds)
    export = StepRate("dataset export (rows)", exported.decisions_per_second, exported.rates)
    return ResearchBench(core, tavolo, rlcard, export, missing)
