"""The arena's HTTP API (``/api/v1``), as ``tavolo arena serve`` serves it.

Every answer is JSON; every refusal is ``{"error": "..."}`` with a status that says what
kind it is (400 a bad archive, 401 no valid token, 403 not allowed now, 404 none of
yours, 413 too big, 429 too many). The schema is :data:`OPENAPI`, served at
``/api/v1/openapi.json``. Each client (its token, else its address) is rate-limited.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tournaments.arena.archives import ArchiveError
from tournaments.arena.config import ArenaConfig
from tournaments.arena.ladder import games_and_meetings
from tournaments.arena.rate_limit import RateLimiter
from tournaments.arena.remote_bots import RemoteBots
from tournaments.arena.store import ArenaError, ArenaStore, Entrant, State, Submission, now_utc
from tournaments.arena.tokens import digest

SIGNUP_BYTES = 4_096
"""A sign-up's JSON body, at most."""


def _submission_json(s: Submission) -> dict[str, Any]:
    return {
        "id": s.id, "entrant": s.entrant, "digest": s.digest, "created": s.created,
        "state": s.state.value, "reason": s.reason, "files": s.files, "bytes": s.bytes,
        "remote": s.remote,
    }  # fmt: skip


def _refuse(message: str, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


class ArenaApi:
    """The API's handlers over one store and one arena's settings."""

    def __init__(self, store: ArenaStore, config: ArenaConfig) -> None:
        self.store, self.config = store, config
        self.limiter = RateLimiter(config.requests_per_minute)
        self.remote: RemoteBots | None = None
        """The referee remote bots connect to, once it runs (``--referee-listen``)."""
        # One writer at a time: SQLite's, and the per-day count is read then written.
        self._writing = asyncio.Lock()

    def app(self, pages: Sequence[Route] = ()) -> Starlette:
        """The API's routes, and ``pages`` (the site's, from ``tournaments.web``)."""
        return Starlette(routes=[*self.routes(), *pages])

    def routes(self) -> list[Route]:
        anyone, entrant = self.for_anyone, self._for_entrants
        return [
            Route("/api/v1/openapi.json", anyone(self.openapi), methods=["GET"]),
            Route("/api/v1/signup", anyone(self.signup), methods=["POST"]),
            Route("/api/v1/submissions", entrant(self.submit), methods=["POST"]),
            Route("/api/v1/remote", entrant(self.submit_remote), methods=["POST"]),
            Route("/api/v1/submissions", entrant(self.list_submissions), methods=["GET"]),
            Route(
                "/api/v1/submissions/{number:int}",
                entrant(self.one_submission),
                methods=["GET"],
            ),
            Route(
                "/api/v1/submissions/{number:int}/logs",
                entrant(self.submission_logs),
                methods=["GET"],
            ),
            Route(
                "/api/v1/submissions/{number:int}/choose",
                entrant(self.choose),
                methods=["POST"],
            ),
            Route("/api/v1/me", entrant(self.me), methods=["GET"]),
            Route("/api/v1/leaderboard", anyone(self.leaderboard), methods=["GET"]),
        ]

    def for_anyone(
        self, handler: Callable[[Request], Awaitable[Response]]
    ) -> Callable[[Request], Awaitable[Response]]:
        """``handler``, after the client's rate limit."""

        async def guarded(request: Request) -> Response:
            return self._limited(request) or await handler(request)

        return guarded

    def _for_entrants(
        self, handler: Callable[[Request, Entrant], Awaitable[Response]]
    ) -> Callable[[Request], Awaitable[Response]]:
        """``handler``, after the rate limit, for the entrant the request's token is."""

        async def guarded(request: Request) -> Response:
            limited = self._limited(request)
            if limited:
                return limited
            entrant = self._entrant(request)
            if isinstance(entrant, Response):
                return entrant
            return await handler(request, entrant)

        return guarded

    # -- who asks ------------------------------------------------------------------------

    def _client(self, request: Request) -> str:
        token = _bearer(request)
        if token is not None:
            return "token:" + digest(token)
        return "address:" + (request.client.host if request.client else "?")

    def _limited(self, request: Request) -> Response | None:
        wait = self.limiter.take(self._client(request))
        if wait <= 0:
            return None
        return _refuse(
            f"too many requests: {self.limiter.per_minute} a minute; try again in "
            f"{math.ceil(wait)} s",
            429,
            {"Retry-After": str(math.ceil(wait))},
        )

    def _entrant(self, request: Request) -> Entrant | Response:
        token = _bearer(request)
        entrant = self.store.entrant_of(token) if token is not None else None
        if entrant is None:
            return _refuse(
                "no valid token: send 'Authorization: Bearer <token>'",
                401,
                {"WWW-Authenticate": "Bearer"},
            )
        return entrant

    # -- handlers ------------------------------------------------------------------------

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(OPENAPI)

    async def leaderboard(self, request: Request) -> Response:
        return JSONResponse(await asyncio.to_thread(leaderboard, self.store))

    async def me(self, request: Request, entrant: Entrant) -> Response:
        return JSONResponse({"name": entrant.name, "created": entrant.created})

    async def signup(self, request: Request) -> Response:
        if not self.config.signup_open:
            return _refuse("sign-up is closed: the organiser invites entrants", 403)
        body = await read_body(request, SIGNUP_BYTES)
        if isinstance(body, Response):
            return body
        try:
            data = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _refuse('the body must be JSON: {"name": ..., "invitation": ...}', 400)
        if not (
            isinstance(data, dict)
            and isinstance(data.get("name"), str)
            and isinstance(data.get("invitation"), str)
        ):
            return _refuse('the body must be {"name": text, "invitation": text}', 400)
        async with self._writing:
            try:
                entrant, token = self.store.sign_up(data["name"], data["invitation"])
            except ArenaError as exc:
                return _refuse(str(exc), exc.status)
        return JSONResponse({"name": entrant.name, "token": token}, status_code=201)

    async def submit(self, request: Request, entrant: Entrant) -> Response:
        closed = self.closed_to_submissions()
        if closed is not None:
            return _refuse(str(closed), closed.status)
        body = await read_body(request, self.config.submissions.archive.archive_bytes)
        if isinstance(body, Response):
            return body
        try:
            submission, new = await self.accept(entrant, body)
        except ArenaError as exc:
            return _refuse(str(exc), exc.status)
        return JSONResponse(_submission_json(submission), status_code=201 if new else 200)

    async def submit_remote(self, request: Request, entrant: Entrant) -> Response:
        try:
            submission, key = await self.accept_remote(entrant)
        except ArenaError as exc:
            return _refuse(str(exc), exc.status)
        return JSONResponse(self.remote_answer(request, submission, key), status_code=201)

    async def accept_remote(self, entrant: Entrant) -> tuple[Submission, str]:
        """A new remote submission of ``entrant`` and its key (from the API or the site);
        ArenaError says why not."""
        closed = self.closed_to_submissions()
        if closed is not None:
            raise closed
        if not self.config.remote.allowed:
            raise ArenaError("this arena takes no remote bots: submit your bot's files", 403)
        if self.remote is None:
            raise ArenaError(
                "the arena's referee for remote bots is not running: ask the organiser", 503
            )
        async with self._writing:
            submission, key = self.store.submit_remote(
                entrant, per_day=self.config.submissions.per_day
            )
        self.remote.know(submission)
        return submission, key

    def remote_answer(self, request: Request, submission: Submission, key: str) -> dict[str, Any]:
        """What an entrant is told of its new remote submission: the key, once, and where
        and how its bot connects."""
        assert self.remote is not None
        return {
            "submission": _submission_json(submission),
            "key": key,
            "referee": f"{request.url.hostname}:{self.remote.port}",
            "tls": self.remote.tls,
            "streams": self.remote.streams_per_table,
        }

    def closed_to_submissions(self) -> ArenaError | None:
        """Why the arena takes no submission now, or None."""
        if not self.config.taking_submissions(now_utc()):
            return ArenaError("the season takes no submissions now", 403)
        if self.store.frozen() is not None:
            return ArenaError("the season is frozen: the final is being decided", 403)
        return None

    async def accept(self, entrant: Entrant, archive: bytes) -> tuple[Submission, bool]:
        """Keep ``archive`` as a submission of ``entrant`` (from the API or the site); the
        submission, and whether it is new. ArenaError says why not."""
        closed = self.closed_to_submissions()
        if closed is not None:
            raise closed
        rules = self.config.submissions
        async with self._writing:
            try:
                # Unpacking is bounded by the archive limits; off the loop all the same.
                return await asyncio.to_thread(
                    self.store.submit, entrant, archive,
                    limits=rules.archive, per_day=rules.per_day,
                )  # fmt: skip
            except ArchiveError as exc:
                raise ArenaError(f"the archive is refused: {exc}", 400) from None

    async def choose_for(self, entrant: Entrant, number: int) -> Submission:
        """Make ``number`` the finalist of ``entrant``; ArenaError says why not."""
        async with self._writing:
            return self.store.choose(entrant, number)

    async def disable(self, number: int, reason: str) -> Submission:
        """Take submission ``number`` off the ladder (the organiser's); ArenaError: why not."""
        async with self._writing:
            return self.store.disable(number, reason)

    async def list_submissions(self, request: Request, entrant: Entrant) -> Response:
        return JSONResponse([self.own_json(s) for s in self.store.submissions_of(entrant)])

    def own_json(self, s: Submission) -> dict[str, Any]:
        """A submission as its entrant sees it: a remote one with its bot's waiting streams."""
        out = _submission_json(s)
        if s.remote:
            out["streams_waiting"] = self.remote.streams(s) if self.remote is not None else 0
        return out

    async def choose(self, request: Request, entrant: Entrant) -> Response:
        try:
            chosen = await self.choose_for(entrant, request.path_params["number"])
        except ArenaError as exc:
            return _refuse(str(exc), exc.status)
        return JSONResponse(_submission_json(chosen))

    async def submission_logs(self, request: Request, entrant: Entrant) -> Response:
        mine = self._own(request, entrant)
        if isinstance(mine, Response):
            return mine
        return JSONResponse(self.store.logs_of(mine.id))

    def _own(self, request: Request, entrant: Entrant) -> Submission | Response:
        """The entrant's submission the path names, or the 404 another's gets too."""
        number = request.path_params["number"]
        try:
            submission = self.store.submission(number)
        except ArenaError:
            submission = None
        if submission is None or submission.entrant != entrant.name:
            return _refuse(f"no submission {number} of yours", 404)
        return submission

    async def one_submission(self, request: Request, entrant: Entrant) -> Response:
        # Another entrant's submission is answered as one that does not exist.
        mine = self._own(request, entrant)
        if isinstance(mine, Response):
            return mine
        return JSONResponse(self.own_json(mine))


def leaderboard(store: ArenaStore) -> dict[str, Any]:
    """Every rated submission, best first, with its Elo, its 95 % interval and its games;
    and each entrant's place by its best playing submission."""
    results, fitted = store.ladder.fitted()
    games, _ = games_and_meetings(results)
    by_id = {s.id: s for s in store.rated()}
    rows: list[dict[str, Any]] = []
    if fitted is not None:
        for rating in fitted.ratings:
            submission = by_id.get(int(rating.name))
            if submission is None:
                continue  # disabled or failed since: not shown
            rows.append({
                "rank": len(rows) + 1, "submission": submission.id,
                "entrant": submission.entrant, "state": submission.state.value,
                "elo": round(rating.elo, 1), "low": round(rating.ci_low, 1),
                "high": round(rating.ci_high, 1), "games": games[submission.id],
            })  # fmt: skip
    entrants: list[str] = []
    for row in rows:
        if row["state"] == State.READY.value and row["entrant"] not in entrants:
            entrants.append(str(row["entrant"]))
    waiting = sorted(set(by_id) - {int(r["submission"]) for r in rows})
    return {
        "games": len(results),
        "submissions": rows,
        "entrants": [{"rank": i + 1, "entrant": e} for i, e in enumerate(entrants)],
        "unrated": waiting,
    }


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def read_body(request: Request, cap: int) -> bytes | Response:
    """The request's body, read no further than ``cap`` bytes (else a 413)."""
    stated = request.headers.get("content-length")
    if stated is not None and stated.isdigit() and int(stated) > cap:
        return _refuse(f"the body is {stated} bytes, more than the {cap} allowed", 413)
    parts: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            return _refuse(f"the body is more than the {cap} bytes allowed", 413)
        parts.append(chunk)
    return b"".join(parts)


_SUBMISSION = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "entrant": {"type": "string"},
        "digest": {
            "type": "string",
            "description": "SHA-256 of the submission's files; a remote one's: remote-, then a "
            "random name",
        },
        "created": {"type": "string", "format": "date-time"},
        "state": {"type": "string", "enum": [s.value for s in State]},
        "reason": {"type": "string"},
        "files": {"type": "integer"},
        "bytes": {"type": "integer"},
        "remote": {
            "type": "boolean",
            "description": "its bot runs on its entrant's machine and connects with a key",
        },
        "streams_waiting": {
            "type": "integer",
            "description": "a remote one's, to its entrant: its bot's streams waiting for a table",
        },
    },
}
_ERROR = {"type": "object", "properties": {"error": {"type": "string"}}}


def _answers(ok: str, schema: dict[str, Any], *refusals: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        ok: {"description": "done", "content": {"application/json": {"schema": schema}}}
    }
    for status in refusals:
        out[status] = {
            "description": _WHY[status],
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
    return out


_WHY = {
    "400": "a body or archive refused",
    "401": "no valid token",
    "403": "not allowed now",
    "404": "none of yours",
    "413": "the body is too big",
    "409": "the name is taken",
    "503": "the arena's referee for remote bots is not running",
    "429": "too many requests, or too many submissions today",
}

OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Tavolo arena", "version": "1"},
    "components": {
        "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
        "schemas": {"Submission": _SUBMISSION, "Error": _ERROR},
    },
    "security": [{"token": []}],
    "paths": {
        "/api/v1/signup": {
            "post": {
                "summary": "Sign up with an invitation code (when the arena's sign-up is open)",
                "security": [],
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["name", "invitation"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "invitation": {"type": "string"},
                                },
                            }
                        }
                    }
                },
                "responses": _answers(
                    "201",
                    {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "token": {"type": "string", "description": "shown once"},
                        },
                    },
                    "400",
                    "403",
                    "409",
                    "429",
                ),
            }
        },
        "/api/v1/leaderboard": {
            "get": {
                "summary": "Every rated submission with its Elo and interval; entrants' places",
                "security": [],
                "responses": _answers("200", {"type": "object"}, "429"),
            }
        },
        "/api/v1/me": {
            "get": {
                "summary": "The entrant the token is",
                "responses": _answers("200", {"type": "object"}, "401", "429"),
            }
        },
        "/api/v1/submissions": {
            "post": {
                "summary": "Submit a bot: a .tar, .tar.gz or .zip of its folder, bot.toml on top",
                "requestBody": {
                    "content": {
                        "application/octet-stream": {
                            "schema": {"type": "string", "format": "binary"}
                        }
                    }
                },
                "responses": {
                    **_answers(
                        "201",
                        {"$ref": "#/components/schemas/Submission"},
                        "400",
                        "401",
                        "403",
                        "413",
                        "429",
                    ),
                    "200": {"description": "the same files were submitted before: that one"},
                },
            },
            "get": {
                "summary": "Your submissions",
                "responses": _answers(
                    "200",
                    {"type": "array", "items": {"$ref": "#/components/schemas/Submission"}},
                    "401",
                    "429",
                ),
            },
        },
        "/api/v1/remote": {
            "post": {
                "summary": "Make a remote submission: your bot runs on your machine and "
                "connects to the arena's referee with the key answered, shown once",
                "responses": _answers(
                    "201",
                    {
                        "type": "object",
                        "properties": {
                            "submission": {"$ref": "#/components/schemas/Submission"},
                            "key": {"type": "string", "description": "TAVOLO_KEY; shown once"},
                            "referee": {"type": "string", "description": "TAVOLO_REFEREE"},
                            "tls": {
                                "type": "boolean",
                                "description": "the referee serves TLS: give TAVOLO_TLS_CA",
                            },
                            "streams": {
                                "type": "integer",
                                "description": "streams a table takes (TAVOLO_STREAMS)",
                            },
                        },
                    },
                    "401",
                    "403",
                    "429",
                    "503",
                ),
            }
        },
        "/api/v1/submissions/{number}/logs": {
            "get": {
                "summary": "One of your submissions' logs (build, validation), by name",
                "responses": _answers(
                    "200",
                    {"type": "object", "additionalProperties": {"type": "string"}},
                    "401",
                    "404",
                    "429",
                ),
            }
        },
        "/api/v1/submissions/{number}/choose": {
            "post": {
                "summary": "Make one of your ready or retired submissions your finalist",
                "responses": _answers(
                    "200", {"$ref": "#/components/schemas/Submission"}, "401", "404", "409", "429"
                ),
            }
        },
        "/api/v1/submissions/{number}": {
            "get": {
                "summary": "One of your submissions",
                "parameters": [
                    {
                        "name": "number",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "integer"},
                    }
                ],
                "responses": _answers(
                    "200", {"$ref": "#/components/schemas/Submission"}, "401", "404", "429"
                ),
            }
        },
    },
}
