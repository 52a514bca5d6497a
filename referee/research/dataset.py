"""Game records as a dataset: one Parquet row per decision, one per game (docs/research.md).

:class:`DatasetWriter` replays records through the record verifier
(:func:`referee.records.verify_lines`), and at each seat's action it writes what the seat
knew (the shared encoding, :func:`~referee.research.encoding.observation_entries`), what
it might have done (the legal action ids), what it did, its think time and the game's
final return for it. Cards the seat could not see are in the ``hidden_`` columns alone.

A dataset is a folder: ``decisions.parquet`` and ``games.parquet``. The games table keeps
what the decisions do not (each header, the faults' lines, the deals), so that
:func:`rebuild` makes every record again, byte for byte, from the two tables.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from referee.engine.cards import cards_of
from referee.engine.events import Incident
from referee.engine.game_base import AnyGame, Termination
from referee.records import (
    FAULT_TYPES,
    Answer,
    Decision,
    open_record,
    rebuild_game,
    verify_file,
    verify_lines,
)
from referee.research.encoding import (
    OBSERVATION_SIZE,
    SettledCache,
    dense,
    legal_ids,
    num_actions,
    observation_entries,
)

FORMAT = "tavolo-dataset/1"
"""The version of this layout, in each file's schema metadata (key ``tavolo``)."""
DECISIONS = "decisions.parquet"
GAMES = "games.parquet"
ROWS_PER_GROUP = 65_536
"""Decisions a Parquet row group holds, at most: what a writer keeps in memory."""
_RANDOM_PLAYS = frozenset(
    t.value for t in (Termination.TIMEOUT, Termination.ILLEGAL_ACTION, Termination.CRASH)
)
"""Incident kinds after which the referee plays at random for the seat (``on_fault``)."""


def _column(name: str, kind: pa.DataType, text: str) -> tuple[pa.Field, str]:
    return pa.field(name, kind), text


_TEXT = pa.dictionary(pa.int32(), pa.string())
_IDENTITY = [
    _column("source", _TEXT, "the record file as given, or the tournament database"),
    _column("match", pa.int32(), "the tournament's match id; null for a record file"),
    _column("game", pa.int32(), "the game: its number in its match, or in its file from 1"),
]
DECISION_COLUMNS = [
    *_IDENTITY,
    _column("family", _TEXT, "the rules' family (the record's `game`)"),
    _column("deal", pa.int16(), "the deal in progress, from 1"),
    _column("step", pa.int32(), "the decision's place in its game, from 0"),
    _column("record_line", pa.int32(), "the action's line in its record, from 1"),
    _column("seat", pa.int8(), "the seat that acted"),
    _column("entry", _TEXT, "the entry at that seat (the header's `seats`); null if unnamed"),
    _column("kind", _TEXT, "the action's kind: play, declare, bid, call, ..."),
    _column("action", pa.int16(), "the action's id (the family's codec; `action_table`)"),
    _column("action_name", _TEXT, "the action as text, e.g. `AS volo`"),
    _column("ms", pa.int32(), "its think time as the referee measured it; null where untimed"),
    _column("referee_played", pa.bool_(),
         "the referee played it at random for the seat after a fault (`on_fault = random`)"),
    _column("legal", pa.list_(pa.int16()), "the legal action ids, in the engine's order"),
    _column("returns", pa.float32(),
         "the game's final return for the seat: 1 a winner, losers share -1, 0 a draw"),
]  # fmt: skip
SPARSE_OBSERVATION = [
    _column("obs_indices", pa.list_(pa.int16()), "the observation's non-zero entries: indices"),
    _column("obs_values", pa.list_(pa.float32()), "... and their values, in the same order"),
]
DENSE_OBSERVATION = [
    _column("obs", pa.list_(pa.float32(), OBSERVATION_SIZE), "the observation tensor, whole"),
]
DENSE_LEAF = "obs.list.element"
"""The Parquet column of the dense tensor's floats (a list's leaf, as Parquet names it)."""
HIDDEN_DECISION_COLUMNS = [
    _column("hidden_hands", pa.list_(pa.list_(pa.int8())),
         "HIDDEN: every seat's cards at the decision, by seat (card ids, docs/deals.md)"),
]  # fmt: skip
GAME_COLUMNS = [
    *_IDENTITY,
    _column("family", _TEXT, "the rules' family"),
    _column("rules", pa.string(), "the rules, as the header's `rules` (JSON)"),
    _column("seed", pa.string(), "the seed text"),
    _column("deals", pa.int32(), "the fixed number of deals; null for a game to the target"),
    _column("seats", pa.list_(pa.string()), "the entry at each seat; null if unnamed"),
    _column("book_sha256", pa.string(), "the deal book the game was dealt from; null if seeded"),
    _column("header", pa.string(), "the record's `game` line, exactly"),
    _column("decisions", pa.int32(), "its rows in the decisions table"),
    _column("termination", _TEXT, "how it ended"),
    _column("winner", pa.int8(), "the winning side; null for a draw"),
    _column("totals", pa.list_(pa.int32()), "game points per side"),
    _column("deals_played", pa.int16(), "deals played, an unfinished last one counted"),
    _column("returns", pa.list_(pa.float32()), "the final return of each seat"),
    _column("notes", pa.list_(pa.string()),
         "the lines that are no seat's action (rejected, incident, forfeit), exactly"),
    _column("note_steps", pa.list_(pa.int32()), "the decisions of the game before each note"),
]  # fmt: skip
HIDDEN_GAME_COLUMNS = [
    _column("hidden_deals", pa.list_(pa.string()),
         "HIDDEN: each `deal` line of the game, exactly: every hand as dealt, the rest"),
]  # fmt: skip
HIDDEN_PREFIX = "hidden_"
"""The column group of cards some seat could not see; no other column holds them."""


def decision_columns(dense: bool) -> list[tuple[pa.Field, str]]:
    """The decisions table's columns and what each holds, in order."""
    return [
        *DECISION_COLUMNS,
        *(DENSE_OBSERVATION if dense else SPARSE_OBSERVATION),
        *HIDDEN_DECISION_COLUMNS,
    ]


def game_columns() -> list[tuple[pa.Field, str]]:
    """The games table's columns and what each holds, in order."""
    return [*GAME_COLUMNS, *HIDDEN_GAME_COLUMNS]


def described(columns: Sequence[tuple[pa.Field, str]]) -> list[dict[str, str]]:
    """Each column's name, type and what it holds, as a datasheet lists them."""
    return [{"name": f.name, "type": _type_text(f.type), "text": text} for f, text in columns]


def _type_text(kind: pa.DataType) -> str:
    """An Arrow type as a reader meets it: a dictionary of strings reads as strings."""
    if pa.types.is_dictionary(kind):
        return f"{_type_text(kind.value_type)} (dictionary-encoded)"
    if pa.types.is_fixed_size_list(kind):
        return f"fixed_size_list<{_type_text(kind.value_type)}>[{kind.list_size}]"
    if pa.types.is_list(kind):
        return f"list<{_type_text(kind.value_type)}>"
    return str(kind)


def _schema(columns: list[tuple[pa.Field, str]], dense: bool) -> pa.Schema:
    layout = {"format": FORMAT, "observation": "dense" if dense else "sparse",
              "observation_size": OBSERVATION_SIZE}  # fmt: skip
    return pa.schema([f for f, _ in columns], metadata={"tavolo": json.dumps(layout)})


@dataclass
class EntryFacts:
    """What the records say of one entry (a name in the headers' ``seats``)."""

    games: int = 0
    """Games it sat in, at one seat or at two (a partnership's)."""
    decisions: int = 0
    timed: int = 0
    """Decisions with a think time."""
    ms_total: int = 0
    referee_played: int = 0
    returns_total: float = 0.0
    """Summed over its games: the game's return for its seats."""
    sandbox: Counter[str] = field(default_factory=Counter)
    """Games by what its bot ran under (the header's ``sandbox``; ``none`` without one)."""
    faults: Counter[str] = field(default_factory=Counter)
    """Forfeits (``forfeit:REASON``) and incidents (``KIND``) by kind."""


@dataclass
class Summary:
    """What a dataset holds, counted as it is written: the datasheet's figures."""

    decisions: int = 0
    games: int = 0
    records: int = 0
    """Record files, or stored game records, read."""
    families: Counter[str] = field(default_factory=Counter)
    """Games by family."""
    kinds: Counter[str] = field(default_factory=Counter)
    """Decisions by kind of action."""
    rules: Counter[str] = field(default_factory=Counter)
    """Games by rules (JSON, as the headers write them)."""
    seeds: Counter[str] = field(default_factory=Counter)
    """Games by seed, in the order first met."""
    terminations: Counter[str] = field(default_factory=Counter)
    books: Counter[str] = field(default_factory=Counter)
    """Games by the SHA-256 of the deal book they were dealt from."""
    entries: dict[str, EntryFacts] = field(default_factory=dict)


class _Table:
    """Columns of rows not written yet, by name."""

    def __init__(self, columns: list[tuple[pa.Field, str]]) -> None:
        self.fields = [f for f, _ in columns]
        self.data: dict[str, list[Any]] = {f.name: [] for f in self.fields}

    def __len__(self) -> int:
        return len(self.data[self.fields[0].name])

    def batch(self, schema: pa.Schema) -> pa.RecordBatch:
        arrays = [pa.array(self.data[f.name], type=f.type) for f in self.fields]
        for values in self.data.values():
            values.clear()
        return pa.record_batch(arrays, schema=schema)


class DatasetWriter:
    """Writes the decisions and games of records into a folder as two Parquet files.

    Records are added one after another (:meth:`add_file`, :meth:`add_lines`), each
    verified as it is read: :class:`~referee.records.RecordError` names the first bad
    line, and the dataset is then unfinished (:meth:`abort` deletes it). ``dense``
    writes the observation as one fixed-size list of floats instead of its non-zero
    entries.
    """

    def __init__(
        self, folder: Path, *, dense: bool = False, rows_per_group: int = ROWS_PER_GROUP
    ) -> None:
        self.folder = folder
        self.dense = dense
        self.summary = Summary()
        self._rows_per_group = rows_per_group
        self._decision_columns = decision_columns(dense)
        own = {"source", "match", "game", "family", "step", "entry", "returns"}
        self._per_row = [f.name for f, _ in self._decision_columns if f.name not in own]
        """The columns a decision fills as it is met; the others are filled per game."""
        self._decisions = _Table(self._decision_columns)
        self._games = _Table(game_columns())
        self._decision_schema = _schema(self._decision_columns, dense)
        self._game_schema = _schema(game_columns(), dense)
        self._writers: list[pq.ParquetWriter] = []
        try:
            self._decision_file = self._writer(DECISIONS, self._decision_schema)
            self._game_file = self._writer(GAMES, self._game_schema)
        except BaseException:
            self.abort()
            raise
        self._at: tuple[str, int | None, int] = ("", None, 0)
        """The record being read: its source, match, and the number of its next game."""
        self._game: _GameRows | None = None
        """The game being read, once it has a decision."""
        self._settled = SettledCache()
        """Each seat's completed tricks, encoded once a deal rather than at every decision."""
        self._finished: list[tuple[_GameRows, str, int | None, int]] = []
        """The games of the record being read, over: added once all of it verifies."""

    def _writer(self, name: str, schema: pa.Schema) -> pq.ParquetWriter:
        # Dictionaries pay for the strings and for the dense tensor's few distinct values;
        # on the sparse indices they cost more than they save. zstd at level 9 writes a
        # decision in 48 bytes where its default level takes 67, as fast within the noise
        # (docs/benchmarks.md, "Datasets").
        dictionary = [f.name for f in schema if pa.types.is_dictionary(f.type)]
        if "obs" in schema.names:
            dictionary.append(DENSE_LEAF)
        path = self.folder / name
        # Made new and readable by its owner alone, as a record is: it holds every hand.
        open_record(path, new=True).close()
        writer = pq.ParquetWriter(
            path, schema, compression="zstd", compression_level=9, use_dictionary=dictionary
        )
        self._writers.append(writer)
        return writer

    # -- reading records -------------------------------------------------------------------

    def add_file(self, path: Path) -> None:
        """Add every game of a record file, verified as ``tavolo verify`` does."""
        self._at = (str(path), None, 1)
        with self._record():
            verify_file(path, on_decision=self._decision, on_game=self._game_over)

    def add_lines(
        self,
        lines: Sequence[str],
        source: str,
        *,
        match: int | None = None,
        game: int = 1,
        where: str | None = None,
    ) -> None:
        """Add the games of a record's lines: of ``source``, ``match``, numbered from
        ``game``; ``where`` names the record in errors (default: ``source``)."""
        self._at = (source, match, game)
        with self._record():
            verify_lines(
                lines, where or source, on_decision=self._decision, on_game=self._game_over
            )

    @contextlib.contextmanager
    def _record(self) -> Iterator[None]:
        """Add the games of the record read inside, once all of it verifies: a record that
        does not leaves nothing of it in the dataset."""
        self._finished.clear()
        self._game = None
        try:
            yield
        finally:
            finished, self._finished = self._finished, []
            self._game = None
        for game, source, match, number in finished:
            self._add_game(game, source, match, number)
        self.summary.records += 1
        if len(self._decisions) >= self._rows_per_group:
            self._decision_file.write_batch(self._decisions.batch(self._decision_schema))
        if len(self._games) >= self._rows_per_group:
            self._game_file.write_batch(self._games.batch(self._game_schema))

    def _decision(self, d: Decision) -> None:
        state = d.state
        game = self._game
        if game is None or game.state is not state:
            game = self._game = _GameRows(state, self._per_row)
        assert state.events is not None
        seat = d.seat
        game.decision_events.append(len(state.events))
        entries = observation_entries(state, seat, self._settled)
        last = state.events[-1]
        rows = game.rows
        rows["deal"].append(state.deal_number)
        rows["record_line"].append(d.number)
        rows["seat"].append(seat)
        rows["kind"].append(d.line["type"])
        rows["action"].append(d.action)
        rows["action_name"].append(state.action_to_string(d.action))
        rows["ms"].append(d.line.get("ms"))
        rows["referee_played"].append(
            isinstance(last, Incident) and last.seat == seat and last.kind in _RANDOM_PLAYS
        )
        rows["legal"].append(list(legal_ids(state, seat)))
        if self.dense:
            rows["obs"].append(dense(entries, OBSERVATION_SIZE))
        else:
            ordered = sorted(entries.items())
            rows["obs_indices"].append([i for i, _ in ordered])
            rows["obs_values"].append([v for _, v in ordered])
        # Every family's deal says what each seat holds (what search reads too).
        deal = state.deal
        rows["hidden_hands"].append([cards_of(deal.hand(s)) for s in range(state.rules.players)])

    def _game_over(self, state: AnyGame) -> None:
        game = self._game
        if game is None or game.state is not state:
            game = _GameRows(state, self._per_row)  # no decision: a forfeit before any
        self._game = None
        source, match, number = self._at
        self._at = (source, match, number + 1)
        self._finished.append((game, source, match, number))

    def _add_game(self, game: _GameRows, source: str, match: int | None, number: int) -> None:
        state = game.state
        assert state.events is not None and state.outcome is not None
        header = state.line(0)
        seats: list[str] | None = header["seats"]
        returns = state.returns()
        rows = game.rows
        count = len(rows["seat"])
        decisions = self._decisions.data
        for name, values in rows.items():
            decisions[name].extend(values)
        decisions["source"].extend([source] * count)
        decisions["match"].extend([match] * count)
        decisions["game"].extend([number] * count)
        decisions["family"].extend([state.rules.game] * count)
        decisions["step"].extend(range(count))
        decisions["entry"].extend(None if seats is None else seats[s] for s in rows["seat"])
        decisions["returns"].extend(returns[s] for s in rows["seat"])
        notes: list[str] = []
        note_steps: list[int] = []
        deals: list[str] = []
        step = 0
        decision_events = set(game.decision_events)
        for index, event in enumerate(state.events):
            if index in decision_events:
                step += 1
            elif event.TYPE in FAULT_TYPES:
                notes.append(state.text(index))
                note_steps.append(step)
            elif event.TYPE == "deal":
                deals.append(state.text(index))
        outcome = state.outcome
        book = header.get("book")
        row = {
            "source": source, "match": match, "game": number, "family": state.rules.game,
            "rules": json.dumps(header["rules"], separators=(",", ":"), ensure_ascii=False),
            "seed": state.seed, "deals": header["deals"], "seats": seats,
            "book_sha256": None if book is None else book["sha256"], "header": state.text(0),
            "decisions": count, "termination": outcome.termination.value,
            "winner": outcome.winner, "totals": list(outcome.totals),
            "deals_played": outcome.deals, "returns": list(returns), "notes": notes,
            "note_steps": note_steps, "hidden_deals": deals,
        }  # fmt: skip
        for name, value in row.items():
            self._games.data[name].append(value)
        self._count(state, header, rows, notes)

    def _count(
        self, state: AnyGame, header: dict[str, Any], rows: dict[str, list[Any]], notes: list[str]
    ) -> None:
        summary = self.summary
        summary.games += 1
        summary.decisions += len(rows["seat"])
        summary.families[state.rules.game] += 1
        summary.kinds.update(rows["kind"])
        summary.rules[json.dumps(header["rules"], separators=(",", ":"))] += 1
        summary.seeds[state.seed] += 1
        assert state.outcome is not None
        summary.terminations[state.outcome.termination.value] += 1
        if "book" in header:
            summary.books[header["book"]["sha256"]] += 1
        seats = header["seats"]
        if seats is None:
            return
        sandbox = header.get("sandbox")
        returns = state.returns()
        for name in dict.fromkeys(seats):  # an entry may sit at two seats: one game
            mine = [seat for seat, held in enumerate(seats) if held == name]
            facts = summary.entries.setdefault(name, EntryFacts())
            facts.games += 1
            facts.returns_total += sum(returns[seat] for seat in mine) / len(mine)
            facts.sandbox["none" if sandbox is None else sandbox[mine[0]]] += 1
        for seat, ms, random in zip(rows["seat"], rows["ms"], rows["referee_played"], strict=True):
            facts = summary.entries[seats[seat]]
            facts.decisions += 1
            if ms is not None:
                facts.timed += 1
                facts.ms_total += ms
            facts.referee_played += random
        for text in notes:
            note = json.loads(text)
            kind = note["type"]
            if kind == "forfeit":
                summary.entries[seats[note["seat"]]].faults[f"forfeit:{note['reason']}"] += 1
            elif kind == "incident":
                summary.entries[seats[note["seat"]]].faults[note["kind"]] += 1
            else:
                summary.entries[seats[note["seat"]]].faults["rejected"] += 1

    # -- finishing ---------------------------------------------------------------------------

    def close(self) -> Summary:
        """Write what is left and close both files; the dataset is complete."""
        if len(self._decisions):
            self._decision_file.write_batch(self._decisions.batch(self._decision_schema))
        if len(self._games):
            self._game_file.write_batch(self._games.batch(self._game_schema))
        self._close_files()
        return self.summary

    def abort(self) -> None:
        """Close and delete the files written: the dataset is not to be used."""
        self._close_files()
        for name in (DECISIONS, GAMES):
            (self.folder / name).unlink(missing_ok=True)

    def _close_files(self) -> None:
        writers, self._writers = self._writers, []
        for writer in writers:
            writer.close()


class _GameRows:
    """One game's decisions, kept until it ends (its returns are known only then)."""

    def __init__(self, state: AnyGame, columns: Sequence[str]) -> None:
        self.state = state
        self.decision_events: list[int] = []
        """Each decision's index in the game's events."""
        self.rows: dict[str, list[Any]] = {name: [] for name in columns}


# -- reading a dataset ----------------------------------------------------------------------


Floats = npt.NDArray[np.float32]
Bools = npt.NDArray[np.bool_]


def observations(table: pa.Table) -> Floats:
    """The decisions' observation tensors as one float32 array, a row each (either layout)."""
    rows = table.num_rows
    if "obs" in table.column_names:
        flat = pc.list_flatten(table.column("obs")).to_numpy(zero_copy_only=False)
        out: Floats = flat.astype(np.float32).reshape(rows, OBSERVATION_SIZE)
        return out
    indices = table.column("obs_indices")
    counts = pc.list_value_length(indices).to_numpy(zero_copy_only=False)
    where = pc.list_flatten(indices).to_numpy(zero_copy_only=False).astype(np.intp)
    values = pc.list_flatten(table.column("obs_values")).to_numpy(zero_copy_only=False)
    tensors = np.zeros((rows, OBSERVATION_SIZE), dtype=np.float32)
    tensors[np.repeat(np.arange(rows), counts), where] = values
    return tensors


def legal_masks(table: pa.Table, game: str) -> Bools:
    """The decisions' legal actions as masks of family ``game``'s width
    (:func:`~referee.research.encoding.num_actions`), a row each."""
    legal = table.column("legal")
    counts = pc.list_value_length(legal).to_numpy(zero_copy_only=False)
    ids = pc.list_flatten(legal).to_numpy(zero_copy_only=False).astype(np.intp)
    masks = np.zeros((table.num_rows, num_actions(game)), dtype=np.bool_)
    masks[np.repeat(np.arange(table.num_rows), counts), ids] = True
    return masks


@dataclass(frozen=True)
class RebuiltGame:
    """A game's record made again from a dataset."""

    source: str
    match: int | None
    game: int
    lines: list[str]
    """Its record lines, canonical, without their newlines."""


def rebuild(folder: Path) -> Iterator[RebuiltGame]:
    """Every game of the dataset in ``folder``, its record rebuilt from the two tables alone:
    each header and the faults' lines from the games, each seat's action (id and think
    time) from the decisions, and the deals from ``hidden_deals`` for a game dealt from a
    book. RecordError if a game does not replay."""
    games = pq.read_table(
        folder / GAMES,
        columns=["source", "match", "game", "header", "decisions", "notes", "note_steps",
                 "book_sha256", "hidden_deals"],
    ).to_pylist()  # fmt: skip
    actions = pq.read_table(
        folder / DECISIONS, columns=["source", "match", "game", "seat", "action", "ms"]
    )
    seats = actions.column("seat").to_pylist()
    ids = actions.column("action").to_pylist()
    times = actions.column("ms").to_pylist()
    keys = zip(*(actions.column(c).to_pylist() for c in ("source", "match", "game")), strict=True)
    at = 0
    for game in games:
        key = (game["source"], game["match"], game["game"])
        count = game["decisions"]
        answers: list[Answer] = list(zip(seats[at:at + count], ids[at:at + count],
                                         times[at:at + count], strict=True))  # fmt: skip
        for _ in range(count):
            found = next(keys)
            if found != key:
                raise ValueError(f"{folder / DECISIONS}: a row of game {found}, not of {key}")
        at += count
        match = "" if key[1] is None else f" match {key[1]}"
        name = f"{key[0]}{match} game {key[2]} (rebuilt)"
        deals = game["hidden_deals"] if game["book_sha256"] is not None else ()
        lines = rebuild_game(
            game["header"], _steps(answers, game["notes"], game["note_steps"]), deals, name
        )
        yield RebuiltGame(key[0], key[1], key[2], lines)


def _steps(answers: list[Answer], notes: list[str], at: list[int]) -> Iterable[str | Answer]:
    """The game's answers with its notes put back where they were: ``at[i]`` answers
    before note ``i``."""
    given = 0
    for note, before in zip(notes, at, strict=True):
        yield from answers[given:before]
        given = before
        yield note
    yield from answers[given:]
