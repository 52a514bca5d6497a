"""The end of an arena's season, through the real CLI: submissions frozen, a submission
disabled, finalists chosen (or the best rated), and the final played with the tournament
machinery into a report."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from referee.sandbox.probe import sandbox_problem
from tests.test_arena_ladder import ARENA, ready
from tournaments.arena.api import leaderboard
from tournaments.arena.config import load_arena
from tournaments.arena.final import finalists
from tournaments.arena.ladder_play import LadderRunner
from tournaments.arena.store import ArenaError, ArenaStore, State

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=str(sandbox_problem()))
TAVOLO = Path(sys.executable).with_name("tavolo")
ENV = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}


def tavolo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TAVOLO), *args], capture_output=True, text=True, timeout=600, env=ENV
    )


def test_a_season_ends_in_a_final_between_the_chosen_and_the_best(tmp_path: Path) -> None:
    (tmp_path / "arena.toml").write_text(ARENA, encoding="utf-8")
    config = load_arena(tmp_path / "arena.toml")
    db = tmp_path / "arena.db"
    store = ArenaStore(db)
    names = ("alice", "bob", "carol", "dave", "erin")
    entrants = {name: store.invite(name)[0] for name in names}
    a1 = ready(store, entrants["alice"], tmp_path / "a1", "heuristic")
    b = ready(store, entrants["bob"], tmp_path / "b", "random")
    c = ready(store, entrants["carol"], tmp_path / "c", "random")
    d = ready(store, entrants["dave"], tmp_path / "d", "random")
    e = ready(store, entrants["erin"], tmp_path / "e", "heuristic")
    runner = LadderRunner(store, config)
    for _ in range(5):
        asyncio.run(runner.play_next())
    # Alice's newer submission retires her first, which she chooses for the final anyway.
    a2 = ready(store, entrants["alice"], tmp_path / "a2", "random")
    store.refresh_active(config.submissions.active)
    assert store.submission(a1).state is State.RETIRED
    assert store.choose(entrants["alice"], a1).id == a1
    with pytest.raises(ArenaError, match=f"no submission {a1} of yours"):
        store.choose(entrants["bob"], a1)
    store.close()

    # Dave's bot is taken off: it leaves the ladder, the leaderboard and the final.
    off = tavolo("arena", "disable", str(d), "--db", str(db), "--reason", "copied bob's bot")
    assert off.returncode == 0 and off.stdout == (
        f"submission {d} of dave: disabled (copied bob's bot)\n"
    )
    store = ArenaStore(db)
    assert d not in {r["submission"] for r in leaderboard(store)["submissions"]}
    with pytest.raises(ArenaError, match=f"submission {d} is disabled"):
        store.choose(entrants["dave"], d)
    # Alice's newer one is not hers for the final: she chose the older.
    assert a2 != a1 and finalists(store) == {"alice": a1, "bob": b, "carol": c, "erin": e}
    store.close()

    out = tmp_path / "final-report"
    early = tavolo("arena", "final", str(tmp_path / "arena.toml"), "--db", str(db),
                   "--games", "2", "--out", str(out))  # fmt: skip
    assert early.returncode == 2
    assert early.stderr == "error: submissions are open: close them first (tavolo arena freeze)\n"

    frozen = tavolo("arena", "freeze", "--db", str(db))
    assert frozen.returncode == 0 and frozen.stdout.startswith("submissions closed at ")
    again = tavolo("arena", "freeze", "--db", str(db))
    assert again.stdout.startswith("submissions were closed already at ")

    done = tavolo("arena", "final", str(tmp_path / "arena.toml"), "--db", str(db),
                  "--games", "2", "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    played = tomllib.loads(db.with_name("arena.db.final.toml").read_text(encoding="utf-8"))
    # Four finalists: a round robin of six matches.
    assert sorted(x["name"] for x in played["entry"]) == ["alice", "bob", "carol", "erin"]
    store = ArenaStore(db)
    chosen = {x["name"]: x["bot"] for x in played["entry"]}
    assert chosen["alice"] == str(store.play_folder(store.submission(a1)) / "bot.toml")
    assert played["match"]["games"] == 2 and played["game"]["deals"] == 1
    assert (out / "index.html").is_file()
    # The tournament's own tables, from its database.
    table = tavolo("tournament", "table", "--db", str(db.with_name("arena.db.final.db")))
    assert table.returncode == 0
    assert all(n in table.stdout for n in ("alice", "bob", "carol", "erin"))
    assert "dave" not in table.stdout
