"""The dependency arrows: engine <- referee <- tournaments <- CLI, and an engine without I/O."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# What the engine may import: pure computation only (no files, sockets, processes, clocks,
# randomness or grpc). json parses a deal book's lines from bytes the caller has read.
ENGINE_ALLOWED = {
    "__future__", "collections", "copy", "dataclasses", "enum", "functools", "hashlib",
    "json", "operator", "struct", "types", "typing", "referee",
}  # fmt: skip


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def full_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


# The registry finds the family packages as plugins (importlib), the families' package
# lists its members (pkgutil): module loading, no I/O of their own.
LOADERS = {
    ROOT / "referee" / "engine" / "registry.py": {"importlib"},
    ROOT / "referee" / "families" / "__init__.py": {"importlib", "pkgutil"},
}


def test_engine_does_no_io_and_imports_no_grpc():
    files = sorted((ROOT / "referee" / "engine").glob("*.py"))
    assert files
    for path in files:
        extra = imports(path) - ENGINE_ALLOWED - LOADERS.get(path, set())
        assert not extra, f"{path.name} imports {sorted(extra)}"
        modules = full_imports(path)
        outside = {
            m for m in modules if m.startswith("referee.") and not m.startswith("referee.engine")
        }
        assert not outside, f"{path.name} reaches outside the engine: {sorted(outside)}"


def test_families_are_engine_code_but_for_their_adapters():
    """A family's package is engine code (pure, no grpc), reaching only the engine and
    itself; its ``adapters.py`` alone also speaks the protocol's generated messages."""
    families = ROOT / "referee" / "families"
    files = sorted(families.rglob("*.py"))
    assert len(files) > 10
    for path in files:
        if path.name == "adapters.py":
            continue
        extra = imports(path) - ENGINE_ALLOWED - LOADERS.get(path, set())
        assert not extra, f"{path.relative_to(ROOT)} imports {sorted(extra)}"
        outside = {
            m
            for m in full_imports(path)
            if m.startswith("referee.") and not m.startswith(("referee.engine", "referee.families"))
        }
        assert not outside, f"{path.relative_to(ROOT)} reaches outside: {sorted(outside)}"
        if path.parent != families:
            own = f"referee.families.{path.parent.name}"
            others = {
                m
                for m in full_imports(path)
                if m.startswith("referee.families.") and not m.startswith(own)
            }
            assert not others, f"{path.relative_to(ROOT)} reaches another family: {others}"


def test_search_is_pure_and_reaches_only_the_engine():
    """referee/search drives the engine and the families' engine code for bots: seeded
    randomness and a clock to stop by, no I/O, no grpc, nothing of the referee's service or
    of the SDK, and never a family's adapters."""
    allowed = {"__future__", "collections", "dataclasses", "random", "time", "typing", "referee"}
    files = sorted((ROOT / "referee" / "search").glob("*.py"))
    assert len(files) > 3
    for path in files:
        extra = imports(path) - allowed
        assert not extra, f"{path.name} imports {sorted(extra)}"
        outside = {
            m
            for m in full_imports(path)
            if (
                m.startswith("referee.")
                and not m.startswith(("referee.engine", "referee.families", "referee.search"))
            )
            or m.endswith(".adapters")
        }
        assert not outside, f"{path.name} reaches outside the engine: {sorted(outside)}"


def test_deals_do_not_use_pythons_random():
    assert "random" not in imports(ROOT / "referee" / "engine" / "deals.py")


def test_referee_does_not_import_tournaments():
    for path in sorted((ROOT / "referee").rglob("*.py")):
        assert "tournaments" not in imports(path), path


def test_tournaments_do_not_import_the_cli():
    files = [p for p in sorted((ROOT / "tournaments").rglob("*.py")) if "cli" not in p.parts]
    assert len(files) > 5
    for path in files:
        assert not {m for m in full_imports(path) if m.startswith("tournaments.cli")}, path


def test_ratings_and_schedules_are_pure():
    """Ratings, SPRT and pairings are computation only, checkable without a database."""
    for name in ("ratings.py", "sprt.py", "schedule.py"):
        extra = imports(ROOT / "tournaments" / name) - {
            "__future__", "bisect", "collections", "dataclasses", "functools", "itertools",
            "math", "random", "statistics", "types", "typing", "tournaments",
        }  # fmt: skip
        assert not extra, f"{name} imports {sorted(extra)}"


RESEARCH_EXTRA = {"numpy", "gymnasium", "pettingzoo", "pyarrow", "pyspiel", "open_spiel"}
"""The ``research`` extra's packages, by the names they are imported by (pyproject.toml)."""
BENCH_ONLY = {"rlcard"}
"""What ``tavolo bench research`` times beside Tavolo's environments, where it is installed."""
IMPORTED_AS = {"open-spiel": {"pyspiel", "open_spiel"}}
"""A distribution's import names, where they are not its own name."""
RESEARCH_CODE = ("referee/research/", "tournaments/dataset_export.py", "tournaments/benchmarks/")
"""Research code: it alone may import the research extra, so that a plain install of
tavolo runs everything else (the CLI imports it inside the commands that need it)."""


def is_research(path: Path) -> bool:
    """Whether ``path`` is research code, which alone may use the research extra."""
    return path.relative_to(ROOT).as_posix().startswith(RESEARCH_CODE)


def test_every_third_party_import_is_a_declared_dependency():
    declared = {"grpc", "grpc_health", "grpc_reflection", "google", "typer", "rich", "tabulate",
                "jinja2", "starlette", "uvicorn", "distributed", "cryptography"}  # fmt: skip
    stdlib = set(sys.stdlib_module_names)
    for package in ("referee", "tournaments"):
        for path in sorted((ROOT / package).rglob("*.py")):
            # tavolo_bot: the Python SDK, which the tavolo distribution ships (pyproject.toml).
            third = imports(path) - stdlib - {"referee", "tournaments", "tavolo_bot"}
            allowed = declared | RESEARCH_EXTRA | BENCH_ONLY if is_research(path) else declared
            assert third <= allowed, f"{path} imports undeclared {sorted(third - allowed)}"


def test_nothing_but_research_code_imports_the_research_modules_at_its_top():
    """``pip install .`` has no numpy: research code is imported by research code, or by a
    command of the CLI inside the function that needs it."""
    for package in ("referee", "tournaments"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if is_research(path):
                continue
            top = ast.parse(path.read_text(encoding="utf-8")).body
            used = {
                node.module
                for node in top
                if isinstance(node, ast.ImportFrom) and node.module
                and node.module.startswith(("referee.research", "tournaments.dataset_export",
                                            "tournaments.benchmarks"))
            }  # fmt: skip
            if path.name == "bench.py":
                # tavolo bench's own benchmarks are imported at its top: but not research's.
                used = {m for m in used if m.endswith(("research", "dataset"))}
            assert not used, f"{path} imports {sorted(used)} at its top"


def test_the_research_extra_is_the_one_in_pyproject():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {
        re.split(r"[<>=!~ ]", spec, maxsplit=1)[0]
        for spec in extras["optional-dependencies"]["research"]
    }
    assert set().union(*(IMPORTED_AS.get(n, {n}) for n in names)) == RESEARCH_EXTRA


def test_the_sdk_needs_nothing_from_the_referee():
    sdk = ROOT / "clients" / "python" / "tavolo_bot"
    files = sorted(p for p in sdk.rglob("*.py") if "proto" not in p.parts)
    assert files
    for path in files:
        found = imports(path)
        assert not found & {"referee", "tournaments"}, f"{path} imports the referee"
        third = found - set(sys.stdlib_module_names) - {"tavolo_bot"}
        assert third <= {"grpc", "google"}, f"{path} imports {sorted(third)}"


def test_nothing_that_runs_matches_imports_the_benchmarks():
    """Only ``tavolo bench`` (and the benchmarks themselves) import tournaments.benchmarks."""
    allowed = {ROOT / "tournaments" / "cli" / "bench.py"}
    benches = ROOT / "tournaments" / "benchmarks"
    assert (benches / "__init__.py").exists()
    for package in ("referee", "tournaments"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path in allowed or benches in path.parents:
                continue
            reached = {m for m in full_imports(path) if m.startswith("tournaments.benchmarks")}
            assert not reached, f"{path} imports {sorted(reached)}"
