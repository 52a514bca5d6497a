"""What a match is played from: its rules, entries, seeds, deal book, and time and fault
settings."""

from __future__ import annotations

from dataclasses import dataclass

from referee.engine.deal_book import DealBook
from referee.engine.game_base import AnyGame
from referee.engine.registry import new_game
from referee.engine.rules import Rules
from referee.entries import Entry
from referee.match.faults import FaultPolicy
from referee.match.table import rotations
from referee.sandbox.bwrap import SandboxMode


@dataclass(frozen=True)
class Limits:
    """Time and fault settings of a match."""

    deadline_ms: int = 1000
    """Time for each decision."""
    time_bank_ms: int = 0
    """Extra time per slot for the whole match, spent when a decision overruns."""
    max_attempts: int = 3
    """Illegal actions allowed per decision, the last one included, before the fault."""
    connect_timeout: float = 20.0
    """Seconds each slot has to connect at the start of the match."""
    grace: float = 5.0
    """Seconds a dropped connection has to come back with its ticket."""
    on_fault: FaultPolicy = FaultPolicy.FORFEIT
    restart_crashed: bool = True
    """Start a bot process that exited again before the next game, if it had connected.

    The game it crashed in is lost all the same; without a restart every later game of
    the match would be lost too. A process that never connected is not started again.
    """
    ponder: bool = False
    """False: a sandboxed bot's processes are stopped (SIGSTOP) whenever it is not asked
    for a decision, so no two bots of a table run at once (docs/security.md). True: they
    run all the time, and may think on the others' time."""
    tempo_ms: int = 0
    """0: ``free``, each action is shown when it comes. Otherwise ``fixed:MS``: no action is
    shown to the other seats sooner than MS after its request, so that how long a bot
    thought tells its partner nothing up to MS (MS at the deadline: nothing at all)."""


TEMPO_FREE = "free"


def parse_tempo(text: str) -> int:
    """``free`` (0) or ``fixed:MS`` (MS, 1 or more); ValueError naming the problem."""
    if text == TEMPO_FREE:
        return 0
    kind, _, ms = text.partition(":")
    if kind != "fixed" or not ms.isdigit() or int(ms) < 1:
        raise ValueError(f"tempo must be 'free' or 'fixed:MS' with MS 1 or more, got {text!r}")
    return int(ms)


def tempo_text(tempo_ms: int) -> str:
    """The knob as written: ``free`` or ``fixed:MS``."""
    return TEMPO_FREE if tempo_ms == 0 else f"fixed:{tempo_ms}"


@dataclass(frozen=True)
class MatchConfig:
    """Everything a match is played from."""

    rules: Rules
    seed: str
    entries: tuple[Entry, ...]
    """One per side."""
    deals: int | None = None
    """Deals per game; None plays each game to the target."""
    sets: int = 1
    """Duplicate sets: each plays the same seeded deals once per seat rotation."""
    limits: Limits = Limits()
    duplicate: bool = True
    """False: every game gets seeds of its own (sides still rotate from game to game)."""
    sandbox: SandboxMode = SandboxMode.BWRAP
    """How local bots are confined (a manifest may ask for off too)."""
    allow_unconfined: bool = False
    """Where bubblewrap is missing, run ``cmd:`` and manifest bots unconfined instead of
    refusing (``tavolo play`` and ``conformance`` warn); built-in bots always may."""
    book: DealBook | None = None
    """Deal the book's lines in order instead of seeded deals (duplicate rotation as with
    seeds: every game of a set plays the same lines)."""

    def __post_init__(self) -> None:
        problem = book_problem(self.book, self.deals, self.book_groups)
        if problem:
            raise ValueError(problem)

    @property
    def book_groups(self) -> int:
        """How many runs of ``deals`` lines a book deals: one per duplicate set (one per
        game, without duplicate play)."""
        return self.sets if self.duplicate else self.games

    def new_game(self, number: int, seed: str, seats: list[str]) -> AnyGame:
        """Game ``number`` (from 1) of the match, recorded, dealt from ``seed`` or the book."""
        return new_game(
            self.rules,
            seed,
            deals=self.deals,
            seats=seats,
            record=True,
            book=self.book,
            book_start=self.book_start(number),
        )

    def book_start(self, number: int) -> int:
        """Where in the book game ``number`` (from 1) starts, from 0: each duplicate set (each
        game, without duplicate play) takes the next ``deals`` lines."""
        set_number, _, _ = self.game_plan(number)
        index = set_number - 1 if self.duplicate else number - 1
        return index * (self.deals or 0)

    @property
    def games(self) -> int:
        """Games of the whole match."""
        return self.sets * rotations(self.rules)

    def game_plan(self, number: int) -> tuple[int, str, int]:
        """(duplicate set, deal seed, rotation) of game ``number``, counted from 1."""
        if not 1 <= number <= self.games:
            raise ValueError(f"game {number} is not in a match of {self.games} games")
        set_index, rotation = divmod(number - 1, rotations(self.rules))
        seed = game_seed(self.seed, set_index + 1 if self.duplicate else number)
        return set_index + 1, seed, rotation


def game_seed(seed: str, set_number: int) -> str:
    """The seed of duplicate set ``set_number`` (from 1): the match seed for the first."""
    return seed if set_number == 1 else f"{seed}:{set_number}"


def book_problem(book: DealBook | None, deals: int | None, sets: int) -> str | None:
    """Why a book cannot deal ``sets`` sets of games of ``deals`` deals, or None if it can.

    Games to the target take as many lines as they need, so only one set of them can be
    placed in a book; a book shorter than the deals asked for is used again from line 1,
    as each deal line's ``book_line`` shows.
    """
    if book is not None and deals is None and sets > 1:
        return (
            f"a deal book with {sets} duplicate sets needs a number of deals per game "
            "(each set takes the next lines of the book)"
        )
    return None


def book_reuse(book: DealBook | None, deals: int | None, sets: int) -> str | None:
    """A warning when ``sets`` sets of ``deals`` deals need more lines than the book has."""
    if book is None or deals is None or sets * deals <= len(book.deals):
        return None
    return (
        f"the deal book {book.source} has {len(book.deals)} deals, and {sets} sets of "
        f"{deals} deals take {sets * deals}: its lines are dealt again from line 1"
    )
