"""The tournament file (TOML): entries, game and rules, format, match settings, ratings.

``docs/tournaments.md`` documents every key. :func:`load_config` refuses anything it does
not understand with a :class:`ConfigError` that names the file and the line or key.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from referee.deal_book_files import read_book
from referee.engine.deal_book import BookError, DealBook
from referee.engine.deals import SeedError, check_seed
from referee.engine.errors import RulesError
from referee.engine.registry import preset
from referee.engine.rules import Rules
from referee.entries import Entry, EntryError, load_manifest, parse_entry, program_hashes
from referee.match.config import TEMPO_FREE, Limits, book_problem, parse_tempo
from referee.match.faults import FaultPolicy
from referee.match.table import rotations
from referee.sandbox.bwrap import SandboxMode


class ConfigError(ValueError):
    """A tournament file that cannot be run; the message says where (file:line, key)."""


class Format(StrEnum):
    """How entries are paired."""

    ROUND_ROBIN = "round-robin"
    """Every group of entries that fills a table meets once."""
    DOUBLE_ROUND_ROBIN = "double-round-robin"
    """Every group meets twice, seated the other way round the second time."""
    GAUNTLET = "gauntlet"
    """One entry, the candidate, against the field."""
    SWISS = "swiss"
    """``rounds`` rounds, each pairing entries with equal scores that have not met."""


@dataclass(frozen=True)
class EntrySpec:
    """One entry of the tournament."""

    name: str
    """Unique in the tournament; the name in every table."""
    bot: str
    """As written in the file: a built-in name, ``remote``, ``cmd:...``, ``py:...`` or a
    manifest path."""
    entry: Entry
    programs: tuple[tuple[str, str], ...] = ()
    """(path, SHA-256) of each file that makes what it runs (:func:`program_hashes`)."""
    key_sha256: str | None = None
    """A remote entry's key, as its SHA-256 in hex, when the entrant has one already (an
    arena's final); None: the run makes a key."""


@dataclass(frozen=True)
class RatingSettings:
    """How tables rate the entries."""

    anchor: str | None = None
    """An entry held at ``elo``; None holds the pool mean there."""
    elo: float = 1500.0
    prior_draws: float = 1.0
    """Virtual draws added to every pair that met: keeps a clean sweep finite."""
    bootstrap: int = 1000
    """Bootstrap replicates for the intervals and LOS."""
    seed: int = 0
    """Seed of the bootstrap's resampling."""


@dataclass(frozen=True)
class TournamentConfig:
    """Everything a tournament is played from."""

    path: Path
    name: str
    seed: str
    format: Format
    rules: Rules
    entries: tuple[EntrySpec, ...]
    games: int
    """Games per match."""
    duplicate: bool = True
    """Each duplicate set replays its seeded deals once per rotation of the sides."""
    seed_given: bool = True
    """Whether the file names ``seed``; without one, each database's run makes a strong
    random seed (:func:`tournaments.runner.settle_seed`), never one from the name."""
    same_deals_per_round: bool = False
    """``[match] same_deals_per_round``: every table of a round deals the same cards (a
    colluder at one table learns another's hands); by default each match has its own."""
    deals: int | None = None
    """Deals per game; None plays every game to the target."""
    rounds: int | None = None
    """Swiss only."""
    candidate: str | None = None
    """Gauntlet only."""
    limits: Limits = field(default_factory=Limits)
    concurrency: int | None = None
    """Matches at once; None: one per core."""
    ratings: RatingSettings = field(default_factory=RatingSettings)
    sandbox: SandboxMode = SandboxMode.BWRAP
    """How every local entry's bot processes are confined."""
    book: DealBook | None = None
    """``[game] book``: the deal book every match deals from instead of seeded deals."""
    text: str = ""
    """The file as read."""

    @property
    def sets(self) -> int:
        """Duplicate sets per match (with ``duplicate`` off: groups of one game per side)."""
        return self.games // rotations(self.rules)

    def fingerprint(self) -> str:
        """A hash of the settings that decide results; a database belongs to one fingerprint.

        Concurrency and rating settings are left out: they change no game. What each entry
        runs is :meth:`programs`, compared apart.
        """
        data = {
            "name": self.name,
            # A seed the run made is the database's, not the file's.
            "seed": self.seed if self.seed_given else None,
            "format": self.format.value,
            "rounds": self.rounds,
            "candidate": self.candidate,
            "rules": self.rules.to_dict(),
            "deals": self.deals,
            "games": self.games,
            "duplicate": self.duplicate,
            "limits": {
                "deadline_ms": self.limits.deadline_ms,
                "time_bank_ms": self.limits.time_bank_ms,
                "max_attempts": self.limits.max_attempts,
                "on_fault": self.limits.on_fault.value,
                # Only when off: a database made before the key existed keeps its fingerprint.
                **({} if self.limits.restart_crashed else {"restart_crashed": False}),
                # Only when fixed: it changes no card, but it is a rule of the event.
                **({"tempo_ms": self.limits.tempo_ms} if self.limits.tempo_ms else {}),
                **({"ponder": True} if self.limits.ponder else {}),
            },
            "entries": [[e.name, e.bot] for e in self.entries],
            # Own deals per match decide other cards than a database of round seeds holds.
            **({} if self.same_deals_per_round else {"match_seeds": "own"}),
            # Only with a book: a database made before books existed keeps its fingerprint.
            **({"book": self.book.sha256} if self.book is not None else {}),
        }
        text = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def programs(self) -> dict[str, dict[str, str]]:
        """What each entry runs, as read with the file: by entry, each file's SHA-256.

        The fingerprint's other half, kept apart from it so that a database made before it
        existed keeps its fingerprint, and so that a changed bot can be named.
        """
        return {e.name: dict(e.programs) for e in self.entries}


_TOP_KEYS = {
    "name", "seed", "format", "rounds", "candidate", "concurrency", "allow_paths",
    "game", "match", "ratings", "entry",
}  # fmt: skip
_GAME_KEYS = {"preset", "deals", "rules", "book"}
_MATCH_KEYS = {
    "games", "duplicate", "deadline_ms", "time_bank_ms", "max_attempts", "on_fault",
    "connect_timeout", "grace", "restart_crashed", "sandbox", "same_deals_per_round", "tempo",
    "ponder",
}  # fmt: skip
_RATING_KEYS = {"anchor", "elo", "prior_draws", "bootstrap", "seed"}
_ENTRY_KEYS = {"name", "bot", "key_sha256"}
_SHA256 = re.compile(r"[0-9a-f]{64}")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")


class TomlSource:
    """The file's text, to find the line of a key for error messages."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def line_of(self, table: str, key: str | None = None, index: int | None = None) -> int | None:
        """The line of ``key`` in ``[table]`` (``[[table]]`` number ``index``), or the header's."""
        current, count = "", -1
        found_header: int | None = None if table else 0
        for number, raw in enumerate(self.lines, 1):
            line = raw.strip()
            header = re.match(r"^\[\[?\s*([^\]]+?)\s*\]\]?", line)
            if header:
                current = header.group(1)
                if line.startswith("[[") and current == table:
                    count += 1
                if current == table and (index is None or count == index):
                    found_header = number
                continue
            in_table = current == table and (index is None or count == index)
            if key is not None and in_table:
                bare = line.split("=", 1)[0].strip().strip("\"'")
                if "=" in line and bare == key:
                    return number
        return found_header if found_header else None

    def error(
        self, message: str, table: str = "", key: str | None = None, index: int | None = None
    ) -> ConfigError:
        line = self.line_of(table, key, index)
        where = f"{self.path}:{line}" if line else str(self.path)
        name = ".".join(p for p in (table, key) if p)
        if index is not None:
            name = f"{table}[{index + 1}]" + (f".{key}" if key else "")
        return ConfigError(f"{where}: " + (f"key {name!r}: " if name else "") + message)


def load_config(path: Path) -> TournamentConfig:
    """Read and check a tournament file."""
    text, data = read_toml(path, "the tournament file")
    return _parse(path, text, data)


def read_toml(path: Path, what: str) -> tuple[str, dict[str, Any]]:
    """The text and the data of the TOML file ``path`` (``what`` names it in errors), or a
    ConfigError with the file and the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read {what}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not TOML: the file is not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib says "... (at line N, column M)": put the line where every error puts it.
        match = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        if match:
            what = str(exc)[: match.start()].strip()
            raise ConfigError(
                f"{path}:{match.group(1)}: not TOML: {what} (column {match.group(2)})"
            ) from None
        raise ConfigError(f"{path}: not TOML: {exc}") from None
    return text, data


def _parse(path: Path, text: str, data: dict[str, Any]) -> TournamentConfig:
    src = TomlSource(path, text)
    check_keys(src, data, _TOP_KEYS, "")
    name = value_of(src, data, "", "name", str, path.stem)
    seed = value_of(src, data, "", "seed", str, None)
    if seed is not None:
        try:
            check_seed(seed)
        except SeedError as exc:
            raise src.error(str(exc), "", "seed") from None
    format_text = value_of(src, data, "", "format", str, Format.ROUND_ROBIN.value)
    try:
        format_ = Format(format_text)
    except ValueError:
        raise src.error(
            f"unknown format {format_text!r}; choose one of {', '.join(f.value for f in Format)}",
            "",
            "format",
        ) from None
    rules, deals, book = game_settings(src, data)
    match = table_of(src, data, "match")
    check_keys(src, match, _MATCH_KEYS, "match")
    games, duplicate = _games(src, match, rules)
    sets = games // rotations(rules) if duplicate else games
    problem = book_problem(book, deals, sets)
    if problem:
        raise src.error(problem, "game", "book")
    limits = match_limits(src, match)
    sandbox = _sandbox(src, match)
    entries = _entries(src, data)
    _check_entries(src, entries, rules, sandbox)
    names = [e.name for e in entries]
    rounds, candidate = _format_keys(src, data, format_, rules, names)
    concurrency = value_of(src, data, "", "concurrency", int, None)
    if concurrency is not None and concurrency < 1:
        raise src.error("must be 1 or more", "", "concurrency")
    return TournamentConfig(
        path=path,
        name=name,
        seed=seed or "",
        seed_given=seed is not None,
        format=format_,
        rules=rules,
        entries=tuple(entries),
        games=games,
        duplicate=duplicate,
        same_deals_per_round=value_of(src, match, "match", "same_deals_per_round", bool, False),
        deals=deals,
        rounds=rounds,
        candidate=candidate,
        limits=limits,
        concurrency=concurrency,
        ratings=_ratings(src, data, names),
        sandbox=sandbox,
        book=book,
        text=text,
    )


def _book(src: TomlSource, game: dict[str, Any], rules: Rules) -> DealBook | None:
    """``[game] book``: a deal book, its path relative to the tournament file's folder."""
    name = value_of(src, game, "game", "book", str, None)
    if name is None:
        return None
    try:
        return read_book(src.path.parent / name, rules)
    except BookError as exc:
        raise ConfigError(str(exc)) from None


def game_settings(
    src: TomlSource, data: dict[str, Any]
) -> tuple[Rules, int | None, DealBook | None]:
    """``[game]``: the preset, its knobs, the deals a game and the deal book."""
    game = table_of(src, data, "game")
    check_keys(src, game, _GAME_KEYS, "game")
    preset_name = value_of(src, game, "game", "preset", str, "tressette")
    try:
        rules = preset(preset_name)
    except RulesError as exc:
        raise src.error(str(exc), "game", "preset") from None
    knobs = table_of(src, game, "rules", where="game.rules")
    try:
        rules = Rules.from_dict(knobs, base=rules)
    except RulesError as exc:
        bad = next((k for k in knobs if k in str(exc)), None)
        raise src.error(str(exc), "game.rules", bad) from None
    deals = value_of(src, game, "game", "deals", int, None)
    if deals is not None and deals < 1:
        raise src.error("must be 1 or more", "game", "deals")
    return rules, deals, _book(src, game, rules)


def _games(src: TomlSource, match: dict[str, Any], rules: Rules) -> tuple[int, bool]:
    """``[match] games`` (whole duplicate sets) and ``duplicate``."""
    per_set = rotations(rules)
    games = value_of(src, match, "match", "games", int, 2 * per_set)
    duplicate = value_of(src, match, "match", "duplicate", bool, True)
    if games < 1 or games % per_set:
        raise src.error(
            f"must be a positive multiple of {per_set} (one game per arrangement of the "
            f"{rules.sides} sides), got {games}",
            "match",
            "games",
        )
    return games, duplicate


def _sandbox(src: TomlSource, match: dict[str, Any]) -> SandboxMode:
    """``[match] sandbox``: bwrap (the default) or off."""
    text = value_of(src, match, "match", "sandbox", str, SandboxMode.BWRAP.value)
    try:
        return SandboxMode(text)
    except ValueError:
        choices = ", ".join(repr(m.value) for m in SandboxMode)
        raise src.error(f"must be {choices}, got {text!r}", "match", "sandbox") from None


def _check_entries(
    src: TomlSource, entries: list[EntrySpec], rules: Rules, sandbox: SandboxMode
) -> None:
    """Enough entries for a table, and no manifest that turns the organiser's sandbox off."""
    for index, spec in enumerate(entries):
        if spec.entry.sandbox is SandboxMode.OFF and sandbox is not SandboxMode.OFF:
            raise src.error(
                'its manifest asks for sandbox = "off"; the tournament confines every bot '
                'unless its [match] says sandbox = "off"',
                "entry",
                "bot",
                index,
            )
    if len(entries) < rules.sides:
        raise src.error(
            f"{rules.game} seats {rules.sides} entries at a table; the file has {len(entries)}",
            "entry",
        )


def _format_keys(
    src: TomlSource, data: dict[str, Any], format_: Format, rules: Rules, names: list[str]
) -> tuple[int | None, str | None]:
    """``rounds`` (Swiss only) and ``candidate`` (gauntlet only), checked."""
    rounds = value_of(src, data, "", "rounds", int, None)
    candidate = value_of(src, data, "", "candidate", str, None)
    if format_ is Format.SWISS:
        if rounds is None or rounds < 1:
            raise src.error("a swiss tournament needs rounds = 1 or more", "", "rounds")
        if rules.sides != 2:
            raise src.error(
                f"swiss pairs two entries a table; {rules.game} seats {rules.sides}", "", "format"
            )
    elif rounds is not None:
        raise src.error("only a swiss tournament has rounds", "", "rounds")
    if format_ is Format.GAUNTLET:
        if candidate is None:
            raise src.error("a gauntlet needs candidate = the name of an entry", "", "candidate")
        if candidate not in names:
            raise src.error(f"no entry is named {candidate!r}", "", "candidate")
    elif candidate is not None:
        raise src.error("only a gauntlet has a candidate", "", "candidate")
    return rounds, candidate


def match_limits(src: TomlSource, match: dict[str, Any]) -> Limits:
    base = Limits()
    deadline = value_of(src, match, "match", "deadline_ms", int, base.deadline_ms)
    if deadline < 1:
        raise src.error("must be 1 or more", "match", "deadline_ms")
    bank = value_of(src, match, "match", "time_bank_ms", int, base.time_bank_ms)
    if bank < 0:
        raise src.error("must be 0 or more", "match", "time_bank_ms")
    attempts = value_of(src, match, "match", "max_attempts", int, base.max_attempts)
    if attempts < 1:
        raise src.error("must be 1 or more", "match", "max_attempts")
    policy = value_of(src, match, "match", "on_fault", str, base.on_fault.value)
    try:
        on_fault = FaultPolicy(policy)
    except ValueError:
        raise src.error(
            f"must be one of {', '.join(p.value for p in FaultPolicy)}, got {policy!r}",
            "match",
            "on_fault",
        ) from None
    connect = value_of(src, match, "match", "connect_timeout", float, base.connect_timeout)
    grace = value_of(src, match, "match", "grace", float, base.grace)
    if connect <= 0 or grace < 0:
        key = "connect_timeout" if connect <= 0 else "grace"
        raise src.error("must be seconds above 0 (grace: 0 or more)", "match", key)
    restart = value_of(src, match, "match", "restart_crashed", bool, base.restart_crashed)
    try:
        tempo = parse_tempo(value_of(src, match, "match", "tempo", str, TEMPO_FREE))
    except ValueError as exc:
        raise src.error(str(exc), "match", "tempo") from None
    ponder = value_of(src, match, "match", "ponder", bool, base.ponder)
    return Limits(deadline, bank, attempts, connect, grace, on_fault, restart, ponder, tempo)


def _allowed(src: TomlSource, data: dict[str, Any]) -> tuple[Path, ...]:
    """``allow_paths``: folders outside their own that the organiser lets manifests name."""
    items = value_of(src, data, "", "allow_paths", list, [])
    out = []
    for item in items:
        if not isinstance(item, str) or not item:
            raise src.error("must be a list of folder paths", "", "allow_paths")
        folder = (src.path.parent / item).resolve()
        if not folder.is_dir():
            raise src.error(f"{item!r} ({folder}) is not a folder", "", "allow_paths")
        out.append(folder)
    return tuple(out)


def _entries(src: TomlSource, data: dict[str, Any]) -> list[EntrySpec]:
    raw = data.get("entry", [])
    if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        raise src.error("write each entry as an [[entry]] table", "entry")
    out: list[EntrySpec] = []
    seen: dict[str, int] = {}
    allow = _allowed(src, data)
    for index, item in enumerate(raw):
        unknown = sorted(set(item) - _ENTRY_KEYS)
        if unknown:
            raise src.error(
                f"unknown key; an entry has {', '.join(sorted(_ENTRY_KEYS))}",
                "entry",
                unknown[0],
                index,
            )
        bot = item.get("bot")
        if not isinstance(bot, str) or not bot:
            raise src.error("must be a built-in bot, remote, cmd:<command>, py:MODULE:NAME or a "
                            ".toml manifest", "entry", "bot", index)  # fmt: skip
        name = item.get("name", bot)
        if not isinstance(name, str) or not _NAME.match(name):
            raise src.error(
                "must be 1-64 letters, digits or _.+- (starting with a letter or digit)",
                "entry",
                "name",
                index,
            )
        if name in seen:
            line = src.line_of("entry", "name", seen[name])
            first = f" (line {line})" if line else ""
            raise src.error(
                f"duplicate entry name {name!r}: entry {seen[name] + 1}{first} has it already",
                "entry",
                "name" if "name" in item else "bot",
                index,
            )
        seen[name] = index
        try:
            if bot.endswith(".toml"):
                # A manifest path is relative to the tournament file, not to where we run.
                manifest = Path(bot)
                if not manifest.is_absolute():
                    manifest = src.path.parent / manifest
                entry = load_manifest(manifest, allow=allow)
            else:
                # A py: module too is looked for beside the tournament file first.
                entry = parse_entry(bot, folder=src.path.parent)
            programs = tuple(program_hashes(entry).items())
        except EntryError as exc:
            raise src.error(str(exc), "entry", "bot", index) from None
        key = item.get("key_sha256")
        if key is not None and not entry.remote:
            raise src.error('only a remote entry (bot = "remote") has a key', "entry",
                            "key_sha256", index)  # fmt: skip
        if key is not None and not (isinstance(key, str) and _SHA256.fullmatch(key)):
            raise src.error("must be a SHA-256 in hex: 64 of 0-9a-f", "entry", "key_sha256",
                            index)  # fmt: skip
        out.append(EntrySpec(name, bot, entry, programs, key))
    return out


def _ratings(src: TomlSource, data: dict[str, Any], names: list[str]) -> RatingSettings:
    table = table_of(src, data, "ratings")
    check_keys(src, table, _RATING_KEYS, "ratings")
    base = RatingSettings()
    anchor = value_of(src, table, "ratings", "anchor", str, None)
    if anchor is not None and anchor not in names:
        raise src.error(f"no entry is named {anchor!r}", "ratings", "anchor")
    elo = value_of(src, table, "ratings", "elo", float, base.elo)
    prior = value_of(src, table, "ratings", "prior_draws", float, base.prior_draws)
    if prior < 0:
        raise src.error("must be 0 or more", "ratings", "prior_draws")
    samples = value_of(src, table, "ratings", "bootstrap", int, base.bootstrap)
    if samples < 0:
        raise src.error("must be 0 or more", "ratings", "bootstrap")
    seed = value_of(src, table, "ratings", "seed", int, base.seed)
    return RatingSettings(anchor, elo, prior, samples, seed)


def table_of(
    src: TomlSource, data: Mapping[str, Any], key: str, *, where: str | None = None
) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        table, _, name = (where or key).rpartition(".")
        raise src.error("must be a table", table, name)
    return value


def check_keys(src: TomlSource, data: Mapping[str, Any], keys: set[str], table: str) -> None:
    for key in data:
        if key not in keys:
            raise src.error(f"unknown key; keys here are {', '.join(sorted(keys))}", table, key)


def value_of(
    src: TomlSource, data: Mapping[str, Any], table: str, key: str, kind: type, default: Any
) -> Any:
    if key not in data:
        return default
    value = data[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = {str: "text", int: "a whole number", float: "a number", bool: "true or false"}
        raise src.error(f"must be {names.get(kind, kind.__name__)}, got {value!r}", table, key)
    return value
