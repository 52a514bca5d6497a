"""The engine API for search and the registry: clone, returns, action_to_string, codecs.

Hypothesis plays random legal prefixes of seeded games of every family, clones them, and
checks that a clone is independent of its original and equal to it; every legal action's
text and parts go through the family's codec and back. The example of
docs/architecture.md runs as written.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.game_base import AnyGame, Termination
from referee.engine.registry import families, family, new_game, preset, presets
from referee.engine.trick_rules import trick_winner
from referee.families.calabresella.codec import CALABRESELLA_CODEC
from referee.families.tressette.actions import NUM_PLAY_ACTIONS
from referee.families.tressette.codec import TRESSETTE_CODEC

ROOT = Path(__file__).resolve().parent.parent
GAMES = sorted(presets())


def snapshot(game: AnyGame) -> tuple[Any, ...]:
    """Everything a player or the record could see of a game, every seat's view included."""
    seats = range(game.rules.players)
    return (
        game.current_player(),
        game.legal_actions(),
        tuple(repr(game.observation(s)) for s in seats) if not game.is_terminal() else (),
        tuple(game.totals),
        game.outcome,
        repr(game.events),
    )


def play_random(game: AnyGame, rng: random.Random, steps: int | None = None) -> list[int]:
    done = []
    while not game.is_terminal() and (steps is None or len(done) < steps):
        action = rng.choice(game.legal_actions())
        game.apply_action(action)
        done.append(action)
    return done


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(GAMES), st.integers(0, 10**6), st.integers(0, 60))
def test_a_clone_plays_on_without_touching_its_original(game_name: str, seed: int, k: int) -> None:
    game = new_game(preset(game_name), f"clone-{seed}", deals=2, record=True)
    rng = random.Random(seed)
    play_random(game, rng, k)
    before = snapshot(game)
    copy = game.clone()
    assert snapshot(copy) == before
    play_random(copy, random.Random(seed + 1))
    assert copy.is_terminal()
    assert snapshot(game) == before  # the original is as it was
    # The same actions on the original and on a fresh clone give the same game.
    twin = game.clone()
    rest = play_random(game, random.Random(seed + 2))
    for action in rest:
        twin.apply_action(action)
    assert snapshot(twin) == snapshot(game)


@pytest.mark.parametrize("game_name", GAMES)
def test_returns_say_who_won_seat_by_seat(game_name: str) -> None:
    rules = preset(game_name)
    game = new_game(rules, "returns", deals=1)
    assert game.returns() == (0.0,) * rules.players  # nothing is decided yet
    loser = game.current_player()
    assert loser is not None
    game.forfeit(loser, Termination.TIMEOUT, "by hand")
    outcome = game.outcome
    assert outcome is not None
    returns = game.returns()
    assert len(returns) == rules.players
    if outcome.winner is None:
        assert returns == (0.0,) * rules.players
        return
    for seat, value in enumerate(returns):
        if rules.side_of(seat) == outcome.winner:
            assert value == 1.0
        else:
            assert value == pytest.approx(-1.0 / (rules.sides - 1))
    assert rules.side_of(loser) != outcome.winner
    # Summed once per side, the returns are zero.
    per_side = {rules.side_of(s): v for s, v in enumerate(returns)}
    assert sum(per_side.values()) == pytest.approx(0.0)


def test_returns_of_a_partnership_game_by_hand() -> None:
    game = new_game(preset("tressette"), "by-hand", deals=1)
    game.forfeit(1, Termination.CRASH, "seat 1 crashed")
    assert game.returns() == (1.0, -1.0, 1.0, -1.0)  # seats 0 and 2 win, 1 and 3 lose


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(GAMES), st.integers(0, 10**6))
def test_every_legal_action_goes_through_its_codec_and_back(game_name: str, seed: int) -> None:
    rules = preset(game_name)
    codec = rules.family.codec
    game = new_game(rules, f"codec-{seed}", deals=1)
    rng = random.Random(seed)
    while not game.is_terminal():
        for action in game.legal_actions():
            text = game.action_to_string(action)
            assert codec.parse(text) == action, (text, action)
            assert codec.encode(codec.decode(action)) == action
        game.apply_action(rng.choice(game.legal_actions()))


def test_the_codecs_by_hand() -> None:
    assert TRESSETTE_CODEC.name(2 * 40 + 12) == "AC volo"  # A of coppe (12), volo (2)
    assert TRESSETTE_CODEC.parse("declare napoli-D") == 300
    assert TRESSETTE_CODEC.decode(321).kind == "call-out"
    assert CALABRESELLA_CODEC.name(402) == "bid solo"
    assert CALABRESELLA_CODEC.decode(402).bid == "solo"
    assert CALABRESELLA_CODEC.name(440 + 2) == "call AD"
    assert CALABRESELLA_CODEC.parse("split 0101") == 560 + 0b0101
    assert CALABRESELLA_CODEC.parse("pass") == 400
    with pytest.raises(ValueError, match="calabresella has no signals"):
        CALABRESELLA_CODEC.parse("3D volo")
    with pytest.raises(ValueError, match="names no action"):
        TRESSETTE_CODEC.decode(290)


def test_every_family_is_declared_once_and_dealt_its_one_way() -> None:
    assert set(families()) == {r.game for r in presets().values()}
    for name, fam in families().items():
        rules = next(r for r in presets().values() if r.game == name)
        assert rules.family is fam is family(name)
        assert rules.players == fam.players(rules)
        dealt = fam.deal(rules, "registry", 1, 0)
        dealt_hands = [h.bit_count() for h in dealt.hands]
        assert max(dealt_hands) == fam.hand_size
        game = new_game(rules, "registry")
        assert isinstance(game, fam.game)  # type: ignore[arg-type]


def test_the_architecture_example_runs() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    [example] = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(example.splitlines()) <= 25
    done = subprocess.run(
        [sys.executable, "-c", example], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    best, _, rest = done.stdout.partition(" {")
    assert best and rest


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["tressette", "tressette-a-tre", "ciapano", "tressette-briscola"]),
       st.integers(0, 10**6))  # fmt: skip
def test_the_fast_path_takes_tricks_as_the_shared_rule_says(game_name: str, seed: int) -> None:
    """Tressette's inlined trick winners are trick_rules.trick_winner's, trump or none."""
    rules = preset(game_name)
    game = new_game(rules, f"tricks-{seed}", deals=1)
    rng = random.Random(seed)
    plays: list[tuple[int, int]] = []
    tricks: list[tuple[list[tuple[int, int]], int]] = []
    deal = game.deal
    while not game.is_terminal():
        action = rng.choice(game.legal_actions())
        seat = game.current_player()
        assert seat is not None
        before = len(deal.trick_winners)
        game.apply_action(action)
        if action < NUM_PLAY_ACTIONS:
            plays.append((seat, action % 40))
            if len(deal.trick_winners) > before:
                tricks.append((plays, deal.trick_winners[-1]))
                plays = []
    trump = None if deal.trump is None else deal.trump // 10
    assert tricks
    for trick, winner in tricks:
        assert trick_winner(trick, trump) == winner, trick
