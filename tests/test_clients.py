"""The clients of clients/<lang>: their unit tests, conformance, and a mixed tournament.

The clients are built by ``make test`` (``clients/build-all``) where the machine has
their toolchains. A client that is not built is skipped with the reason, unless
``TAVOLO_REQUIRE_CLIENTS=1`` (CI), where it fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from referee.records import verify_lines
from tests.sandboxing import as_a_normal_user, require_sandbox
from tests.test_cli import tavolo
from tournaments.storage import Store

ROOT = Path(__file__).resolve().parent.parent
LANGS = ("go", "rust", "java", "typescript", "cpp")
REQUIRED = os.environ.get("TAVOLO_REQUIRE_CLIENTS") == "1"
DEALS = 10
"""Deals per game: a duplicate set (two games) against each Python bot is 20 deals."""


def bot_of(lang: str) -> Path:
    return ROOT / "clients" / lang / "bin" / "example-bot"


def why_missing(lang: str) -> str:
    """Why the client's bot is not there: its toolchain, or it was not built."""
    status = subprocess.run(
        [str(ROOT / "clients" / "toolchains"), lang], capture_output=True, text=True, check=False
    ).stdout.strip()
    if status.endswith(" ok"):
        return f"clients/{lang} is not built: run `make clients` (or `clients/{lang}/build`)"
    return f"clients/{lang} cannot be built here: {status.split(': ', 1)[-1]}"


def require(lang: str) -> Path:
    bot = bot_of(lang)
    if not os.access(bot, os.X_OK):
        reason = why_missing(lang)
        if REQUIRED:
            pytest.fail(f"{reason} (TAVOLO_REQUIRE_CLIENTS=1: no client may be skipped)")
        pytest.skip(reason)
    return bot


RAN = {
    "go": r"(?m)^ok\s+\S+/clients/go/tavolo\s",
    "rust": r"test result: ok\. [1-9]\d* passed",
    "java": r"ok \([1-9]\d* test classes",
    "typescript": r"# pass [1-9]\d*",
    "cpp": r"100% tests passed, 0 tests failed out of [1-9]",
}
"""What each client's test runner prints when some tests ran and all passed."""


@pytest.mark.parametrize("lang", LANGS)
def test_client_unit_tests(lang: str) -> None:
    """clients/<lang>/test: the SDK's own unit tests, with its own toolchain."""
    require(lang)
    done = subprocess.run(
        [str(ROOT / "clients" / lang / "test")],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert re.search(RAN[lang], output), output[-4000:]


def manifest_of(lang: str) -> Path:
    """The example bot's manifest: the sandbox lets the bot read the client's folder."""
    return ROOT / "clients" / lang / "example-bot.toml"


@pytest.mark.parametrize("lang", LANGS)
def test_example_bot_conforms(lang: str) -> None:
    """Each example bot passes every check from inside its sandbox."""
    require(lang)
    sandbox = require_sandbox()
    result = tavolo("conformance", str(manifest_of(lang)), "--sandbox", sandbox)
    assert result.exit_code == 0, result.output
    assert "the bot conforms" in result.output


@pytest.mark.parametrize("lang", LANGS)
def test_example_bot_plays_in_a_normal_users_sandbox(
    lang: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a referee that is not root, where ``setsid`` is refused in the sandbox."""
    require(lang)
    require_sandbox()
    with as_a_normal_user(monkeypatch):
        args = ["--seed", "user", "--deals", "1", "--json"]
        result = tavolo("play", str(manifest_of(lang)), "random", *args)
    assert result.exit_code == 0, result.output
    played = json.loads(result.stdout)
    assert [g["termination"] for g in played["games"]] == ["deals_played"] * 2, result.output
    assert all(e["timeouts"] == e["illegal"] == e["crashes"] == 0 for e in played["entries"])


def test_mixed_tournament(tmp_path: Path) -> None:
    """Every client's bot plays Python bots (and each other) through the real referee."""
    available = [lang for lang in LANGS if os.access(bot_of(lang), os.X_OK)]
    missing = [lang for lang in LANGS if lang not in available]
    if missing and REQUIRED:
        pytest.fail("; ".join(why_missing(lang) for lang in missing))
    if not available:
        pytest.skip("no client is built: " + "; ".join(why_missing(lang) for lang in LANGS))
    sandbox = require_sandbox()
    entries = "".join(
        f'\n[[entry]]\nname = "{lang}"\nbot = "{manifest_of(lang)}"\n' for lang in available
    )
    path = tmp_path / "mixed.toml"
    path.write_text(
        'name = "mixed"\nseed = "mixed-1"\nformat = "round-robin"\nconcurrency = 2\n'
        f'\n[game]\npreset = "tressette"\ndeals = {DEALS}\n\n[match]\ngames = 2\n'
        f'sandbox = "{sandbox}"\n'
        '\n[[entry]]\nname = "py-heuristic"\nbot = "heuristic"\n'
        '\n[[entry]]\nname = "py-random"\nbot = "random"\n' + entries,
        encoding="utf-8",
    )
    db = tmp_path / "mixed.db"
    result = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert result.exit_code == 0, result.output
    table = json.loads(tavolo("tournament", "table", "--db", db, "--format", "json").stdout)
    faults = {e["name"]: (e["timeouts"], e["illegal"], e["crashes"]) for e in table["entries"]}
    assert all(f == (0, 0, 0) for f in faults.values()), faults
    assert {e["sandbox"] for e in table["entries"]} == {sandbox}, table["entries"]
    with Store.open_for_reading(db) as store:
        games = store.games()
        n = len(table["entries"])
        assert len(games) == n * (n - 1)  # every pair, one duplicate set of two games
        for match_id, number, text in store.records():
            lines = text.splitlines()
            verify_lines(lines, f"match {match_id} game {number}")
            protocol_errors = [
                line for line in lines if '"type":"rejected"' in line or '"type":"incident"' in line
            ]
            assert not protocol_errors, protocol_errors[:3]
    for lang in available:
        against_python = sum(
            g.deals
            for g in games
            if lang in g.sides and {"py-heuristic", "py-random"} & set(g.sides)
        )
        assert against_python >= 2 * 2 * DEALS, (lang, against_python)


def test_committed_go_code_is_what_the_proto_generates() -> None:
    """Go commits its generated code (Go never runs generators); its build regenerates it."""
    require("go")
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    changed = subprocess.run(
        ["git", "status", "--porcelain", "--", "clients/go/gen"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert changed == "", f"clients/go/build regenerated different code:\n{changed}"
