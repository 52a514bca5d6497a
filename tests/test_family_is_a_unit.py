"""A game family is one package: Briscola, the family added last, is named outside
``referee/families/briscola/`` only where a family has to be (docs, tests, the bots'
strategies and the views' family tables), never in the engine's core, the referee, the
records, the protocol or the tournaments. And each family is registered once."""

from __future__ import annotations

import re
import subprocess
from fnmatch import fnmatch
from pathlib import Path

import pytest

from referee.engine.registry import families

ROOT = Path(__file__).resolve().parent.parent

BRISCOLA = re.compile(
    r"briscola-a-quattro|families[./]briscola|Briscola(Deal|Game|Codec|Adapters)|BRISCOLA_"
)
"""What names the Briscola family (not the ``briscola`` knob of Tressette con la briscola)."""

OUTSIDE_ALLOWED = {
    "README.md": "the list of presets",
    "docs/*.md": "the rules, the bots and the views say what Briscola is",
    "tests/*": "its tests",
    "referee/search/briscola_*.py": "the pimc bot's worlds and playouts: a bot's strategy",
    "referee/search/pimc.py": "the pimc bot's search: which worlds each family samples",
    "referee/bots/pimc*.py": "the pimc bot: which search each family uses",
    "referee/research/resample.py": "IS-MCTS's worlds: which worlds each family samples",
    "clients/*": "bots of every SDK: their own strategies and READMEs",
    "tournaments/web/assets/*.js": "the views' table of how each family is shown",
}


def _tracked() -> list[str]:
    try:
        done = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"no git checkout to list the files of: {exc}")
    return done.stdout.splitlines()


def test_briscola_is_named_outside_its_package_only_where_a_family_must_be() -> None:
    outside = []
    for name in _tracked():
        if name.startswith("referee/families/briscola/"):
            continue
        path = ROOT / name
        if path.suffix not in {".py", ".js", ".md", ".toml", ".html", ".css", ".go", ".rs",
                               ".java", ".ts", ".cpp", ".h", ".proto"}:  # fmt: skip
            continue
        if BRISCOLA.search(path.read_text(encoding="utf-8", errors="replace")):
            outside.append(name)
    assert "docs/rules.md" in outside  # the pattern finds what it looks for
    stray = [n for n in outside if not any(fnmatch(n, p) for p in OUTSIDE_ALLOWED)]
    assert not stray, f"Briscola is named outside its package, in: {stray}"


def test_each_family_is_registered_by_its_own_package_alone() -> None:
    for family in families().values():
        assert family.package.startswith("referee.families.")
        package = ROOT / Path(*family.package.split("."))
        assert (package / "__init__.py").exists(), family.name
        assert (package / "adapters.py").exists(), family.name
    registering = [
        p.relative_to(ROOT).as_posix()
        for p in sorted((ROOT / "referee").rglob("*.py"))
        if re.search(r"^\s*register\(", p.read_text(encoding="utf-8"), re.M)
    ]
    assert registering == [
        "referee/families/briscola/__init__.py",
        "referee/families/calabresella/__init__.py",
        "referee/families/tressette/__init__.py",
    ]
    assert {"briscola", "briscola-a-quattro"} <= set(families())
