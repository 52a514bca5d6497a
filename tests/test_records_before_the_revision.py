"""Records written before the rules revision of 2026-12-01 still verify, under the rules
their headers name: a header that lacks a knob added since means the rule played then.

The files in ``tests/golden/before-2026-12-01/`` are golden records as the engine wrote
them before striscio corto meant exactly 3 more cards, before the Calabresella auction
went round once and before stramazzo was on by default. They are never regenerated.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.engine.rules import Rules
from referee.records import RecordError, replay, verify_lines

OLD = Path(__file__).resolve().parent / "golden" / "before-2026-12-01"
FILES = sorted(OLD.glob("*.jsonl"))


def lines_of(name: str) -> list[str]:
    return (OLD / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()


def with_knob(lines: list[str], key: str, value: object) -> list[str]:
    """The record with one knob added to its (first) header."""
    header = json.loads(lines[0])
    header["rules"][key] = value
    return [json.dumps(header, separators=(",", ":"), ensure_ascii=False), *lines[1:]]


def test_the_old_records_are_there():
    assert [f.name for f in FILES] == [
        "golden-5-tressette-declare-first.jsonl",
        "golden-8-calabresella.jsonl",
        "golden-9-calabresella-four-stramazzo.jsonl",
    ]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_an_old_record_verifies_and_rebuilds_byte_for_byte(path: Path):
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert {"auction", "striscio_corto"}.isdisjoint(header["rules"])
    verified = verify_lines(lines, path.name)
    assert verified.lines == len(lines)
    assert replay(lines) == lines


def test_old_corto_means_one_to_three_more():
    lines = lines_of("golden-5-tressette-declare-first")
    rules = Rules.from_record(json.loads(lines[0])["rules"])
    assert rules.striscio_lengths and rules.striscio_corto == "one_to_three"
    # The record says corto with 1 or 2 more cards: false under today's reading.
    assert any('"signal":"striscio-corto"' in line for line in lines)
    with pytest.raises(RecordError, match="false striscio-corto"):
        verify_lines(with_knob(lines, "striscio_corto", "three"), "edited")


def test_old_auction_is_open():
    lines = lines_of("golden-9-calabresella-four-stramazzo")
    rules = Rules.from_record(json.loads(lines[0])["rules"])
    assert rules.auction == "open" and rules.stramazzo
    with pytest.raises(RecordError, match="bid"):
        verify_lines(with_knob(lines, "auction", "once"), "edited")


def test_old_calabresella_header_means_no_stramazzo():
    lines = lines_of("golden-8-calabresella")
    rules = Rules.from_record(json.loads(lines[0])["rules"])
    assert not rules.stramazzo and rules.auction == "open"
