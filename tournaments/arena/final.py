"""The final of an arena's season: each entrant's chosen submission (else its best rated
one) in a tournament of the arena's game and time controls, played with the tournament
machinery (``tavolo tournament run``) and published as its report (``tavolo report``).

The tournament file is written beside the database, so the organiser can read what was
played, and run it again. A remote finalist is a remote entry of it, with the key of its
submission: its bot connects to the final's referee as it did to the arena's.
"""

from __future__ import annotations

import json
from typing import Any

from tournaments.arena.api import leaderboard
from tournaments.arena.config import ArenaConfig
from tournaments.arena.store import ArenaError, ArenaStore


def finalists(store: ArenaStore) -> dict[str, int]:
    """Each entrant's finalist: its chosen submission, else its best rated one; by entrant,
    in leaderboard order."""
    chosen = store.chosen()
    board = leaderboard(store)["submissions"]
    out: dict[str, int] = {}
    for row in board:  # best first
        entrant = str(row["entrant"])
        if entrant not in out:
            out[entrant] = chosen.get(entrant, int(row["submission"]))
    for entrant, number in chosen.items():
        out.setdefault(entrant, number)
    return out


def _toml(value: Any) -> str:
    # JSON's strings, numbers, booleans and arrays of them are TOML's too.
    return json.dumps(value, ensure_ascii=False)


def tournament_file(
    store: ArenaStore, config: ArenaConfig, games: int, *, name: str | None = None
) -> str:
    """The final's tournament file (docs/tournaments.md), as text."""
    players = finalists(store)
    if len(players) < 2:
        raise ArenaError(
            f"a final needs two finalists; {len(players)} entrant(s) have a rated submission"
        )
    lines = [f"name = {_toml(name or config.name + ' final')}", 'format = "round-robin"', ""]
    for table in ("game", "match"):
        values = dict(config.tables[table])
        if table == "match":
            values["games"] = games
        nested = {k: v for k, v in values.items() if isinstance(v, dict)}
        lines.append(f"[{table}]")
        lines += [f"{k} = {_toml(v)}" for k, v in values.items() if k not in nested]
        for key, inner in nested.items():
            lines += ["", f"[{table}.{key}]"]
            lines += [f"{k} = {_toml(v)}" for k, v in inner.items()]
        lines.append("")
    for entrant, number in players.items():
        submission = store.submission(number)
        lines += ["[[entry]]", f"name = {_toml(entrant)}"]
        if submission.remote:
            # The entrant's bot connects with the key it has played the season with.
            lines += ['bot = "remote"', f"key_sha256 = {_toml(store.remote_key_digest(number))}"]
        else:
            lines.append(f"bot = {_toml(str(store.play_folder(submission) / 'bot.toml'))}")
        lines.append("")
    return "\n".join(lines)
