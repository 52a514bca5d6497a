"""The engine benchmark: random legal playouts through the public engine API."""

from __future__ import annotations

import itertools
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from referee.engine.deals import deal_cards
from referee.engine.registry import new_game
from referee.engine.rules import Rules
from referee.families.tressette.game import TressetteGame, new_deal


@dataclass(frozen=True)
class EngineBench:
    """Deals per second of seeded random playouts on one core."""

    game: str
    deals_per_second: float
    """Median over the rounds."""
    rounds: tuple[float, ...]
    """Deals per second of each timed round."""
    deals: int
    """Deals played in the timed rounds."""


def _playouts(rules: Rules, seed: str, first: int, count: int, rng: random.Random) -> None:
    """Deal ``count`` seeded deals and play each out with uniformly random legal actions."""
    players = rules.players
    rnd = rng.random
    for number in range(first, first + count):
        dealt = deal_cards(rules.game, seed, number, number % players, players)
        deal = new_deal(rules, dealt.hands, dealt.dealer, dealt.widow)
        legal, apply = deal.legal_actions, deal.apply_action
        # legal_actions() is empty exactly when the deal is over.
        while actions := legal():
            apply(actions[int(rnd() * len(actions))])
        assert deal.score is not None


def _game_playouts(rules: Rules, seed: str, first: int, count: int, rng: random.Random) -> None:
    """As :func:`_playouts`, through the game API (a game of one deal each): the families
    whose deals are not Tressette's (Calabresella's auction and redeals, Briscola's)."""
    rnd = rng.random
    for number in range(first, first + count):
        game = new_game(rules, f"{seed}-{number}", deals=1)
        legal, apply = game.legal_actions, game.apply_action
        while actions := legal():
            apply(actions[int(rnd() * len(actions))])
        assert game.outcome is not None


_BATCH = 200


def _timed(name: str, run_batch: Callable[[], None], seconds: float, rounds: int) -> EngineBench:
    """Deals per second of ``run_batch`` (``_BATCH`` deals a call), after a warm-up batch."""
    run_batch()
    rates: list[float] = []
    total = 0
    for _ in range(rounds):
        played = 0
        start = time.perf_counter()
        elapsed = 0.0
        while elapsed < seconds:
            run_batch()
            played += _BATCH
            elapsed = time.perf_counter() - start
        rates.append(played / elapsed)
        total += played
    return EngineBench(name, statistics.median(rates), tuple(rates), total)


def bench_engine(rules: Rules, *, seconds: float = 1.0, rounds: int = 5) -> EngineBench:
    """Time ``rounds`` rounds of about ``seconds`` each of seeded random playouts."""
    rng = random.Random(20261129)
    next_deal = itertools.count(1, _BATCH)

    playouts = _playouts if rules.family.game is TressetteGame else _game_playouts

    def batch() -> None:
        playouts(rules, "bench", next(next_deal), _BATCH, rng)

    return _timed(rules.game, batch, seconds, rounds)


def _bare_playouts(count: int, rng: random.Random) -> None:
    """The reference loop: shuffle, deal 4 x 10, follow suit at random; no rules beyond that."""
    choice = rng.choice
    for _ in range(count):
        deck = list(range(40))
        rng.shuffle(deck)
        hands = [deck[i * 10 : i * 10 + 10] for i in range(4)]
        leader = 0
        for _trick in range(10):
            led = best = -1
            winner = leader
            for k in range(4):
                seat = (leader + k) % 4
                held = hands[seat]
                if led < 0:
                    card = choice(held)
                    led, best, winner = card // 10, card, seat
                else:
                    follow = [c for c in held if c // 10 == led]
                    card = choice(follow or held)
                    if card // 10 == led and card < best:
                        best, winner = card, seat
                held.remove(card)
            leader = winner


def bench_bare_loop(*, seconds: float = 1.0, rounds: int = 5) -> EngineBench:
    """The reference loop timed like :func:`bench_engine`, to compare machines."""
    rng = random.Random(20261129)
    return _timed("bare-loop", lambda: _bare_playouts(_BATCH, rng), seconds, rounds)


@dataclass(frozen=True)
class CloneBench:
    """What ``clone()`` of a game in the middle of a deal costs (search bots call it)."""

    game: str
    game_clone_us: float
    """Median microseconds of ``game.clone()`` (the deal with it)."""
    playout_us: float
    """Median microseconds to play a cloned game's deal out at random, for scale."""


def bench_clone(rules: Rules, *, samples: int = 2000) -> CloneBench:
    """Clone seeded games after a few random actions, and play each clone's deal out."""
    rng = random.Random(20261201)
    clones: list[float] = []
    playouts: list[float] = []
    for n in range(samples):
        game = new_game(rules, f"clone-{n % 50}", deals=1)
        for _ in range(8):
            if game.is_terminal():
                break
            game.apply_action(rng.choice(game.legal_actions()))
        if game.is_terminal():
            continue  # a Calabresella deal all passed: nothing left to search
        start = time.perf_counter()
        copy = game.clone()
        clones.append(time.perf_counter() - start)
        start = time.perf_counter()
        while not copy.is_terminal():
            copy.apply_action(rng.choice(copy.legal_actions()))
        playouts.append(time.perf_counter() - start)
    return CloneBench(
        rules.game, statistics.median(clones) * 1e6, statistics.median(playouts) * 1e6
    )
