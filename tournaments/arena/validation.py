"""A built submission checked before it is ever rated: ``tavolo conformance`` against it,
then a validation match against the arena's validation opponent (``[validation]``: the
built-in random bot unless the arena names another), both in the sandbox.

It passes if every conformance check of the arena's game passes and it plays the whole
match without a fault of its own (no timeout, illegal action or crash); it need not win. A
remote bot (its entrant runs it, connected with its submission's key) plays the validation
match alone.
"""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass
from pathlib import Path

from referee.conformance import run_conformance
from referee.entrant_keys import EntrantKeys
from referee.entries import Entry, EntryError, load_manifest, parse_entry
from referee.match.config import MatchConfig
from referee.sandbox.bwrap import SandboxMode
from referee.service.server import Referee
from tournaments.arena.config import ArenaConfig
from tournaments.ladder import match_entries, play_matches


@dataclass(frozen=True)
class Validated:
    """A validation's outcome."""

    ok: bool
    reason: str
    """Why it failed; empty if it did not."""
    log: str
    """What each step found, and the bot's stderr where it failed."""


async def validate(folder: Path, config: ArenaConfig, seed: str) -> Validated:
    """Check the bot in ``folder`` (its ``bot.toml`` at the top) for the arena's game."""
    try:
        entry = load_manifest(folder / "bot.toml")
    except EntryError as exc:
        return Validated(False, str(exc).replace(str(folder) + "/", ""), "")
    # The arena decides the confinement, whatever the manifest asks.
    entry = dataclasses.replace(entry, sandbox=None)
    log: list[str] = []
    report = await run_conformance(
        entry,
        sandbox=SandboxMode.BWRAP,
        games=(config.preset,),
        deadline_ms=max(config.limits.deadline_ms, 1000),
    )
    for check in report.checks:
        mark = {True: "pass", False: "FAIL", None: "not reached"}[check.ok]
        log.append(f"conformance: {check.name}: {mark} {check.detail}".rstrip())
    if not report.passed:
        failed = next(c for c in report.checks if c.ok is not True)
        if report.stderr_tail:
            log += ["the bot's stderr ends:", report.stderr_tail]
        return Validated(
            False,
            f"conformance failed: {failed.name}: {failed.detail}".rstrip(": "),
            "\n".join(log),
        )
    return await _validation_match(entry, config, seed, log)


async def validate_remote(
    label: str, config: ArenaConfig, seed: str, referee: Referee, keys: EntrantKeys
) -> Validated:
    """Check the remote bot of the submission named ``label``, connected to ``referee``
    with its key: the validation match alone (conformance starts a bot, which the arena
    cannot do to one on another machine)."""
    log = ["conformance: not run: the bot is remote (its entrant runs it)"]
    entry = dataclasses.replace(parse_entry("remote"), name=label)
    return await _validation_match(entry, config, seed, log, referee=referee, keys=keys)


async def _validation_match(
    entry: Entry,
    config: ArenaConfig,
    seed: str,
    log: list[str],
    *,
    referee: Referee | None = None,
    keys: EntrantKeys | None = None,
) -> Validated:
    """The validation match of ``entry`` against the arena's opponent, after ``log``."""
    rival = parse_entry(config.validation.opponent)
    # The opponent's name, whatever its manifest says: never the submission's.
    rival = dataclasses.replace(rival, name="validation-opponent", sandbox=None)
    match = MatchConfig(
        config.rules,
        seed,
        match_entries(config.rules, entry, rival),
        config.deals,
        config.validation.sets,
        config.limits,
        sandbox=SandboxMode.BWRAP,
        allow_unconfined=False,
    )
    with tempfile.TemporaryDirectory(prefix="tavolo-validation-") as scratch:
        [result] = await play_matches([match], Path(scratch), referee=referee, keys=keys)
    stats = result.stats[0]
    against = config.validation.label
    log.append(
        f"validation match against {against}: {len(result.outcomes)} games; "
        f"timeouts {stats.timeouts}, illegal actions {stats.illegal}, crashes {stats.crashes}"
    )
    mine = [detail for label, kind, detail in result.incidents if label.startswith(entry.name)]
    log += [f"  {line}" for line in mine]
    if stats.timeouts or stats.illegal or stats.crashes:
        return Validated(
            False,
            f"the validation match against {against} had faults of the bot's: "
            f"{stats.timeouts} timeouts, {stats.illegal} illegal actions, "
            f"{stats.crashes} crashes",
            "\n".join(log),
        )
    return Validated(True, "", "\n".join(log))
