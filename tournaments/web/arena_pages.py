"""The arena's public pages, served by ``tavolo arena serve`` beside its API: the live
leaderboard, a page per entrant and per submission (its rating, who it beat and lost to,
its games), and each ladder game's replay. Every name is escaped (the templates autoescape).

Nothing private is shown here: no failure's reason, log or stderr (those are the
entrant's, through the API), no token. The pages are rate-limited as the API is.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from tournaments.arena.api import ArenaApi, leaderboard
from tournaments.arena.store import ArenaError, State
from tournaments.web.pages import render
from tournaments.web.replay_page import replay_page

REFRESH_MS = 15_000
"""How often the leaderboard page reloads itself."""
STYLES = ["tavolo.css"]
_PUBLIC_STATES = {State.READY, State.RETIRED, State.DISABLED}
"""States whose submissions are shown as such; the others as ``not rated``."""


def page_routes(api: ArenaApi) -> list[Route]:
    """The site's routes, each behind the API's rate limit."""
    site = _Site(api)
    guarded = api.for_anyone
    return [
        Route("/", guarded(site.leaderboard), methods=["GET"]),
        Route("/submissions/{number:int}", guarded(site.submission), methods=["GET"]),
        Route("/entrants/{name}", guarded(site.entrant), methods=["GET"]),
        Route("/games/{meeting:int}/{game:int}", guarded(site.game), methods=["GET"]),
    ]


CURVE_WIDTH, CURVE_HEIGHT, CURVE_MARGIN = 640, 160, 24


def rating_curve(history: list[tuple[int, float]]) -> dict[str, Any] | None:
    """An SVG polyline of a submission's rating over the ladder's meetings, in a
    ``CURVE_WIDTH`` × ``CURVE_HEIGHT`` box; None with fewer than two points."""
    if len(history) < 2:
        return None
    xs, ys = [m for m, _ in history], [e for _, e in history]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if y1 - y0 < 50:  # a flat curve is drawn flat, not stretched over the box
        middle = (y0 + y1) / 2
        y0, y1 = middle - 25, middle + 25
    inner_w, inner_h = CURVE_WIDTH - 2 * CURVE_MARGIN, CURVE_HEIGHT - 2 * CURVE_MARGIN
    points = " ".join(
        f"{CURVE_MARGIN + (m - x0) / max(1, x1 - x0) * inner_w:.1f},"
        f"{CURVE_MARGIN + (y1 - e) / (y1 - y0) * inner_h:.1f}"
        for m, e in history
    )
    return {
        "points": points, "width": CURVE_WIDTH, "height": CURVE_HEIGHT,
        "low": f"{y0:.0f}", "high": f"{y1:.0f}", "first": x0, "last": x1,
    }  # fmt: skip


class _Site:
    def __init__(self, api: ArenaApi) -> None:
        self.store, self.arena = api.store, api.config.name

    def _page(
        self, template: str, title: str, crumbs: list[tuple[str, str | None]], **context: Any
    ) -> HTMLResponse:
        html = render(
            template, title=title, crumbs=crumbs, styles=STYLES, scripts=[], assets=None,
            arena=self.arena, **context,
        )  # fmt: skip
        return HTMLResponse(html, headers={"Cache-Control": "no-store"})

    def _missing(self, what: str) -> HTMLResponse:
        page = self._page("arena_missing.html.j2", "not here", [(self.arena, "/")], what=what)
        page.status_code = 404
        return page

    async def leaderboard(self, request: Request) -> Response:
        board = await asyncio.to_thread(leaderboard, self.store)
        return self._page(
            "arena_leaderboard.html.j2", "leaderboard", [(self.arena, None)],
            rows=board["submissions"], games=board["games"], unrated=board["unrated"],
            frozen=self.store.frozen(), refresh_ms=REFRESH_MS,
        )  # fmt: skip

    async def submission(self, request: Request) -> Response:
        number = request.path_params["number"]
        try:
            submission = self.store.submission(number)
        except ArenaError:
            return self._missing(f"There is no submission {number}.")
        board = await asyncio.to_thread(leaderboard, self.store)
        rating = next((r for r in board["submissions"] if r["submission"] == number), None)
        games = self.store.ladder.games_of(number)
        entrant_of = {s.id: s.entrant for s in self.store.rated()}
        tally: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
        for _, _, opponent, score in games:
            tally[opponent][0 if score == 1.0 else 1 if score == 0.5 else 2] += 1
        opponents = [
            {"submission": o, "entrant": entrant_of.get(o, "?"), "won": w, "drawn": d, "lost": lost}
            for o, (w, d, lost) in sorted(tally.items())
        ]
        rows = [
            {"meeting": m, "game": g, "opponent": f"{entrant_of.get(o, '?')} {o}",
             "score": {1.0: "won", 0.5: "drawn", 0.0: "lost"}[s]}
            for m, g, o, s in games
        ]  # fmt: skip
        shown = submission.state.value if submission.state in _PUBLIC_STATES else "not rated"
        history = self.store.ladder.rating_history(number)
        return self._page(
            "arena_submission.html.j2", f"submission {number}",
            [(self.arena, "/"), (submission.entrant, f"/entrants/{submission.entrant}"),
             (f"submission {number}", None)],
            s=submission, state=shown, rating=rating,
            opponents=opponents, games=rows, history=history, curve=rating_curve(history),
        )  # fmt: skip

    async def entrant(self, request: Request) -> Response:
        name = request.path_params["name"]
        known = [e for e in self.store.entrants() if e.name == name and not e.disabled]
        if not known:
            return self._missing(f"There is no entrant {name}.")
        board = await asyncio.to_thread(leaderboard, self.store)
        rated = {r["submission"]: r for r in board["submissions"]}
        mine = [
            {"id": s.id, "created": s.created,
             "state": s.state.value if s.state in _PUBLIC_STATES else "not rated",
             "elo": f"{rated[s.id]['elo']:.0f}" if s.id in rated else "",
             "games": rated[s.id]["games"] if s.id in rated else 0}
            for s in self.store.submissions_of(known[0])
        ]  # fmt: skip
        return self._page(
            "arena_entrant.html.j2", name, [(self.arena, "/"), (name, None)],
            name=name, submissions=mine,
        )  # fmt: skip

    async def game(self, request: Request) -> Response:
        meeting, game = request.path_params["meeting"], request.path_params["game"]
        lines = self.store.ladder.record_of(meeting, game)
        if lines is None:
            return self._missing(f"There is no game {game} of meeting {meeting}.")
        html = replay_page(
            lines, title=f"meeting {meeting}, game {game}",
            crumbs=[(self.arena, "/"), (f"meeting {meeting}, game {game}", None)],
            assets=None, source=f"{self.arena}: meeting {meeting}, game {game}",
        )  # fmt: skip
        return HTMLResponse(html, headers={"Cache-Control": "no-store"})
