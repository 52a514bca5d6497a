"""A tournament's game records as files to publish: one verifiable JSONL file a match."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.records import without_think_times
from tournaments.storage import GameRow, Store


@dataclass(frozen=True)
class Exported:
    """What :func:`export_records` wrote."""

    records: int
    """Game records written."""
    files: dict[int, str]
    """Each match with a finished game: its file's name in the folder."""


def export_records(
    store: Store, folder: Path, *, database: str, think_times: bool = True
) -> Exported:
    """Write ``match-N.jsonl`` for each match with a finished game, and ``index.json``.

    Each file holds the match's finished games in order and verifies with ``tavolo
    verify``; ``index.json`` lists every match, its seed and each game's result, under
    the name ``database``. Without ``think_times`` the records lose their ``ms`` fields,
    so two runs of the same tournament export the same bytes. OSError if writing fails.
    """
    matches = store.matches()
    games: dict[int, list[GameRow]] = {}
    for game in store.games():
        games.setdefault(game.match_id, []).append(game)
    records: dict[int, list[str]] = {}
    for match_id, _number, text in store.records():
        if not think_times:
            text = "".join(line + "\n" for line in without_think_times(text.splitlines()))
        records.setdefault(match_id, []).append(text)
    folder.mkdir(parents=True, exist_ok=True)
    index: list[dict[str, Any]] = []
    files: dict[int, str] = {}
    for match in matches:
        played = games.get(match.id, [])
        name = f"match-{match.id}.jsonl"
        if played:
            (folder / name).write_text("".join(records[match.id]), encoding="utf-8")
            files[match.id] = name
        index.append(
            {
                "match": match.id,
                "round": match.round,
                "entries": list(match.entries),
                "seed": match.seed,
                "file": name if played else None,
                "games": [
                    {
                        "game": g.number,
                        "sides": list(g.sides),
                        "winner": g.winner,
                        "totals": list(g.totals),
                        "termination": g.termination,
                    }
                    for g in played
                ],
                "stopped": match.stopped,
            }
        )
    text = json.dumps({"database": database, "matches": index}, indent=1, ensure_ascii=False)
    (folder / "index.json").write_text(text + "\n", encoding="utf-8")
    return Exported(sum(len(texts) for texts in records.values()), files)
