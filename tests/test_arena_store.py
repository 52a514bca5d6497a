"""The arena's store shared by threads, as ``arena serve`` shares it (the API's threads and
the event loop): transactions and statements from many threads at once lose nothing and
never nest."""

from __future__ import annotations

import threading
from pathlib import Path

from referee.engine.game_base import Outcome, Termination
from referee.match.results import GameReport
from tournaments.arena.archives import ArchiveLimits, pack
from tournaments.arena.store import ArenaStore


def test_threads_sign_up_while_meetings_are_kept(tmp_path: Path) -> None:
    store = ArenaStore(tmp_path / "arena.db")
    alice, _ = store.invite("alice")
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "b"\ncommand = ["true"]\n')
    first, _ = store.submit(alice, pack(bot), limits=ArchiveLimits(), per_day=9)
    (bot / "x").write_text("2")
    second, _ = store.submit(alice, pack(bot), limits=ArchiveLimits(), per_day=9)
    code = store.new_invitation(200)
    outcome = Outcome(Termination.TARGET_REACHED, (21, 3), 2, (0, 1))
    reports = [GameReport(g, 1, (0, 1), outcome, None, (), ("{}",)) for g in (1, 2)]
    problems: list[BaseException] = []

    def sign_up(k: int) -> None:
        try:
            for i in range(20):
                store.sign_up(f"p{k}-{i}", code)
        except BaseException as exc:  # the test reports it below
            problems.append(exc)

    def meetings() -> None:
        try:
            for _ in range(40):
                meeting = store.ladder.start(first.id, second.id, "s", "2026-12-05T00:00:00")
                store.ladder.finish(meeting, reports)
        except BaseException as exc:
            problems.append(exc)

    threads = [threading.Thread(target=sign_up, args=(k,)) for k in range(5)]
    threads += [threading.Thread(target=meetings) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert problems == []
    assert len(store.entrants()) == 1 + 5 * 20
    assert store.ladder.meetings_done() == 80 and len(store.ladder.results()) == 160
    # The invitation counted every use: 200 - 100 left, so 100 more may sign up.
    assert store.sign_up("last", code)[0].name == "last"
