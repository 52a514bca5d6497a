"""A dataset of decisions from record files or a tournament database, with its datasheet.

The tables are :mod:`referee.research.dataset`'s; this module reads the records where they
are kept and writes ``datasheet.md`` and ``datasheet.json`` beside the tables: where the
records came from, their rules, seeds and bots, the software that made the dataset, its
licence, its row counts and the layout of its columns (docs/research.md).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from referee.records import RecordError, open_record
from referee.research.dataset import (
    DECISIONS,
    FORMAT,
    GAMES,
    HIDDEN_PREFIX,
    DatasetWriter,
    Summary,
    decision_columns,
    described,
    game_columns,
)
from referee.research.encoding import OBSERVATION_SECTIONS, OBSERVATION_SIZE, num_actions
from tournaments.storage import MADE_SEED, StorageError, Store

DATASHEET = "datasheet.md"
DATASHEET_JSON = "datasheet.json"
SEEDS_SHOWN = 20
"""Seeds the Markdown datasheet lists; the JSON one lists all."""
PROGRAM_FILES_SHOWN = 3
"""Files of an entry's program the Markdown datasheet lists; the JSON one lists all."""
_SOURCE_TREE = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Exported:
    """What :func:`export_dataset` wrote."""

    folder: Path
    summary: Summary
    seconds: float
    """Reading, replaying and writing the records (the datasheet not counted)."""


Progress = Callable[[int], None]
"""Told each record read: how many so far."""


def export_dataset(
    folder: Path,
    *,
    files: Sequence[Path] = (),
    db: Path | None = None,
    licence: str,
    command: str,
    dense: bool = False,
    progress: Progress | None = None,
) -> Exported:
    """Write the dataset of ``files`` (record files) or of ``db`` (a tournament's database)
    into ``folder``, which must exist, with its datasheet.

    RecordError names the first record line that does not verify, StorageError a database
    that cannot be read, OSError a file that cannot be written; the dataset's files are
    then deleted. ``command`` is written in the datasheet as what made the dataset.
    """
    start = time.perf_counter()
    writer = DatasetWriter(folder, dense=dense)
    try:
        if db is None:
            sources = [_file_facts(path) for path in files]
            for count, path in enumerate(files, 1):
                writer.add_file(path)
                if progress is not None:
                    progress(count)
        else:
            sources = [_read_database(writer, db, progress)]
        summary = writer.close()
        seconds = time.perf_counter() - start
        sheet = _datasheet(summary, sources, licence, command, dense)
        # Readable by their owner alone, as the tables are: the seeds deal every hand.
        with open_record(folder / DATASHEET_JSON, new=True) as out:
            out.write(json.dumps(sheet, indent=1, ensure_ascii=False) + "\n")
        with open_record(folder / DATASHEET, new=True) as out:
            out.write(_markdown(sheet))
    except BaseException:
        writer.abort()
        for name in (DATASHEET, DATASHEET_JSON):
            (folder / name).unlink(missing_ok=True)
        raise
    return Exported(folder, summary, seconds)


def records_in(db: Path) -> int:
    """The finished games of a tournament database, to show progress against."""
    with Store.open_for_reading(db) as store:
        return store.game_count()


def _file_facts(path: Path) -> dict[str, Any]:
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise RecordError(str(path), None, f"cannot read: {exc.strerror}") from None
    return {"kind": "record file", "path": str(path), "sha256": digest}


def _read_database(writer: DatasetWriter, db: Path, progress: Progress | None) -> dict[str, Any]:
    """Add every finished game of ``db``; what the database says of its tournament."""
    with Store.open_for_reading(db) as store:
        try:
            meta = store.meta()
            for count, (match, number, text) in enumerate(store.records(), 1):
                writer.add_lines(
                    text.splitlines(), str(db), match=match, game=number,
                    where=f"{db} match {match} game {number}",
                )  # fmt: skip
                if progress is not None:
                    progress(count)
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"{db}: cannot read the records: {exc}") from None
    return _tournament_facts(db, meta)


def _tournament_facts(db: Path, meta: dict[str, str]) -> dict[str, Any]:
    """The database's tournament: its name, seed and entries, as its tournament file said."""
    out: dict[str, Any] = {"kind": "tournament database", "path": str(db),
                           "tournament": meta.get("name")}  # fmt: skip
    try:
        config = tomllib.loads(meta.get("config", ""))
    except tomllib.TOMLDecodeError as exc:
        raise StorageError(f"{db}: the tournament file it keeps does not parse: {exc}") from None
    seed = config.get("seed")
    out["seed"] = seed if seed is not None else _json(meta.get(MADE_SEED))
    out["format"] = config.get("format")
    out["game"] = config.get("game")
    out["entries"] = {
        str(e.get("name", e.get("bot"))): {k: v for k, v in e.items() if k != "name"}
        for e in config.get("entry", [])
        if isinstance(e, dict)
    }
    out["programs"] = _json(meta.get("programs")) or {}
    out["tournament_file"] = meta.get("config")
    return out


def _json(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _tavolo_version() -> str:
    try:
        return version("tavolo")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def _git_commit() -> dict[str, Any] | None:
    """The commit of the source tree this Tavolo runs from, if it is a git checkout (an
    installed Tavolo is not, even where its site-packages lie inside one)."""
    if not (_SOURCE_TREE / ".git").exists():
        return None

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(_SOURCE_TREE), *args],
                capture_output=True, text=True, timeout=10, check=False,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            return None  # no git here, or a stuck one: the datasheet says "commit unknown"
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return None
    changes = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "uncommitted_changes": bool(changes)}


def _datasheet(
    summary: Summary, sources: list[dict[str, Any]], licence: str, command: str, dense: bool
) -> dict[str, Any]:
    families = sorted(summary.families)
    return {
        "format": FORMAT,
        "made": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": command,
        "tavolo": {"version": _tavolo_version(), "git": _git_commit()},
        "licence": licence,
        "sources": sources,
        "rows": {
            "decisions": summary.decisions,
            "games": summary.games,
            "records": summary.records,
        },
        "families": dict(summary.families),
        "kinds": dict(summary.kinds.most_common()),
        "terminations": dict(summary.terminations.most_common()),
        "rules": [{"rules": json.loads(r), "games": n} for r, n in summary.rules.items()],
        "seeds": dict(summary.seeds),
        "books": dict(summary.books),
        "entries": {
            name: {
                "games": f.games,
                "decisions": f.decisions,
                "timed_decisions": f.timed,
                "mean_ms": round(f.ms_total / f.timed, 1) if f.timed else None,
                "referee_played": f.referee_played,
                "mean_return": round(f.returns_total / f.games, 4) if f.games else None,
                "sandbox": dict(f.sandbox),
                "faults": dict(f.faults.most_common()),
            }
            for name, f in sorted(summary.entries.items())
        },
        "files": {DECISIONS: described(decision_columns(dense)), GAMES: described(game_columns())},
        "observation": {
            "layout": "dense" if dense else "sparse",
            "size": OBSERVATION_SIZE,
            "sections": [
                {"name": s.name, "start": s.start, "size": s.size, "text": s.text}
                for s in OBSERVATION_SECTIONS
            ],
        },
        "actions": {family: num_actions(family) for family in families},
    }


def _markdown(sheet: dict[str, Any]) -> str:
    """The datasheet for people: the JSON's facts, as tables."""
    rows = sheet["rows"]
    git = sheet["tavolo"]["git"]
    made_by = f"Tavolo {sheet['tavolo']['version']}"
    if git is not None:
        dirty = ", with uncommitted changes" if git["uncommitted_changes"] else ""
        made_by += f", git commit `{git['commit']}`{dirty}"
    else:
        made_by += " (not a git checkout: commit unknown)"
    layout = sheet["observation"]
    observation = (
        f"`obs`, {layout['size']} float32 each"
        if layout["layout"] == "dense"
        else f"`obs_indices` + `obs_values`, the non-zero entries of {layout['size']}"
    )
    out = [
        "# Datasheet",
        "",
        "Decisions of Tavolo game records, one row each: what the seat to act knew, what it "
        "might do, what it did, how long it thought, and how its game ended "
        '(docs/research.md, "Datasets").',
        "",
        "| | |",
        "|---|---|",
        f"| format | `{sheet['format']}` |",
        f"| licence | {_cell(sheet['licence'])} |",
        f"| made | {sheet['made']} by {made_by} |",
        f"| command | `{_cell(sheet['command'])}` |",
        f"| rows | {rows['decisions']:,} decisions in `{DECISIONS}`; {rows['games']:,} games "
        f"in `{GAMES}`; from {rows['records']:,} records |",
        f"| observation | {observation} ({layout['layout']}) |",
        "",
        "## Sources",
        "",
    ]
    for source in sheet["sources"]:
        if source["kind"] == "record file":
            out.append(f"- record file `{source['path']}`, SHA-256 `{source['sha256']}`")
        else:
            out.append(
                f"- tournament database `{source['path']}`: tournament "
                f"{_cell(str(source['tournament']))}, seed `{source['seed']}`, format "
                f"{source['format']}; its tournament file is in {DATASHEET_JSON}"
            )
    out += ["", "## Rules", "", "| games | family | rules (the header's `rules`) |"]
    out.append("|---|---|---|")
    for item in sheet["rules"]:
        rules = item["rules"]
        text = json.dumps(rules, separators=(", ", ": "))
        out.append(f"| {item['games']:,} | {rules['game']} | `{text}` |")
    seeds = list(sheet["seeds"].items())
    out += ["", "## Seeds", ""]
    out.append(
        f"{len(seeds):,} seeds; each game's is in `{GAMES}` (`seed`). A seed decides "
        "every deal of its game (`tavolo deal`), so it is hidden information too."
    )
    out += [""] + [f"- `{seed}`: {n} game{'s' if n > 1 else ''}" for seed, n in seeds[:SEEDS_SHOWN]]
    if len(seeds) > SEEDS_SHOWN:
        out.append(f"- ... and {len(seeds) - SEEDS_SHOWN:,} more, in {DATASHEET_JSON}")
    for digest, n in sheet["books"].items():
        out.append(f"- dealt from the deal book with SHA-256 `{digest}`: {n} games")
    out += _bots(sheet)
    out += ["", "## Games", "", "| termination | games |", "|---|---|"]
    out += [f"| {kind} | {n:,} |" for kind, n in sheet["terminations"].items()]
    out += ["", "| decision kind | rows |", "|---|---|"]
    out += [f"| {kind} | {n:,} |" for kind, n in sheet["kinds"].items()]
    for name, columns in sheet["files"].items():
        out += ["", f"## Columns of `{name}`", "", "| column | type | what |", "|---|---|---|"]
        out += [f"| `{c['name']}` | {_cell(c['type'])} | {_cell(c['text'])} |" for c in columns]
    out += [
        "",
        "## Hidden information",
        "",
        f"Columns named `{HIDDEN_PREFIX}...` hold cards some seat could not see at the time: "
        "each seat's hand at a decision, and every deal as dealt. No other column of "
        f"`{DECISIONS}` holds any: the observation, the legal actions and the rest are what "
        "the seat to act could know. The games' `seed`, `header` and `rules` identify the "
        "game and let it be dealt again: keep them from a model as you keep the hidden "
        "columns.",
        "",
        "## The observation",
        "",
        f"The shared encoding of `referee.research.encoding`, {layout['size']} entries in "
        "named sections; seats are relative (0 is the seat to act, 1 the next in playing "
        "order), sides too (0 is its own).",
        "",
        "| section | start | size | what |",
        "|---|---|---|---|",
    ]
    out += [
        f"| `{s['name']}` | {s['start']} | {s['size']} | {_cell(s['text'])} |"
        for s in layout["sections"]
    ]
    out += ["", "Action ids are the family's codec; the width of a family's mask:", ""]
    out += [f"- {family}: {width}" for family, width in sheet["actions"].items()]
    out += [
        "",
        "`referee.research.encoding.action_table(family)` lists every id with its kind and "
        "text; `referee.research.dataset.observations(table)` and `legal_masks(table, family)` "
        "make numpy arrays of the columns; `referee.research.dataset.rebuild(folder)` makes "
        "every record again from the two tables, byte for byte.",
        "",
    ]
    return "\n".join(out)


def _bots(sheet: dict[str, Any]) -> list[str]:
    out = [
        "",
        "## Bots",
        "",
        "What the records say of each entry (the header's `seats`): its games and decisions, "
        "its think times, the actions the referee played for it after a fault, its faults, "
        "its mean return (1 a win, the losers share -1) and what its bot ran under.",
        "",
        "| entry | games | decisions | timed | mean ms | referee played | faults | mean return "
        "| sandbox |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, e in sheet["entries"].items():
        faults = ", ".join(f"{k} {n}" for k, n in e["faults"].items()) or "none"
        sandbox = ", ".join(f"{k} {n}" for k, n in e["sandbox"].items())
        mean = "-" if e["mean_ms"] is None else f"{e['mean_ms']:g}"
        out.append(
            f"| {_cell(name)} | {e['games']:,} | {e['decisions']:,} | {e['timed_decisions']:,} "
            f"| {mean} | {e['referee_played']:,} | {faults} | {e['mean_return']:+.3f} "
            f"| {sandbox} |"
        )
    tournaments = [s for s in sheet["sources"] if s["kind"] == "tournament database"]
    for source in tournaments:
        out += ["", "As the tournament file defines them, and the files each ran:", ""]
        for name, entry in source["entries"].items():
            fields = ", ".join(f"{k} = {json.dumps(v)}" for k, v in entry.items())
            out.append(f"- {_cell(name)}: {fields}")
            program = source["programs"].get(name, {})
            if len(program) > PROGRAM_FILES_SHOWN:
                out.append(f"  - {len(program)} files, each with its SHA-256 in {DATASHEET_JSON}")
                continue
            for path, digest in program.items():
                out.append(f"  - `{path}`: SHA-256 `{digest}`")
    return out


def _cell(text: str) -> str:
    """Text for a Markdown table cell: one line, no column break."""
    return text.replace("|", "\\|").replace("\n", " ")
