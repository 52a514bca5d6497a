"""One tensor encoding of what a seat knows, shared by every family, and the action table.

A tensor is a flat vector of floats in named sections (:data:`OBSERVATION_SECTIONS`, then
:data:`HISTORY_SECTIONS` for the information state), the same layout for every family;
the sections a family has no use for stay 0. Seats are *relative*: 0 is the seat that
observes, 1 the next in playing order, and so on, so one network plays every seat. Sides
likewise: 0 is the observer's side. Most entries are 0 or 1 (a card held, a card played
by seat r); the few others are shares: points captured (0..1) and game points toward the
target (-1..1, for Calabresella's go below 0).

An encoding is computed as its non-zero entries (:func:`observation_entries`,
:func:`information_state_entries`): index -> value. The environments scatter them into
an array (numpy), so a step costs what the entries cost, not the tensor's size.

Actions are the engine's ids, unchanged: the mask has :func:`num_actions` entries, of
which the family's unused ids are never legal (:func:`action_table` lists the used ones).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from referee.engine.cards import NUM_CARDS, RANKS_PER_SUIT
from referee.engine.codec import Action, ActionError
from referee.engine.game_base import AnyGame
from referee.engine.observation import Observation
from referee.engine.observation import Phase as TrickPhase
from referee.engine.registry import family
from referee.engine.rules import Rules
from referee.families.calabresella.auction import BID_PASS
from referee.families.calabresella.deal import CalabresellaObservation
from referee.families.calabresella.deal import Phase as AuctionPhase
from referee.families.tressette.declarations import DECLARATION_NAMES

SUITS = NUM_CARDS // RANKS_PER_SUIT
MAX_SEATS = 4
"""Seats the layout has room for; a game of fewer leaves the rest 0."""
SIGNALS = 6
"""Signal kinds after ``none`` (busso, volo, striscio, ribusso, striscio lungo, corto)."""
BIDS = 6
"""Calabresella's bids: pass, then the five contracts."""
MAX_PLAYS = NUM_CARDS
"""Cards played in one deal, at most: every card once."""
MAX_BIDS = 16
"""Bids of one auction the history has room for."""
PHASES = (
    "declare", "play", "over", "auction", "call", "give", "discard", "split",
)  # fmt: skip
"""Every family's phases, one entry each: Tressette's declaration round, playing tricks,
the deal over, and Calabresella's auction and the steps of its contracts."""


@dataclass(frozen=True)
class Section:
    """A named run of a tensor's entries."""

    name: str
    size: int
    text: str
    start: int = 0


def _laid_out(sections: Iterable[tuple[str, int, str]], start: int = 0) -> tuple[Section, ...]:
    out = []
    for name, size, text in sections:
        out.append(Section(name, size, text, start))
        start += size
    return tuple(out)


_SEATS_X_CARDS = MAX_SEATS * NUM_CARDS
OBSERVATION_SECTIONS = _laid_out([
    ("hand", NUM_CARDS, "the observer's cards now"),
    ("trick", _SEATS_X_CARDS, "the current trick: card played by relative seat r, r*40 + card"),
    ("played", _SEATS_X_CARDS, "cards relative seat r played in this deal's completed tricks"),
    ("won", 2 * NUM_CARDS, "cards in tricks won by the observer's side (0) or another (1)"),
    ("trump", NUM_CARDS, "the face-up trump card (tressette con la briscola, Briscola)"),
    ("drawn", _SEATS_X_CARDS, "cards the observer saw relative seat r draw from the stock"),
    ("monte", NUM_CARDS, "the monte (or widow) cards the observer has been shown"),
    ("given", NUM_CARDS, "cards the observer handed another player (Calabresella's chiamo)"),
    ("received", NUM_CARDS, "cards another player handed the observer (chiamo)"),
    ("discarded", NUM_CARDS, "the observer's own discards"),
    ("called", NUM_CARDS, "the card the soloist called (chiamo)"),
    ("signals", MAX_SEATS * SIGNALS * 4,
     "relative seat r made signal k (1..6) on suit s this deal: (r*6 + k-1)*4 + s"),
    ("declarations", MAX_SEATS * len(DECLARATION_NAMES),
     "relative seat r declared combination d: r*19 + d"),
    ("bids", MAX_SEATS * BIDS, "relative seat r bid b (0 pass, 1..5 the contracts): r*6 + b"),
    ("contract", BIDS, "the contract won (1..5); 0 for none yet"),
    ("soloist", MAX_SEATS, "the soloist's relative seat"),
    ("called_holder", MAX_SEATS, "the relative seat that handed the called card over"),
    ("called_in_monte", 1, "1 if the called card was in the monte"),
    ("phase", len(PHASES), "one of " + ", ".join(PHASES)),
    ("to_act", MAX_SEATS, "the relative seat to act"),
    ("dealer", MAX_SEATS, "the dealer's relative seat"),
    ("leader", MAX_SEATS, "the relative seat that led the current trick"),
    ("captured", MAX_SEATS,
     "card points captured this deal by relative side i, over all the cards' points"),
    ("totals", MAX_SEATS,
     "game points of relative side i before this deal over the target, clipped to -1..1"),
    ("progress", 2, "tricks completed over the deal's tricks; cards left in the stock over 40"),
])  # fmt: skip
OBSERVATION_SIZE = sum(s.size for s in OBSERVATION_SECTIONS)
_PLAY = NUM_CARDS + MAX_SEATS + 1 + SIGNALS
_BID = MAX_SEATS + BIDS
HISTORY_SECTIONS = _laid_out(
    [
        ("plays", MAX_PLAYS * _PLAY,
         "play i of the deal, in order: card (40), relative seat (4), signal (7, 0 none)"),
        ("auction", MAX_BIDS * _BID, "bid i of the auction, in order: relative seat (4), bid (6)"),
    ],
    OBSERVATION_SIZE,
)  # fmt: skip
INFORMATION_STATE_SIZE = OBSERVATION_SIZE + sum(s.size for s in HISTORY_SECTIONS)
_AT = {s.name: s.start for s in (*OBSERVATION_SECTIONS, *HISTORY_SECTIONS)}

Entries = dict[int, float]
"""A tensor's non-zero entries: index -> value."""


class EncodingError(ValueError):
    """An observation the encoding has no room for."""


class SettledCache:
    """What an encoding of a deal's completed tricks was, per seat, to reuse while the
    deal goes on: an environment keeps one, so a step encodes only what changed."""

    def __init__(self) -> None:
        self._by_seat: dict[tuple[int, bool], tuple[object, int, Entries]] = {}

    def get(self, seat: int, deal: object, history: bool = False) -> tuple[int, Entries]:
        """How many of ``deal``'s completed tricks are encoded for ``seat`` (with the
        history sections if ``history``), and their entries (0 and none for a deal it has
        not seen)."""
        found = self._by_seat.get((seat, history))
        if found is None or found[0] is not deal:
            return 0, {}
        return found[1], found[2]

    def extend(
        self, seat: int, deal: object, history: bool, tricks: int, added: Entries
    ) -> Entries:
        """``deal``'s first ``tricks`` completed tricks are now encoded for ``seat``:
        ``added`` is what the tricks after those encoded before add; the whole entries."""
        found = self._by_seat.get((seat, history))
        if found is None or found[0] is not deal:
            entries = dict(added)
        else:
            entries = found[2]  # the cache's own: extended in place
            entries.update(added)
        # The deal itself is held, so that its id is never another deal's.
        self._by_seat[(seat, history)] = (deal, tricks, entries)
        return entries


def observation_entries(state: AnyGame, seat: int, cache: SettledCache | None = None) -> Entries:
    """What ``seat`` knows of ``state`` now, encoded (:data:`OBSERVATION_SECTIONS`);
    ``cache`` keeps the completed tricks' part from one call to the next."""
    live: Entries = {}
    out = dict(_observed(state, seat, live, cache, False))
    out.update(live)
    return out


def information_state_entries(
    state: AnyGame, seat: int, cache: SettledCache | None = None
) -> Entries:
    """:func:`observation_entries`, and every play and bid of the deal in order
    (:data:`HISTORY_SECTIONS`): what ``seat`` has seen, with perfect recall of the deal."""
    live: Entries = {}
    out = dict(_observed(state, seat, live, cache, True))
    out.update(live)
    return out


def _observed(
    state: AnyGame, seat: int, out: Entries, cache: SettledCache | None, history: bool
) -> Entries:
    """Writes into ``out`` what does not come from completed tricks; returns the
    completed tricks' entries."""
    obs: Observation | CalabresellaObservation = state.observation(seat)
    rules = state.rules
    table = _seating(rules)
    rel = table.rel[seat]
    tricks, trick = obs.tricks, obs.trick
    if cache is None:
        settled = _settled(obs, table, seat, 0, history)
    else:
        done, settled = cache.get(seat, state.deal, history)
        if done != len(tricks):
            added = _settled(obs, table, seat, done, history)
            settled = cache.extend(seat, state.deal, history, len(tricks), added)
    if isinstance(obs, CalabresellaObservation):
        _calabresella(obs, rel, out)
        captured_by: tuple[int, ...] = _calabresella_sides(obs, seat)
    else:
        _trick_family(obs, rel, out)
        captured_by = table.rel_side[seat]
    at = _AT["hand"]
    for card in obs.hand:
        out[at + card] = 1.0
    at = _AT["trick"]
    for s, action in trick:
        out[at + rel[s] * NUM_CARDS + action % NUM_CARDS] = 1.0
    if trick:
        out[_AT["leader"] + rel[trick[0][0]]] = 1.0
    if obs.current_player is not None:
        out[_AT["to_act"] + rel[obs.current_player]] = 1.0
    out[_AT["dealer"] + rel[obs.dealer]] = 1.0
    for side, points in zip(captured_by, obs.captured, strict=True):
        if points:
            out[_AT["captured"] + side] = points / table.points
    rel_side = table.rel_side[seat]
    for side, points in enumerate(state.totals):
        if points:
            # Calabresella's totals go below 0, and far: a share of the target, clipped.
            share = max(-1.0, min(1.0, points / rules.target))
            out[_AT["totals"] + rel_side[side]] = share
    if history:
        _history(obs, rel, out)
    return settled


def _history(
    obs: Observation | CalabresellaObservation, rel: tuple[int, ...], out: Entries
) -> None:
    """The history sections but the completed tricks' plays (:func:`_settled`'s): the
    current trick's plays, after those, and the auction."""
    first = sum(len(plays) for plays, _ in obs.tricks)
    _plays(out, obs.trick, first, rel, isinstance(obs, Observation))
    if isinstance(obs, CalabresellaObservation):
        if len(obs.bids) > MAX_BIDS:
            raise EncodingError(
                f"{len(obs.bids)} bids in an auction; the encoding holds {MAX_BIDS}"
            )
        for i, (s, bid) in enumerate(obs.bids):
            at = _AT["auction"] + i * _BID
            out[at + rel[s]] = 1.0
            out[at + MAX_SEATS + bid - BID_PASS] = 1.0


def _plays(
    out: Entries,
    plays: Iterable[tuple[int, Action]],
    first: int,
    rel: tuple[int, ...],
    signals: bool,
) -> None:
    """``plays`` as the deal's plays ``first``, ``first + 1``, ... (the ``plays`` section)."""
    for i, (s, action) in enumerate(plays, first):
        at = _AT["plays"] + i * _PLAY
        out[at + action % NUM_CARDS] = 1.0
        out[at + NUM_CARDS + rel[s]] = 1.0
        out[at + NUM_CARDS + MAX_SEATS + (action // NUM_CARDS if signals else 0)] = 1.0


def dense(entries: Entries, size: int) -> list[float]:
    """``entries`` as a list of ``size`` floats (for tools without numpy)."""
    out = [0.0] * size
    for index, value in entries.items():
        out[index] = value
    return out


@dataclass(frozen=True)
class _Seating:
    """Relative seats and sides of a table, looked up rather than computed each time."""

    rel: tuple[tuple[int, ...], ...]
    """``rel[observer][seat]``: ``seat`` as ``observer`` sees it."""
    rel_side: tuple[tuple[int, ...], ...]
    """``rel_side[observer][side]``."""
    other_side: tuple[tuple[int, ...], ...]
    """``other_side[observer][seat]``: 0 if ``seat`` is of the observer's side, else 1."""
    tricks: int
    """Tricks a deal plays."""
    points: int
    """A deal's card points, in the unit ``captured`` counts."""


_SEATINGS: dict[int, tuple[Rules, _Seating]] = {}


def _seating(rules: Rules) -> _Seating:
    # By identity: hashing the rules' knobs on every step cost more than the lookup saves.
    found = _SEATINGS.get(id(rules))
    if found is None or found[0] is not rules:
        found = _SEATINGS[id(rules)] = (rules, _seating_of(rules))
    return found[1]


def _seating_of(rules: Rules) -> _Seating:
    n, sides = rules.players, rules.sides
    side = [rules.side_of(s) for s in range(n)]
    return _Seating(
        rel=tuple(tuple((s - o) % n for s in range(n)) for o in range(n)),
        rel_side=tuple(tuple((x - side[o]) % sides for x in range(sides)) for o in range(n)),
        other_side=tuple(tuple(int(side[s] != side[o]) for s in range(n)) for o in range(n)),
        tricks=tricks_a_deal(rules),
        # Every card's value, in the unit captured counts (thirds of a point in Tressette
        # and Calabresella, Briscola's points): what tricks can capture.
        points=SUITS * sum(rules.card_values),
    )


def _settled(
    obs: Observation | CalabresellaObservation,
    table: _Seating,
    seat: int,
    done: int,
    history: bool,
) -> Entries:
    """What the deal's completed tricks after the first ``done`` add to ``seat``'s
    encoding (with their plays in the history sections if ``history``); no later action of
    the deal changes it."""
    out: Entries = {}
    rel, other = table.rel[seat], table.other_side[seat]
    played, won = _AT["played"], _AT["won"]
    signals = _AT["signals"] if isinstance(obs, Observation) else None
    new = obs.tricks[done:]
    for plays, winner in new:
        won_at = won + other[winner] * NUM_CARDS
        for s, action in plays:
            card = action % NUM_CARDS
            out[played + rel[s] * NUM_CARDS + card] = 1.0
            out[won_at + card] = 1.0
            if signals is not None and action >= NUM_CARDS:
                index = (rel[s] * SIGNALS + action // NUM_CARDS - 1) * 4 + card // 10
                out[signals + index] = 1.0
    if history:
        first = sum(len(plays) for plays, _ in obs.tricks[:done])
        _plays(out, (p for plays, _ in new for p in plays), first, rel, signals is not None)
    if obs.tricks:
        out[_AT["progress"]] = len(obs.tricks) / table.tricks
    return out


_TRICK_PHASES = {TrickPhase.DECLARE: "declare", TrickPhase.PLAY: "play", TrickPhase.DONE: "over"}
_TRICK_PHASE_INDEX = {phase: PHASES.index(name) for phase, name in _TRICK_PHASES.items()}


def tricks_a_deal(rules: Rules) -> int:
    """Tricks one deal plays: a hand's worth, or every card's where the stock is drawn."""
    fam = rules.family
    return NUM_CARDS // rules.players if fam.leftover == "stock" else fam.hand_size


def _trick_family(obs: Observation, rel: tuple[int, ...], out: Entries) -> None:
    out[_AT["phase"] + _TRICK_PHASE_INDEX[obs.phase]] = 1.0
    if obs.trump is not None:
        out[_AT["trump"] + obs.trump] = 1.0
    at = _AT["drawn"]
    for s, card in obs.draws:
        out[at + rel[s] * NUM_CARDS + card] = 1.0
    at = _AT["signals"]
    for s, action in obs.trick:  # the completed tricks' signals are settled
        if action >= NUM_CARDS:
            index = (rel[s] * SIGNALS + action // NUM_CARDS - 1) * 4 + (action % NUM_CARDS) // 10
            out[at + index] = 1.0
    at, kinds = _AT["declarations"], len(DECLARATION_NAMES)
    for s, declaration in obs.declarations:
        out[at + rel[s] * kinds + declaration] = 1.0
    if obs.stock_left:
        out[_AT["progress"] + 1] = obs.stock_left / NUM_CARDS


_AUCTION_PHASES = {
    AuctionPhase.AUCTION: "auction", AuctionPhase.CALL: "call", AuctionPhase.GIVE: "give",
    AuctionPhase.DISCARD: "discard", AuctionPhase.SPLIT: "split", AuctionPhase.PLAY: "play",
    AuctionPhase.OVER: "over",
}  # fmt: skip


def _calabresella(obs: CalabresellaObservation, rel: tuple[int, ...], out: Entries) -> None:
    out[_AT["phase"] + PHASES.index(_AUCTION_PHASES[obs.phase])] = 1.0
    _cards(out, "monte", obs.monte)
    _cards(out, "given", obs.given)
    _cards(out, "received", obs.received)
    _cards(out, "discarded", obs.discards)
    if obs.called is not None:
        out[_AT["called"] + obs.called] = 1.0
    for s, bid in obs.bids:
        out[_AT["bids"] + rel[s] * BIDS + bid - BID_PASS] = 1.0
    if obs.contract is not None:
        out[_AT["contract"] + int(obs.contract)] = 1.0
    if obs.soloist is not None:
        out[_AT["soloist"] + rel[obs.soloist]] = 1.0
    if obs.called_holder is not None:
        out[_AT["called_holder"] + rel[obs.called_holder]] = 1.0
    if obs.called_in_monte:
        out[_AT["called_in_monte"]] = 1.0


def _calabresella_sides(obs: CalabresellaObservation, seat: int) -> tuple[int, int]:
    """Where Calabresella's (soloist, defenders) captures go: the observer's side first."""
    return (0, 1) if obs.soloist == seat else (1, 0)


def _cards(out: Entries, section: str, cards: Iterable[int]) -> None:
    at = _AT[section]
    for card in cards:
        out[at + card] = 1.0


# -- actions ------------------------------------------------------------------------------

ACTION_ID_LIMIT = 1024
"""Every family's action ids are below it (the codecs' tables)."""


@dataclass(frozen=True)
class ActionRow:
    """One action of a family's table."""

    id: Action
    kind: str
    text: str


@cache
def action_table(game: str) -> tuple[ActionRow, ...]:
    """Every action id of family ``game``, with its kind and text, in id order."""
    codec = family(game).codec
    out = []
    for action in range(ACTION_ID_LIMIT):
        try:
            parts = codec.decode(action)
        except ActionError:
            continue
        out.append(ActionRow(action, parts.kind, codec.name(action)))
    return tuple(out)


def num_actions(game: str) -> int:
    """The mask's length for family ``game``: its highest action id, plus one."""
    return action_table(game)[-1].id + 1


def legal_ids(state: AnyGame, seat: int) -> Sequence[Action]:
    """The actions ``seat`` may take now: the state's legal ones if it is to act, else none."""
    return state.legal_actions() if state.current_player() == seat else ()
