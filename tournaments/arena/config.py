"""The arena file (TOML): the game, its time controls, the season and the submission rules.

``docs/arena.md`` documents every key. :func:`load_arena` refuses anything it does not
understand with a :class:`~tournaments.config.ConfigError` naming the file, line and key.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.engine.deal_book import DealBook
from referee.engine.rules import Rules
from referee.entries import BUILT_IN_BOTS, EntryError, load_manifest
from referee.match.config import Limits
from tournaments.arena.archives import ArchiveLimits
from tournaments.arena.builds import BuildLimits
from tournaments.config import (
    ConfigError,
    TomlSource,
    check_keys,
    game_settings,
    match_limits,
    read_toml,
    table_of,
    value_of,
)

_TOP_KEYS = {
    "name", "game", "match", "season", "submissions", "build", "signup", "api", "validation",
    "remote",
}  # fmt: skip
_REMOTE_KEYS = {"allowed", "connect_hours"}
_VALIDATION_KEYS = {"opponent", "sets"}
_BUILD_KEYS = {
    "seconds", "cpu_seconds", "memory_mb", "disk_mb", "processes", "output_mb", "toolchains",
}  # fmt: skip
_SEASON_KEYS = {"opens", "closes"}
_SUBMISSION_KEYS = {
    "per_day", "active", "archive_bytes", "total_bytes", "file_bytes", "members",
}  # fmt: skip
_SIGNUP_KEYS = {"open"}
_API_KEYS = {"requests_per_minute"}
_MATCH_KEYS = {
    "deadline_ms", "time_bank_ms", "max_attempts", "on_fault", "connect_timeout", "grace",
    "restart_crashed", "tempo", "ponder",
}  # fmt: skip


@dataclass(frozen=True)
class SubmissionRules:
    """How often, and how much, an entrant may submit."""

    per_day: int = 5
    """Submissions an entrant may make in one UTC day."""
    active: int = 2
    """An entrant's submissions that play on the ladder at once; a newer one retires the
    oldest (which keeps its rating and its page)."""
    archive: ArchiveLimits = field(default_factory=ArchiveLimits)


@dataclass(frozen=True)
class Validation:
    """The validation match every submission plays before it is rated."""

    opponent: str = "random"
    """Its opponent, as a tournament's ``bot`` names one: a built-in bot, or the path of
    the organiser's bot manifest."""
    sets: int = 1
    """Its duplicate sets (each a game per seat rotation)."""

    @property
    def label(self) -> str:
        """The opponent as a log names it: a built-in bot's name, or its manifest's file."""
        return self.opponent if self.opponent in BUILT_IN_BOTS else Path(self.opponent).name


@dataclass(frozen=True)
class RemoteRules:
    """Bots that entrants run on their own machines, connecting with a key of their
    submission's (docs/arena.md, "Remote bots")."""

    allowed: bool = False
    """Whether entrants may make remote submissions. Off unless the organiser says so: a
    remote bot is not confined, and may remember a duplicate set's deals from one game to
    the next."""
    connect_hours: float = 24.0
    """How long a remote submission waits for its bot to connect before it fails."""


@dataclass(frozen=True)
class ArenaConfig:
    """An arena's settings, as its file gives them."""

    name: str
    preset: str
    """The preset the rules start from (what conformance checks)."""
    rules: Rules
    deals: int | None
    """Deals a game (None: to the target)."""
    book: DealBook | None
    limits: Limits
    """Each decision's time and the fault policy."""
    opens: dt.datetime | None
    closes: dt.datetime | None
    """The season: submissions are taken from ``opens`` until ``closes`` (UTC)."""
    submissions: SubmissionRules
    build: BuildLimits
    toolchains: tuple[str, ...]
    """Host folders a build may read besides the system's (e.g. a Rust or Maven home)."""
    tables: dict[str, dict[str, Any]]
    """The file's ``[game]`` and ``[match]`` tables as written: the final's tournament file
    takes them over."""
    signup_open: bool
    """Whether anyone with an invitation code may sign up (else the organiser invites)."""
    requests_per_minute: int
    """What one client (address, or token) may ask of the API in a minute."""
    validation: Validation = Validation()
    remote: RemoteRules = RemoteRules()

    def taking_submissions(self, now: dt.datetime) -> bool:
        """Whether the season takes submissions at ``now``."""
        return (self.opens is None or now >= self.opens) and (
            self.closes is None or now < self.closes
        )


def load_arena(path: Path) -> ArenaConfig:
    """Read and check an arena file."""
    text, data = read_toml(path, "the arena file")
    src = TomlSource(path, text)
    check_keys(src, data, _TOP_KEYS, "")
    name = value_of(src, data, "", "name", str, path.stem)
    if not name.strip():
        raise src.error("must not be empty", "", "name")
    rules, deals, book = game_settings(src, data)
    match = table_of(src, data, "match")
    check_keys(src, match, _MATCH_KEYS, "match")
    limits = match_limits(src, match)
    season = table_of(src, data, "season")
    check_keys(src, season, _SEASON_KEYS, "season")
    opens, closes = _moment(src, season, "opens"), _moment(src, season, "closes")
    if opens is not None and closes is not None and closes <= opens:
        raise src.error("must come after season.opens", "season", "closes")
    return ArenaConfig(
        name=name,
        preset=str(table_of(src, data, "game").get("preset", "tressette")),
        rules=rules,
        deals=deals,
        book=book,
        limits=limits,
        opens=opens,
        closes=closes,
        submissions=_submissions(src, table_of(src, data, "submissions")),
        build=_build(src, table_of(src, data, "build")),
        toolchains=_toolchains(src, table_of(src, data, "build")),
        tables={"game": table_of(src, data, "game"), "match": match},
        signup_open=_signup(src, table_of(src, data, "signup")),
        requests_per_minute=_api(src, table_of(src, data, "api")),
        validation=_validation(src, table_of(src, data, "validation"), path.parent),
        remote=_remote(src, table_of(src, data, "remote")),
    )


def _moment(src: TomlSource, season: dict[str, Any], key: str) -> dt.datetime | None:
    value = season.get(key)
    if value is None:
        return None
    if not isinstance(value, dt.datetime) or value.tzinfo is None:
        raise src.error(
            f"must be a date and time with its offset, e.g. 2027-01-10T12:00:00Z, got {value!r}",
            "season",
            key,
        )
    return value.astimezone(dt.UTC)


def _whole(src: TomlSource, table: dict[str, Any], where: str, key: str, default: int) -> int:
    value: int = value_of(src, table, where, key, int, default)
    if value < 1:
        raise src.error("must be 1 or more", where, key)
    return value


def _submissions(src: TomlSource, table: dict[str, Any]) -> SubmissionRules:
    check_keys(src, table, _SUBMISSION_KEYS, "submissions")
    base = SubmissionRules()
    limits = base.archive
    return SubmissionRules(
        per_day=_whole(src, table, "submissions", "per_day", base.per_day),
        active=_whole(src, table, "submissions", "active", base.active),
        archive=ArchiveLimits(
            archive_bytes=_whole(src, table, "submissions", "archive_bytes", limits.archive_bytes),
            total_bytes=_whole(src, table, "submissions", "total_bytes", limits.total_bytes),
            file_bytes=_whole(src, table, "submissions", "file_bytes", limits.file_bytes),
            members=_whole(src, table, "submissions", "members", limits.members),
        ),
    )


def _build(src: TomlSource, table: dict[str, Any]) -> BuildLimits:
    check_keys(src, table, _BUILD_KEYS, "build")
    base = BuildLimits()
    seconds = value_of(src, table, "build", "seconds", float, base.seconds)
    if seconds <= 0:
        raise src.error("must be seconds above 0", "build", "seconds")
    return BuildLimits(
        seconds=seconds,
        cpu_seconds=_whole(src, table, "build", "cpu_seconds", base.cpu_seconds),
        memory_mb=_whole(src, table, "build", "memory_mb", base.memory_mb),
        disk_mb=_whole(src, table, "build", "disk_mb", base.disk_mb),
        processes=_whole(src, table, "build", "processes", base.processes),
        output_mb=_whole(src, table, "build", "output_mb", base.output_mb),
    )


def _toolchains(src: TomlSource, table: dict[str, Any]) -> tuple[str, ...]:
    value = table.get("toolchains", [])
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise src.error("must be a list of folders", "build", "toolchains")
    for path in value:
        if not Path(path).is_absolute() or not Path(path).is_dir():
            raise src.error(f"{path!r} is not an absolute path of a folder", "build", "toolchains")
    return tuple(value)


def _signup(src: TomlSource, table: dict[str, Any]) -> bool:
    check_keys(src, table, _SIGNUP_KEYS, "signup")
    is_open: bool = value_of(src, table, "signup", "open", bool, False)
    return is_open


def _validation(src: TomlSource, table: dict[str, Any], folder: Path) -> Validation:
    check_keys(src, table, _VALIDATION_KEYS, "validation")
    opponent = value_of(src, table, "validation", "opponent", str, "random")
    if opponent not in BUILT_IN_BOTS:
        manifest = Path(opponent) if Path(opponent).is_absolute() else folder / opponent
        try:
            load_manifest(manifest)
        except EntryError as exc:
            raise src.error(
                f"must be a built-in bot ({', '.join(BUILT_IN_BOTS)}) or a bot manifest: {exc}",
                "validation", "opponent",
            ) from None  # fmt: skip
        opponent = str(manifest.resolve())
    return Validation(opponent, _whole(src, table, "validation", "sets", 1))


def _remote(src: TomlSource, table: dict[str, Any]) -> RemoteRules:
    check_keys(src, table, _REMOTE_KEYS, "remote")
    allowed: bool = value_of(src, table, "remote", "allowed", bool, False)
    hours = value_of(src, table, "remote", "connect_hours", float, RemoteRules.connect_hours)
    if not hours > 0:
        raise src.error("must be hours above 0", "remote", "connect_hours")
    return RemoteRules(allowed, hours)


def _api(src: TomlSource, table: dict[str, Any]) -> int:
    check_keys(src, table, _API_KEYS, "api")
    return _whole(src, table, "api", "requests_per_minute", 120)


__all__ = [
    "ArenaConfig", "ConfigError", "RemoteRules", "SubmissionRules", "Validation", "load_arena",
]  # fmt: skip
