"""MCTS and IS-MCTS from OpenSpiel on a Tavolo game, each against random players."""

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

import referee.research.openspiel_game  # noqa: F401  (registers the tavolo_* games)


def mcts_bot(game: pyspiel.Game, simulations: int, seed: int) -> pyspiel.Bot:
    """MCTS searches the state itself, every hand in sight: a baseline, not a fair player."""
    rollouts = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed))
    return mcts.MCTSBot(game, 2.0, simulations, rollouts, random_state=np.random.RandomState(seed))


def ismcts_bot(game: pyspiel.Game, simulations: int, seed: int) -> pyspiel.Bot:
    """IS-MCTS searches what its seat knows: each simulation starts from a state whose
    unseen cards are drawn again (``resample_from_infostate``)."""
    rollouts = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed))
    bot = ismcts.ISMCTSBot(
        game, rollouts, 2.0, simulations, random_state=np.random.RandomState(seed)
    )
    worlds = pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0)  # seeded: a run repeats
    bot.set_resampler(lambda state, seat: state.resample_from_infostate(seat, worlds))
    return bot


def play(game: pyspiel.Game, bots: dict[int, pyspiel.Bot], seed: int) -> list[float]:
    """One game: ``bots`` play their seats, random players the others; each seat's return."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, chances = zip(*state.chance_outcomes(), strict=True)
            action = int(rng.choice(outcomes, p=chances))
        elif state.current_player() in bots:
            action = int(bots[state.current_player()].step(state))
        else:
            action = int(rng.choice(state.legal_actions()))
        state.apply_action(action)
    return list(state.returns())


def main(name: str = "tavolo_briscola", simulations: int = 200, games: int = 4) -> None:
    game = pyspiel.load_game(name)
    print(name, "-", game.num_players(), "seats,", game.num_distinct_actions(), "action ids")
    for label, make in (("MCTS", mcts_bot), ("IS-MCTS", ismcts_bot)):
        wins = 0
        for seed in range(games):
            returns = play(game, {0: make(game, simulations, seed)}, seed)
            wins += returns[0] > 0
        print(f"{label} in seat 0 won {wins} of {games} against random")


if __name__ == "__main__":
    main()
