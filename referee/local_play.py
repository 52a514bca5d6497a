"""Play a match in this process, without gRPC: built-in players, ``py:`` entries and Python
bots of the SDK.

:func:`play_match` plays a match as :class:`referee.match.match.Match` plays it over the protocol:
the same games (duplicate sets, each once per arrangement of the entries over the sides),
the same deal seeds (or deal-book lines), the same seats, each slot's player seeded as its
bot process would be (``TAVOLO_SEED``), and the same record but for what only a referee
writes: the ``sandbox`` field of its ``game`` lines and the think time (``ms``) of each
answer. Nothing is timed here, so a seed gives the same record file every time. Each entry
has one player per slot for the whole match, like an unconfined bot process; the built-in
players remember nothing from one game to the next, so a sandboxed match (a process of its
own per game) plays the same. :func:`play_bots` plays Python objects (a function of the
SDK's ``Turn``, an SDK ``Bot``) the same way, beside built-in and ``py:`` entries.

A player that raises, or chooses an action that is not legal, stops the match with a
:class:`~referee.players.PlayerError` naming its entry, the game, the seat and the request:
here a fault is a bug to see, where over gRPC the referee would apply the match's fault
policy (``max_attempts``, ``on_fault``) and play on.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import IO

from referee.engine.codec import Action
from referee.engine.deal_book import DealBook
from referee.engine.events import DealOver, Dealt, Event
from referee.engine.game_base import AnyGame, Outcome
from referee.engine.registry import Family, new_game, preset
from referee.engine.rules import Rules
from referee.entries import Entry, built_in_bot, parse_entry, unique_names
from referee.match.config import Limits, MatchConfig
from referee.match.match import bot_seed, game_over_event, match_started_event
from referee.match.results import EntryStats, MatchResult
from referee.match.table import arrangements, seat_slots
from referee.players import (
    BUILT_IN,
    Decision,
    Player,
    PlayerError,
    PlayerMaker,
    UnknownPlayerError,
    check_player,
    make_player,
)
from referee.protocol import heard
from referee.python_players import PythonEntry, bot_player, imported_bot, python_entry
from referee.records import RecordWriter
from tavolo_bot.proto import referee_pb2 as pb

IN_PROCESS = "in-process"
"""What ``MatchResult.sandboxes`` says of every entry of a match played here."""

FAULT_STOPS = (
    "a fault stops a match played in process (over gRPC the referee would apply the "
    "match's fault policy: max_attempts, on_fault)"
)


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
            state.apply_action(seated[seat].act(asked))


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


class _Guarded:
    """An entry's player, each of whose faults stops the match with a PlayerError naming the
    entry and where it was: an exception it raised (its cause), or an action not legal."""

    def __init__(self, player: Player, name: str) -> None:
        self._player = player
        self._name = name
        self.hears = player.hears
        self._at = "before its first game"

    def start_game(self, game: int, seat: int) -> None:
        """As the player's, once it knows where it is."""
        self._at = f"game {game}, seat {seat}"
        with self._guard("on GameStarted"):
            self._player.start_game(game, seat)

    def hear(self, event: pb.Event) -> None:
        """As the player's."""
        with self._guard(f"on hearing {event.WhichOneof('event')}"):
            self._player.hear(event)

    def act(self, decision: Decision) -> Action:
        """The player's action, if it is one of ``decision.legal``."""
        with self._guard("", f", request {decision.request_id}"):
            action = self._player.act(decision)
        if action not in decision.legal:
            raise PlayerError(
                f"entry {self._name!r} ({self._at}, request {decision.request_id}) chose "
                f"action {action!r}, which is none of the legal actions "
                f"{list(decision.legal)}; {FAULT_STOPS}"
            )
        return action

    @contextlib.contextmanager
    def _guard(self, when: str, request: str = "") -> Iterator[None]:
        try:
            yield
        except Exception as exc:
            during = f" {when}" if when else ""
            raise PlayerError(
                f"entry {self._name!r} ({self._at}{request}) raised {_said(exc)}{during}; "
                f"{FAULT_STOPS}"
            ) from exc


def _said(exc: Exception) -> str:
    """``exc`` on one line: its type and message."""
    return " ".join(f"{type(exc).__name__}: {exc}".split())


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
    players = [
        _Guarded(make_player(name, f"{seed}/seat/{seat}"), name) for seat, name in enumerate(names)
    ]
    if any(p.hears for p in players):
        started = match_started_event(rules, "local", 1, deals)
        for player in players:
            player.hear(started)
    state = new_game(rules, seed, deals=deals, seats=names, record=True)
    return _Table(record, on_deal).play(state, players, 1)


def entry_player(entry: Entry) -> PlayerMaker:
    """What plays ``entry`` in this process: its built-in player, or the bot of a ``py:``
    entry, imported here (:func:`referee.python_players.imported_bot`).

    UnknownPlayerError for any other entry, or one that cannot be played.
    """
    if entry.python is not None:
        return bot_player(imported_bot(entry.name, entry.python))
    if entry.remote or (entry.command and not entry.built_in):
        raise UnknownPlayerError(
            f"entry {entry.name!r} is not a built-in player or a py: entry; "
            "--in-process plays only those"
        )
    # A tournament's built-in entries have names of their own ("random-a").
    name = built_in_bot(entry) or entry.name
    check_player(name)
    return BUILT_IN[name]


def play_match(
    config: MatchConfig,
    *,
    record: IO[str] | None = None,
    on_deal: Callable[[int, int], None] | None = None,
    match_id: str = "in-process",
) -> MatchResult:
    """Play every game of ``config`` in this process, as a match over gRPC would.

    ``config.entries`` must be built-in players or ``py:`` entries (:func:`entry_player`;
    UnknownPlayerError otherwise); its limits say only the deadline each request carries
    (nothing is timed here), and its sandbox nothing. ``on_deal(deals done, game number)``
    hears the end of each deal.
    """
    players = [entry_player(entry) for entry in config.entries]
    return _play(config, players, record, on_deal, match_id)


def play_bots(
    rules: Rules | str,
    entries: Sequence[object],
    *,
    seed: str,
    deals: int | None = None,
    sets: int = 1,
    deadline_ms: int = 1000,
    book: DealBook | None = None,
    record: IO[str] | None = None,
    on_deal: Callable[[int, int], None] | None = None,
    match_id: str = "in-process",
) -> MatchResult:
    """Play a match between Python bots and built-in players in this process: the games,
    seats, seeds and record of ``tavolo play`` with the same arguments over gRPC.

    ``rules`` is a rule set or a preset's name; ``entries`` one per side, each an entry as
    ``tavolo play --in-process`` takes it (``"heuristic"``, ``"py:mybots.greedy:choose"``),
    or a Python object: a function of the SDK's ``Turn``, an SDK ``Bot`` subclass,
    instance or factory, named after itself, or a ``PythonEntry`` that names it
    (:func:`~referee.python_players.python_entry`). The rest is as ``tavolo play`` takes
    it; ``on_deal`` as :func:`play_match`'s.

    EntryError or UnknownPlayerError for an entry that cannot play here, EntriesError for
    the wrong number of them, PlayerError when a player faults (the match stops).
    """
    rules = preset(rules) if isinstance(rules, str) else rules
    named: list[Entry] = []
    players: list[PlayerMaker] = []
    for item in entries:
        entry, make = entry_of(item)
        named.append(entry)
        players.append(make)
    limits = Limits(deadline_ms=deadline_ms)
    config = MatchConfig(rules, seed, tuple(named), deals, sets, limits, book=book)
    return _play(config, players, record, on_deal, match_id)


def entry_of(item: object) -> tuple[Entry, PlayerMaker]:
    """An entry as :func:`play_bots` takes it (a text, or a Python bot), as a match entry
    and what makes its players; EntryError or UnknownPlayerError if it cannot play here."""
    if isinstance(item, str):
        entry = parse_entry(item)
        return entry, entry_player(entry)
    python = item if isinstance(item, PythonEntry) else python_entry(item)
    # A name in the match; nothing to run.
    return Entry(python.name), bot_player(python.make)


def _play(
    config: MatchConfig,
    makers: Sequence[PlayerMaker],
    record: IO[str] | None,
    on_deal: Callable[[int, int], None] | None,
    match_id: str,
) -> MatchResult:
    """Play ``config``'s match, entry ``e``'s slots played by ``makers[e]``'s players."""
    rules = config.rules
    seat_names(rules, [entry.name for entry in config.entries])  # one entry per side
    names = unique_names(list(config.entries))
    slots = 2 if rules.partnerships else 1
    # One player per slot, seeded with the TAVOLO_SEED its bot process gets.
    players = [
        [made_player(make, bot_seed(config.seed, names[e], k), names[e]) for k in range(slots)]
        for e, make in enumerate(makers)
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


def made_player(make: PlayerMaker, seed: str, name: str) -> Player:
    """The player ``make`` makes for a slot of entry ``name``, guarded (:class:`_Guarded`);
    PlayerError if making it raises."""
    try:
        return _Guarded(make(seed), name)
    except Exception as exc:
        raise PlayerError(f"entry {name!r}: making its bot raised {_said(exc)}") from exc
