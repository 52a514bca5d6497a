"""Every Tavolo preset as an OpenSpiel game: ``pyspiel.load_game("tavolo_tressette")``
once this module is imported (docs/research.md, "OpenSpiel").

A game's name is ``tavolo_`` and the preset's, ``-`` written ``_`` (:data:`GAMES`). Its
parameters are the preset's knobs (``Rules.to_dict()`` but ``game``, which the name
says; ``card_values`` as ten numbers apart by spaces) and ``deals``: how many deals an
episode plays, 1 by default; 0 plays to the target as ``tavolo`` does, cut short as a
draw after :data:`~.dealt_game.MAX_DEALS` deals. Knobs the rules refuse raise.

The rules engine plays underneath (:mod:`.dealt_game`): legal actions, actions, returns
and the seat to act are the engine's, action names its codec's (``3D busso``). Chance
deals the cards one at a time (explicit chance outcomes, as OpenSpiel's bridge and hearts
deal): first the dealer, then each deal's deck card by card, uniformly among the cards
left; so search can enumerate a deal, and a seed's outcomes deal what ``tavolo`` deals.
Returns are the engine's: 1 for each seat of the winning side, the losers sharing -1,
partners alike; all 0 for a draw. The tensors are :mod:`.encoding`'s, unchanged: the
information state has the deal's plays in order, the observation has not.

``resample_from_infostate`` (what IS-MCTS asks of a state) draws, for the seat to act, a
game in which that seat has seen exactly what it has seen here (:mod:`.resample`).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pyspiel

from referee.engine.cards import CARD_NAMES, NUM_CARDS
from referee.engine.codec import Action
from referee.engine.registry import preset, presets
from referee.engine.rules import Rules
from referee.families.tressette.declarations import DECLARATION_NAMES
from referee.research.arrays import information_state_tensor, observation_tensor
from referee.research.dealt_game import MAX_DEALS, DealtGame
from referee.research.encoding import (
    HISTORY_SECTIONS,
    INFORMATION_STATE_SIZE,
    MAX_BIDS,
    OBSERVATION_SECTIONS,
    OBSERVATION_SIZE,
    num_actions,
)
from referee.research.resample import resample

PREFIX = "tavolo_"
_STEPS = {
    "play": NUM_CARDS, "declare": len(DECLARATION_NAMES), "call-out": 1, "bid": MAX_BIDS,
    "call": 1, "give": 1, "discard": 4, "split": 1,
}  # fmt: skip
"""The most actions of each kind one deal can ask for (``end-declarations``: one a seat)."""


def game_name(preset_name: str) -> str:
    """The OpenSpiel name of a preset: ``tavolo_tressette_a_due`` for ``tressette-a-due``."""
    return PREFIX + preset_name.replace("-", "_")


GAMES = {game_name(name): name for name in presets()}
"""Each OpenSpiel game's name, and the preset it plays."""


def parameters(rules: Rules) -> dict[str, Any]:
    """The OpenSpiel parameters that give ``rules``, ``deals`` 1."""
    out = {k: v for k, v in rules.to_dict().items() if k != "game"}
    out["card_values"] = " ".join(str(v) for v in rules.card_values)
    out["deals"] = 1
    return out


def rules_of(preset_name: str, params: Mapping[str, Any]) -> tuple[Rules, int | None]:
    """The rules and the deals (None: to the target) of the preset's game with
    ``params``; ``RulesError`` (a ValueError) for knobs the rules refuse."""
    knobs = dict(params)
    deals = knobs.pop("deals", 1)
    if not isinstance(deals, int) or isinstance(deals, bool) or deals < 0:
        raise ValueError(f"deals is 1 or more, or 0 for a game to the target, not {deals!r}")
    values = knobs.get("card_values")
    if isinstance(values, str):
        try:
            knobs["card_values"] = [int(v) for v in values.split()]
        except ValueError:
            raise ValueError(
                f"card_values is ten numbers apart by spaces, not {values!r}"
            ) from None
    return Rules.from_dict(knobs, base=preset(preset_name)), deals or None


def max_actions(rules: Rules, deals: int | None) -> int:
    """A bound on the actions (chance's left out) of a game of ``deals`` deals."""
    a_deal = rules.players + sum(_STEPS.get(kind, 0) for kind in rules.family.kinds)
    return a_deal * (deals or MAX_DEALS)


def _seat_counts(rules: Rules) -> set[int]:
    # The one knob that changes the table's size is Calabresella's table_seats.
    return {rules.family.players(dataclasses.replace(rules, table_seats=n)) for n in (3, 4)}


def _game_type(name: str) -> pyspiel.GameType:
    rules = presets()[name]
    seats = _seat_counts(rules)
    return pyspiel.GameType(
        short_name=game_name(name),
        long_name=f"Tavolo {name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=max(seats),
        min_num_players=min(seats),
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameters(rules),
    )


class TavoloGame(pyspiel.Game):
    """A preset of Tavolo as an OpenSpiel game; :data:`PRESET` says which."""

    PRESET = "tressette"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        params = dict(params or {})
        self.rules, self.deals = rules_of(self.PRESET, params)
        rules = self.rules
        info = pyspiel.GameInfo(
            num_distinct_actions=num_actions(rules.game),
            max_chance_outcomes=NUM_CARDS,
            num_players=rules.players,
            min_utility=-1.0 / (rules.sides - 1),
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=max_actions(rules, self.deals),
        )
        super().__init__(_TYPES[self.PRESET], info, params)

    def new_initial_state(self) -> TavoloState:
        """A game before its first chance outcome (the dealer)."""
        return TavoloState(self)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: Any = None
    ) -> TavoloObserver:
        """The information state (``perfect_recall``) or the observation of one seat."""
        return TavoloObserver(iig_obs_type, params)


class TavoloState(pyspiel.State):
    """A state of a :class:`TavoloGame`: its :attr:`table` plays it."""

    def __init__(self, game: TavoloGame) -> None:
        super().__init__(game)
        self.table = DealtGame(game.rules, game.deals)
        """The Tavolo game under this state; its ``game`` is the engine's."""

    def current_player(self) -> int:
        """The seat to act, or OpenSpiel's chance or terminal player."""
        table = self.table
        if table.is_terminal():
            return int(pyspiel.PlayerId.TERMINAL)
        if table.is_chance():
            return int(pyspiel.PlayerId.CHANCE)
        seat = table.to_act()
        assert seat is not None
        return seat

    def _legal_actions(self, player: int) -> list[Action]:
        return self.table.legal_actions() if player == self.table.to_act() else []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The dealer, or the next card of the deck, uniformly."""
        outcomes = self.table.chance_outcomes()
        return [(o, 1.0 / len(outcomes)) for o in outcomes]

    def _apply_action(self, action: int) -> None:
        self.table.apply(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"dealer {action}" if self.table.dealer is None else f"deal {CARD_NAMES[action]}"
        return self.table.rules.family.codec.name(action)

    def is_terminal(self) -> bool:
        """Whether the game is over."""
        return self.table.is_terminal()

    def returns(self) -> list[float]:
        """Per seat: 1 for the winning side's seats, the losers sharing -1; 0 before."""
        return list(self.table.returns())

    def resample_from_infostate(
        self, player_id: int, probability_sampler: Callable[[], float]
    ) -> TavoloState:
        """A state in which ``player_id``, the seat to act, has the same information state,
        the cards it has not seen drawn again (:func:`~.resample.resample`), from a random
        generator seeded by ``probability_sampler()``."""
        rng = random.Random(int(probability_sampler() * 2**53))
        table = resample(self.table, player_id, rng)
        state: TavoloState = self.get_game().new_initial_state()
        for action in table.history:
            state.apply_action(action)
        return state

    def __str__(self) -> str:
        return table_text(self.table)


class TavoloObserver:
    """One seat's information state (perfect recall of the deal) or observation: the
    tensors of :mod:`.encoding`, with its named sections in :attr:`dict`, and text."""

    def __init__(self, iig_obs_type: pyspiel.IIGObservationType | None, params: Any) -> None:
        if params:
            raise ValueError(f"an observer takes no parameters, got {params}")
        recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        if iig_obs_type is not None and (
            not iig_obs_type.public_info
            or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise ValueError(
                "a Tavolo observer shows one seat's view: public information and its own private"
            )
        self.recall = recall
        sections = (*OBSERVATION_SECTIONS, *HISTORY_SECTIONS) if recall else OBSERVATION_SECTIONS
        self.tensor = np.zeros(INFORMATION_STATE_SIZE if recall else OBSERVATION_SIZE, np.float32)
        self.dict = {s.name: self.tensor[s.start : s.start + s.size] for s in sections}

    def set_from(self, state: TavoloState, player: int) -> None:
        """Fill :attr:`tensor` with ``player``'s view of ``state`` (0 while the first deal
        is dealt)."""
        game = state.table.game
        if game is None:
            self.tensor.fill(0.0)
        elif self.recall:
            self.tensor[:] = information_state_tensor(game, player)
        else:
            self.tensor[:] = observation_tensor(game, player)

    def string_from(self, state: TavoloState, player: int) -> str:
        """``player``'s view of ``state`` as text."""
        return view_text(state.table, player, recall=self.recall)


# -- text ----------------------------------------------------------------------------------


def _cards(cards: Iterable[int]) -> str:
    return " ".join(CARD_NAMES[c] for c in cards) or "-"


def view_text(table: DealtGame, seat: int, *, recall: bool) -> str:
    """What ``seat`` knows of ``table`` now, a line a field of the engine's observation;
    with ``recall`` the deal's tricks in order, else the cards each seat played."""
    game = table.game
    if game is None:
        dealt = len(table.decks[0]) if table.decks else 0
        return f"seat {seat}\ndealer {table.dealer}\ndealing {dealt} of {NUM_CARDS}"
    obs = game.observation(seat)
    name = table.rules.family.codec.name
    lines = [f"deal {game.deal_number}", f"game_totals {' '.join(map(str, game.totals))}"]
    for field in dataclasses.fields(obs):
        value = getattr(obs, field.name)
        key = field.name
        if key in ("legal_actions", "score"):
            continue  # what the seat may do follows from the rest; the score is the totals'
        if key in ("hand", "monte", "given", "received", "discards"):
            text = _cards(value)
        elif key in ("trump", "called"):
            text = "-" if value is None else CARD_NAMES[value]
        elif key in ("trick", "bids"):
            text = " ".join(f"{s}:{name(a)}" for s, a in value) or "-"
        elif key == "draws":
            text = " ".join(f"{s}:{CARD_NAMES[c]}" for s, c in value) or "-"
        elif key == "declarations":
            text = " ".join(f"{s}:{DECLARATION_NAMES[d]}" for s, d in value) or "-"
        elif key == "tricks" and recall:
            text = (
                " | ".join(
                    " ".join(f"{s}:{name(a)}" for s, a in plays) + f" >{winner}"
                    for plays, winner in value
                )
                or "-"
            )
        elif key == "tricks":
            played: dict[int, list[int]] = {}
            for plays, _ in value:
                for s, a in plays:
                    played.setdefault(s, []).append(a % NUM_CARDS)
            text = " ".join(f"{s}:{_cards(sorted(c))}" for s, c in sorted(played.items())) or "-"
            key = "played"
        elif hasattr(value, "name"):
            text = value.name.lower()
        else:
            text = str(value)
        lines.append(f"{key} {text}")
    return "\n".join(lines)


def table_text(table: DealtGame) -> str:
    """The whole of ``table``: the deal's deck, every hand and every action."""
    game = table.game
    lines = [f"{table.rules.game}, dealer {table.dealer}, deal {table.deal_number}"]
    for i, deck in enumerate(table.decks, 1):
        lines.append(f"deck {i}: {_cards(deck)}")
    if game is not None:
        lines.append(f"totals {' '.join(map(str, game.totals))}")
        for seat in range(table.rules.players):
            lines.append(f"seat {seat}: {_cards(game.observation(seat).hand)}")
        name = table.rules.family.codec.name
        number = game.deal_number
        moves = [f"{s}:{name(a)}" for n, s, a in table.moves if n == number]
        lines.append("moves " + (" ".join(moves) or "-"))
    return "\n".join(lines)


# -- registration -------------------------------------------------------------------------

_TYPES = {name: _game_type(name) for name in presets()}
GAME_CLASSES: dict[str, type[TavoloGame]] = {}
"""Each OpenSpiel game's class, by its name (``TavoloTressetteADue`` plays
``tavolo_tressette_a_due``), also a name of this module, where pickle finds it."""
for _short, _preset in GAMES.items():
    # A class for each (not a function making the game): OpenSpiel keeps what it is given
    # until exit, and a class lets the interpreter shut down cleanly.
    _name = "Tavolo" + "".join(part.capitalize() for part in _preset.split("-"))
    GAME_CLASSES[_short] = globals()[_name] = type(_name, (TavoloGame,), {"PRESET": _preset})
    pyspiel.register_game(_TYPES[_preset], GAME_CLASSES[_short])
