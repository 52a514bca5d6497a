"""``tavolo bench arena-order``: the ladder's games to the right order with real bots.

Submissions of known strength: the built-in heuristic playing a uniformly random legal
action instead with probability ``share`` (0 is the heuristic itself, 1 is the random
bot), ``n`` of them with shares evenly spread from 0 to 1, so a higher share is a weaker
bot by construction. They play real meetings (a duplicate set of real games, in the
sandbox, through the arena's store and :class:`~tournaments.arena.ladder_play.LadderRunner`)
paired by the arena's ladder, or by round robin, and the figure is the same as the
synthetic benchmark's (:mod:`.arena_ladder`): the games after which the fit of every game
so far puts them in the right order, and keeps it at every later look.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from tournaments.arena.archives import ArchiveLimits, pack
from tournaments.arena.config import load_arena
from tournaments.arena.ladder_play import LadderRunner
from tournaments.arena.store import ArenaStore, State, now_utc
from tournaments.benchmarks.arena_ladder import OrderRun, order_run
from tournaments.ratings import PairResult

NOISY_BOT = '''\
"""The heuristic, but a random legal action with probability RANDOM_SHARE."""
import os
import random

from tavolo_bot.bots.heuristic import HeuristicBot
from tavolo_bot.runner import main

RANDOM_SHARE = {share!r}


class Noisy(HeuristicBot):
    def __init__(self):
        super().__init__()
        self.dice = random.Random(os.environ.get("TAVOLO_SEED", "") + "/noise")

    def choose(self, turn):
        if self.dice.random() < RANDOM_SHARE:
            return self.dice.choice(turn.legal).id
        return super().choose(turn)


main(Noisy)
'''


def shares(n: int) -> list[float]:
    """The random shares of ``n`` submissions, strongest (0) first."""
    return [round(i / (n - 1), 4) for i in range(n)]


def real_order_run(
    scheme: str, n: int, meetings: int, checkpoint: int, seed: int, deals: int, folder: Path
) -> OrderRun:
    """One run of ``scheme`` with real games, in ``folder`` (empty)."""
    arena = folder / "arena.toml"
    arena.write_text(
        f'name = "order"\n[game]\npreset = "tressette"\ndeals = {deals}\n'
        "[match]\ndeadline_ms = 2000\n[submissions]\nactive = 1\n",
        encoding="utf-8",
    )
    config = load_arena(arena)
    store = ArenaStore(folder / "arena.db")
    try:
        ids = []
        for i, share in enumerate(shares(n)):
            bot = folder / f"bot{i:02d}"
            bot.mkdir()
            (bot / "bot.toml").write_text(
                f'name = "bot"\ncommand = ["{sys.executable}", "bot.py"]\n', encoding="utf-8"
            )
            (bot / "bot.py").write_text(NOISY_BOT.format(share=share), encoding="utf-8")
            entrant, _ = store.invite(f"share{i:02d}")
            submission, _ = store.submit(entrant, pack(bot), limits=ArchiveLimits(), per_day=9)
            store.set_state(submission.id, State.READY)
            ids.append(submission.id)
        runner = LadderRunner(store, config)
        index = {str(number): i for i, number in enumerate(ids)}

        def play(a: int, b: int, number: int) -> list[PairResult]:
            meeting = store.ladder.start(
                ids[a], ids[b], f"{scheme}-{seed}-{number}", now_utc().isoformat()
            )
            asyncio.run(runner.play(meeting))
            prefix = f"{meeting.id}:"
            return [
                PairResult(r.set_key, str(index[r.a]), str(index[r.b]), r.score_a)
                for r in store.ladder.results()
                if r.set_key.startswith(prefix)
            ]

        return order_run(scheme, n, meetings, checkpoint, seed, play)
    finally:
        store.close()


def bench_real_order(
    n: int, meetings: int, checkpoint: int, runs: int, deals: int
) -> dict[str, list[int | None]]:
    """Games to the right order with real bots, per run, for the ladder and round robin."""
    out: dict[str, list[int | None]] = {"ladder": [], "round-robin": []}
    for seed in range(runs):
        for scheme in out:
            with tempfile.TemporaryDirectory(prefix="tavolo-bench-order-") as tmp:
                run = real_order_run(scheme, n, meetings, checkpoint, seed, deals, Path(tmp))
            out[scheme].append(run.games_to_order)
    return out
