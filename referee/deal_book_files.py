"""Deal books read from files (the engine parses them: ``referee.engine.deal_book``)."""

from __future__ import annotations

from pathlib import Path

from referee.engine.deal_book import BookError, DealBook, parse_book
from referee.engine.rules import Rules


def read_book_bytes(path: Path) -> bytes:
    """A book file's bytes; :class:`BookError` naming the file if it cannot be read."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise BookError(str(path), None, f"cannot read the deal book: {exc.strerror}") from None


def read_book(path: Path, rules: Rules) -> DealBook:
    """The deal book in ``path``, every line checked as a deal of ``rules``."""
    return parse_book(read_book_bytes(path), rules, str(path))
