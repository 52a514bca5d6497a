"""docs/research.md holds: its tables are the encoding's and the codecs', and every Python
example on it runs as written, in a process of its own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from referee.research.encoding import (
    HISTORY_SECTIONS,
    INFORMATION_STATE_SIZE,
    OBSERVATION_SECTIONS,
    OBSERVATION_SIZE,
    action_table,
    num_actions,
)

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "research.md").read_text(encoding="utf-8")
RUN_HERE = ("PettingZoo", "Gymnasium: one seat against bots")
"""The sections whose examples this file runs (the others' are run by their own tests:
tests/test_dataset.py runs the dataset example on a real tournament's dataset)."""
EXAMPLES = [
    block
    for part in re.split(r"^## ", DOC, flags=re.M)
    if part.startswith(RUN_HERE)
    for block in re.findall(r"```python\n(.*?)```", part, flags=re.S)
]


def test_the_section_tables_are_the_encodings() -> None:
    rows = re.findall(r"^\| (\w+) \| (\d+) \| (\d+) \| (.+) \|$", DOC, flags=re.M)
    sections = [
        (s.name, s.start, s.size, s.text) for s in (*OBSERVATION_SECTIONS, *HISTORY_SECTIONS)
    ]
    assert [(n, int(a), int(b), t) for n, a, b, t in rows] == sections
    assert f"`OBSERVATION_SIZE` = {OBSERVATION_SIZE}" in DOC
    assert f"`INFORMATION_STATE_SIZE` = {INFORMATION_STATE_SIZE}" in DOC


def test_the_action_table_says_what_the_codecs_do() -> None:
    for family, mask in (("tressette", 322), ("calabresella", 576), ("briscola", 40)):
        assert num_actions(family) == mask and f"| {mask} |" in DOC
    texts = {r.id: r.text for r in action_table("tressette")}
    assert (texts[40 * 1 + 0], texts[40 * 3 + 39], texts[321]) == (
        "3D busso",
        "4B striscio",
        "call-out",
    )
    texts = {r.id: r.text for r in action_table("calabresella")}
    assert (texts[401], texts[405], texts[520 + 39]) == (
        "bid chiamo",
        "bid scegliete",
        "discard 4B",
    )


def test_the_examples_are_found() -> None:
    assert len(EXAMPLES) == 2


@pytest.mark.parametrize("number", range(len(EXAMPLES)))
def test_every_example_runs(number: int, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(EXAMPLES[number], encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
        timeout=600, env={**env, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), "an example shows what it did"
