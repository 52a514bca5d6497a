"""The arena submission each client's README makes, by following its "Submitting to an
arena" as written: its first ``sh`` block runs in a fresh folder, with ``TAVOLO`` naming
this checkout, its ``toml`` block becomes ``mybot/bot.toml``, and its last ``sh`` block is
the submission (tests/test_arena_languages.py submits the folder the same way).

What the commands copy and vendor comes from the clients' builds (``make clients``) and
the caches those filled: Go's module cache and npm's are all they may use (``GOPROXY=off``,
npm offline). ``cargo vendor`` also fetches the other platforms' crates, which a build
never downloads, and pip fetches the arena's wheels; both from their registries.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from referee.sandbox.bwrap import PATH_INSIDE

ROOT = Path(__file__).resolve().parent.parent
LANGS = ("python", "go", "rust", "java", "cpp", "typescript")
HEADING = "## Submitting to an arena\n"
FOLDER = "mybot"
"""The submission folder every README makes."""
PYTHON_VERSION = "--python-version 3.11"
"""How the Python README names the arena's python3, which this arena's replaces."""


class ReadmeError(AssertionError):
    """A README whose section is not what these steps follow, or whose commands fail."""


@dataclass(frozen=True)
class Section:
    """A README's "Submitting to an arena"."""

    commands: str
    """The shell commands that make the folder, as written."""
    manifest: str
    """``mybot/bot.toml``."""
    submit: str
    """The command that submits it."""


def readme(lang: str) -> str:
    return (ROOT / "clients" / lang / "README.md").read_text(encoding="utf-8")


def section(lang: str) -> Section:
    """The section of ``clients/<lang>/README.md``: two ``sh`` blocks and a ``toml`` one."""
    text = readme(lang)
    if text.count(HEADING) != 1:
        raise ReadmeError(f"clients/{lang}/README.md: no one section {HEADING.strip()!r}")
    body = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    shell = re.findall(r"```sh\n(.*?)```", body, flags=re.S)
    toml = re.findall(r"```toml\n(.*?)```", body, flags=re.S)
    if len(shell) != 2 or len(toml) != 1:
        raise ReadmeError(
            f"clients/{lang}/README.md: its section has {len(shell)} sh blocks and "
            f"{len(toml)} toml blocks, not 2 and 1"
        )
    return Section(shell[0], toml[0], shell[1].strip())


def arena_python() -> Path:
    """The ``python3`` a sandboxed bot runs: the first on the sandbox's PATH."""
    found = shutil.which("python3", path=PATH_INSIDE)
    if found is None:
        raise ReadmeError(f"no python3 on the sandbox's PATH ({PATH_INSIDE})")
    return Path(found)


def environment() -> dict[str, str]:
    """Ours, without the referee's settings, with this checkout as ``TAVOLO``, this
    Python's folder (its pip, its ``tavolo``) first on PATH, and Go and npm held to their
    caches."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}
    return {
        **env,
        "TAVOLO": str(ROOT),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        "npm_config_offline": "true",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def follow(lang: str, where: Path) -> Path:
    """Make ``lang``'s submission in ``where`` (made here) as its README says; its folder.

    The Python README starts from the folder holding its complete bot, ``my_bot.py`` (its
    first ``python`` block), and names the arena's Python version, which becomes this
    arena's."""
    steps = section(lang)
    commands = steps.commands
    where.mkdir(parents=True)
    if lang == "python":
        bot = re.search(r"```python\n(.*?)```", readme(lang), flags=re.S)
        if bot is None:
            raise ReadmeError("clients/python/README.md has no complete bot")
        (where / "my_bot.py").write_text(bot.group(1), encoding="utf-8")
        if PYTHON_VERSION not in commands:
            raise ReadmeError(f"clients/python/README.md: its commands lack {PYTHON_VERSION!r}")
        version = subprocess.run(
            [str(arena_python()), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        commands = commands.replace(PYTHON_VERSION, f"--python-version {version}")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", commands],
        cwd=where, env=environment(), capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    if done.returncode != 0:
        raise ReadmeError(
            f"clients/{lang}/README.md: its commands failed (exit {done.returncode}):\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    folder = where / FOLDER
    (folder / "bot.toml").write_text(steps.manifest, encoding="utf-8")
    return folder
