"""The engine benchmark: random legal playouts through the public engine API."""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass

from referee.engine.deals import deal_cards
from referee.engine.game import new_deal
from referee.engine.rules import Rules


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


def bench_engine(rules: Rules, *, seconds: float = 1.0, rounds: int = 5) -> EngineBench:
    """Time ``rounds`` rounds of about ``seconds`` each, after a warm-up round."""
    rng = random.Random(20261129)
    seed = "bench"
    _playouts(rules, seed, 1, 500, rng)  # warm-up: builds the action tables
    batch = 200
    first = 1
    rates: list[float] = []
    total = 0
    for _ in range(rounds):
        played = 0
        start = time.perf_counter()
        elapsed = 0.0
        while elapsed < seconds:
            _playouts(rules, seed, first, batch, rng)
            first += batch
            played += batch
            elapsed = time.perf_counter() - start
        rates.append(played / elapsed)
        total += played
    return EngineBench(rules.game, statistics.median(rates), tuple(rates), total)


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
    _bare_playouts(500, rng)
    rates: list[float] = []
    total = 0
    for _ in range(rounds):
        played = 0
        start = time.perf_counter()
        elapsed = 0.0
        while elapsed < seconds:
            _bare_playouts(200, rng)
            played += 200
            elapsed = time.perf_counter() - start
        rates.append(played / elapsed)
        total += played
    return EngineBench("bare-loop", statistics.median(rates), tuple(rates), total)
