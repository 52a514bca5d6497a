"""Entry names are printable text, and bot-supplied text is escaped before a terminal."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from referee.entries import MAX_NAME, EntryError, load_manifest, printable
from tests.test_cli import tavolo


def test_printable_escapes_a_title_setting_sequence() -> None:
    assert printable("a\x1b]0;pwned\x07b") == "a\\x1b]0;pwned\\x07b"


def test_printable_escapes_an_osc52_clipboard_write() -> None:
    out = printable("\x1b]52;c;cm0gLXJmIH4=\x07")
    assert "\x1b" not in out and "\x07" not in out
    assert out == "\\x1b]52;c;cm0gLXJmIH4=\\x07"


def test_printable_escapes_c1_del_and_newlines_and_keeps_text() -> None:
    assert printable("\x9b2J\x7f\n\tèé ok") == "\\x9b2J\\x7f\\x0a\\x09èé ok"


@pytest.mark.parametrize("name", ["a\nb", "x\x1b[2Jy", "\x9b", "n" * (MAX_NAME + 1)])
def test_a_manifest_with_a_bad_name_is_refused(tmp_path: Path, name: str) -> None:
    manifest = tmp_path / "b.toml"
    manifest.write_text(f'name = {json.dumps(name)}\ncommand = ["python3"]\n', encoding="utf-8")
    with pytest.raises(EntryError) as caught:
        load_manifest(manifest)
    message = str(caught.value)
    assert message.startswith(f"{manifest}: key 'name': name '{printable(name)}'")
    assert "\n" not in message and "\x1b" not in message and "\x9b" not in message


def test_a_good_name_loads(tmp_path: Path) -> None:
    manifest = tmp_path / "b.toml"
    manifest.write_text('name = "Bot è 1"\ncommand = ["python3"]\n', encoding="utf-8")
    assert load_manifest(manifest).name == "Bot è 1"


def test_a_crashing_bots_stderr_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    """A real bot process writes a title-setting and a clipboard-writing sequence to its
    stderr, then exits: the fault lines quote its stderr with every escape shown as text."""
    bot = tmp_path / "loud.py"
    bot.write_text(
        "import sys\n"
        "sys.stderr.write('before \\x1b]0;pwned\\x07 '\n"
        "                 '\\x1b]52;c;cm0gLXJmIH4=\\x07 \\x9b2J after\\n')\n"
        "sys.exit(3)\n",
        encoding="utf-8",
    )
    record = tmp_path / "r.jsonl"
    args = ["play", f"cmd:{sys.executable} {bot}", "random", "--deals", "1", "--seed", "s"]
    result = tavolo(*args, "--record", record)
    shown = result.output + record.read_text(encoding="utf-8")
    assert "\\x1b]0;pwned\\x07" in result.output and "\\x9b2J after" in result.output
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
