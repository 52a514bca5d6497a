"""A tournament's game records as files to publish: one verifiable JSONL file a match."""

from __future__ import annotations

import hashlib
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
    digests: dict[int, str]
    """Each of those files' SHA-256, in hex."""
    texts: dict[tuple[int, int], str]
    """(match, game) -> that game's record as written."""


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
    texts: dict[tuple[int, int], str] = {}
    records: dict[int, list[str]] = {}
    for match_id, number, text in store.records():
        if not think_times:
            text = "".join(line + "\n" for line in without_think_times(text.splitlines()))
        texts[(match_id, number)] = text
        records.setdefault(match_id, []).append(text)
    folder.mkdir(parents=True, exist_ok=True)
    index: list[dict[str, Any]] = []
    files: dict[int, str] = {}
    digests: dict[int, str] = {}
    for match in matches:
        played = games.get(match.id, [])
        name = f"match-{match.id}.jsonl"
        if played:
            data = "".join(records[match.id]).encode("utf-8")
            (folder / name).write_bytes(data)
            files[match.id] = name
            digests[match.id] = hashlib.sha256(data).hexdigest()
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
    return Exported(len(texts), files, digests, texts)
