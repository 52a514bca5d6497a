"""The organiser's page, behind a sign-in with an organiser token (``tavolo arena admin``):
entrants, the queue of submissions and what the workers do now, the ladder's meetings in
play, faults, and disabling a submission. Sessions and CSRF: :mod:`.arena_account`."""

from __future__ import annotations

from collections import Counter

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from tournaments.arena.api import ArenaApi
from tournaments.arena.sessions import Session
from tournaments.arena.store import ArenaError, State
from tournaments.web.arena_account import FORM_BYTES, SignedIn

FAULTS_SHOWN = 50
_QUEUED = (State.RECEIVED, State.BUILDING, State.VALIDATING)


def admin_routes(api: ArenaApi, signed_in: SignedIn, *, parallel: int) -> list[Route]:
    """The admin page and its form, behind the rate limit; ``parallel``: the ladder's
    meetings at once, as served."""
    page = _Admin(api, signed_in, parallel)
    guarded = api.for_anyone
    return [
        Route("/admin", guarded(page.show), methods=["GET"]),
        Route(
            "/admin/disable/{number:int}",
            guarded(signed_in.posted(FORM_BYTES, page.disable)),
            methods=["POST"],
        ),
    ]


class _Admin:
    def __init__(self, api: ArenaApi, signed_in: SignedIn, parallel: int) -> None:
        self.api, self.store, self.site, self.parallel = api, api.store, signed_in, parallel

    async def show(self, request: Request) -> Response:
        session = self.site.session(request)
        if session is None or not session.organiser:
            return RedirectResponse("/signin", status_code=303)
        number = request.query_params.get("disabled", "")
        notice = f"Submission {number} is disabled." if number.isdigit() else ""
        return self._page(session, notice, 200)

    def _page(self, session: Session, notice: str, status: int) -> Response:
        store = self.store
        submissions = store.submissions()
        per_entrant = Counter(s.entrant for s in submissions)
        chosen = store.chosen()
        entrants = [
            {"name": e.name, "created": e.created, "disabled": e.disabled,
             "submissions": per_entrant[e.name], "chosen": chosen.get(e.name, "")}
            for e in store.entrants()
        ]  # fmt: skip
        entrant_of = {s.id: s.entrant for s in submissions}
        playing = [
            {"id": m.id, "a": m.a, "b": m.b, "a_entrant": entrant_of.get(m.a, "?"),
             "b_entrant": entrant_of.get(m.b, "?")}
            for m in store.ladder.unfinished()
        ]  # fmt: skip
        faults = [
            {"meeting": f.meeting, "game": f.game, "submission": f.submission,
             "entrant": entrant_of.get(f.submission, "?"), "timeouts": f.faults.timeouts,
             "illegal": f.faults.illegal, "crashes": f.faults.crashes}
            for f in store.ladder.faults(FAULTS_SHOWN)
        ]  # fmt: skip
        states = Counter(s.state.value for s in submissions)
        bots = self.api.remote
        remote = [
            {"s": s, "streams": bots.streams(s) if bots is not None else 0}
            for s in submissions
            if s.remote and s.state in (State.RECEIVED, State.VALIDATING, State.READY)
        ]
        return self.site.page(
            "arena_admin.html.j2", "admin", status, entrants=entrants,
            queue=[s for s in submissions if s.state in _QUEUED],
            working=[s for s in submissions if s.state in (State.BUILDING, State.VALIDATING)],
            playing=playing, parallel=self.parallel,
            meetings=store.ladder.meetings_done(), faults=faults,
            failed=[s for s in reversed(submissions) if s.state == State.FAILED][:FAULTS_SHOWN],
            submissions=list(reversed(submissions)), states=sorted(states.items()),
            frozen=store.frozen(), csrf=session.csrf, notice=notice, remote=remote,
            referee=bots.port if bots is not None else None,
        )  # fmt: skip

    async def disable(self, request: Request, session: Session, form: FormData) -> Response:
        if not session.organiser:
            return self.site.refuse("only the organiser disables a submission", 403)
        number = request.path_params["number"]
        reason = form.get("reason")
        try:
            await self.api.disable(number, reason if isinstance(reason, str) else "")
        except ArenaError as exc:
            return self._page(session, f"Refused: {exc}", exc.status)
        return RedirectResponse(f"/admin?disabled={number}", status_code=303)
