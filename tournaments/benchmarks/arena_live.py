"""``tavolo bench arena-live``: a real ``tavolo arena serve`` with many ready submissions.

Two figures:

- **sustained games per hour**: the ladder's games over a window of ``minutes``, after a
  warm-up, with ``submissions`` ready submissions of the built-in bots (half ``random``,
  half ``heuristic``) playing, read from the arena's own leaderboard API;
- **upload to first rating**: new submissions uploaded through the HTTP API one after
  another while that ladder plays; for each, the seconds until it is on the leaderboard
  with an Elo (its validation, then its first meeting, included).

The submissions are stored ``ready`` before the arena starts, as a running arena's would
be; the uploads go the whole way (received, validated, rated).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tournaments.arena.archives import ArchiveLimits, pack
from tournaments.arena.store import ArenaStore, State
from tournaments.benchmarks.round_trips import BenchError
from tournaments.benchmarks.shards import SERVE_COMMAND

WARM_UP_SECONDS = 30.0
RATING_TIMEOUT_SECONDS = 900.0
"""An upload not rated after this long fails the benchmark."""


@dataclass(frozen=True)
class LiveFigures:
    """What one run of the live arena gave."""

    submissions: int
    parallel: int
    deals: int | None
    seconds: float
    """The measured window."""
    games: int
    meetings: int
    upload_to_rating: tuple[float, ...]
    """Seconds from each upload to its first rating, in order."""

    @property
    def games_per_hour(self) -> float:
        return self.games / self.seconds * 3600

    @property
    def median_upload_to_rating(self) -> float:
        return statistics.median(self.upload_to_rating) if self.upload_to_rating else 0.0


def _arena_file(folder: Path, deals: int | None, active: int) -> Path:
    game = f"deals = {deals}\n" if deals is not None else ""
    path = folder / "arena.toml"
    path.write_text(
        f'name = "bench"\n[game]\npreset = "tressette"\n{game}'
        f"[match]\ndeadline_ms = 2000\n[submissions]\nactive = {active}\nper_day = 1000\n",
        encoding="utf-8",
    )
    return path


def _bot(folder: Path, module: str) -> bytes:
    folder.mkdir()
    (folder / "bot.toml").write_text(
        f'name = "bot"\ncommand = ["{sys.executable}", "-m", "tavolo_bot.bots.{module}"]\n',
        encoding="utf-8",
    )
    # A file of its own, so that no two submissions share a digest.
    (folder / "NAME").write_text(folder.name, encoding="utf-8")
    return pack(folder)


def bench_live(
    submissions: int,
    minutes: float,
    uploads: int,
    parallel: int,
    deals: int | None,
    warm_up: float = WARM_UP_SECONDS,
) -> LiveFigures:
    """Serve an arena of ``submissions`` ready bots for ``minutes`` after ``warm_up``
    seconds, then upload ``uploads`` more through the API, one at a time, each rated
    before the next."""
    with tempfile.TemporaryDirectory(prefix="tavolo-bench-arena-") as tmp:
        folder = Path(tmp)
        arena = _arena_file(folder, deals, active=1)
        db = folder / "arena.db"
        store = ArenaStore(db)
        tokens = []
        try:
            for k in range(submissions):
                entrant, _ = store.invite(f"e{k:02d}")
                archive = _bot(folder / f"bot{k:02d}", ("random", "heuristic")[k % 2])
                submission, _ = store.submit(entrant, archive, limits=ArchiveLimits(), per_day=9)
                store.set_state(submission.id, State.READY)
            for k in range(uploads):
                tokens.append(store.invite(f"late{k:02d}")[1])
        finally:
            store.close()
        env = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}
        serve = subprocess.Popen(
            [sys.executable, "-c", SERVE_COMMAND, "arena", "serve", str(arena), "--db", str(db),
             "--listen", "127.0.0.1:0", "--parallel", str(parallel)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=folder,
        )  # fmt: skip
        try:
            assert serve.stdout is not None
            line = serve.stdout.readline()
            if not line.startswith("arena "):
                raise BenchError(f"tavolo arena serve did not start: {serve.communicate()[1]}")
            http = _Api(line.split()[-1])
            time.sleep(warm_up)
            return _measure(http, serve, folder, submissions, minutes, tokens, parallel, deals)
        finally:
            serve.terminate()
            serve.wait(60)


class _Api:
    """The arena's API, through the standard library (the benchmark needs no HTTP client)."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    def call(
        self, path: str, token: str | None = None, body: bytes | None = None
    ) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        request = urllib.request.Request(self.url + path, data=body, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")


def _counts(http: _Api) -> tuple[int, set[int]]:
    _, board = http.call("/api/v1/leaderboard")
    return int(board["games"]), {int(r["submission"]) for r in board["submissions"]}


def _measure(
    http: _Api,
    serve: subprocess.Popen[str],
    folder: Path,
    submissions: int,
    minutes: float,
    tokens: list[str],
    parallel: int,
    deals: int | None,
) -> LiveFigures:
    games0, _ = _counts(http)
    start = time.monotonic()
    time.sleep(minutes * 60)
    games1, _ = _counts(http)
    seconds = time.monotonic() - start
    if serve.poll() is not None:
        raise BenchError(f"the arena stopped: {serve.communicate()[1]}")
    meetings = (games1 - games0) // 2
    waits = []
    for k, token in enumerate(tokens):
        archive = _bot(folder / f"late{k:02d}", "heuristic")
        sent = time.monotonic()
        status, answer = http.call("/api/v1/submissions", token, archive)
        if status != 201:
            raise BenchError(f"upload {k + 1}: {status} {answer}")
        number = int(answer["id"])
        while number not in _counts(http)[1]:
            _, state = http.call(f"/api/v1/submissions/{number}", token)
            if state["state"] == "failed":
                raise BenchError(f"upload {k + 1} failed: {state['reason']}")
            if time.monotonic() - sent > RATING_TIMEOUT_SECONDS:
                raise BenchError(f"upload {k + 1} was not rated in {RATING_TIMEOUT_SECONDS:g} s")
            time.sleep(0.25)
        waits.append(time.monotonic() - sent)
    return LiveFigures(
        submissions, parallel, deals, seconds, games1 - games0, meetings, tuple(waits)
    )
