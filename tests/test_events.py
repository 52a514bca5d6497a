"""The engine's events are typed and frozen; their lines are the record, and
docs/records.md documents every type with its fields."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.events import Event, GameBegun, Played, Rejected
from referee.engine.game_base import AnyGame, Termination
from referee.engine.registry import new_game, preset, presets
from referee.records import dumps, replay, verify_lines

ROOT = Path(__file__).resolve().parent.parent
PRESETS = sorted(presets())


def played(name: str, seed: str, *, faults: bool = False) -> AnyGame:
    """A recorded game of preset ``name``, random legal actions; with ``faults``, a
    refused action and an incident on the way, and a forfeit at the end."""
    game = new_game(preset(name), seed, deals=2, record=True)
    rng = random.Random(seed)
    steps = 0
    while not game.is_terminal():
        legal = game.legal_actions()
        seat = game.current_player()
        assert seat is not None
        if faults and steps == 3:
            refused = next(a for a in range(4096) if a not in legal)
            game.note_rejected(seat, refused)
            game.note_incident(seat, "timeout", "the bot said nothing")
        if faults and steps == 12:
            game.forfeit(seat, Termination.CRASH, "the bot died")
            break
        game.apply_action(rng.choice(legal))
        steps += 1
    return game


def concrete_event_types() -> list[type[Event]]:
    """Every event type a game can hold: the subclasses with a ``TYPE`` of their own."""
    for name in PRESETS:  # every family's package, and its events module, loaded
        played(name, "load")
    found, todo = [], list(Event.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("referee.") and (
            cls.TYPE and cls.__name__ not in ("Dealt", "Scored")
        ):
            found.append(cls)
    return sorted(set(found), key=lambda c: c.__name__)


def deep_frozen(value: Any) -> bool:
    if isinstance(value, list | dict | set):
        return False
    if isinstance(value, tuple):
        return all(deep_frozen(v) for v in value)
    if isinstance(value, Mapping):
        return all(deep_frozen(v) for v in value.values())
    return True


@pytest.mark.parametrize("name", PRESETS)
def test_every_event_is_frozen_through_and_through(name: str) -> None:
    game = played(name, f"frozen-{name}", faults=True)
    assert game.events is not None and game.events
    kinds = set()
    for event in game.events:
        assert isinstance(event, Event)
        kinds.add(event.TYPE)
        first = dataclasses.fields(event)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(event, first, None)
        for f in dataclasses.fields(event):
            assert deep_frozen(getattr(event, f.name)), (event.TYPE, f.name)
    assert {"game", "deal", "play", "trick", "rejected", "incident", "forfeit", "result"} <= kinds
    header = game.events[0]
    assert isinstance(header, GameBegun)
    with pytest.raises(TypeError):
        header.rules["target"] = 1  # type: ignore[index]


def test_a_line_is_its_type_then_its_fields_in_order_optional_ones_left_out() -> None:
    play = Played(2, "3D", "busso")
    assert list(play.line().items()) == [
        ("type", "play"), ("seat", 2), ("card", "3D"), ("signal", "busso"),
    ]  # fmt: skip
    # A signal is not optional: a play without one says null.
    assert Played(1, "AS").line() == {"type": "play", "seat": 1, "card": "AS", "signal": None}
    # A think time is the match's, not the event's: the game keeps it, the line ends in it.
    game = played("tressette", "timed", faults=True)
    assert game.events is not None
    answer = next(i for i, e in enumerate(game.events) if isinstance(e, Played))
    game.time_answer(answer, 17)
    assert list(game.line(answer)) == ["type", "seat", "card", "signal", "ms"]
    assert game.line(answer)["ms"] == 17 and "ms" not in game.events[answer].line()
    rejected = next(i for i, e in enumerate(game.events) if isinstance(e, Rejected))
    game.time_answer(rejected, 5)
    assert list(game.line(rejected)) == ["type", "seat", "action_id", "reason", "ms"]
    # Only a bot's answer has a think time.
    with pytest.raises(ValueError, match="a 'result' event is not a bot's answer"):
        game.time_answer(len(game.events) - 1, 3)
    # A line is a new value: changing it changes no event.
    line = play.line()
    line["card"] = "QB"
    assert play.card == "3D"


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(PRESETS), st.integers(0, 10**6), st.booleans())
def test_replaying_a_record_gives_the_same_events(name: str, n: int, faults: bool) -> None:
    game = played(name, f"replay-{n}", faults=faults)
    assert game.events is not None
    lines = [dumps(line) for line in game.lines()]
    assert verify_lines(lines).outcomes == (game.outcome,)
    assert replay(lines) == lines
    # The same seeded game gives equal event values, not only equal text.
    again = played(name, f"replay-{n}", faults=faults)
    assert again.events == game.events


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(PRESETS), st.integers(0, 10**6), st.booleans())
def test_a_lines_kept_text_is_the_canonical_text_of_the_line(
    name: str, n: int, faults: bool
) -> None:
    """``GameBase.text`` (kept texts, a think time added to them) against the spec's
    ``json.dumps`` of the line, think times and all."""
    game = played(name, f"text-{n}", faults=faults)
    assert game.events is not None
    rng = random.Random(n)
    for i, event in enumerate(game.events):
        if event.TYPE in game.rules.family.kinds or isinstance(event, Rejected):
            game.time_answer(i, rng.choice([0, 7, 1234, 10**6]))
    assert game.think_ms, "no answer was timed"
    for i in range(len(game.events)):
        expected = json.dumps(game.line(i), separators=(",", ":"), ensure_ascii=False)
        assert game.text(i) == expected
        assert game.text(i) == expected  # kept, and given again


def documented_fields() -> dict[str, set[str]]:
    """By line type, every backquoted word in the rows of docs/records.md's tables that
    name it in their first cell (a row with an empty first cell continues the one above)."""
    text = (ROOT / "docs" / "records.md").read_text(encoding="utf-8")
    out: dict[str, set[str]] = {}
    current: list[str] = []
    for row in text.splitlines():
        if not row.startswith("|") or row.startswith("|---"):
            current = [] if not row.startswith("|") else current
            continue
        cells = [c.strip() for c in row.strip("|").split("|")]
        if cells[0]:
            current = re.findall(r"`([^`]+)`", cells[0])
        words = set(re.findall(r"`([^`]+)`", " ".join(cells[1:])))
        for kind in current:
            out.setdefault(kind, set()).update(words)
    return out


def test_records_md_names_every_event_type_and_every_field() -> None:
    documented = documented_fields()
    types = concrete_event_types()
    assert len(types) >= 20
    text = (ROOT / "docs" / "records.md").read_text(encoding="utf-8")
    for cls in types:
        assert f"`{cls.__name__}`" in text, f"docs/records.md does not name {cls.__name__}"
        fields = {f.name for f in dataclasses.fields(cls)} - {"ms"}
        missing = fields - documented.get(cls.TYPE, set())
        assert not missing, f"'{cls.TYPE}' ({cls.__name__}): fields {sorted(missing)} undocumented"
