"""The pages' shared parts: the jinja2 templates, the assets they ship, safe embedding."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

HERE = Path(__file__).resolve().parent
ASSETS = HERE / "assets"
"""The JavaScript and CSS the pages use, copied into a report's ``assets/`` folder."""


@cache
def environment() -> jinja2.Environment:
    """The templates of ``templates/``: autoescaped, and an undefined name is an error."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(template: str, **context: Any) -> str:
    """The page ``template`` makes of ``context``.

    Every page extends ``base.html.j2``, which wants ``title``, ``crumbs`` ((label, href or
    None) pairs), ``styles`` and ``scripts`` (asset names) and ``assets``: the relative URL
    of the assets folder, or None to inline each asset (a page that stands alone).
    """
    context.setdefault("inline", asset_text)
    return environment().get_template(template).render(**context)


def asset_names() -> list[str]:
    """The files of ``assets/``, sorted."""
    return sorted(p.name for p in ASSETS.iterdir() if p.is_file())


def asset_text(name: str) -> str:
    """One asset's text, to inline in a page that must stand alone."""
    return (ASSETS / name).read_text(encoding="utf-8")


def script_json(value: Any) -> str:
    """``value`` as JSON that is safe inside ``<script>``: no ``</script>``, no ``<!--``.

    Only ``<``, ``>`` and ``&`` are escaped (as ``\\u003c`` …), so ``JSON.parse`` gives back
    exactly ``value``; a record line embedded this way parses to the same object.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
