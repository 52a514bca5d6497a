"""Built-in bots, each runnable as a process.

- ``python -m tavolo_bot.bots.random``: a uniformly random legal action, seeded.
- ``python -m tavolo_bot.bots.heuristic``: simple, deterministic, sensible play.
"""
