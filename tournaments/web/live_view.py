"""The live view: a small web page following a referee's tables, and a tournament's standings.

Its one source of play is the referee's public spectator feed: the events that
``SpectatorService.Watch`` sends, heard in the referee's own process
(:class:`referee.service.feeds.FeedListener`), so that following every table costs the referee
no second serialisation and no gRPC client; standings and progress come from the
tournament database, opened read-only. Browsers get a snapshot, then every change, as
server-sent events (``GET /events``). See docs/live-view.md.

Threads: the web server has its own asyncio loop in a thread of its own. The feed's
events are turned into JSON on the referee's loop (a few microseconds each) and handed to
that loop in batches; the database is read in a thread of its own.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
import asyncio
import errno
import ipaddress
import json
import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from referee.families.tressette.actions import SIGNAL_NAMES
from referee.service.feeds import TableFeed
from referee.service.server import Referee
from tavolo_bot.proto import referee_pb2 as pb
from tournaments.ratings import RatingsError
from tournaments.standings import as_json, stored_facts, stored_standings
from tournaments.storage import StorageError, Store
from tournaments.web.pages import asset_text, render

LOOPBACK = "127.0.0.1"
"""Where ``--web PORT`` and ``--web :PORT`` bind: this machine alone."""
WILDCARDS = ("0.0.0.0", "::", "")

POLL_SECONDS = 1.0
"""How often the database is looked at: the progress is new each time a game is stored."""
STANDINGS_SHARE = 20
FLUSH_SECONDS = 0.05
"""What the feed posts to the web loop waits for its batch, at most."""
"""The standings are computed at most once in this many times the last computation took."""
KEEP_FINISHED = 16
"""Finished tables kept on the page; older ones are dropped as tables finish."""
KEEP_DEALS = 12
"""Scored deals of a table's current game kept (live.js keeps as many)."""
KEEP_RESULTS = 200
"""Finished games' results kept per table (live.js keeps as many)."""
BATCH_SECONDS = 0.1
"""A browser gets at most one update this often: a burst of events is one message."""
HEARTBEAT_SECONDS = 15.0
"""A comment line this often on an idle stream, so that proxies keep it open."""
MAX_BACKLOG = 20000
"""Changes queued for a browser that reads too slowly; beyond it its stream is closed and
the browser, reconnecting, starts again from a snapshot."""

ASSETS = ("tavolo.css", "live.css", "live.js")
"""The only files served under ``/assets/``."""
_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
_HEADERS = {
    # Nothing but the page's own origin: no CDN, no inline script, no frames.
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class LiveViewError(ValueError):
    """A ``--web`` value or address that cannot be served: one line naming the option."""


# -- the address ---------------------------------------------------------------------------


@dataclass(frozen=True)
class WebAddress:
    """Where the live view listens."""

    host: str
    port: int


def parse_web(text: str) -> WebAddress:
    """``--web`` read: ``HOST:PORT``, ``[IPv6]:PORT``, or ``PORT`` or ``:PORT`` for loopback."""
    host, sep, port_text = text.rpartition(":")
    if not sep or host == "":
        host = LOOPBACK
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        if not _is_ip(host, 6):
            raise LiveViewError(f"--web: expected HOST:PORT, got {text!r}")
    elif ":" in host:  # an IPv6 address needs its brackets, or its port is ambiguous
        raise LiveViewError(f"--web: expected HOST:PORT (IPv6 as [ADDRESS]:PORT), got {text!r}")
    if not host or not port_text.isascii() or not port_text.isdigit():
        raise LiveViewError(f"--web: expected HOST:PORT, got {text!r}")
    if any(c.isspace() or c in "/[]@" for c in host):
        raise LiveViewError(f"--web: expected HOST:PORT, got {text!r}")
    port = int(port_text)
    if port > 65535:
        raise LiveViewError(f"--web: the port must be 0 to 65535, got {text!r}")
    return WebAddress(host, port)


def _is_ip(text: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(text).version == version
    except ValueError:
        return False


def _shown(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _bind(address: WebAddress) -> socket.socket:
    """A listening socket on ``address``; LiveViewError, one line, if there can be none."""
    where = _shown(address.host, address.port)
    try:
        infos = socket.getaddrinfo(
            address.host, address.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise LiveViewError(f"--web: cannot listen on {where}: {exc.strerror}") from None
    family, kind, proto, _, sockaddr = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        # A restart may find the port in TIME_WAIT; a listening socket still refuses it.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(sockaddr)
        sock.listen(64)
    except OSError as exc:
        sock.close()
        why = "the address is in use" if exc.errno == errno.EADDRINUSE else exc.strerror
        raise LiveViewError(f"--web: cannot listen on {where}: {why}") from None
    return sock


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# -- spectator events as the page reads them ----------------------------------------------


def _signal(value: int) -> str:
    # The protocol's Signal values are the engine's signal indexes (referee/protocol.py).
    return SIGNAL_NAMES[value] if 0 <= value < len(SIGNAL_NAMES) else f"signal {value}"


def event_json(event: pb.Event) -> dict[str, Any] | None:
    """A public spectator event as JSON-ready data for the page; None for any other kind.

    Only the kinds docs/protocol.md §10 lists are passed on: should a referee ever send
    a spectator anything else, it stops here. Which families send each, with which fields:
    docs/records.md, "What the views read".
    """
    which = event.WhichOneof("event")
    if which == "card_played":
        c = event.card_played
        return {"type": which, "seat": c.seat, "card": c.card, "signal": _signal(c.signal)}
    if which == "trick_won":
        return {"type": which, "trick": event.trick_won.trick, "winner": event.trick_won.winner}
    if which == "declared":
        d = event.declared
        return {
            "type": which,
            "seat": d.seat,
            "declaration": d.declaration,
            "cards": list(d.cards),
            "points": d.points,
        }
    if which == "declarations_ended":
        return {"type": which, "seat": event.declarations_ended.seat}
    if which == "called_out":
        o = event.called_out
        return {"type": which, "seat": o.seat, "claimed": o.claimed, "correct": o.correct}
    if which == "card_drawn":
        return {"type": which, "seat": event.card_drawn.seat, "card": event.card_drawn.card}
    if which == "bid_made":
        return {"type": which, "seat": event.bid_made.seat, "bid": event.bid_made.bid}
    if which == "card_called":
        k = event.card_called
        return {"type": which, "seat": k.seat, "card": k.card, "holder": k.holder}
    if which == "monte_split":
        m = event.monte_split
        return {"type": which, "seat": m.seat, "take": list(m.take)}
    if which == "deal_scored":
        s = event.deal_scored
        return {
            "type": which,
            "deal": s.deal,
            "last_trick": s.last_trick,
            "thirds": list(s.thirds),
            "card_points": list(s.card_points),
            "declarations": list(s.declarations),
            "points": list(s.points),
            "totals": list(s.totals),
            "cappotto": s.cappotto,
            "hands": [list(h.cards) for h in s.hands],
            "contract": s.contract,
            "soloist": s.soloist,
            "success": s.success,
            "set_aside": list(s.set_aside),
        }
    if which == "game_over":
        g = event.game_over
        return {
            "type": which,
            "game": g.game,
            "termination": g.termination,
            "winner": g.winner,
            "totals": list(g.totals),
            "forfeit_seat": g.forfeit_seat,
        }
    return None


# -- what the page shows -------------------------------------------------------------------


@dataclass
class _Table:
    """One table as the page knows it. :meth:`apply` is mirrored by live.js's applyEvent."""

    id: str
    match: str
    entries: list[str]
    game: int = 0
    """The game being played (the feed's), or the one after the last game over; 0 before
    the first starts."""
    done: bool = False
    note: str = ""
    """Why the table's stream ended early, if it did."""
    results: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=KEEP_RESULTS))
    events: list[dict[str, Any]] = field(default_factory=list)
    """The events of the game in progress (its last :data:`KEEP_DEALS` scored deals)."""
    previous: dict[str, Any] | None = None
    """The last finished game: its number, events and game_over, shown until the next one
    has begun."""
    dropped: int = 0
    """Deals of the current game no longer kept."""
    ended_at: float = 0.0

    def apply(self, event: dict[str, Any]) -> None:
        if event["type"] == "game_over":
            self.results.append(event)
            self.previous = {"game": event["game"], "events": self.events, "over": event}
            self.events, self.dropped = [], 0
            self.game = max(self.game, event["game"] + 1)
            return
        self.game = max(self.game, 1)
        self.events.append(event)
        if event["type"] == "deal_scored":
            scored = [i for i, e in enumerate(self.events) if e["type"] == "deal_scored"]
            if len(scored) > KEEP_DEALS:
                del self.events[: scored[0] + 1]
                self.dropped += 1

    def as_json(self) -> dict[str, Any]:
        """The table now: copies of its lists, which later events must not reach (an op
        is written out after events that came since, which go as ops of their own)."""
        previous = self.previous
        return {
            "id": self.id,
            "match": self.match,
            "entries": list(self.entries),
            "game": self.game,
            "done": self.done,
            "note": self.note,
            "results": list(self.results),
            "events": list(self.events),
            "previous": None
            if previous is None
            else {**previous, "events": list(previous["events"])},
            "dropped": self.dropped,
        }

    def meta(self) -> dict[str, Any]:
        return {
            "op": "meta",
            "id": self.id,
            "game": self.game,
            "done": self.done,
            "note": self.note,
            "entries": list(self.entries),
        }


_RESET = object()
"""Put in a browser's queue when it fell too far behind: its stream ends."""


class _Hub:
    """What the page shows, and the browsers to tell of each change: the web loop's alone."""

    def __init__(self, page: dict[str, Any]) -> None:
        self.page = page
        self.tables: dict[str, _Table] = {}
        self.standings: dict[str, Any] | None = None
        self.progress: dict[str, Any] | None = None
        self.problem: str | None = None
        """Why the standings cannot be shown now, if they cannot."""
        self.feed: dict[str, Any] = {"state": "connecting", "problem": None}
        self.over: str | None = None
        self.ignored = 0
        """Events of kinds the page never shows (none, from a referee of this version)."""
        self.clients: set[asyncio.Queue[object]] = set()

    def snapshot(self) -> dict[str, Any]:
        return {
            "page": self.page,
            "tables": [t.as_json() for t in self.tables.values()],
            "standings": self.standings,
            "progress": self.progress,
            "problem": self.problem,
            "feed": self.feed,
            "over": self.over,
            "ignored": self.ignored,
        }

    def _send(self, op: dict[str, Any]) -> None:
        for queue in list(self.clients):
            if queue.qsize() >= MAX_BACKLOG:
                self.clients.discard(queue)
                queue.put_nowait(_RESET)
            else:
                queue.put_nowait(op)

    # Called by the feeding threads, through the loop.

    def seen(self, table_id: str, match_id: str, game: int, entries: list[str]) -> None:
        table = self.tables.get(table_id)
        if table is None:
            table = self.tables[table_id] = _Table(table_id, match_id, entries, game)
            self._send({"op": "table", "table": table.as_json()})
            return
        # The feed names each game before its first event, the last game's game_over having
        # emptied the events: a number that came with events held is never taken.
        newer = game > table.game and not table.events
        if newer or entries != table.entries:
            table.game = game if newer else table.game
            table.entries = entries
            self._send(table.meta())

    def event(self, table_id: str, event: dict[str, Any] | None) -> None:
        table = self.tables.get(table_id)
        if table is None:  # dropped from the page meanwhile
            return
        if event is None:
            self.ignored += 1
            self._send({"op": "ignored", "count": self.ignored})
            return
        table.apply(event)
        self._send({"op": "event", "id": table_id, "event": event})

    def ended(self, table_id: str, note: str) -> None:
        table = self.tables.get(table_id)
        if table is None:
            return
        table.done, table.note, table.ended_at = True, note, time.monotonic()
        self._send(table.meta())
        finished = sorted((t for t in self.tables.values() if t.done), key=lambda t: t.ended_at)
        for old in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self.tables[old.id]
            self._send({"op": "drop", "id": old.id})

    def set_feed(self, state: str, problem: str | None) -> None:
        feed = {"state": state, "problem": problem}
        if feed != self.feed:
            self.feed = feed
            self._send({"op": "feed", "feed": feed})

    def set_standings(
        self, standings: dict[str, Any] | None, progress: dict[str, Any] | None, problem: str | None
    ) -> None:
        if standings is not None:
            self.standings = standings
        if progress is not None:
            self.progress = progress
        self.problem = problem
        self._send(
            {
                "op": "standings",
                "standings": self.standings,
                "progress": self.progress,
                "problem": problem,
            }
        )

    def close(self, why: str) -> None:
        """The view stops: every browser is told, and its stream ends."""
        self.over = why
        for queue in list(self.clients):
            queue.put_nowait(None)
        self.clients.clear()


def _frame(kind: str, data: object) -> str:
    # json.dumps writes no raw line break, so the data is one ``data:`` line.
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n"


async def _stream(hub: _Hub, queue: asyncio.Queue[object], first: str) -> AsyncIterator[str]:
    """One browser's event stream: the snapshot (``first``, written out), then batches of
    changes, then ``over``."""
    try:
        yield "retry: 2000\n" + first
        if hub.over is not None:
            yield _frame("over", {"why": hub.over})
            return
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), HEARTBEAT_SECONDS)
            except TimeoutError:
                yield ": still here\n\n"
                continue
            if item is _RESET:
                return
            ops: list[object] = []
            closing = item is None
            if not closing:
                ops.append(item)
                await asyncio.sleep(BATCH_SECONDS)
                while not queue.empty():
                    more = queue.get_nowait()
                    if more is _RESET:
                        return
                    if more is None:
                        closing = True
                        break
                    ops.append(more)
            if ops:
                yield _frame("update", {"ops": ops})
            if closing:
                yield _frame("over", {"why": hub.over})
                return
    finally:
        hub.clients.discard(queue)


class _HostCheck:
    """Refuse requests for any other host name than the loopback ones, when bound there:
    a web page elsewhere cannot then reach the view by pointing a name at 127.0.0.1."""

    def __init__(self, app: ASGIApp, allowed: frozenset[str] | None) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.allowed is not None:
            header = dict(scope["headers"]).get(b"host", b"").decode("latin-1").lower()
            if _host_name(header) not in self.allowed:
                refused = PlainTextResponse(
                    "this live view answers to its own address only", status_code=421
                )
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _host_name(header: str) -> str:
    """The name part of a Host header: ``[::1]:80`` -> ``::1``, ``a:80`` -> ``a``."""
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if ":" in header else header


SNAPSHOT_MARK = "<!--snapshot-->"
"""Where the page's template takes the snapshot it is served with."""


def _app(hub: _Hub, page_html: str, allowed: frozenset[str] | None) -> ASGIApp:
    async def index(request: Request) -> Response:
        # The page comes with what it shows now: a reader opening it mid-run sees the
        # standings at once, not "waiting" until the event stream has caught up.
        data = json.dumps(hub.snapshot(), separators=(",", ":")).replace("</", "<\\/")
        shown = f'<script id="snapshot" type="application/json">{data}</script>'
        return HTMLResponse(page_html.replace(SNAPSHOT_MARK, shown, 1), headers=_HEADERS)

    async def state(request: Request) -> Response:
        return JSONResponse(hub.snapshot(), headers=_HEADERS)

    async def events(request: Request) -> Response:
        queue: asyncio.Queue[object] = asyncio.Queue()
        # Written out and registered with no await between: the browser misses no change,
        # and gets none twice.
        first = _frame("snapshot", hub.snapshot())
        if hub.over is None:
            hub.clients.add(queue)
        headers = {**_HEADERS, "X-Accel-Buffering": "no"}
        return StreamingResponse(
            _stream(hub, queue, first), media_type="text/event-stream", headers=headers
        )

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            return PlainTextResponse("no such file", status_code=404, headers=_HEADERS)
        kind = _TYPES[name[name.rindex(".") :]]
        return Response(asset_text(name), media_type=kind, headers=_HEADERS)

    routes = [
        Route("/", index),
        Route("/state", state),
        Route("/events", events),
        Route("/assets/{name}", asset),
    ]
    return _HostCheck(Starlette(routes=routes), allowed)


# -- feeding it ----------------------------------------------------------------------------

Post = Callable[..., bool]
"""Hand a call to the web loop: ``post(hub_method, *args)``; False once the view is gone."""


class _FeedFollower:
    """Hears the referee's public feeds in its own process (a
    :class:`referee.service.feeds.FeedListener`, on the referee's loop) and posts them to the page:
    the events spectators' ``Watch`` streams carry, without the gRPC hop."""

    def __init__(self, post: Post, hub: _Hub, public_names: bool) -> None:
        self._post = post
        self._hub = hub
        self._public_names = public_names
        self._games: dict[str, int] = {}
        self.stopped = False

    def _seen(self, feed: TableFeed) -> None:
        self._games[feed.table_id] = feed.game
        entries = list(feed.entries) if self._public_names else []
        self._post(self._hub.seen, feed.table_id, feed.match_id, feed.game, entries)

    def table(self, feed: TableFeed) -> None:
        if not self.stopped:
            self._seen(feed)

    def event(self, feed: TableFeed, event: pb.Event) -> None:
        if self.stopped:
            return
        if self._games.get(feed.table_id) != feed.game:
            self._seen(feed)
        self._post(self._hub.event, feed.table_id, event_json(event))

    def closed(self, feed: TableFeed) -> None:
        if not self.stopped:
            self._games.pop(feed.table_id, None)
            self._post(self._hub.ended, feed.table_id, "")


class _StandingsReader:
    """Reads the tournament database read-only, in a thread of its own (SQLite connections
    belong to their thread): the standings and progress whenever the game count changed,
    looking about once a second, less often if the standings take long to compute."""

    def __init__(self, post: Post, hub: _Hub, db: Path, total_games: int) -> None:
        self._post = post
        self._hub = hub
        self._db = db
        self._total = total_games
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="live-view-db", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Read once more (the last games are shown), then end."""
        self._stop.set()
        self._thread.join(30)

    def _read(self) -> None:
        hub = self._hub
        try:
            store = Store.open_for_reading(self._db)
        except StorageError as exc:
            self._post(hub.set_standings, None, None, str(exc))
            return
        with store:
            first: int | None = None
            began = time.monotonic()
            shown = counted = -1
            table: dict[str, Any] | None = None
            due = 0.0  # when the standings may be computed again
            while True:
                last = self._stop.is_set()
                try:
                    count = store.game_count()
                    if first is None:
                        first = count
                    now = time.monotonic()
                    if count != shown and (now >= due or last):
                        # The bootstrap runs in the referee's process: at most a twentieth of
                        # the time goes to it (a few seconds apart in a big tournament).
                        table = as_json(stored_standings(store, stored_facts(store)))
                        took = time.monotonic() - now
                        due = now + STANDINGS_SHARE * took
                        shown = counted = count
                        progress = self._progress(count, first, began, table)
                        if not self._post(hub.set_standings, table, progress, None):
                            return
                    elif count != counted and table is not None:
                        counted = count
                        progress = self._progress(count, first, began, table)
                        if not self._post(hub.set_standings, None, progress, None):
                            return
                except (StorageError, RatingsError) as exc:
                    if not self._post(hub.set_standings, None, None, str(exc)):
                        return
                if last:
                    return
                self._stop.wait(POLL_SECONDS)

    def _progress(
        self, count: int, first: int, began: float, table: Mapping[str, Any]
    ) -> dict[str, Any]:
        played = count - first
        elapsed = time.monotonic() - began
        left = max(0, self._total - count)
        eta = left * elapsed / played if played > 0 and left > 0 else None
        ranked = [e for e in table["entries"] if e["rank"] is not None]
        leaders = [
            {"name": e["name"], "elo": e["elo"], "score_percent": e["score_percent"]}
            for e in sorted(ranked, key=lambda e: e["rank"])[:3]
        ]
        return {
            "done": count,
            "total": self._total,
            "eta_seconds": None if eta is None else round(eta),
            "leaders": leaders,
        }


# -- the view ------------------------------------------------------------------------------


class LiveView:
    """The live view's web server, bound at once, started by :meth:`start`, fed by
    :meth:`follow` (the referee) and, given ``db``, the tournament database."""

    def __init__(
        self, address: WebAddress, *, db: Path | None = None, total_games: int = 0
    ) -> None:
        self.address = address
        self._sock = _bind(address)
        self._db = db
        self._total = total_games
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: uvicorn.Server | None = None
        self._hub: _Hub | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._follower: _FeedFollower | None = None
        self._reader: _StandingsReader | None = None
        self._failure: BaseException | None = None
        self._pending: list[tuple[Callable[..., None], tuple[object, ...]]] = []
        self._pending_lock = threading.Lock()
        self._flush_due = False

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1])

    @property
    def on_loopback(self) -> bool:
        """Whether only this machine can reach the page."""
        return _loopback(self.address.host)

    @property
    def url(self) -> str:
        """The page's address; a wildcard host is named by this host's name."""
        host = self.address.host
        if host in WILDCARDS:
            host = socket.getfqdn()
        return f"http://{_shown(host, self.port)}/"

    def start(self, heading: str, subtitle: str, *, public_names: bool) -> None:
        """Serve the page (``heading``, ``subtitle``) from a thread of its own, and return
        once it listens; LiveViewError if it cannot."""
        page = {
            "heading": heading,
            "subtitle": subtitle,
            "tournament": self._db is not None,
            "public_names": public_names,
        }
        hub = self._hub = _Hub(page)
        html = render(
            "live.html.j2",
            title=f"{heading}: live",
            crumbs=[(heading, None), ("live", None)],
            styles=["tavolo.css", "live.css"],
            scripts=["live.js"],
            assets="assets",
            heading=heading,
            subtitle=subtitle,
            tournament=self._db is not None,
        )
        host = self.address.host
        allowed = frozenset({"127.0.0.1", "localhost", "::1", host}) if _loopback(host) else None
        config = uvicorn.Config(
            _app(hub, html, allowed),
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            ws="none",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, name="live-view", daemon=True)
        self._thread.start()
        self._ready.wait(30)
        if not self._ready.is_set() or self._failure is not None:
            raise LiveViewError(f"--web: the live view could not start: {self._failure!r}")
        if self._db is not None:
            self._reader = _StandingsReader(self._post, hub, self._db, self._total)
            self._reader.start()

    def _serve(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:
            self._failure = exc
            raise
        finally:
            self._ready.set()

    async def _main(self) -> None:
        assert self._server is not None
        self._loop = asyncio.get_running_loop()
        serving = asyncio.ensure_future(self._server.serve(sockets=[self._sock]))
        while not self._server.started and not serving.done():
            await asyncio.sleep(0.01)
        self._ready.set()
        await serving

    def _post(self, method: Callable[..., None], *args: object) -> bool:
        """Run ``method(*args)`` on the web loop, in the order posted; False once the loop
        is gone. A burst of posts wakes the loop once (events come by the thousand)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return False
        with self._pending_lock:
            self._pending.append((method, args))
            if self._flush_due:
                return True
            self._flush_due = True
        try:
            # Later, not at once: events come a thousand a second, and each wake of the web
            # loop costs the referee's thread the GIL.
            loop.call_soon_threadsafe(loop.call_later, FLUSH_SECONDS, self._flush)
        except RuntimeError:  # closed between the check and the call: the view is gone
            return False
        return True

    def _flush(self) -> None:
        with self._pending_lock:
            calls, self._pending = self._pending, []
            self._flush_due = False
        for method, args in calls:
            method(*args)

    def follow(self, referee: Referee) -> None:
        """Follow every table of ``referee``, with the entries' names if it shows them to
        spectators; call it on the referee's event loop, once, after :meth:`start`."""
        if self._hub is None or self._follower is not None:
            raise RuntimeError("follow() comes once, after start()")
        self._follower = _FeedFollower(self._post, self._hub, referee.public_names)
        self._post(self._hub.set_feed, "live", None)
        referee.listen(self._follower)

    def stop(self, why: str = "the run has ended") -> None:
        """Stop feeding, show the last standings, tell every browser ``why``, and stop
        serving; nothing of the view is left running."""
        if self._follower is not None:
            # The referee's loop may still publish: from now on the follower posts nothing.
            self._follower.stopped = True
        if self._reader is not None:
            self._reader.stop()
        hub, server, thread = self._hub, self._server, self._thread
        if hub is not None and server is not None and thread is not None:
            self._post(hub.close, why)
            # Uvicorn waits (up to its graceful timeout) for the streams, which now end.
            server.should_exit = True
            thread.join(15)
        self._sock.close()
