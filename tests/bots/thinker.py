"""A bot that thinks for a fixed wall time at every decision and says how much CPU it got.

    python tests/bots/thinker.py --think-ms 150

At each decision it spins for ``--think-ms`` of wall time, then writes ``THINK {json}``
to stderr: the share of one core its thread had meanwhile (``time.thread_time()`` over
the wall time). It plays the first legal action. tests/test_sandbox.py reads the lines
from the log the referee keeps outside the sandbox.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from tavolo_bot.bot import Bot
from tavolo_bot.runner import main as run_main
from tavolo_bot.turn import Turn

THINK_SECONDS = 0.15


class ThinkerBot(Bot):
    def choose(self, turn: Turn) -> int:
        wall, cpu = time.monotonic(), time.thread_time()
        while time.monotonic() - wall < THINK_SECONDS:
            pass
        share = (time.thread_time() - cpu) / (time.monotonic() - wall)
        print(f"THINK {json.dumps({'share': round(share, 3)})}", file=sys.stderr, flush=True)
        return turn.legal[0].id


def main() -> None:
    global THINK_SECONDS
    parser = argparse.ArgumentParser()
    parser.add_argument("--think-ms", type=int, default=150)
    THINK_SECONDS = parser.parse_args().think_ms / 1000
    run_main(ThinkerBot)


if __name__ == "__main__":
    main()
