"""Requests in the wire format (``protocol.encode_decision``, ``encode_response``) are
byte for byte what the message path (``fill_decision``) serialises, and the engine's
observation, which keeps its finished tricks from one call to the next, gives what a
state that never kept them gives.

Random games of every preset, with random knobs, played by random legal actions: at
every decision the seat to act is asked complete or compact, as a stream would ask.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.events import Dealt, Event
from referee.engine.game_base import AnyGame
from referee.engine.observation import Observation, Phase
from referee.engine.registry import Family, family, new_game, preset, presets
from referee.engine.rules import Rules
from referee.families.tressette.deal import TressetteDeal
from referee.families.tressette.game import TressetteGame
from referee.protocol import (
    Sent,
    encode_decision,
    encode_observation,
    encode_response,
    fill_decision,
    heard,
)
from tavolo_bot.proto import referee_pb2 as pb
from tests.test_properties import rule_sets

games = st.one_of(st.sampled_from(sorted(presets())).map(preset), rule_sets())


def events_of(
    family: Family, new: list[Event], seat: int, hands: list[Sequence[str]]
) -> list[pb.Event]:
    """The events a seat hears of the engine's new events, as the table makes them."""
    out = []
    for line in new:
        if isinstance(line, Dealt):
            hands[:] = line.hands
        said = heard(family, line, hands)
        event = said.each[seat] if said.each else said.everyone
        if event is not None:
            out.append(event)
    return out


def message_path(
    events: list[pb.Event],
    state: AnyGame,
    seat: int,
    numbers: tuple[int, int, int, int],
    game: int,
    since: Sent | None,
) -> tuple[bytes, Sent]:
    """The response as the referee built it before the wire format: messages, serialised."""
    request_id, deadline_ms, time_bank_ms, attempts_left = numbers
    response = pb.PlayResponse(events=events)
    request = response.request
    request.request_id = request_id
    request.deadline_ms = deadline_ms
    request.time_bank_ms = time_bank_ms
    request.attempts_left = attempts_left
    sent = fill_decision(request, state, seat, state.legal_actions(), game, since)
    return response.SerializeToString(), sent


@settings(max_examples=60, deadline=None)
@given(games, st.integers(0, 2**32 - 1), st.integers(1, 2), st.integers(1, 300))
def test_wire_requests_are_the_messages_bytes(
    rules: Rules, choices: int, deals: int, game: int
) -> None:
    rng = random.Random(choices)
    state = new_game(rules, f"wire-{choices}", deals=deals, record=True)
    assert state.events is not None
    heard = [0] * rules.players
    hands: list[Sequence[str]] = []
    last: list[Sent | None] = [None] * rules.players
    request_id = 0
    while state.outcome is None:
        seat = state.current_player()
        assert seat is not None
        lines = state.events[heard[seat] :]
        heard[seat] = len(state.events)
        events = events_of(state.rules.family, lines, seat, hands)
        request_id += rng.choice((1, 127, 128, 20_000))  # one- to three-byte varints
        numbers = (request_id, rng.choice((0, 200, 5000)), rng.choice((0, 90_000)), 3)
        since = last[seat] if rng.random() < 0.8 else None
        expected, expected_sent = message_path(events, state, seat, numbers, game, since)
        body, sent = encode_decision(state, seat, state.legal_actions(), game, since)
        got = encode_response(
            events,
            request_id=numbers[0],
            deadline_ms=numbers[1],
            time_bank_ms=numbers[2],
            attempts_left=numbers[3],
            body=body,
        )
        assert got == expected
        assert sent == expected_sent
        last[seat] = sent
        state.apply_action(rng.choice(state.legal_actions()))


def finished_tricks(deal: TressetteDeal) -> tuple[Any, ...]:
    """The finished tricks as the engine's public accessors give them, worked out anew."""
    plays, players = deal.plays, deal.players
    return tuple(
        (plays[i * players : (i + 1) * players], w) for i, w in enumerate(deal.trick_winners)
    )


@settings(max_examples=60, deadline=None)
@given(rule_sets(), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_observations_of_a_clone_are_those_worked_out_anew(
    rules: Rules, choices: int, other: int
) -> None:
    """A clone shares the finished tricks its original kept; each goes its own way, and
    every observation of either holds the tricks, and all else, that a game played to
    the same point from the start, observed only there, holds."""
    state = TressetteGame(rules, f"obs-{choices}", deals=1)
    rng = random.Random(choices)
    played: list[int] = []
    while not state.is_terminal() and rng.random() < 0.9:
        for seat in range(rules.players):
            state.observation(seat)  # each call keeps what it can
        action = rng.choice(state.legal_actions())
        state.apply_action(action)
        played.append(action)
    branches = [(state, list(played)), (state.clone(), list(played))]
    for branch, (game, actions) in enumerate(branches):
        rng = random.Random(other + branch)
        while not game.is_terminal():
            fresh = TressetteGame(rules, f"obs-{choices}", deals=1)
            for action in actions:
                fresh.apply_action(action)
            for seat in range(rules.players):
                observation = game.observation(seat)
                assert observation.tricks == finished_tricks(game.deal)
                assert observation == fresh.observation(seat)
            action = rng.choice(game.legal_actions())
            game.apply_action(action)
            actions.append(action)


@given(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=4), st.integers(0, 2**32 - 1))
def test_numbers_are_encoded_as_protobuf_encodes_them(values: list[int], number: int) -> None:
    """Packed int32s (negative ones take ten bytes) and uint32s, of every length."""
    observation = pb.Observation(captured=values, totals=values, players=number, sides=0)
    got, _ = encode_observation(
        Observation(
            seat=0, dealer=0, phase=Phase.DECLARE, hand=(), current_player=None,
            legal_actions=(), trick=(), tricks=(), declarations=(), captured=tuple(values),
            totals=tuple(values),
        ),
        family=family("tressette"), game=0, deal=0, players=number, quattro_points=3,
    )  # fmt: skip
    observation.phase = pb.PHASE_DECLARE
    observation.sides = len(values)
    assert got == observation.SerializeToString()
