"""Golden records: whole games from fixed seeds must replay to the stored files byte for byte.

A failure here means the engine, the deals, the record format or the built-in players now
behave differently. If that change is intended, regenerate the files with
``.venv/bin/python -m tests.make_golden`` and review the diff.
"""

from __future__ import annotations

import difflib

import pytest

from referee.engine.rules import Rules
from referee.records import RecordError, replay, verify_file
from tests.make_golden import CASES, GOLDEN_DIR, GoldenCase

REGENERATE = "if the change is intended, run `.venv/bin/python -m tests.make_golden`"


def first_difference(stored: str, played: str) -> str:
    """Where two records part, with a short unified diff."""
    old, new = stored.splitlines(), played.splitlines()
    line = next(
        (i for i, (a, b) in enumerate(zip(old, new, strict=False), start=1) if a != b),
        min(len(old), len(new)) + 1,
    )
    diff = list(difflib.unified_diff(old, new, "stored", "played now", n=1, lineterm=""))
    shown = "\n".join(d[:200] for d in diff[:12])
    return f"first difference at line {line} ({len(old)} lines stored, {len(new)} played)\n{shown}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_replay_matches_golden_record(case: GoldenCase) -> None:
    assert case.path.exists(), f"{case.path} is missing; {REGENERATE}"
    stored = case.path.read_text(encoding="utf-8")
    played = case.record()
    if played != stored:
        pytest.fail(
            f"{case.path.name} no longer matches a replay of its game: "
            f"{first_difference(stored, played)}\n{REGENERATE}",
            pytrace=False,
        )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_golden_record_verifies(case: GoldenCase) -> None:
    try:
        verified = verify_file(case.path)
    except RecordError as exc:
        pytest.fail(f"stored golden record does not verify: {exc}\n{REGENERATE}", pytrace=False)
    assert verified.lines == case.path.read_text(encoding="utf-8").count("\n")
    if case.deals is not None:
        assert verified.outcome.deals == case.deals or case.rules.call_out


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_actions_of_golden_record_rebuild_it(case: GoldenCase) -> None:
    """``replay`` rebuilds the whole record from its action lines alone."""
    lines = case.path.read_text(encoding="utf-8").splitlines()
    assert replay(lines) == lines


def test_every_golden_file_is_a_case() -> None:
    """No stale files: each file in tests/golden/ belongs to a case of make_golden."""
    files = {p.name for p in GOLDEN_DIR.glob("*.jsonl")}
    assert files == {c.path.name for c in CASES}, REGENERATE


def test_golden_cases_cover_the_brief() -> None:
    """The cases play what they are named after (a guard against editing CASES by mistake)."""
    by_seed = {c.seed: c for c in CASES}
    assert by_seed["golden-1"].rules == Rules()
    assert by_seed["golden-2"].rules.signals == "muto"
    assert by_seed["golden-3"].rules.call_out
    assert by_seed["golden-4"].rules.game == "tressette-a-tre"
    five = by_seed["golden-5"].rules
    assert five.declare_before_first_card and five.striscio_lengths
    assert by_seed["golden-11"].rules.game == "briscola"
    assert by_seed["golden-12"].rules.game == "briscola-a-quattro"
