"""Rules as data: one frozen set of knobs, and named presets.

Every rule knob (``docs/rules.md``) is a field of :class:`Rules`. A game record carries
``Rules.record_dict()``: every knob of record format 1, and a knob added since only when
it differs from what its absence meant before it existed. :meth:`Rules.from_record` reads
that back strictly, so a record keeps the rules it was played under.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from referee.engine.errors import RulesError
from referee.engine.registry import Family, families, family

SIGNAL_MODES = ("any", "leader", "muto")
STRISCIO_MEANINGS = ("more", "more_no_honours")
CAPPOTTO_MODES = ("none", "double", "fixed")
WIDOW_MODES = ("last_trick",)
FIRST_LEADS = ("eldest", "four_of_denari")
AUCTION_MODES = ("once", "open")
STRISCIO_CORTO_MEANINGS = ("three", "one_to_three")

STANDARD_CARD_VALUES = (1, 1, 3, 1, 1, 1, 0, 0, 0, 0)
"""Thirds of a point per rank ``3 2 A K Q J 7 6 5 4``: the ace 3/3, figures and pezzi 1/3."""


@dataclass(frozen=True)
class Rules:
    """The complete rule set of one game. Defaults are the ``tressette`` preset."""

    game: str = "tressette"
    """The game family (``referee.engine.registry``): ``tressette`` (4 seats, partners 0+2
    and 1+3), ``tressette-a-tre`` (3 seats, each alone), ``ciapano`` (4 seats, each alone,
    points count against), ``tressette-a-due`` (2 seats) or ``calabresella``."""
    target: int = 41
    """Game points a side needs; checked at the end of each deal."""
    card_values: tuple[int, ...] = STANDARD_CARD_VALUES
    """Thirds of a point for each rank, in rank order ``3 2 A K Q J 7 6 5 4``."""
    declarations: bool = True
    """Whether accusi (napoli, buon gioco, quattro) may be declared at all."""
    quattro_points: int = 4
    """Points for all four 3s, 2s or aces (seed 002 gives 3)."""
    declaration_limit: int = 0
    """Most combinations one player may declare in a deal; 0 means no limit."""
    declare_before_first_card: bool = False
    """All declarations happen in a round before the first card is led."""
    auto_declare: bool = False
    """The referee declares every held combination for each player."""
    signals: str = "any"
    """Who may signal: ``any`` player, the trick ``leader`` from trick 2, or ``muto`` (none)."""
    striscio_meaning: str = "more"
    """Striscio says ``more`` cards of the suit remain, or ``more_no_honours`` (none a 3, 2, A)."""
    striscio_lengths: bool = False
    """Striscio is said as lungo (4+ more cards) or corto (see ``striscio_corto``) instead
    of plain; with fewer more cards than corto needs there is no striscio to give."""
    ribusso: bool = False
    """Whether ribusso, a stronger busso on leading, is allowed."""
    cappotto: str = "fixed"
    """Winning every trick: ``none``, ``double`` (the deal counts double) or ``fixed`` (12)."""
    cappotto_cancels_declarations: bool = True
    """The side shut out of every trick also loses its declarations."""
    call_out: bool = False
    """Chiamarsi fuori: the leader may claim the target has been reached."""
    widow: str = "last_trick"
    """Tressette a tre: the 4 undealt cards go to the winner of the last trick."""
    briscola: bool = False
    """Tressette con la briscola: the dealer's last card is shown and its suit is trump."""
    table_seats: int = 3
    """Calabresella: players at the table, 3 or 4 (with 4 the dealer sits each deal out)."""
    stramazzo: bool = True
    """Calabresella: one side taking every card point without every trick triples the deal."""
    first_lead: str = "eldest"
    """Who leads the first trick of a deal: the ``eldest`` (the seat after the dealer), or
    the holder of the 4 of denari (``four_of_denari``: every card must be dealt)."""
    auction: str = "once"
    """Calabresella: the auction goes round ``once`` (each player speaks once, the highest
    contract wins), or stays ``open`` until two players have passed."""
    striscio_corto: str = "three"
    """With ``striscio_lengths``: corto is exactly ``three`` more cards of the suit, or
    ``one_to_three`` (the first reading, before 2026-12-01)."""

    def __getstate__(self) -> dict[str, Any]:
        # Only the knobs: the cached facts (the family holds functions) are found again
        # where the rules are unpickled (a referee shard, a cluster worker).
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @functools.cached_property
    def family(self) -> Family:
        """The game family these rules are played by.

        Cached on the instance, as are the seat facts below: the engine reads them on
        every deal. (A frozen dataclass keeps them out of equality and hashing.)
        """
        return family(self.game)

    @functools.cached_property
    def players(self) -> int:
        """Seats at the table."""
        return self.family.players(self)

    @functools.cached_property
    def partnerships(self) -> bool:
        """Whether seats play in two sides of two."""
        return self.family.partnerships

    @functools.cached_property
    def lower_wins(self) -> bool:
        """Ciapanò: points count against; reaching the target loses and the lowest total wins."""
        return self.family.lower_wins

    @functools.cached_property
    def sides(self) -> int:
        """Number of scoring sides."""
        return 2 if self.partnerships else self.players

    @functools.cached_property
    def hand_size(self) -> int:
        """Cards dealt to each seat."""
        return self.family.hand_size

    def side_of(self, seat: int) -> int:
        """The scoring side of a seat."""
        return seat % 2 if self.partnerships else seat

    def seats_of(self, side: int) -> list[int]:
        """The seats of a side, in seat order."""
        return [seat for seat in range(self.players) if self.side_of(seat) == side]

    def to_dict(self) -> dict[str, Any]:
        """Every knob, JSON-ready, in field order."""
        out = dataclasses.asdict(self)
        out["card_values"] = list(self.card_values)
        return out

    def record_dict(self) -> dict[str, Any]:
        """The knobs a record's header holds: a knob added after record format 1 only when
        it differs from what a header without it means (:meth:`from_record`), so records
        written before it keep their bytes and their rules.
        """
        out = self.to_dict()
        for key in _LATER_KNOBS:
            if out[key] == _absent_value(key, self):
                del out[key]
        return out

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> Rules:
        """The rules of a record header's ``rules``: a later knob it lacks takes the value
        it had before the knob existed (``_LATER_KNOBS``), never today's default."""
        if not isinstance(data, Mapping):
            raise RulesError(f"rules must be a table of knobs, got {type(data).__name__}")
        checked = {key: _check_knob(key, value) for key, value in data.items()}
        known = dataclasses.replace(
            cls(), **{k: v for k, v in checked.items() if k not in _LATER_KNOBS}
        )
        for key in _LATER_KNOBS:
            if key not in checked:
                checked[key] = _absent_value(key, known)
        rules = dataclasses.replace(cls(), **checked)
        rules.validate()
        return rules

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, base: Rules | None = None) -> Rules:
        """Knobs from a mapping; unknown knobs and bad values raise :class:`RulesError`."""
        if not isinstance(data, Mapping):
            raise RulesError(f"rules must be a table of knobs, got {type(data).__name__}")
        rules = base or cls()
        changes: dict[str, Any] = {}
        for key, value in data.items():
            changes[key] = _check_knob(key, value)
        rules = dataclasses.replace(rules, **changes)
        rules.validate()
        return rules

    def with_knobs(self, assignments: list[str]) -> Rules:
        """Apply ``knob=value`` texts, as given on the command line."""
        data: dict[str, Any] = {}
        for item in assignments:
            key, sep, text = item.partition("=")
            if not sep:
                raise RulesError(f"rule {item!r} must be written knob=value")
            data[key.strip()] = _parse_text(key.strip(), text.strip())
        return Rules.from_dict(data, base=self)

    def validate(self) -> None:
        """Raise :class:`RulesError` when knobs contradict each other."""
        if self.declaration_limit < 0:
            raise RulesError("knob 'declaration_limit' must be 0 (no limit) or more")
        if self.call_out and self.lower_wins:
            raise RulesError("knob 'call_out' has no meaning in ciapanò: nobody wants points")
        if self.first_lead == "four_of_denari" and self.players * self.hand_size != 40:
            raise RulesError(
                "knob 'first_lead' = four_of_denari needs every card dealt (four seats of 10)"
            )
        problem = self.family.check(self) if self.family.check else None
        if problem:
            raise RulesError(problem)


_FIELDS = {f.name: f for f in dataclasses.fields(Rules)}
_LATER_KNOBS: dict[str, Any] = {
    "briscola": False,
    "table_seats": 3,
    "stramazzo": False,
    "first_lead": "eldest",
    "auction": "open",
    "striscio_corto": "one_to_three",
}
"""Knobs added after record format 1, in the order they were added, each with what a
record header without it means: the rule played before the knob existed. (Stramazzo was
off, the auction open and corto 1 to 3 more cards until 2026-12-01.)"""
_APPLIES: dict[str, Callable[[Rules], bool]] = {
    "stramazzo": lambda rules: rules.game == "calabresella",
    "auction": lambda rules: rules.game == "calabresella",
    "striscio_corto": lambda rules: rules.striscio_lengths,
}
"""Where a later knob has a meaning; elsewhere a header without it means today's default,
so that, say, a Tressette record need not name Calabresella's auction."""


def _absent_value(key: str, rules: Rules) -> Any:
    """What a record header of ``rules`` that lacks the later knob ``key`` means."""
    applies = _APPLIES.get(key)
    if applies is None or applies(rules):
        return _LATER_KNOBS[key]
    return _FIELDS[key].default


_CHOICES: dict[str, tuple[str, ...]] = {
    "signals": SIGNAL_MODES,
    "striscio_meaning": STRISCIO_MEANINGS,
    "cappotto": CAPPOTTO_MODES,
    "widow": WIDOW_MODES,
    "first_lead": FIRST_LEADS,
    "auction": AUCTION_MODES,
    "striscio_corto": STRISCIO_CORTO_MEANINGS,
}
_INT_RANGES = {
    "target": (1, 10_000),
    "quattro_points": (0, 100),
    "declaration_limit": (0, 19),
    "table_seats": (3, 4),
}


def _check_knob(key: str, value: Any) -> Any:
    if key not in _FIELDS:
        known = ", ".join(_FIELDS)
        raise RulesError(f"unknown knob {key!r}; knobs are: {known}")
    default = _FIELDS[key].default
    if key == "game":
        if value not in families():
            raise RulesError(
                f"knob 'game' cannot be {value!r}; choose one of {', '.join(families())}"
            )
        return value
    if key in _CHOICES:
        if value not in _CHOICES[key]:
            raise RulesError(
                f"knob {key!r} cannot be {value!r}; choose one of {', '.join(_CHOICES[key])}"
            )
        return value
    if key == "card_values":
        if (
            not isinstance(value, list | tuple)
            or len(value) != 10
            or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
        ):
            raise RulesError(
                "knob 'card_values' must be 10 whole thirds, one per rank 3 2 A K Q J 7 6 5 4"
            )
        return tuple(value)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise RulesError(f"knob {key!r} must be true or false, got {value!r}")
        return value
    if isinstance(default, int):
        if not isinstance(value, int) or isinstance(value, bool):
            raise RulesError(f"knob {key!r} must be a whole number, got {value!r}")
        low, high = _INT_RANGES[key]
        if not low <= value <= high:
            raise RulesError(f"knob {key!r} must be between {low} and {high}, got {value}")
        return value
    raise RulesError(f"knob {key!r} cannot be set")  # pragma: no cover - every field is typed


def _parse_text(key: str, text: str) -> Any:
    """A knob value from command-line text, typed by the knob's default."""
    if key not in _FIELDS:
        return text  # _check_knob names the unknown knob
    default = _FIELDS[key].default
    if key == "card_values":
        try:
            return [int(v) for v in text.split(",")]
        except ValueError:
            raise RulesError(
                f"knob 'card_values' must be 10 comma-separated thirds, got {text!r}"
            ) from None
    if isinstance(default, bool):
        lowered = text.lower()
        if lowered in ("true", "on", "yes", "1"):
            return True
        if lowered in ("false", "off", "no", "0"):
            return False
        raise RulesError(f"knob {key!r} must be true or false, got {text!r}")
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            raise RulesError(f"knob {key!r} must be a whole number, got {text!r}") from None
    return text
