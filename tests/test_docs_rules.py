"""docs/rules.md stands on its own: every knob and preset of the engine is in it, with the
engine's defaults, and no doc points at a rules file or source text the reader lacks."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from referee.engine.registry import presets
from referee.engine.rules import Rules

ROOT = Path(__file__).resolve().parent.parent
RULES_DOC = ROOT / "docs" / "rules.md"


def table_rows(section: str) -> dict[str, list[str]]:
    """The rows of the tables under ``## <section>`` in docs/rules.md, by their first cell
    (backticks stripped); each row is its cells, backticks stripped."""
    text = RULES_DOC.read_text(encoding="utf-8")
    start = text.index(f"\n## {section}")
    end = text.find("\n## ", start + 1)
    rows: dict[str, list[str]] = {}
    for line in text[start : end if end != -1 else None].splitlines():
        if line.startswith("| `"):
            cells = [cell.strip().replace("`", "") for cell in line.strip("|").split("|")]
            rows[cells[0]] = cells
    return rows


def doc_value(value: object) -> str:
    """A knob value as the knob table writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    return str(value)


KNOB_ROWS = table_rows("Knobs")


@pytest.mark.parametrize("field", dataclasses.fields(Rules), ids=lambda f: f.name)
def test_every_knob_has_a_row_with_the_engine_default(field: dataclasses.Field) -> None:
    assert field.name in KNOB_ROWS, f"docs/rules.md has no knob row for {field.name}"
    _knob, values, default, source, rule = KNOB_ROWS[field.name]
    assert default == doc_value(field.default)
    assert values and source and rule


def test_the_knobs_of_2026_12_01_have_rows() -> None:
    # The revised defaults, by name: a row copied from an old table would fail here.
    assert "auction" in KNOB_ROWS
    assert "striscio_corto" in KNOB_ROWS
    assert KNOB_ROWS["auction"][2] == "once"
    assert KNOB_ROWS["striscio_corto"][2] == "three"
    assert KNOB_ROWS["stramazzo"][2] == "true"


def test_no_knob_row_names_a_knob_the_engine_lacks() -> None:
    names = {field.name for field in dataclasses.fields(Rules)}
    assert set(KNOB_ROWS) <= names


@pytest.mark.parametrize("name", presets())
def test_every_preset_is_in_the_rules_doc_and_the_readme(name: str) -> None:
    assert name in table_rows("Presets"), f"docs/rules.md has no preset row for {name}"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"`{name}`" in readme, f"README.md does not list the preset {name}"


def test_no_doc_points_at_files_the_reader_lacks() -> None:
    docs = [p for p in (ROOT / "docs").rglob("*") if p.is_file()] + [ROOT / "README.md"]
    for path in docs:
        text = path.read_text(encoding="utf-8")
        for missing in ("RULES.md", "seeds/"):
            assert missing not in text, f"{path.relative_to(ROOT)} mentions {missing}"
