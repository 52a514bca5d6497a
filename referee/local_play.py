"""Play built-in players in this process, without gRPC: one game, or a whole match.

:func:`play_match` plays a match as :class:`referee.match.match.Match` plays it over the protocol:
the same games (duplicate sets, each once per arrangement of the entries over the sides),
the same deal seeds (or deal-book lines), the same seats, each slot's player seeded as its
bot process would be (``TAVOLO_SEED``), and the same record but for what only a referee
writes: the ``sandbox`` field of its ``game`` lines and the think time (``ms``) of each
answer. Nothing is timed here, so a seed gives the same record file every time. Each entry
has one player per slot for the whole match, like an unconfined bot process; the built-in
players remember nothing from one game to the next, so a sandboxed match (a process of its
own per game) plays the same.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
from collections.abc import Callable, Sequence
from typing import IO

from referee.engine.events import DealOver, Dealt, Event
from referee.engine.game_base import AnyGame, Outcome
from referee.engine.registry import Family, new_game
from referee.engine.rules import Rules
from referee.entries import built_in_bot, unique_names
from referee.match.config import MatchConfig
from referee.match.match import bot_seed, game_over_event, match_started_event
from referee.match.results import EntryStats, MatchResult
from referee.match.table import arrangements, seat_slots
from referee.players import Decision, Player, UnknownPlayerError, make_player
from referee.protocol import heard
from referee.records import RecordWriter
from tavolo_bot.proto import referee_pb2 as pb

IN_PROCESS = "in-process"
"""What ``MatchResult.sandboxes`` says of every entry of a match played here."""


class EntriesError(ValueError):
    """Entries that do not fit the game's sides."""


def seat_names(rules: Rules, entries: Sequence[str]) -> list[str]:
    """The entry at each seat: in a partnership game each entry takes both seats of a side."""
    if len(entries) != rules.sides:
        raise EntriesError(
            f"{rules.game} needs {rules.sides} entries, one per side; got {len(entries)}"
        )
    return [entries[rules.side_of(seat)] for seat in range(rules.players)]


class _Table:
    """One game at a time: asks the seated players, tells those who hear the events the
    referee would send them, and writes the record."""

    def __init__(
        self,
        record: IO[str] | None,
        on_deal: Callable[[AnyGame], None] | None,
        deadline_ms: int = 1000,
    ):
        self.writer = RecordWriter(record) if record is not None else None
        self.on_deal = on_deal
        self.requests = 0
        self.deadline_ms = deadline_ms
        """What each request says its deadline is (the match's ``--deadline-ms``)."""

    def play(self, state: AnyGame, seated: Sequence[Player], game: int) -> Outcome:
        """Play ``state`` to its end, ``seated[seat]`` choosing for each seat."""
        hearing = [(seat, p) for seat, p in enumerate(seated) if p.hears]
        sent = 0
        hands: Sequence[Sequence[str]] = ()
        if self.writer is not None:
            self.writer.new_game()
        while True:
            events = state.events
            if events is not None:
                if hearing:
                    hands = tell(state.rules.family, events[sent:], hearing, hands)
                if self.on_deal is not None:
                    for event in events[sent:]:
                        if isinstance(event, DealOver):
                            self.on_deal(state)
                sent = len(events)
                if self.writer is not None:
                    self.writer.write_new(state)
            if state.outcome is not None:
                return state.outcome
            seat = state.current_player()
            assert seat is not None
            legal = state.legal_actions()
            self.requests += 1
            asked = Decision(state, seat, legal, game, self.requests, self.deadline_ms)
            action = seated[seat].act(asked)
            state.apply_action(action)


def tell(
    family: Family,
    events: Sequence[Event],
    hearing: Sequence[tuple[int, Player]],
    hands: Sequence[Sequence[str]],
) -> Sequence[Sequence[str]]:
    """Tell each hearing player (by seat) the new ``events`` as the referee would send them;
    the hands of the deal in progress (``hands`` before them, as this returned last)."""
    for event in events:
        if isinstance(event, Dealt):
            hands = event.hands
        said = heard(family, event, hands)
        for seat, player in hearing:
            told = said.each[seat] if said.each else said.everyone
            if told is not None:
                player.hear(told)
    return hands


def play_game(
    rules: Rules,
    seed: str,
    entries: Sequence[str],
    *,
    deals: int | None = None,
    record: IO[str] | None = None,
    on_deal: Callable[[AnyGame], None] | None = None,
) -> Outcome:
    """Play one game, outside any match; each seat's player is seeded ``f"{seed}/seat/{n}"``
    and hears no ``GameStarted`` (so a random player draws from that seed itself).

    The golden records (``tests/make_golden.py``) are games of this function.
    """
    names = seat_names(rules, entries)
    players = [make_player(name, f"{seed}/seat/{seat}") for seat, name in enumerate(names)]
    if any(p.hears for p in players):
        started = match_started_event(rules, "local", 1, deals)
        for player in players:
            player.hear(started)
    state = new_game(rules, seed, deals=deals, seats=names, record=True)
    return _Table(record, on_deal).play(state, players, 1)


def play_match(
    config: MatchConfig,
    *,
    record: IO[str] | None = None,
    on_deal: Callable[[int, int], None] | None = None,
    match_id: str = "in-process",
) -> MatchResult:
    """Play every game of ``config`` with built-in players, as a match over gRPC would.

    ``config.entries`` must name built-in players (``UnknownPlayerError`` otherwise); its
    limits say only the deadline each request carries (nothing is timed here), and its
    sandbox nothing. ``on_deal(deals done, game number)`` hears the end
    of each deal.
    """
    rules = config.rules
    for entry in config.entries:
        if entry.remote or (entry.command and not entry.built_in):
            raise UnknownPlayerError(
                f"entry {entry.name!r} is not a built-in player; "
                "--in-process plays built-in players only"
            )
    names = unique_names(list(config.entries))
    slots = 2 if rules.partnerships else 1
    # One player per slot, seeded with the TAVOLO_SEED its bot process gets.
    # A tournament's built-in entries have names of their own ("random-a").
    players = [
        [
            make_player(built_in_bot(entry) or entry.name, bot_seed(config.seed, names[e], k))
            for k in range(slots)
        ]
        for e, entry in enumerate(config.entries)
    ]
    result = MatchResult(
        match_id,
        stats=[EntryStats(n) for n in names],
        sandboxes=[IN_PROCESS] * len(names),
    )
    everyone = [p for row in players for p in row]
    hearing = [p for p in everyone if p.hears]
    started = match_started_event(rules, match_id, config.games, config.deals)
    for player in hearing:
        player.hear(started)
    deals_done = 0
    number = 0

    def deal_over(_: AnyGame) -> None:
        nonlocal deals_done
        deals_done += 1
        if on_deal is not None:
            on_deal(deals_done, number)

    table = _Table(record, deal_over, config.limits.deadline_ms)
    orders = arrangements(rules)
    for number in range(1, config.games + 1):
        _, seed, rotation = config.game_plan(number)
        slots_at = seat_slots(rules, orders[rotation])
        entry_of_seat = [e for e, _ in slots_at]
        seated = [players[e][k] for e, k in slots_at]
        state = config.new_game(number, seed, [names[e] for e in entry_of_seat])
        for seat, player in enumerate(seated):
            player.start_game(number, seat)
        outcome = table.play(state, seated, number)
        over = game_over_event(number, outcome, None)
        for player in seated:
            if player.hears:
                player.hear(over)
        result.tally(rules, outcome, entry_of_seat)
        result.numbers.append(number)
        result.crashed.append(None)
    match_over = pb.Event(match_over=pb.MatchOver(match_id=match_id))
    for player in hearing:
        player.hear(match_over)
    return result
