"""Regenerate the golden game records in ``tests/golden/``.

Run ``.venv/bin/python -m tests.make_golden`` after a change that is meant to alter
records (rules, deals, record format or the built-in players), then review the diff.
``tests/test_golden.py`` plays the same cases and compares them with these files.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from referee.engine.registry import preset
from referee.engine.rules import Rules
from referee.local_play import play_game

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"


PIMC_KNOBS = {"TAVOLO_PIMC_WORLDS": "6", "TAVOLO_PIMC_MS_PER_DECISION": "0"}
"""pimc in the golden games: a few worlds, and no clock (so the same on any machine)."""


@contextlib.contextmanager
def pimc_knobs() -> Iterator[None]:
    """:data:`PIMC_KNOBS` in this process's environment, where pimc reads its knobs."""
    saved = {k: os.environ.get(k) for k in PIMC_KNOBS}
    os.environ.update(PIMC_KNOBS)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@dataclass(frozen=True)
class GoldenCase:
    """One whole game between built-in players (random unless ``entries`` says), from a
    fixed seed."""

    name: str
    game: str
    seed: str
    deals: int | None = None
    """None plays to the target."""
    knobs: tuple[str, ...] = field(default=())
    """``knob=value`` texts, as given to ``tavolo play --rule``."""
    entries: tuple[str, ...] = field(default=())
    """The built-in player of each side; none: random everywhere."""

    @property
    def rules(self) -> Rules:
        return preset(self.game).with_knobs(list(self.knobs))

    @property
    def path(self) -> Path:
        return GOLDEN_DIR / f"{self.name}.jsonl"

    def record(self) -> str:
        """The case's record, played now."""
        rules = self.rules
        out = io.StringIO()
        entries = list(self.entries) or ["random"] * rules.sides
        with pimc_knobs():
            play_game(rules, self.seed, entries, deals=self.deals, record=out)
        return out.getvalue()


CASES = (
    GoldenCase("golden-1-tressette", "tressette", "golden-1"),
    GoldenCase("golden-2-tressette-muto", "tressette-muto", "golden-2", deals=3),
    GoldenCase("golden-3-treseta-call-out", "treseta", "golden-3", knobs=("call_out=true",)),
    GoldenCase("golden-4-tressette-a-tre", "tressette-a-tre", "golden-4"),
    GoldenCase(
        "golden-5-tressette-declare-first",
        "tressette",
        "golden-5",
        deals=2,
        knobs=("declare_before_first_card=true", "striscio_lengths=true"),
    ),
    GoldenCase("golden-6-tressette-briscola", "tressette-briscola", "golden-6"),
    GoldenCase("golden-7-ciapano", "ciapano", "golden-7"),
    GoldenCase("golden-8-calabresella", "calabresella", "golden-8"),
    GoldenCase("golden-10-tressette-a-due", "tressette-a-due", "golden-10"),
    GoldenCase(
        "golden-9-calabresella-four-stramazzo",
        "calabresella",
        "golden-9",
        deals=4,
        knobs=("table_seats=4", "stramazzo=true", "target=31"),
    ),
    GoldenCase("golden-11-briscola", "briscola", "golden-11"),
    GoldenCase("golden-12-briscola-a-quattro", "briscola-a-quattro", "golden-12"),
    # pimc without its clock decides the same on any machine (a dataset made with it can
    # be made again): these hold its decisions.
    GoldenCase(
        "golden-13-pimc-tressette",
        "tressette",
        "golden-13",
        deals=1,
        entries=("pimc", "heuristic"),
    ),
    GoldenCase("golden-14-pimc-briscola", "briscola", "golden-14", entries=("pimc", "random")),
    GoldenCase(
        "golden-15-pimc-calabresella",
        "calabresella",
        "golden-15",
        deals=2,
        entries=("pimc", "random", "heuristic"),
    ),
)


def main() -> int:
    GOLDEN_DIR.mkdir(exist_ok=True)
    for case in CASES:
        text = case.record()
        old = case.path.read_text(encoding="utf-8") if case.path.exists() else None
        status = "unchanged" if old == text else ("new" if old is None else "CHANGED")
        case.path.write_text(text, encoding="utf-8", newline="\n")
        lines = text.count("\n")
        print(f"{os.path.relpath(case.path)}: {lines} lines, {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
