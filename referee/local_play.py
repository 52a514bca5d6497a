"""Play a game between built-in players in this process, optionally writing its record."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import IO

from referee.engine.families import AnyGame, new_game
from referee.engine.game_base import Outcome
from referee.engine.rules import Rules
from referee.players import make_player
from referee.records import RecordWriter


class EntriesError(ValueError):
    """Entries that do not fit the game's sides."""


def seat_names(rules: Rules, entries: Sequence[str]) -> list[str]:
    """The entry at each seat: in a partnership game each entry takes both seats of a side."""
    if len(entries) != rules.sides:
        raise EntriesError(
            f"{rules.game} needs {rules.sides} entries, one per side; got {len(entries)}"
        )
    return [entries[rules.side_of(seat)] for seat in range(rules.players)]


def play_game(
    rules: Rules,
    seed: str,
    entries: Sequence[str],
    *,
    deals: int | None = None,
    record: IO[str] | None = None,
    on_deal: Callable[[AnyGame], None] | None = None,
) -> Outcome:
    """Play one game; each seat's player is seeded from ``seed`` and its seat."""
    names = seat_names(rules, entries)
    players = [make_player(name, f"{seed}/seat/{seat}") for seat, name in enumerate(names)]
    state = new_game(rules, seed, deals=deals, seats=names, record=record is not None)
    writer = RecordWriter(record) if record is not None else None
    deal_number = state.deal_number
    while state.outcome is None:
        seat = state.current_player()
        assert seat is not None
        legal = state.legal_actions()
        state.apply_action(players[seat].act(state.observation(seat), legal))
        if writer is not None and state.events is not None:
            writer.write_new(state.events)
        if on_deal is not None and (state.deal_number != deal_number or state.outcome):
            deal_number = state.deal_number
            on_deal(state)
    assert state.outcome is not None
    return state.outcome
