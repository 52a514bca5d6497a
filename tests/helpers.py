"""Small helpers for writing hands by hand in tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from referee.engine.cards import CardSet, mask_of, parse_card
from referee.engine.rules import Rules
from referee.families.tressette.actions import parse_action
from referee.families.tressette.deal import TressetteDeal
from referee.families.tressette.game import new_deal


def hand(text: str) -> CardSet:
    """A card set from text such as ``"3D 2D AD"``."""
    return mask_of(parse_card(t) for t in text.split())


def deal_from(rules: Rules, hands: list[str], dealer: int, widow: str = "") -> TressetteDeal:
    """A deal of the given hands, one text per seat."""
    return new_deal(rules, [hand(h) for h in hands], dealer, hand(widow) if widow else 0)


def play(deal: TressetteDeal, *actions: str) -> None:
    """Apply actions written as text (``"3D"``, ``"AS volo"``, ``"declare napoli-D"``)."""
    for text in actions:
        deal.apply_action(parse_action(text))


ONE_SUIT_EACH = [
    "3D 2D AD KD QD JD 7D 6D 5D 4D",
    "3C 2C AC KC QC JC 7C 6C 5C 4C",
    "3S 2S AS KS QS JS 7S 6S 5S 4S",
    "3B 2B AB KB QB JB 7B 6B 5B 4B",
]
"""Each seat holds one whole suit: whoever leads wins every trick."""


def run_out_leading_own_suit(deal: TressetteDeal) -> None:
    """Play a ONE_SUIT_EACH deal out: every seat plays its highest card each trick."""
    while not deal.is_terminal():
        seat = deal.current_player()
        assert seat is not None
        cards = [a for a in deal.legal_actions() if a < 40]
        deal.apply_action(min(cards))


def record_games(path: Path) -> list[list[dict[str, Any]]]:
    """The games of a match record file, each as its parsed lines."""
    games: list[list[dict[str, Any]]] = []
    for text in path.read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        if line["type"] == "game":
            games.append([])
        games[-1].append(line)
    return games
