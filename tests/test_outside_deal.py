"""A test from outside: a deal from another engine's published test must replay to that
engine's trick winners and score.

The deal is the one of ``Tressette4Spec`` ("A game can be played") in epifab/bastoni, a
Scala Tressette engine; tests/outside/README.md says where it comes from, how its players
and cards map to ours and which rule knobs make our game the same as bastoni's. The
expected values below are transcribed from that spec, not computed by our engine.

If the golden record must change on purpose, rewrite it with
``.venv/bin/python -m tests.test_outside_deal`` and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.engine.deal_book import book_digest, parse_book
from referee.engine.registry import new_game, preset
from referee.families.tressette.actions import parse_action
from referee.records import RecordError, dumps, verify_lines

OUTSIDE = Path(__file__).parent / "outside"
BOOK = OUTSIDE / "bastoni-tressette4.book.jsonl"
RECORD = OUTSIDE / "bastoni-tressette4.record.jsonl"

RULES = preset("tressette").with_knobs(["signals=muto", "declarations=false", "cappotto=none"])
"""Bastoni has no signals, no accusi and no cappotto rule; the rest is our default."""

SEAT_OF = {"player1": 0, "player2": 1, "player3": 2, "player4": 3}
"""Bastoni plays in list order player1..player4, player1 leads the first trick and
player4 (the last, who shuffles) is the dealer; teams are player1+player3 and
player2+player4. So player n is our seat n - 1, with our dealer seat 3."""

PLAYS = [
    # Trick by trick, in bastoni's order; Sei Denari is 6D, Cavallo Q, Fante J, Re K.
    ["6D", "KD", "7D", "3D"],  # player1 leads
    ["6S", "5S", "AS", "2S"],  # player4 leads
    ["3S", "4S", "AC", "6C"],  # player3 leads from here on
    ["KS", "7S", "KB", "4C"],
    ["QS", "JS", "5D", "6B"],
    ["QD", "4B", "4D", "JD"],
    ["2D", "JC", "KC", "7C"],
    ["AD", "QB", "5B", "7B"],
    ["3C", "QC", "2C", "JB"],
    ["5C", "AB", "2B", "3B"],
]

BASTONI_TRICK_WINNERS = [
    "player4",  # TrickCompleted(player4.id),   // 2/3
    "player3",
    "player3",
    "player3",
    "player3",
    "player3",
    "player3",
    "player3",
    "player3",
    "player3",
]
"""The ``TrickCompleted`` events of the spec, in order."""

BASTONI_POINTS = {("player3", "player1"): 11, ("player4", "player2"): 0}
"""``MatchCompleted(... matchPoints = List(PointsCount(List(player3.id, player1.id), 11),
PointsCount(List(player4.id, player2.id), 0)))``."""


def side_of(players: tuple[str, ...]) -> int:
    """Our side (0: seats 0+2, 1: seats 1+3) of a bastoni team."""
    (side,) = {SEAT_OF[p] % 2 for p in players}
    return side


def play_deal() -> list[str]:
    """The record our engine writes for the deal of the book with PLAYS applied."""
    book = parse_book(BOOK.read_bytes(), RULES, BOOK.name)
    state = new_game(RULES, "outside-bastoni", deals=1, record=True, book=book, book_start=0)
    for trick in PLAYS:
        for card in trick:
            state.apply_action(parse_action(card))
    assert state.events is not None
    return [dumps(event) for event in state.lines()]


def test_book_holds_the_spec_hands() -> None:
    """The book's hands are the spec's dealt cards, player n at seat n - 1."""
    line = json.loads(BOOK.read_text(encoding="utf-8"))
    assert line["dealer"] == SEAT_OF["player4"]
    spec_hands = {
        "player1": "6D 5D 4D 2C AC KC 5S 2B KB 5B",
        "player2": "KD JD 7C 6C 4C AS 3B JB 7B 6B",
        "player3": "2D AD QD 7D 3C 5C 3S 2S KS QS",
        "player4": "3D QC JC JS 7S 6S 4S AB QB 4B",
    }
    for player, cards in spec_hands.items():
        assert sorted(line["hands"][SEAT_OF[player]]) == sorted(cards.split()), player


def test_replay_gives_bastoni_trick_winners_and_score() -> None:
    events = [json.loads(line) for line in play_deal()]
    winners = [e["winner"] for e in events if e["type"] == "trick"]
    assert winners == [SEAT_OF[p] for p in BASTONI_TRICK_WINNERS]
    (score,) = [e for e in events if e["type"] == "score"]
    expected = [0, 0]
    for team, points in BASTONI_POINTS.items():
        expected[side_of(team)] = points
    assert score["points"] == expected
    assert score["card_points"] == expected
    assert score["last_trick"] == SEAT_OF[BASTONI_TRICK_WINNERS[-1]]


def test_record_equals_golden_record() -> None:
    played = "".join(line + "\n" for line in play_deal())
    assert played.encode("utf-8") == RECORD.read_bytes()


def test_golden_record_verifies_with_its_book() -> None:
    lines = RECORD.read_text(encoding="utf-8").splitlines()
    verified = verify_lines(lines, RECORD.name, book=(BOOK.read_bytes(), BOOK.name))
    assert verified.lines == len(lines)


def test_golden_record_fails_with_a_tampered_book() -> None:
    line = json.loads(BOOK.read_text(encoding="utf-8"))
    hands = line["hands"]
    # Swap player1's 6D (the first card led) with player2's KD.
    hands[0][hands[0].index("6D")], hands[1][hands[1].index("KD")] = "KD", "6D"
    tampered = (json.dumps(line) + "\n").encode("utf-8")
    parse_book(tampered, RULES, "tampered")  # still a valid deal: only the cards moved
    lines = RECORD.read_text(encoding="utf-8").splitlines()
    with pytest.raises(RecordError, match="SHA-256"):
        verify_lines(lines, RECORD.name, book=(tampered, "tampered.book.jsonl"))
    # Even with the header naming the tampered book, the dealt hands give it away.
    header = json.loads(lines[0])
    renamed = lines[0].replace(header["book"]["sha256"], book_digest(tampered))
    with pytest.raises(RecordError, match="does not match the book"):
        verify_lines([renamed, *lines[1:]], RECORD.name, book=(tampered, "tampered.book.jsonl"))


if __name__ == "__main__":
    RECORD.write_text("".join(line + "\n" for line in play_deal()), encoding="utf-8")
    print(f"wrote {RECORD}")
