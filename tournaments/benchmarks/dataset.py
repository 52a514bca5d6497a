"""The dataset benchmark: decisions a second that ``tavolo dataset export`` writes."""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from referee.engine.registry import new_game
from referee.engine.rules import Rules
from referee.research.dataset import DECISIONS
from tournaments.dataset_export import export_dataset


@dataclass(frozen=True)
class DatasetBench:
    """Decisions a second of whole exports of the same record files."""

    games: int
    decisions: int
    """Rows of one export."""
    rates: tuple[float, ...]
    """Decisions a second of each timed export: reading, verifying, encoding, writing."""
    bytes_per_decision: float
    """``decisions.parquet``'s size over its rows."""

    @property
    def decisions_per_second(self) -> float:
        """The median over the exports."""
        return statistics.median(self.rates)


def write_records(rules: Rules, games: int, folder: Path, seed: str) -> list[Path]:
    """``games`` record files, one game each to the target, of seeded deals played by
    uniformly random legal actions."""
    rng = random.Random(seed)
    seats = [f"random-{s}" for s in range(rules.players)]
    paths = []
    for number in range(games):
        state = new_game(rules, f"{seed}-{number}", seats=seats, record=True)
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
        assert state.events is not None
        path = folder / f"game-{number}.jsonl"
        path.write_text("".join(state.text(i) + "\n" for i in range(len(state.events))))
        paths.append(path)
    return paths


def bench_dataset(
    rules: Rules, *, games: int = 100, rounds: int = 3, dense: bool = False, seed: str = "bench"
) -> DatasetBench:
    """Export the same ``games`` record files ``rounds`` times, after one warm-up export
    of one file (the engine's tables are built once)."""
    with tempfile.TemporaryDirectory(prefix="tavolo-bench-dataset-") as tmp:
        root = Path(tmp)
        (root / "records").mkdir()
        files = write_records(rules, games, root / "records", seed)

        def export(name: str, given: list[Path]) -> tuple[float, int, int]:
            folder = root / name
            folder.mkdir()
            start = time.perf_counter()
            done = export_dataset(
                folder, files=given, licence="bench", command="tavolo bench dataset", dense=dense
            )
            seconds = time.perf_counter() - start
            return seconds, done.summary.decisions, (folder / DECISIONS).stat().st_size

        export("warm-up", files[:1])
        rates = []
        for n in range(rounds):
            seconds, decisions, size = export(f"round-{n}", files)
            rates.append(decisions / seconds)
    return DatasetBench(games, decisions, tuple(rates), size / decisions)
