"""The arena's ladder: ``ready`` submissions meet in duplicate sets, chosen by what each
meeting would teach, and are rated by one maximum-likelihood fit of every game.

**Who plays.** Each entrant's newest ``[submissions] active`` ready submissions; an older
one is ``retired``: it keeps its games and its rating, and plays no more.

**Who meets whom.** A meeting is one duplicate set between two submissions (on a table of
more sides, the second fills every other side). Each meeting is the pair that scores
highest on

    p (1 - p) * (u_a + u_b),    u = 1 / sqrt(1 + games played),

``p`` the first's expected score from the current fit: the Fisher information of one game
about the two ratings' difference, weighted by how unsure both still are. A submission
with fewer than :data:`NEW_GAMES` games plays first (against the opponent it learns most
from); every :data:`LEADERS_EVERY`-th meeting is between two neighbours among the top
:data:`LEADERS` active submissions that have met least, so the leaders keep meeting.

**The ratings.** :func:`tournaments.ratings.rate` over every game ever played, retired
submissions' too, as the tournament tables are fitted: a rating does not depend on the
order the games were played in.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from referee.match.results import Faults, GameReport
from tournaments.arena.database import Database
from tournaments.ratings import PairResult, Ratings, RatingsError, fit_elo, rate

REFIT_SECONDS = 30.0
"""The leaderboard's standings are fitted again at most this often."""
NEW_GAMES = 8
"""Below this many games a submission is new: it is paired first."""
LEADERS = 4
LEADERS_EVERY = 5

SCHEMA = """
CREATE TABLE IF NOT EXISTS ladder_meetings (
    id INTEGER PRIMARY KEY,
    a INTEGER NOT NULL REFERENCES submissions(id),
    b INTEGER NOT NULL REFERENCES submissions(id),
    seed TEXT NOT NULL,
    state TEXT NOT NULL,
    started TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ladder_games (
    meeting INTEGER NOT NULL REFERENCES ladder_meetings(id),
    game INTEGER NOT NULL,
    set_number INTEGER NOT NULL,
    a INTEGER NOT NULL,
    b INTEGER NOT NULL,
    score_a REAL NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (meeting, game, a, b)
);
CREATE TABLE IF NOT EXISTS ladder_faults (
    meeting INTEGER NOT NULL REFERENCES ladder_meetings(id),
    game INTEGER NOT NULL,
    submission INTEGER NOT NULL,
    timeouts INTEGER NOT NULL,
    illegal INTEGER NOT NULL,
    crashes INTEGER NOT NULL,
    PRIMARY KEY (meeting, game, submission)
);
CREATE TABLE IF NOT EXISTS ladder_ratings (
    meetings INTEGER NOT NULL,
    submission INTEGER NOT NULL,
    elo REAL NOT NULL,
    PRIMARY KEY (meetings, submission)
);
"""


@dataclass(frozen=True)
class Meeting:
    """One meeting: submissions ``a`` and ``b``, dealt from ``seed``."""

    id: int
    a: int
    b: int
    seed: str


@dataclass(frozen=True)
class LadderFault:
    """A ladder game in which ``submission`` faulted."""

    meeting: int
    game: int
    submission: int
    faults: Faults


def expected(elo_a: float, elo_b: float) -> float:
    """``a``'s expected score against ``b``."""
    return 1.0 / (1.0 + math.pow(10.0, (elo_b - elo_a) / 400.0))


def choose_pair(
    active: Sequence[int],
    games: Counter[int],
    met: Counter[tuple[int, int]],
    elo: dict[int, float],
    number: int,
) -> tuple[int, int] | None:
    """The next meeting's pair among ``active`` (submission ids), or None with fewer than
    two. ``games``: games played by each; ``met``: meetings of each pair (low id first);
    ``elo``: the current fit (missing: 1500); ``number``: the meeting's number, from 1."""
    if len(active) < 2:
        return None
    ranked = sorted(active, key=lambda s: (-elo.get(s, 1500.0), s))

    def gain(pair: tuple[int, int]) -> float:
        a, b = pair
        p = expected(elo.get(a, 1500.0), elo.get(b, 1500.0))
        spread = 1 / math.sqrt(1 + games[a]) + 1 / math.sqrt(1 + games[b])
        return p * (1 - p) * spread

    def key(pair: tuple[int, int]) -> tuple[float, int, tuple[int, int]]:
        # Deterministic: the same state always picks the same pair.
        return (-gain(pair), met[pair], pair)

    new = [s for s in ranked if games[s] < NEW_GAMES]
    if new:
        first = min(new, key=lambda s: (games[s], s))
        return min((_pair(first, o) for o in ranked if o != first), key=key)
    if number % LEADERS_EVERY == 0:
        top = ranked[:LEADERS]
        neighbours = [_pair(a, b) for a, b in itertools.pairwise(top)]
        return min(neighbours, key=lambda p: (met[p], ranked.index(p[0]) + ranked.index(p[1])))
    return min((_pair(a, b) for i, a in enumerate(ranked) for b in ranked[i + 1 :]), key=key)


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


def pair_results(meeting: Meeting, report: GameReport) -> list[PairResult]:
    """A meeting's game as results between its two submissions (entry 0 is ``a``; every
    other entry is ``b``, so two sides both of ``b`` make no pair)."""
    places = report.outcome.places
    out = []
    for i, x in enumerate(report.sides):
        for j in range(i + 1, len(report.sides)):
            y = report.sides[j]
            if (x == 0) == (y == 0):
                continue
            first = i if x == 0 else j
            other = j if first == i else i
            mine, theirs = places[first], places[other]
            score = 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0
            key = f"{meeting.id}:{report.set_number}"
            out.append(PairResult(key, str(meeting.a), str(meeting.b), score))
    return out


class LadderStore:
    """The ladder's meetings and games, in the arena's database."""

    def __init__(self, db: Database) -> None:
        self._db = db
        db.script(SCHEMA)
        self._fitted: tuple[tuple[int, int], Ratings | None, float] | None = None
        """The last standings, the (meetings done, games) they were fitted on, and when."""
        self._fitting = threading.Lock()
        """One bootstrap at a time: every caller meanwhile waits for its fit."""
        self.refit_seconds = REFIT_SECONDS
        """The standings are fitted again at most this often (0: after every meeting)."""
        self._point: tuple[tuple[int, int], list[PairResult], dict[int, float]] | None = None
        self._pointing = threading.Lock()

    def start(self, a: int, b: int, seed: str, when: str) -> Meeting:
        cursor = self._db.execute(
            "INSERT INTO ladder_meetings (a, b, seed, state, started) VALUES (?, ?, ?, ?, ?)",
            (a, b, seed, "playing", when),
        )
        assert cursor.lastrowid is not None
        return Meeting(cursor.lastrowid, a, b, seed)

    def unfinished(self) -> list[Meeting]:
        """Meetings a stopped arena was playing: played again from their seeds."""
        rows = self._db.execute(
            "SELECT id, a, b, seed FROM ladder_meetings WHERE state = 'playing' ORDER BY id"
        )
        return [Meeting(*r) for r in rows]

    def finish(self, meeting: Meeting, reports: Sequence[GameReport]) -> None:
        """Keep a meeting's games, all at once (a meeting is rated whole or not at all)."""
        with self._db.transaction():
            self._db.execute("DELETE FROM ladder_games WHERE meeting = ?", (meeting.id,))
            for report in reports:
                for result in pair_results(meeting, report):
                    self._db.execute(
                        "INSERT INTO ladder_games VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (meeting.id, report.number, report.set_number, int(result.a),
                         int(result.b), result.score_a, "\n".join(report.lines)),
                    )  # fmt: skip
                for submission, faults in zip((meeting.a, meeting.b), report.faults, strict=False):
                    if any(faults):
                        self._db.execute(
                            "INSERT OR REPLACE INTO ladder_faults VALUES (?, ?, ?, ?, ?, ?)",
                            (meeting.id, report.number, submission, *faults),
                        )
            self._db.execute(
                "UPDATE ladder_meetings SET state = 'done' WHERE id = ?", (meeting.id,)
            )
        self._keep_ratings()

    def _keep_ratings(self) -> None:
        """Keep the point fit of every game so far, under the meetings done: each
        submission's rating over time (the leaderboard's rating is the fit of now)."""
        done = self.meetings_done()
        _, elo = self.point_fit()
        with self._db.transaction():
            for submission, rating in elo.items():
                self._db.execute(
                    "INSERT OR REPLACE INTO ladder_ratings VALUES (?, ?, ?)",
                    (done, submission, rating),
                )

    def rating_history(self, submission: int) -> list[tuple[int, float]]:
        """Submission ``submission``'s rating after each meeting since it was first fitted:
        (meetings done, Elo)."""
        rows = self._db.execute(
            "SELECT meetings, elo FROM ladder_ratings WHERE submission = ? ORDER BY meetings",
            (submission,),
        )
        return [(int(m), float(e)) for m, e in rows]

    def faults(self, limit: int) -> list[LadderFault]:
        """The last ``limit`` faults, newest first."""
        rows = self._db.execute(
            "SELECT meeting, game, submission, timeouts, illegal, crashes FROM ladder_faults "
            "ORDER BY meeting DESC, game DESC, submission LIMIT ?",
            (limit,),
        )
        return [LadderFault(m, g, s, Faults(t, i, c)) for m, g, s, t, i, c in rows]

    def drop(self, meeting: Meeting) -> None:
        """Forget a meeting that cannot be played."""
        self._db.execute("DELETE FROM ladder_meetings WHERE id = ?", (meeting.id,))

    def games_of(self, submission: int) -> list[tuple[int, int, int, float]]:
        """Submission ``submission``'s games: (meeting, game, opponent, its score)."""
        rows = self._db.execute(
            "SELECT meeting, game, a, b, score_a FROM ladder_games WHERE a = ? OR b = ? "
            "ORDER BY meeting, game",
            (submission, submission),
        )
        return [
            (m, g, b if a == submission else a, score if a == submission else 1.0 - score)
            for m, g, a, b, score in rows
        ]

    def record_of(self, meeting: int, game: int) -> list[str] | None:
        """A ladder game's record lines, or None if there is no such game."""
        row = self._db.execute(
            "SELECT record FROM ladder_games WHERE meeting = ? AND game = ? LIMIT 1",
            (meeting, game),
        ).fetchone()
        return None if row is None else str(row[0]).split("\n")

    def results(self) -> list[PairResult]:
        rows = self._db.execute(
            "SELECT meeting, set_number, a, b, score_a FROM ladder_games ORDER BY meeting, game"
        )
        return [PairResult(f"{m}:{s}", str(a), str(b), score) for m, s, a, b, score in rows]

    def fitted(self) -> tuple[list[PairResult], Ratings | None]:
        """Every game, and :func:`standings` of them: fitted again once a meeting has been
        kept since (a meeting's games are kept whole, with its state), but not within
        :attr:`refit_seconds` of the last fit unless a submission played its first games,
        and by one caller at a time: the bootstrap of a large field takes seconds, and
        pages and API calls ask for it all the time."""
        with self._fitting:
            key = self._state()
            results = self.results()
            last = self._fitted
            if last is not None and last[0] != key:
                # A submission's first games are fitted at once (and so are the first games
                # of all, or those that connect the field): a first rating waits for no one.
                fitted = {r.name for r in last[1].ratings} if last[1] is not None else set()
                if any(r.a not in fitted or r.b not in fitted for r in results):
                    last = None
            if last is not None and (
                last[0] == key or time.monotonic() - last[2] < self.refit_seconds
            ):
                return results, last[1]
            fit = standings(results)
            self._fitted = (key, fit, time.monotonic())
            return results, fit

    def point_fit(self) -> tuple[list[PairResult], dict[int, float]]:
        """Every game, and :func:`current_elo` of them, fitted once per meeting kept (the
        ladder's pairing and the rating over time share it)."""
        with self._pointing:
            key = self._state()
            if self._point is not None and self._point[0] == key:
                return self._point[1], self._point[2]
            results = self.results()
            elo = current_elo(results)
            self._point = (key, results, elo)
            return results, elo

    def _state(self) -> tuple[int, int]:
        """(meetings done, games kept): what a fit of every game was made on, counted
        without reading the games (the ladder asks between every two meetings)."""
        done, games = self._db.execute(
            "SELECT (SELECT COUNT(*) FROM ladder_meetings WHERE state = 'done'), "
            "(SELECT COUNT(*) FROM ladder_games)"
        ).fetchall()[0]
        return int(done), int(games)

    def meetings_done(self) -> int:
        return int(
            self._db.execute("SELECT COUNT(*) FROM ladder_meetings WHERE state = 'done'").value()
        )


def games_and_meetings(
    results: Sequence[PairResult],
) -> tuple[Counter[int], Counter[tuple[int, int]]]:
    """Games played by each submission, and meetings of each pair."""
    games: Counter[int] = Counter()
    sets: set[tuple[str, tuple[int, int]]] = set()
    for r in results:
        a, b = int(r.a), int(r.b)
        games[a] += 1
        games[b] += 1
        sets.add((r.set_key.partition(":")[0], _pair(a, b)))
    met: Counter[tuple[int, int]] = Counter(pair for _, pair in sets)
    return games, met


def current_elo(results: Sequence[PairResult]) -> dict[int, float]:
    """The point fit of every game so far (submissions not yet connected: left out)."""
    if not results:
        return {}
    try:
        return {int(k): v for k, v in fit_elo(results).items()}
    except RatingsError:
        # Not yet connected (two groups that never met): the new ones are paired first,
        # which connects them; until then every one counts as 1500.
        return {}


def standings(results: Sequence[PairResult], samples: int = 200) -> Ratings | None:
    """Every rated submission's Elo with its bootstrap interval; None before the games
    connect every submission that played (the ladder pairs the unconnected first)."""
    if not results:
        return None
    try:
        return rate(results, samples=samples)
    except RatingsError:
        return None
