"""The arena's pages behind a sign-in: signing in with a token, an entrant's own page (its
submissions with their reasons, build and validation logs and its bots' stderr; submitting
an archive, or making a remote bot's key; choosing a finalist), and signing out. The
organiser's page is :mod:`.arena_admin`.

A signed-in browser holds a session cookie (``HttpOnly``, ``SameSite=Strict``, and
``Secure`` with the ``__Host-`` prefix under TLS); the arena keeps only its digest. Every
form carries its session's CSRF token, the sign-in form a token of its own held in a
cookie too (double submit), and a POST from another origin is refused.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import Message

from tournaments.arena.api import ArenaApi, leaderboard, read_body
from tournaments.arena.sessions import SESSION_HOURS, Session, same_form_token
from tournaments.arena.store import ArenaError, Entrant, now_utc
from tournaments.web.pages import render

STYLES = ["tavolo.css"]
FORM_BYTES = 8_192
"""A form without a file, at most."""
UPLOAD_SLACK = 65_536
"""What a multipart form may add to its archive's size (boundaries, headers, fields)."""
SIGNIN_SECONDS = 600
"""How long a sign-in form stays good."""
PRIVATE_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; "
    "frame-ancestors 'none'; form-action 'self'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}
"""Every page behind the sign-in: never cached, never framed, forms posted home only."""

Handler = Callable[[Request], Awaitable[Response]]


class SignedIn:
    """Sessions on the site: the cookie, the CSRF checks, the pages' frame."""

    def __init__(self, api: ArenaApi, *, secure: bool) -> None:
        self.api, self.store, self.arena = api, api.store, api.config.name
        self.secure = secure
        """Served over TLS: the cookies are ``Secure``, under the ``__Host-`` prefix."""
        prefix = "__Host-" if secure else ""
        self.cookie = prefix + "tavolo_session"
        self.signin_cookie = prefix + "tavolo_signin"

    def session(self, request: Request) -> Session | None:
        value = request.cookies.get(self.cookie)
        return None if value is None else self.store.sessions.find(value, now_utc())

    def set_cookie(self, response: Response, name: str, value: str, seconds: int) -> None:
        response.set_cookie(
            name, value, max_age=seconds, path="/", secure=self.secure, httponly=True,
            samesite="strict",
        )  # fmt: skip

    def page(self, template: str, title: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = render(
            template, title=title, crumbs=[(self.arena, "/"), (title, None)], styles=STYLES,
            scripts=[], assets=None, arena=self.arena, **context,
        )  # fmt: skip
        return HTMLResponse(html, status_code=status, headers=PRIVATE_HEADERS)

    def refuse(self, message: str, status: int) -> HTMLResponse:
        return self.page("arena_refused.html.j2", "refused", status, message=message)

    def cross_origin(self, request: Request) -> bool:
        """Whether a POST came from a page of another site (its ``Origin`` says so)."""
        origin = request.headers.get("origin")
        if origin is None:
            return False  # not a browser's cross-site POST: those always say where from
        return urlsplit(origin).netloc != request.headers.get("host", "")

    async def form(self, request: Request, cap: int) -> FormData | Response:
        """The request's form, read no further than ``cap`` bytes."""
        body = await read_body(request, cap)
        if isinstance(body, Response):
            return self.refuse("the form is too big", 413)
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        try:
            return await Request(request.scope, receive).form(max_files=1, max_fields=8)
        except HTTPException as exc:  # Starlette's word for a form its parser refused
            return self.refuse(f"the form cannot be read: {exc.detail}", 400)

    def posted(
        self, cap: int, handler: Callable[[Request, Session, FormData], Awaitable[Response]]
    ) -> Handler:
        """A POST ``handler``, for a live session whose form carries its CSRF token."""

        async def guarded(request: Request) -> Response:
            if self.cross_origin(request):
                return self.refuse("a form from another site is refused", 403)
            session = self.session(request)
            if session is None:
                return RedirectResponse("/signin", status_code=303)
            form = await self.form(request, cap)
            if isinstance(form, Response):
                return form
            if not session.form_ok(form.get("csrf")):
                return self.refuse("the form's CSRF token is not this session's", 403)
            return await handler(request, session, form)

        return guarded


def account_routes(api: ArenaApi, signed_in: SignedIn) -> list[Route]:
    """Signing in and out, and an entrant's own page; each behind the rate limit."""
    pages = _Account(api, signed_in)
    guarded = api.for_anyone
    upload_cap = api.config.submissions.archive.archive_bytes + UPLOAD_SLACK
    return [
        Route("/signin", guarded(pages.signin_form), methods=["GET"]),
        Route("/signin", guarded(pages.signin), methods=["POST"]),
        Route("/signout", guarded(signed_in.posted(FORM_BYTES, pages.signout)), methods=["POST"]),
        Route("/account", guarded(pages.account), methods=["GET"]),
        Route(
            "/account/submissions",
            guarded(signed_in.posted(upload_cap, pages.submit)),
            methods=["POST"],
        ),
        Route(
            "/account/remote",
            guarded(signed_in.posted(FORM_BYTES, pages.submit_remote)),
            methods=["POST"],
        ),
        Route(
            "/account/choose/{number:int}",
            guarded(signed_in.posted(FORM_BYTES, pages.choose)),
            methods=["POST"],
        ),
    ]


_NOTICES = {
    "received": "Submission {number} received: it is built and validated next.",
    "same": "Those files are submission {number} already.",
    "chosen": "Submission {number} is your finalist.",
}
"""What the page says after a form, by its query's key (a number alone is read)."""


class _Account:
    def __init__(self, api: ArenaApi, signed_in: SignedIn) -> None:
        self.api, self.store, self.site = api, api.store, signed_in

    async def signin_form(self, request: Request, error: str = "", status: int = 200) -> Response:
        site = self.site
        nonce = secrets.token_urlsafe(32)
        page = site.page("arena_signin.html.j2", "sign in", status, csrf=nonce, error=error)
        site.set_cookie(page, site.signin_cookie, nonce, SIGNIN_SECONDS)
        return page

    async def signin(self, request: Request) -> Response:
        site = self.site
        if site.cross_origin(request):
            return site.refuse("a form from another site is refused", 403)
        form = await site.form(request, FORM_BYTES)
        if isinstance(form, Response):
            return form
        nonce = request.cookies.get(site.signin_cookie)
        if nonce is None or not same_form_token(form.get("csrf"), nonce):
            return await self.signin_form(request, "The form had expired: sign in again.", 403)
        token = form.get("token")
        token = token.strip() if isinstance(token, str) else ""
        store, now = self.store, now_utc()
        entrant = store.entrant_of(token)
        if entrant is not None:
            cookie, _ = store.sessions.open(entrant.id, False, now)
            target = "/account"
        elif store.sessions.is_organiser(token):
            cookie, _ = store.sessions.open(None, True, now)
            target = "/admin"
        else:
            return await self.signin_form(request, "That token is not valid.", 401)
        answer = RedirectResponse(target, status_code=303, headers=PRIVATE_HEADERS)
        site.set_cookie(answer, site.cookie, cookie, SESSION_HOURS * 3600)
        answer.delete_cookie(site.signin_cookie, path="/", secure=site.secure, httponly=True)
        return answer

    async def signout(self, request: Request, session: Session, form: FormData) -> Response:
        site = self.site
        cookie = request.cookies.get(site.cookie)
        if cookie is not None:
            self.store.sessions.close(cookie)
        answer = RedirectResponse("/", status_code=303, headers=PRIVATE_HEADERS)
        answer.delete_cookie(site.cookie, path="/", secure=site.secure, httponly=True)
        return answer

    def _entrant(self, session: Session) -> Entrant | None:
        found = [e for e in self.store.entrants() if e.id == session.entrant and not e.disabled]
        return found[0] if found else None

    async def account(self, request: Request) -> Response:
        session = self.site.session(request)
        if session is None:
            return RedirectResponse("/signin", status_code=303)
        if session.organiser:
            return RedirectResponse("/admin", status_code=303)
        entrant = self._entrant(session)
        if entrant is None:
            return RedirectResponse("/signin", status_code=303)
        notice = ""
        for key, text in _NOTICES.items():
            number = request.query_params.get(key, "")
            if number.isdigit():
                notice = text.format(number=int(number))
        return await self._account_page(entrant, session, notice, 200)

    async def _account_page(
        self, entrant: Entrant, session: Session, notice: str, status: int
    ) -> Response:
        store = self.store
        board = await asyncio.to_thread(leaderboard, store)
        rated = {r["submission"]: r for r in board["submissions"]}
        chosen = store.chosen().get(entrant.name)
        mine = []
        for s in reversed(store.submissions_of(entrant)):
            row = rated.get(s.id)
            mine.append({
                "s": s, "logs": store.logs_of(s.id), "chosen": s.id == chosen,
                "elo": f"{row['elo']:.0f} ({row['low']:.0f} – {row['high']:.0f})" if row else "",
                "games": row["games"] if row else 0,
                "streams": self.api.own_json(s).get("streams_waiting", 0),
            })  # fmt: skip
        closed = self.api.closed_to_submissions()
        return self.site.page(
            "arena_account.html.j2", entrant.name, status, name=entrant.name,
            submissions=mine, csrf=session.csrf, notice=notice,
            closed=str(closed) if closed else "",
            limit_mb=self.api.config.submissions.archive.archive_bytes / 1e6,
            remote=self.api.config.remote.allowed and self.api.remote is not None,
        )  # fmt: skip

    async def submit(self, request: Request, session: Session, form: FormData) -> Response:
        entrant = self._entrant(session) if not session.organiser else None
        if entrant is None:
            return self.site.refuse("only an entrant submits", 403)
        upload = form.get("archive")
        if not isinstance(upload, UploadFile) or not upload.filename:
            return await self._account_page(entrant, session, "Choose an archive to submit.", 400)
        archive = await upload.read()
        try:
            submission, new = await self.api.accept(entrant, archive)
        except ArenaError as exc:
            return await self._account_page(entrant, session, f"Refused: {exc}", exc.status)
        # Then a reload of the page asks nothing again.
        key = "received" if new else "same"
        return RedirectResponse(f"/account?{key}={submission.id}", status_code=303)

    async def submit_remote(self, request: Request, session: Session, form: FormData) -> Response:
        entrant = self._entrant(session) if not session.organiser else None
        if entrant is None:
            return self.site.refuse("only an entrant submits", 403)
        try:
            submission, key = await self.api.accept_remote(entrant)
        except ArenaError as exc:
            return await self._account_page(entrant, session, f"Refused: {exc}", exc.status)
        # The key is on this answer alone (never cached, never shown again): no redirect.
        told = self.api.remote_answer(request, submission, key)
        return self.site.page(
            "arena_remote_key.html.j2", f"submission {submission.id}", 201,
            name=entrant.name, told=told, number=submission.id,
        )  # fmt: skip

    async def choose(self, request: Request, session: Session, form: FormData) -> Response:
        entrant = self._entrant(session) if not session.organiser else None
        if entrant is None:
            return self.site.refuse("only an entrant chooses its finalist", 403)
        number = request.path_params["number"]
        try:
            await self.api.choose_for(entrant, number)
        except ArenaError as exc:
            return await self._account_page(entrant, session, f"Refused: {exc}", exc.status)
        return RedirectResponse(f"/account?chosen={number}", status_code=303)
