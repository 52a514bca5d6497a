"""The ``openspiel:ismcts`` bot: OpenSpiel's IS-MCTS searching what its seat has seen.

    TAVOLO_REFEREE=localhost:50051 TAVOLO_TICKET=... python -m referee.research.openspiel_bot \\
        [--simulations N] [--ms-per-decision MS]

It is a bot of the Python SDK, seeing only the protocol, and needs the ``research`` extra
(OpenSpiel and numpy). Each decision the request's observation is read as the engine's
(pimc's ``engine_observation``); a game of one deal in which the seat has seen exactly
that is drawn by the world samplers pimc and ``resample_from_infostate`` use
(:func:`.resample.game_from_view`) and replayed as a state of the preset's OpenSpiel game
(:mod:`.openspiel_game`, ``deals=1``); ``open_spiel.python.algorithms.ismcts.ISMCTSBot``
searches it, each simulation from a state whose unseen cards are drawn again, a new leaf
valued by one random rollout. Every decision is searched, Calabresella's auction,
exchanges and split too, but for two: a single legal action is played, and a call-out is
the ``heuristic``'s (only when sure), since the searched deal starts at no points and
whether one may call out depends on the points before it.

The search is of the deal alone: a simulation's return is who wins the deal, not the game.

Knobs, from the arguments or else the environment:

- ``--simulations`` / ``TAVOLO_ISMCTS_SIMULATIONS`` (default 1000): simulations a decision;
- ``--ms-per-decision`` / ``TAVOLO_ISMCTS_MS_PER_DECISION`` (default 400): time a decision,
  within the request's deadline less a margin as pimc's; 0: no clock, every simulation is
  run whatever the time.

Its randomness (the drawn game, the resampled worlds, the rollouts, the tree's ties) is
seeded from ``TAVOLO_SEED``, the game and the point of the deal as pimc's, so without a
clock the same seed gives the same records on any machine; a search the clock stops
short is said on stderr.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
import hashlib
import os
import random
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from referee.bots import pimc, pimc_calabresella
from referee.engine.rules import Rules
from referee.research.openspiel_game import game_name, parameters
from referee.research.resample import game_from_view
from tavolo_bot.bots.heuristic import choose_action
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.runner import main as run_main
from tavolo_bot.turn import Turn

DEFAULT_SIMULATIONS = 1000
DEFAULT_MS_PER_DECISION = 400
MIN_SIMULATIONS = 2
"""The fewest simulations that choose: the first only expands the root."""
UCT_C = 2.0
"""The exploration constant of the tree policy (the research example's)."""


def knobs(argv: Sequence[str], env: Mapping[str, str]) -> tuple[int, int]:
    """``(simulations, ms_per_decision)`` from the arguments, else the environment, else
    defaults; :class:`~referee.bots.pimc.KnobError` for a bad one."""
    simulations, ms = pimc.read_knobs(
        "openspiel:ismcts",
        argv,
        env,
        {
            "simulations": ("TAVOLO_ISMCTS_SIMULATIONS", DEFAULT_SIMULATIONS, MIN_SIMULATIONS),
            "ms-per-decision": ("TAVOLO_ISMCTS_MS_PER_DECISION", DEFAULT_MS_PER_DECISION, 0),
        },
    )
    return simulations, ms


class TimedISMCTS(ismcts.ISMCTSBot):
    """OpenSpiel's IS-MCTS, stopped by a clock too: at ``max_simulations`` simulations or
    at :attr:`stop_at` (``time.monotonic()``), whichever comes first."""

    stop_at = float("inf")
    simulations = 0
    """The simulations the last search ran."""

    def run_search(self, state: pyspiel.State) -> list[tuple[int, float]]:
        """ISMCTSBot's search with the clock checked before each simulation: the final
        policy, or [] if the clock allowed fewer than :data:`MIN_SIMULATIONS`."""
        self.reset()
        self.simulations = 0
        legal = state.legal_actions()
        if len(legal) == 1:
            return [(legal[0], 1.0)]
        self._root_node = self.create_new_node(state)
        while self.simulations < self._max_simulations and time.monotonic() < self.stop_at:
            self.run_simulation(self.sample_root_state(state))
            self.simulations += 1
        if self.simulations < MIN_SIMULATIONS:
            return []
        policy: list[tuple[int, float]] = self.get_final_policy(state, self._root_node)
        return policy


def seeds(text: str) -> tuple[int, random.Random]:
    """A seed for OpenSpiel's and numpy's generators (31 bits: OpenSpiel's sampler takes a
    C int), and a generator for drawing the game, from a decision's seed text."""
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1, random.Random(text)


class IsmctsBot(pimc.PimcBot):
    """Searches each decision with IS-MCTS; pimc's rules, clock and seeds."""

    def __init__(
        self,
        simulations: int = DEFAULT_SIMULATIONS,
        ms_per_decision: int = DEFAULT_MS_PER_DECISION,
    ) -> None:
        super().__init__(simulations, ms_per_decision)
        self.simulations = simulations
        self.loaded: tuple[Rules, pyspiel.Game] | None = None
        """The match's rules and their OpenSpiel game, once loaded."""

    def openspiel_game(self, rules: Rules) -> pyspiel.Game:
        """The preset's OpenSpiel game with ``rules``, one deal."""
        if self.loaded is None or self.loaded[0] != rules:
            self.loaded = rules, pyspiel.load_game(game_name(rules.game), parameters(rules))
        return self.loaded[1]

    def choose(self, turn: Turn) -> int:
        """IS-MCTS's action, or the heuristic's call-out (see the module docstring)."""
        started = time.monotonic()
        rules = self.rules
        if rules is None:
            raise RuntimeError("a decision request before MatchStarted: the bot needs the rules")
        legal = [a.id for a in turn.legal]
        if len(legal) == 1:
            return legal[0]
        calabresella = pimc.card_search(rules) is None
        fallback = choose_action(turn, rules.target, "" if calabresella else rules.game)
        if fallback.kind == pb.ACTION_KIND_CALL_OUT:
            return fallback.id
        obs = (
            pimc_calabresella.engine_observation(turn)
            if calabresella
            else pimc.engine_observation(turn)
        )
        seed, rng = seeds(self.search_seed(turn))
        table = game_from_view(rules, obs, rng)
        state = self.openspiel_game(rules).new_initial_state()
        for action in table.history:
            state.apply_action(action)
        search = self.searcher(state.get_game(), seed)
        search.stop_at = started + self.seconds_left(turn, started)
        policy = search.run_search(state)
        if search.simulations < self.simulations and len(state.legal_actions()) > 1:
            print(
                f"openspiel:ismcts: the time limit ({self.time_limit_ms(turn)} ms) stopped a "
                f"search after {search.simulations} of {self.simulations} simulations"
                + ("; the heuristic's choice was played" if not policy else ""),
                file=sys.stderr,
            )
            self.cut_short += 1
        if not policy:
            return fallback.id
        action = int(max(policy, key=lambda item: item[1])[0])
        if action not in legal:
            raise RuntimeError(
                f"IS-MCTS chose {action}, which the referee does not offer ({legal}): the "
                "searched deal is not the one played"
            )
        return action

    def searcher(self, game: pyspiel.Game, seed: int) -> TimedISMCTS:
        """IS-MCTS for one decision, its worlds, rollouts and ties drawn from ``seed``."""
        rollouts = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed))
        search = TimedISMCTS(
            game, rollouts, UCT_C, self.simulations, random_state=np.random.RandomState(seed)
        )
        worlds = pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0)

        def resample(state: Any, seat: int) -> Any:
            return state.resample_from_infostate(seat, worlds)

        search.set_resampler(resample)
        return search


def main() -> NoReturn:
    """Play the tickets of the environment, with the knobs of the arguments."""
    try:
        simulations, ms = knobs(sys.argv[1:], os.environ)
    except pimc.KnobError as exc:
        print(f"openspiel:ismcts: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    run_main(lambda: IsmctsBot(simulations, ms))


if __name__ == "__main__":
    main()
