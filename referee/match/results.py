"""How a match went: per game, per entry, per deal; what tournaments store and count."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from referee.engine.game_base import Outcome
from referee.engine.rules import Rules


class Faults(NamedTuple):
    """What went wrong for one entry in a game (or a match): how many of each fault."""

    timeouts: int = 0
    illegal: int = 0
    """Illegal actions, each one refused."""
    crashes: int = 0
    """Crashes, lost connections and bots that never connected."""


@dataclass
class GameTally:
    """An entry's games and how they ended for it: what a match and a tournament count."""

    name: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0

    def count(self, winner: int | None, side: int) -> None:
        """One more game, played on ``side``, won by side ``winner`` (None: a draw)."""
        self.games += 1
        if winner is None:
            self.draws += 1
        elif winner == side:
            self.wins += 1
        else:
            self.losses += 1


@dataclass
class EntryStats(GameTally):
    """What one entry did over a match."""

    points: int = 0
    deals: int = 0
    timeouts: int = 0
    illegal: int = 0
    crashes: int = 0


@dataclass
class MatchResult:
    """How a match went."""

    match_id: str
    outcomes: list[Outcome] = field(default_factory=list)
    sides: list[list[int]] = field(default_factory=list)
    """For each game, the entry at each side."""
    stats: list[EntryStats] = field(default_factory=list)
    incidents: list[tuple[str, str, str]] = field(default_factory=list)
    """(slot label, kind, detail) of everything that went wrong."""
    numbers: list[int] = field(default_factory=list)
    """For each game, its number in the match (games can be played from any number)."""
    sandboxes: list[str] = field(default_factory=list)
    """Per entry: what its processes ran under (``bwrap``, ``off``, ``remote``)."""
    crashed: list[tuple[int, str] | None] = field(default_factory=list)
    """For each game: (entry, why) when it ended because that entry's bot crashed, never
    connected or was lost; None otherwise."""

    def tally(self, rules: Rules, outcome: Outcome, entry_of_seat: list[int]) -> None:
        """Count a finished game: its outcome, its sides' entries and each entry's stats."""
        sides = [entry_of_seat[rules.seats_of(side)[0]] for side in range(rules.sides)]
        self.outcomes.append(outcome)
        self.sides.append(sides)
        for side, e in enumerate(sides):
            stats = self.stats[e]
            stats.count(outcome.winner, side)
            stats.points += outcome.totals[side]
            stats.deals += outcome.deals

    def always_crashed(self) -> dict[int, str]:
        """Entries that crashed (or never connected) in every game they played, and why the
        last time: a match that means nothing about them."""
        played: dict[int, list[tuple[int, str] | None]] = {}
        for sides, crash in zip(self.sides, self.crashed, strict=True):
            for e in sides:
                played.setdefault(e, []).append(crash if crash and crash[0] == e else None)
        out: dict[int, str] = {}
        for e, crashes in played.items():
            if crashes and all(crashes):
                last = crashes[-1]
                assert last is not None
                out[e] = last[1]
        return out


@dataclass(frozen=True)
class DealReport:
    """A deal as it ended, for storage."""

    game: int
    """Game number in the match, from 1."""
    deal: int
    lines: tuple[str, ...]
    """The deal's record lines, its ``deal`` line to its ``score`` line."""


@dataclass(frozen=True)
class GameReport:
    """A game as it ended, for storage."""

    number: int
    """Game number in the match, from 1."""
    set_number: int
    """Duplicate set (from 1): the games of one set share their deal seeds."""
    sides: tuple[int, ...]
    """The entry (index in ``MatchConfig.entries``) at each side."""
    outcome: Outcome
    forfeit_seat: int | None
    faults: tuple[Faults, ...]
    """Per entry: its faults in this game."""
    lines: tuple[str, ...]
    """The whole game's record: verifies on its own with ``tavolo verify``."""
    deal_points: tuple[tuple[int, ...], ...] = ()
    """Points of each side in each finished deal, from the game's score lines."""
    think_ms: tuple[tuple[int, ...], ...] = ()
    """Per entry: the think time of each of its answers in this game, in ms, in order (the
    ``ms`` of its answer lines)."""
    bank_used_ms: tuple[int, ...] = ()
    """Per entry: the most of its time bank any one of its slots had spent in the match by
    the end of this game (0 without a time bank)."""


def result_json(result: MatchResult) -> dict[str, Any]:
    """A JSON-ready summary of a match."""
    return {
        "match_id": result.match_id,
        "sandbox": {s.name: mode for s, mode in zip(result.stats, result.sandboxes, strict=True)},
        "games": [
            {
                "sides": sides,
                "termination": o.termination.value,
                "winner": o.winner,
                "totals": list(o.totals),
                "deals": o.deals,
            }
            for o, sides in zip(result.outcomes, result.sides, strict=True)
        ],
    }
