"""The ``pimc`` bot: perfect-information Monte Carlo over worlds consistent with what it saw.

    TAVOLO_REFEREE=localhost:50051 TAVOLO_TICKET=... python -m referee.bots.pimc \\
        [--worlds N] [--ms-per-decision MS]

It is a bot of the Python SDK: it sees the protocol's observations only. Each card play
is searched (:mod:`referee.search.pimc`): worlds are sampled from the observation and
replayed through the engine, every legal card is played out in each, and the best on
average is played. The signal it carries, the declarations and call-outs are the
``heuristic`` bot's choices (truthful signals; every combination declared; a call-out
only when sure). Briscola's plays are searched alike, in worlds of its own
(:mod:`referee.search.briscola_worlds`); Calabresella's every step
(:mod:`referee.bots.pimc_calabresella`).

Knobs, from the arguments or else the environment:

- ``--worlds`` / ``TAVOLO_PIMC_WORLDS`` (default 48): worlds per decision;
- ``--ms-per-decision`` / ``TAVOLO_PIMC_MS_PER_DECISION`` (default 400): time per decision,
  never more than the request's deadline less a safety margin (a fifth of it, at least
  50 ms); 0: no clock, every one of the worlds is searched whatever the time (give the
  match a deadline that allows it).

Its randomness is seeded from ``TAVOLO_SEED``, the game and the point of the deal, so a
resumed match replays it exactly, unless the time limit cuts a search short (it says so
on stderr). Without a clock nothing can: the same seed gives the same records on any
machine.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from referee.engine.cards import parse_card
from referee.engine.errors import RulesError
from referee.engine.observation import Observation, Phase
from referee.engine.rules import Rules
from referee.families.tressette.actions import parse_action
from referee.families.tressette.declarations import parse_declaration
from referee.search.pimc import SearchResult, TrickSearch, search_briscola, search_tressette
from tavolo_bot.bot import Bot
from tavolo_bot.bots.heuristic import choose_action, with_signal
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.runner import main as run_main
from tavolo_bot.turn import Turn, card_of

DEFAULT_WORLDS = 48
DEFAULT_MS_PER_DECISION = 400
MIN_MARGIN_MS = 50
"""The least time kept back from a request's deadline: the answer's way back."""

_PHASES = {pb.PHASE_DECLARE: Phase.DECLARE, pb.PHASE_PLAY: Phase.PLAY, pb.PHASE_DONE: Phase.DONE}


CARD_SEARCHES: dict[str, TrickSearch[Any, Any] | None] = {
    "briscola": search_briscola,
    "briscola-a-quattro": search_briscola,
    "calabresella": None,
}
"""The card search of each family that has one of its own, the Tressette families' else;
None for Calabresella, whose every step :mod:`referee.bots.pimc_calabresella` searches."""


def card_search(rules: Rules) -> TrickSearch[Any, Any] | None:
    """How card plays under ``rules`` are searched (None: Calabresella's way): the one
    place pimc tells the families apart."""
    return CARD_SEARCHES.get(rules.game, search_tressette)


class KnobError(ValueError):
    """A bot's knob given a value it cannot take."""


PimcConfigError = KnobError
"""A pimc knob given a value it cannot take."""


def knobs(argv: Sequence[str], env: Mapping[str, str]) -> tuple[int, int]:
    """``(worlds, ms_per_decision)`` from the arguments, else the environment, else defaults."""
    worlds, ms = read_knobs(
        "pimc",
        argv,
        env,
        {
            "worlds": ("TAVOLO_PIMC_WORLDS", DEFAULT_WORLDS, 1),
            "ms-per-decision": ("TAVOLO_PIMC_MS_PER_DECISION", DEFAULT_MS_PER_DECISION, 0),
        },
    )
    return worlds, ms


def read_knobs(
    bot: str,
    argv: Sequence[str],
    env: Mapping[str, str],
    defaults: Mapping[str, tuple[str, int, int]],
) -> list[int]:
    """Whole-number knobs, in the order of ``defaults`` (name: environment variable,
    default, least value), each from ``--name VALUE`` or ``--name=VALUE`` in ``argv``, else
    the environment, else the default; KnobError naming ``bot`` for anything else."""
    values = {key: env.get(var, str(default)) for key, (var, default, _) in defaults.items()}
    args = list(argv)
    while args:
        name = args.pop(0)
        key, eq, value = name.removeprefix("--").partition("=")
        if not name.startswith("--") or key not in values:
            takes = ", ".join(f"--{k}" for k in defaults)
            raise KnobError(f"unknown argument {name!r}; {bot} takes {takes}")
        if not eq:
            if not args:
                raise KnobError(f"--{key} needs a value")
            value = args.pop(0)
        values[key] = value
    out = []
    for key, text in values.items():
        least = defaults[key][2]
        if not text.strip().isdigit() or int(text) < least:
            raise KnobError(f"{key} must be a whole number from {least}, not {text!r}")
        out.append(int(text))
    return out


def engine_observation(turn: Turn) -> Observation:
    """The engine's view of a Tressette-family or Briscola request, read from the protocol
    message (a Briscola play's id is its card's, as a Tressette play's without a signal)."""
    obs = turn.observation

    def plays(items: Sequence[pb.Play]) -> tuple[tuple[int, int], ...]:
        return tuple((p.seat, parse_action(p.action.text)) for p in items)

    return Observation(
        seat=obs.seat,
        dealer=obs.dealer,
        phase=_PHASES[obs.phase],
        hand=tuple(sorted(parse_card(c) for c in obs.hand)),
        current_player=obs.seat,
        legal_actions=tuple(parse_action(a.text) for a in turn.legal),
        trick=plays(obs.trick),
        tricks=tuple((plays(t.plays), t.winner) for t in obs.tricks),
        declarations=tuple((d.seat, parse_declaration(d.declaration)) for d in obs.declarations),
        captured=tuple(obs.captured),
        totals=tuple(obs.totals),
        trump=parse_card(obs.trump) if obs.trump else None,
        draws=tuple((d.seat, parse_card(d.card)) for d in obs.draws),
        stock_left=obs.stock_left,
    )


class PimcBot(Bot):
    """Searches each card play; otherwise plays as ``heuristic`` does."""

    def __init__(
        self, worlds: int = DEFAULT_WORLDS, ms_per_decision: int = DEFAULT_MS_PER_DECISION
    ) -> None:
        self.worlds = worlds
        self.ms_per_decision = ms_per_decision
        self.rules: Rules | None = None
        self.game = 0
        self.owed = 0.0
        """Seconds the last events' handling took that the next search must give back."""
        self.cut_short = 0
        """Searches the time limit stopped before their worlds were done."""

    def on_event(self, event: pb.Event) -> None:
        """Learn the rules from ``MatchStarted`` and the game's number from ``GameStarted``."""
        kind = event.WhichOneof("event")
        if kind == "match_started":
            try:
                self.rules = Rules.from_dict(json.loads(event.match_started.rules_json))
            except (ValueError, RulesError) as exc:
                raise RuntimeError(f"pimc cannot read the match's rules: {exc}") from None
            warm_up = self.rules.family.warm_up
            if warm_up is not None:
                # The engine's tables for these rules take about 0.1 s to build: now, not
                # inside a search. The first request may come in the same message, its
                # deadline already running: that time is taken off its search.
                began = time.monotonic()
                warm_up(self.rules)
                self.owed = time.monotonic() - began
        elif kind == "game_started":
            self.game = event.game_started.game

    def time_limit_ms(self, turn: Turn) -> int:
        """This decision's time: ``ms_per_decision``, within the deadline less its margin."""
        if not turn.deadline_ms:
            return self.ms_per_decision
        margin = max(MIN_MARGIN_MS, turn.deadline_ms // 5)
        return max(1, min(self.ms_per_decision, turn.deadline_ms - margin))

    def seconds_left(self, turn: Turn, started: float) -> float:
        """Seconds the search may take, ``started`` (monotonic) being when the request came
        (less what handling the events before it just cost, once); without a clock
        (``ms_per_decision`` 0) no limit: every world is searched, whatever the time."""
        owed, self.owed = self.owed, 0.0
        if not self.ms_per_decision:
            return math.inf
        return self.time_limit_ms(turn) / 1000 - (time.monotonic() - started) - owed

    def search_seed(self, turn: Turn) -> str:
        """The seed of this decision's search: the stream's seed, the game, the deal, and
        how far the deal has gone (the same point of a replayed game draws the same)."""
        obs = turn.observation
        steps = sum(len(t.plays) for t in obs.tricks) + len(obs.trick)
        if obs.HasField("calabresella"):
            c = obs.calabresella
            steps += len(c.bids) + len(c.discards) + len(c.given) + len(c.received)
            steps += 1000 * int(obs.phase)
        return f"{self.seed}/game/{self.game}/deal/{obs.deal}/step/{steps}"

    def note(self, found: SearchResult, turn: Turn) -> None:
        """Count (and say on stderr) a search the time limit stopped short."""
        if found.timed_out:
            self.cut_short += 1
            print(
                f"pimc: the time limit ({self.time_limit_ms(turn)} ms) stopped a search "
                f"after {found.worlds} of {self.worlds} worlds"
                + ("; the heuristic's choice was played" if not found.worlds else ""),
                file=sys.stderr,
            )

    def choose(self, turn: Turn) -> int:
        """The searched card (with the heuristic's signal), or the heuristic's action."""
        started = time.monotonic()
        rules = self.rules
        if rules is None:
            raise RuntimeError("a decision request before MatchStarted: pimc needs the rules")
        searcher = card_search(rules)
        if searcher is None:
            from referee.bots.pimc_calabresella import choose_calabresella

            return choose_calabresella(self, turn, rules, started)
        target = rules.target
        plays = turn.plays()
        cards = list(dict.fromkeys(c for c in map(card_of, plays) if c is not None))
        if len(cards) < 2 or turn.declarations():
            return choose_action(turn, target, rules.game).id
        fallback = choose_action(turn, target, rules.game)
        if fallback.kind == pb.ACTION_KIND_CALL_OUT:
            return fallback.id
        obs = engine_observation(turn)
        ids = [parse_card(c) for c in cards]
        found = searcher(
            rules,
            obs,
            searcher.twins_removed(rules, obs, ids),
            worlds=self.worlds,
            seconds=self.seconds_left(turn, started),
            seed=self.search_seed(turn),
        )
        self.note(found, turn)
        if not found.worlds:
            return fallback.id  # no world searched in the time: the heuristic's play
        card = cards[ids.index(found.action)]
        return with_signal(turn, card, plays).id


def main() -> NoReturn:
    """Play the tickets of the environment, with the knobs of the arguments."""
    try:
        worlds, ms = knobs(sys.argv[1:], os.environ)
    except PimcConfigError as exc:
        print(f"pimc: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    run_main(lambda: PimcBot(worlds, ms))


if __name__ == "__main__":
    main()
