"""Game records: JSON Lines written by the engine's events, and their verifier.

The format is in ``docs/records.md``. A record is canonical: every line is
``json.dumps(event, separators=(",", ":"), ensure_ascii=False)`` of the event the
engine produces, so replaying the actions of a record reproduces it byte for byte.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from referee.engine.cards import CardError
from referee.engine.codec import Action, ActionError
from referee.engine.deal_book import BookError, DealBook, parse_book, read_deal
from referee.engine.deals import Deal, SeedError, check_seed
from referee.engine.errors import FileLineError, IllegalActionError, RulesError
from referee.engine.events import (
    Ended,
    Event,
    Forfeited,
    GameBegun,
    Scored,
    frozen,
    line_text,
)
from referee.engine.game_base import RECORD_FORMAT, AnyGame, Outcome, Termination
from referee.engine.registry import families, new_game
from referee.engine.rules import Rules
from referee.protocol import adapters_of

FORFEIT_REASONS = (Termination.ILLEGAL_ACTION, Termination.TIMEOUT, Termination.CRASH)
FAULT_TYPES = ("forfeit", "rejected", "incident")
"""Lines of faults: what someone did that is not an action."""


@functools.cache
def _action_kinds() -> frozenset[str]:
    return frozenset(kind for family in families().values() for kind in family.kinds)


@functools.cache
def action_types() -> frozenset[str]:
    """Lines that say what someone did (every family's actions, and faults); every other
    line is derived from them."""
    return _action_kinds() | frozenset(FAULT_TYPES)


@functools.cache
def timed_types() -> frozenset[str]:
    """Lines that record a bot's answer to a request (every family's actions, and
    ``rejected``): a referee's record gives each its think time, ``ms``, as the line's
    last field (docs/records.md)."""
    return _action_kinds() | {"rejected"}


class RecordError(FileLineError):
    """A record that does not verify: names the file, the line and the first violation."""


def dumps(event: dict[str, Any]) -> str:
    """The canonical text of one record line, without the newline."""
    return line_text(event)


def open_record(path: str | Path, *, new: bool = False) -> IO[str]:
    """``path`` opened to write a record, readable by its owner alone (a ``deal`` line holds
    every hand); ``new``: the file must not exist yet."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if new else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    os.fchmod(fd, 0o600)  # an existing file keeps its old mode otherwise
    return open(fd, "w", encoding="utf-8", newline="\n")


class RecordWriter:
    """Appends a game's events to a file as they happen, flushing after each deal."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._written = 0

    def new_game(self) -> None:
        """The next events come from a new game's list, written from its start."""
        self._written = 0

    def write_new(self, game: AnyGame, texts: Sequence[str] | None = None) -> None:
        """Write the lines of ``game`` not written yet; ``texts``: their text, if made
        already."""
        events = game.events
        assert events is not None
        start = self._written
        if texts is None:
            texts = [game.text(i) for i in range(start, len(events))]
        elif len(texts) != len(events) - start:
            raise ValueError(f"{len(texts)} texts for {len(events) - start} new events")
        for event, text in zip(events[start:], texts, strict=True):
            self._stream.write(text + "\n")
            if isinstance(event, _FLUSHED):
                self._stream.flush()
        self._written = len(events)


_FLUSHED = (Scored, Ended, Forfeited)
"""Events after which a record is flushed: a deal, or the game, is over."""


def _change_header(state: AnyGame, **changes: Any) -> None:
    """Give the game's header (its ``game`` event) ``changes``."""
    assert state.events is not None
    header = state.events[0]
    assert isinstance(header, GameBegun)
    state.events[0] = dataclasses.replace(header, **changes)


def without_think_times(lines: Iterable[str]) -> list[str]:
    """Canonical record lines with every ``ms`` taken out: what two records of the same
    games share, however long the bots took."""
    out = []
    for text in lines:
        obj = json.loads(text)
        if isinstance(obj, dict) and obj.get("type") in timed_types():
            obj.pop("ms", None)
        out.append(dumps(obj))
    return out


def _think_time(obj: dict[str, Any]) -> int:
    """The ``ms`` of an answer line, checked: a whole number of milliseconds from 0."""
    ms = obj["ms"]
    if not isinstance(ms, int) or isinstance(ms, bool) or ms < 0:
        raise ValueError(
            f"'{obj['type']}' line: field 'ms' must be a whole number of milliseconds "
            f"from 0, got {json.dumps(ms)}"
        )
    return ms


@dataclass(frozen=True)
class Verified:
    """A record that verified: one outcome per game it holds."""

    source: str
    outcomes: tuple[Outcome, ...]
    lines: int
    books: tuple[str, ...] = ()
    """SHA-256 of each deal book the games were dealt from, in order of first use."""
    book_checked: bool = False
    """Whether their hands were checked against a book given to the verifier (else they
    were taken from the record's own deal lines)."""

    @property
    def outcome(self) -> Outcome:
        """The outcome of the last game."""
        return self.outcomes[-1]


@dataclass(frozen=True)
class Decision:
    """A seat's action met as a record is replayed, with the game as the seat saw it."""

    state: AnyGame
    """The game just before the action. The replay goes on with it after the call: read
    what you need of it then."""
    seat: int
    action: Action
    """The action's id (the family's codec)."""
    line: dict[str, Any]
    """The record line, as read (with its ``ms`` if it was timed)."""
    number: int
    """Its line number in the record, from 1."""


OnDecision = Callable[[Decision], None]
"""Called for each seat's action of a record, before the replay applies it."""
OnGame = Callable[[AnyGame], None]
"""Called with each game of a record once the replay has reached its ``result``."""


def _field(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in obj:
        raise ValueError(f"{where}: missing field '{key}'")
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise ValueError(f"{where}: field '{key}' has the wrong type ({value!r})")
    return value


def _action_of(obj: dict[str, Any], state: AnyGame) -> tuple[int, Action]:
    """(seat, action) of an action line, read by the family's adapters and put together by
    its codec; ValueError names the bad field."""
    where = f"'{obj['type']}' line"
    seat = _field(obj, "seat", int, where)
    family = state.rules.family
    parts = adapters_of(family).action_parts(
        obj, state, lambda key, kind: _field(obj, key, kind, where)
    )
    return seat, family.codec.encode(parts)


def _difference(obj: dict[str, Any], expected: dict[str, Any], dealt_from: str) -> str:
    """The first field where a record line differs from what the replay gives."""
    kind = expected["type"]
    if obj.get("type") != kind:
        return f"expected a '{kind}' line, found '{obj.get('type')}'"
    for key, value in expected.items():
        if key not in obj:
            return f"'{kind}' line is missing field '{key}'"
        if obj[key] != value:
            if kind == "deal" and key != "deal":  # what the seed or the book dealt
                return f"deal {expected['deal']}: field '{key}' does not match {dealt_from}"
            return (
                f"'{kind}' line: field '{key}' is {json.dumps(obj[key])}, "
                f"the replay gives {json.dumps(value)}"
            )
    extra = next(k for k in obj if k not in expected)
    return f"'{kind}' line has an unknown field '{extra}'"


def _header(obj: Any) -> tuple[Rules, str, int | None, list[str] | None]:
    if not isinstance(obj, dict) or obj.get("type") != "game":
        raise ValueError("the first line must be the 'game' line")
    if obj.get("format") != RECORD_FORMAT:
        raise ValueError(f"field 'format' must be {RECORD_FORMAT!r}, got {obj.get('format')!r}")
    try:
        rules = Rules.from_record(_field(obj, "rules", dict, "'game' line"))
    except RulesError as exc:
        raise ValueError(f"field 'rules': {exc}") from None
    if obj.get("game") != rules.game:
        raise ValueError(f"field 'game' is {obj.get('game')!r} but the rules are {rules.game!r}")
    seed = _field(obj, "seed", str, "'game' line")
    try:
        check_seed(seed)
    except SeedError as exc:
        raise ValueError(f"field 'seed': {exc}") from None
    deals = obj.get("deals")
    if deals is not None and (not isinstance(deals, int) or isinstance(deals, bool) or deals < 1):
        raise ValueError("field 'deals' must be a whole number from 1, or null")
    seats = obj.get("seats")
    if seats is not None and (
        not isinstance(seats, list)
        or len(seats) != rules.players
        or not all(isinstance(s, str) for s in seats)
    ):
        raise ValueError(f"field 'seats' must be {rules.players} names, or null")
    return rules, seed, deals, seats


def _book_field(obj: dict[str, Any]) -> tuple[str, int] | None:
    """(SHA-256, first position from 0) of a header's ``book``, or None without one."""
    if "book" not in obj:
        return None
    book = obj["book"]
    if not isinstance(book, dict) or set(book) != {"sha256", "start"}:
        raise ValueError('field \'book\' must be {"sha256": ..., "start": ...}')
    digest, start = book["sha256"], book["start"]
    if not isinstance(digest, str) or len(digest) != 64 or digest.strip("0123456789abcdef"):
        raise ValueError("field 'book': 'sha256' must be 64 lowercase hex digits")
    if not isinstance(start, int) or isinstance(start, bool) or start < 1:
        raise ValueError("field 'book': 'start' must be a line number from 1")
    return digest, start - 1


class _RecordDeals:
    """A game's deals as its own record's deal lines give them, for a record dealt from a
    book the verifier was not given: the play is checked, the hands are taken as written."""

    def __init__(self, rules: Rules, lines: list[str], header: int, source: str) -> None:
        self.rules, self.lines, self.at, self.source = rules, lines, header + 1, source

    def __call__(self, number: int, dealer: int) -> Deal:
        while self.at < len(self.lines):
            index = self.at
            self.at += 1
            try:
                obj = json.loads(self.lines[index])
            except (json.JSONDecodeError, RecursionError):
                continue  # the main loop names the bad line when it gets there
            if isinstance(obj, dict) and obj.get("type") == "game":
                break
            if isinstance(obj, dict) and obj.get("type") == "deal":
                try:
                    given = read_deal(obj, self.rules, index + 1, self.source)
                except BookError as exc:
                    raise RecordError(self.source, index + 1, exc.message) from None
                line = obj.get("book_line")
                if not isinstance(line, int) or isinstance(line, bool) or line < 1:
                    raise RecordError(
                        self.source, index + 1, "a deal from a book needs its 'book_line'"
                    )
                return dataclasses.replace(given, line=line).deal(number)
        raise RecordError(self.source, None, f"record ends early: deal {number} is missing")


def verify_lines(
    lines: Iterable[str],
    source: str = "<record>",
    *,
    book: tuple[bytes, str] | None = None,
    on_decision: OnDecision | None = None,
    on_game: OnGame | None = None,
) -> Verified:
    """Replay a record's lines (each without its newline) and check every one of them.

    A record holds one game or several in a row (the games of a match), each starting
    with its ``game`` line. ``book``: (bytes, file name) of the deal book the games were
    dealt from, to check their hands against; without it a game dealt from a book takes
    its hands from its own deal lines. ``on_decision`` and ``on_game`` see each seat's
    action and each finished game as the replay meets them (a dataset reads them).
    """
    walk = _Walk(source, check=True, book=book, on_decision=on_decision, on_game=on_game)
    outcomes, number = walk.run(lines)
    return Verified(source, tuple(outcomes), number, tuple(walk.books), book is not None)


def replay(lines: Iterable[str]) -> list[str]:
    """The record rebuilt from the actions in ``lines`` alone, one canonical line each.

    Derived lines (deals, tricks, scores, results) are made anew; the think times of the
    answer lines (``ms``) are kept as written; the lines are assumed to be a record that
    verifies.
    """
    rebuilt: list[str] = []
    _Walk("<record>", check=False, rebuilt=rebuilt).run(lines)
    return rebuilt


Answer = tuple[int, Action, int | None]
"""(seat, action id, think time in ms or None): a seat's action, as a dataset keeps it."""


def rebuild_game(
    header: str,
    steps: Iterable[str | Answer],
    deals: Sequence[str] = (),
    source: str = "<rebuilt>",
) -> list[str]:
    """One game's record, rebuilt from what was done in it; every derived line is made anew.

    ``header`` is the game's ``game`` line; ``steps``, in order, each a seat's action by
    its id (an :data:`Answer`) or a line that is not a seat's action (``rejected``,
    ``incident``, ``forfeit``) as written; ``deals`` the ``deal`` lines of a game dealt
    from a book (a seeded game deals from its seed). :class:`RecordError` names a step
    the game refuses (line 1 is the header, line ``n`` step ``n - 1``).
    """
    state = _Walk(source, check=False).new_game(_parsed(header, source, 1), [header, *deals], 0)
    assert state.events is not None
    for number, step in enumerate(steps, start=2):
        if isinstance(step, str):
            line = _parsed(step, source, number)
            if not isinstance(line, dict) or line.get("type") not in FAULT_TYPES:
                raise RecordError(
                    source, number, "a line step must be a rejected, incident or forfeit line"
                )
            _apply_line(state, line, source, number)
            continue
        seat, action, ms = step
        to_act = state.current_player()
        if seat != to_act:
            now = "the game is over" if to_act is None else f"it is seat {to_act}'s turn"
            raise RecordError(source, number, f"seat {seat} acts, but {now}")
        index = len(state.events)
        _apply_action(state, seat, action, source, number)
        if ms is not None:
            state.think_ms[index] = ms
    if state.outcome is None:
        raise RecordError(source, None, "the steps end before the game is over")
    return [state.text(i) for i in range(len(state.events))]


class _Walk:
    """Feeds a record's actions to the engine, comparing every line when ``check``."""

    def __init__(
        self,
        source: str,
        *,
        check: bool,
        rebuilt: list[str] | None = None,
        book: tuple[bytes, str] | None = None,
        on_decision: OnDecision | None = None,
        on_game: OnGame | None = None,
    ) -> None:
        self.source = source
        self.check = check
        self.rebuilt = rebuilt
        self.book = book
        self.on_decision = on_decision
        self.on_game = on_game
        self.books: list[str] = []
        self._parsed: dict[Rules, DealBook] = {}

    def new_game(self, obj: Any, lines: list[str], index: int) -> AnyGame:
        """The game a header line starts, dealt as its header says, with its sandbox."""
        state = self._dealt_game(obj, lines, index)
        if isinstance(obj, dict) and "sandbox" in obj:
            sandbox = obj["sandbox"]
            players = state.rules.players
            if not (
                isinstance(sandbox, list)
                and len(sandbox) == players
                and all(isinstance(s, str) for s in sandbox)
            ):
                raise RecordError(
                    self.source, index + 1, f"field 'sandbox' must be {players} words"
                )
            # What each seat ran under is a fact of the match, not of the game: kept.
            _change_header(state, sandbox=tuple(sandbox))
        return state

    def _dealt_game(self, obj: Any, lines: list[str], index: int) -> AnyGame:
        number = index + 1
        try:
            rules, seed, deals, seats = _header(obj)
            from_book = _book_field(obj)
        except ValueError as exc:
            raise RecordError(self.source, number, str(exc)) from None
        if from_book is None:
            if self.book is not None:
                raise RecordError(
                    self.source, number, "a deal book was given, but this game was dealt "
                    "from its seed",
                )  # fmt: skip
            return new_game(rules, seed, deals=deals, seats=seats, record=True)
        digest, start = from_book
        if digest not in self.books:
            self.books.append(digest)
        if self.book is None:
            state = new_game(
                rules, seed, deals=deals, seats=seats, record=True,
                deal_source=_RecordDeals(rules, lines, index, self.source),
            )  # fmt: skip
            _change_header(state, book=frozen(obj["book"]))
            return state
        data, name = self.book
        book = self._parsed.get(rules)
        if book is None:
            try:
                book = self._parsed[rules] = parse_book(data, rules, name)
            except BookError as exc:
                raise RecordError(self.source, number, f"the deal book: {exc}") from None
        if book.sha256 != digest:
            raise RecordError(
                self.source, number, f"the game was dealt from the book with SHA-256 {digest}, "
                f"but {name} has SHA-256 {book.sha256}",
            )  # fmt: skip
        return new_game(
            rules, seed, deals=deals, seats=seats, record=True, book=book, book_start=start
        )

    def run(self, given: Iterable[str]) -> tuple[list[Outcome], int]:
        """Walk every line; the outcome of each game, and the number of lines."""
        # Whole, so that a game dealt from a book it was not given can read its deal lines.
        lines = given if isinstance(given, list) else list(given)
        source, check, rebuilt = self.source, self.check, self.rebuilt
        dealt_from = "the book" if self.book is not None else "the seed"
        state: AnyGame | None = None
        events: list[Event] = []
        pos = 0
        number = 0
        outcomes: list[Outcome] = []

        def close_game() -> None:
            if state is not None and state.outcome is not None:
                outcomes.append(state.outcome)
                if rebuilt is not None:
                    rebuilt.extend(dumps(line) for line in state.lines())
                if self.on_game is not None:
                    self.on_game(state)

        for number, text in enumerate(lines, start=1):
            obj = _parsed(text, source, number)
            if state is None or (state.outcome is not None and pos == len(events)):
                if state is not None and (not isinstance(obj, dict) or obj.get("type") != "game"):
                    kind = obj.get("type") if isinstance(obj, dict) else None
                    raise RecordError(
                        source,
                        number,
                        f"a '{kind}' line after the game's result (a new game "
                        "starts with a 'game' line)",
                    )
                close_game()
                state = self.new_game(obj, lines, number - 1)
                assert state.events is not None
                events = state.events
                pos = 0
            elif not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
                raise RecordError(source, number, "a line must be an object with a 'type'")
            elif pos == len(events):
                _apply_line(state, obj, source, number, self.on_decision)
            expected = state.line(pos)
            if check and obj != expected:
                raise RecordError(source, number, _difference(obj, expected, dealt_from))
            if check and text != dumps(expected):
                raise RecordError(
                    source, number, "line is not in canonical form (see docs/records.md)"
                )
            pos += 1
        if state is None:
            raise RecordError(source, None, "the record is empty")
        if pos < len(events):
            raise RecordError(
                source, number + 1, f"record ends early: a '{events[pos].TYPE}' line is missing"
            )
        if state.outcome is None:
            seat = state.current_player()
            raise RecordError(
                source, number + 1, f"record ends before the game is over: seat {seat} is to act"
            )
        close_game()
        return outcomes, number


def _parsed(text: str, source: str, number: int) -> Any:
    """A record line's JSON value, or RecordError."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(source, number, f"not JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise RecordError(source, number, "not a record line (JSON nested too deeply)") from None


def _apply_line(
    state: AnyGame,
    obj: dict[str, Any],
    source: str,
    number: int,
    on_decision: OnDecision | None = None,
) -> None:
    """Apply the action a line records, keeping its think time, or raise RecordError saying
    why it cannot be; ``on_decision`` sees a seat's action before it is applied."""
    assert state.events is not None
    index = len(state.events)
    _apply_untimed(state, obj, source, number, on_decision)
    if "ms" in obj and obj["type"] in timed_types():
        # A fact of the match, as the sandbox is: checked for its form, kept.
        try:
            state.think_ms[index] = _think_time(obj)
        except ValueError as exc:
            raise RecordError(source, number, str(exc)) from None


def _apply_untimed(
    state: AnyGame,
    obj: dict[str, Any],
    source: str,
    number: int,
    on_decision: OnDecision | None,
) -> None:
    kind = obj["type"]
    to_act = state.current_player()
    if kind not in action_types():
        raise RecordError(
            source, number, f"expected an action of seat {to_act}, found a '{kind}' line"
        )
    where = f"'{kind}' line"
    try:
        if kind == "forfeit":
            seat = _field(obj, "seat", int, where)
            reason = Termination(_field(obj, "reason", str, where))
            if reason not in FORFEIT_REASONS:
                raise ValueError("field 'reason' must be illegal_action, timeout or crash")
            state.forfeit(seat, reason, _field(obj, "detail", str, where))
            return
        if kind == "incident":
            seat = _field(obj, "seat", int, where)
            if not 0 <= seat < state.rules.players:
                raise ValueError(f"seat {seat} is not at this table")
            state.note_incident(
                seat, _field(obj, "kind", str, where), _field(obj, "detail", str, where)
            )
            return
        if kind == "rejected":
            seat = _field(obj, "seat", int, where)
            action = _field(obj, "action_id", int, where)
            if seat != to_act:
                raise ValueError(f"seat {seat} was refused an action, but seat {to_act} is to act")
            state.note_rejected(seat, action)
            return
        seat, action = _action_of(obj, state)
    except (ValueError, CardError, ActionError) as exc:
        raise RecordError(source, number, str(exc)) from None
    if seat != to_act:
        raise RecordError(source, number, f"seat {seat} acts, but it is seat {to_act}'s turn")
    if on_decision is not None:
        on_decision(Decision(state, seat, action, obj, number))
    _apply_action(state, seat, action, source, number)


def _apply_action(state: AnyGame, seat: int, action: Action, source: str, number: int) -> None:
    try:
        state.apply_action(action)
    except IllegalActionError as exc:
        raise RecordError(
            source, number, f"illegal action by seat {seat} ({exc.reason.value}): {exc.message}"
        ) from None


def verify_file(
    path: str | Path,
    *,
    book: tuple[bytes, str] | None = None,
    on_decision: OnDecision | None = None,
    on_game: OnGame | None = None,
) -> Verified:
    """Verify one record file; raise :class:`RecordError` naming the first violation.

    Lines end with ``\n`` alone: the file is read as bytes, so a ``\r`` stays on its line
    and fails the canonical-form check. ``book``, ``on_decision`` and ``on_game`` as for
    :func:`verify_lines`.
    """
    source = str(path)
    number = 0

    def lines(stream: IO[bytes]) -> Iterator[str]:
        nonlocal number
        for raw in stream:
            number += 1
            if not raw.endswith(b"\n"):
                raise RecordError(source, number, "truncated: the last line has no newline")
            try:
                yield raw[:-1].decode("utf-8")
            except UnicodeDecodeError:
                raise RecordError(source, number, "not UTF-8 text") from None

    try:
        with open(path, "rb") as stream:
            return verify_lines(
                lines(stream), source, book=book, on_decision=on_decision, on_game=on_game
            )
    except OSError as exc:
        raise RecordError(source, None, f"cannot read: {exc.strerror}") from None
