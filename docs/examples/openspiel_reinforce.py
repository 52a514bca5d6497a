"""REINFORCE in numpy on a Tavolo game from OpenSpiel, against random players.

A linear softmax policy over the legal actions (logits ``W @ x + b``, ``x`` the seat's
observation tensor) learns from whole episodes' returns, less a running mean of them.
On tressette a due with chiamarsi fuori (``call_out``), a random player calls out at
random and so loses; a few hundred episodes teach the policy not to, and it then wins
most games against random.
"""

from dataclasses import dataclass, field

import numpy as np
import pyspiel

import referee.research.openspiel_game  # noqa: F401  (registers the tavolo_* games)

GAME = "tavolo_tressette_a_due"
PARAMS = {"call_out": True}


@dataclass
class Policy:
    """Logits ``weights @ x + bias`` of each legal action; all 0 is the uniform random player."""

    weights: np.ndarray
    bias: np.ndarray

    def probabilities(self, x: np.ndarray, legal: list[int]) -> np.ndarray:
        logits = self.weights[legal] @ x + self.bias[legal]
        odds = np.exp(logits - logits.max())
        return odds / odds.sum()


@dataclass
class Episode:
    """What the learner saw and chose, and its return."""

    steps: list[tuple[np.ndarray, list[int], int, np.ndarray]] = field(default_factory=list)
    """(observation, legal actions, index chosen, probabilities) at each of its turns."""
    value: float = 0.0


def play(game: pyspiel.Game, policy: Policy, seat: int, rng: np.random.Generator) -> Episode:
    """One game: ``policy`` plays ``seat``, uniform random players the others."""
    episode = Episode()
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            continue
        legal = state.legal_actions()
        if state.current_player() == seat:
            x = np.asarray(state.observation_tensor(seat))
            chances = policy.probabilities(x, legal)
            i = int(rng.choice(len(legal), p=chances))
            episode.steps.append((x, legal, i, chances))
        else:
            i = int(rng.integers(len(legal)))
        state.apply_action(legal[i])
    episode.value = state.returns()[seat]
    return episode


def untrained(game: pyspiel.Game) -> Policy:
    """The policy before training: every logit 0, so every legal action alike."""
    size = game.observation_tensor_size()
    return Policy(
        np.zeros((game.num_distinct_actions(), size)), np.zeros(game.num_distinct_actions())
    )


def train(
    game: pyspiel.Game, episodes: int, seed: int, rate: float = 2.0, batch: int = 16
) -> Policy:
    """REINFORCE: after each ``batch`` of episodes, each choice's log-probability is pushed
    up by its episode's return less the running mean (the weights 40 times slower than
    the biases: an observation has dozens of entries set, an action one bias)."""
    policy = untrained(game)
    rng = np.random.default_rng(seed)
    grad_w, grad_b = np.zeros_like(policy.weights), np.zeros_like(policy.bias)
    mean = 0.0
    for n in range(1, episodes + 1):
        episode = play(game, policy, n % game.num_players(), rng)
        advantage = episode.value - mean
        mean += 0.02 * (episode.value - mean)
        for x, legal, i, chances in episode.steps:
            step = -chances
            step[i] += 1.0  # the gradient of log p(i) in the logits
            grad_w[legal] += advantage * np.outer(step, x)
            grad_b[legal] += advantage * step
        if n % batch == 0:
            policy.weights += rate / 40 * grad_w / batch
            policy.bias += rate * grad_b / batch
            grad_w[:], grad_b[:] = 0.0, 0.0
    return policy


def mean_return(game: pyspiel.Game, policy: Policy, games: int, seed: int) -> float:
    """The policy's mean return over ``games`` games, seats taken in turn; the same
    ``seed`` deals the same cards, so two policies can be compared game by game."""
    rng = np.random.default_rng(seed)
    return float(
        np.mean([play(game, policy, g % game.num_players(), rng).value for g in range(games)])
    )


def main(episodes: int = 400, games: int = 400, seed: int = 0) -> tuple[float, float]:
    game = pyspiel.load_game(GAME, PARAMS)
    before = mean_return(game, untrained(game), games, seed + 1)
    after = mean_return(game, train(game, episodes, seed), games, seed + 1)
    print(f"mean return against random: {before:+.2f} untrained, {after:+.2f} trained")
    return before, after


if __name__ == "__main__":
    main()
