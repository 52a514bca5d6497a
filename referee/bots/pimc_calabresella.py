"""pimc's Calabresella: every step of a deal searched over sampled worlds.

The bid, the call, the give, each discard, the split and each card are chosen by
:func:`referee.search.pimc.search`: worlds consistent with the seat's observation
(:mod:`referee.search.calabresella_worlds`, the hidden steps of other seats drawn too)
are played to the end of the deal from each candidate by
:class:`~referee.search.calabresella_playout.Playout`, which bids, exchanges and plays
for every seat; a candidate's worth is the deal's payout to the seat. So a bid is worth
what its contract scores in the worlds, passing what the others then make of the deal.

The worlds are weighed by the auction: a world in which another seat's dealt hand would
not have made its bid under the playout's thresholds (a pass from a hand worth chiamo, a
solo from a weak one) is kept only with probability :data:`MISBID_KEEP`. No world is
ruled out by it, so a bidder of another style costs some draws (at most 1 /
:data:`MISBID_KEEP` times as many), never the truth.

Where the candidates are many the search narrows them:

- a card play or discard drops a card's exact twins (same suit and worth, no card ranked
  between them in another hand): they score alike in every world;
- the call: the 3s and 2s the soloist lacks (a lower card called gains him little), and
  the playout's own call;
- the split (16 ways): all of them on the first :data:`SPLIT_SCREEN` worlds, then the best
  :data:`SPLIT_KEEP` on all the worlds.

When the time allows not one world, the step is the ``heuristic`` bot's (said on stderr).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from referee.engine.cards import mask_of, parse_card
from referee.engine.rules import Rules
from referee.families.calabresella.auction import CONTRACT_NAMES, Auction
from referee.families.calabresella.codec import CALABRESELLA_CODEC
from referee.families.calabresella.deal import (
    CALL_BASE,
    DISCARD_BASE,
    CalabresellaObservation,
    Phase,
)
from referee.search.calabresella_playout import Playout
from referee.search.calabresella_worlds import Story, constraints, sample_world
from referee.search.pimc import SearchResult, search
from referee.search.world_checks import plays_in_order, without_twins
from tavolo_bot.bots.heuristic import choose_action
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.turn import Turn

if TYPE_CHECKING:
    from referee.bots.pimc import PimcBot

MISBID_KEEP = 0.2
"""Chance of keeping a world in which another seat's dealt hand would not make its bid."""
SPLIT_SCREEN = 12
"""Worlds on which every split is tried before the weaker are dropped."""
SPLIT_KEEP = 4
"""Splits searched on the full count of worlds."""

_PHASES = {
    pb.PHASE_AUCTION: Phase.AUCTION,
    pb.PHASE_CALL: Phase.CALL,
    pb.PHASE_GIVE: Phase.GIVE,
    pb.PHASE_DISCARD: Phase.DISCARD,
    pb.PHASE_SPLIT: Phase.SPLIT,
    pb.PHASE_PLAY: Phase.PLAY,
}
_CONTRACTS = {name: contract for contract, name in CONTRACT_NAMES.items()}


def _cards(names: Sequence[str]) -> tuple[int, ...]:
    return tuple(sorted(parse_card(c) for c in names))


def engine_observation(turn: Turn) -> CalabresellaObservation:
    """The engine's view of a Calabresella request, read from the protocol message."""
    obs = turn.observation
    view = obs.calabresella
    if obs.phase not in _PHASES:
        raise ValueError(f"a Calabresella request in phase {pb.Phase.Name(obs.phase)}")
    monte = _cards(view.monte)
    split = None
    if view.split_made:
        taken = set(_cards(view.split))
        split = sum(1 << i for i, c in enumerate(monte) if c in taken)
    called = parse_card(view.called) if view.called else None
    return CalabresellaObservation(
        seat=obs.seat,
        dealer=obs.dealer,
        seats=view.seats,
        phase=_PHASES[obs.phase],
        hand=_cards(obs.hand),
        current_player=obs.seat,
        legal_actions=tuple(a.id for a in turn.legal),
        bids=tuple((b.seat, CALABRESELLA_CODEC.parse(_bid_text(b.bid))) for b in view.bids),
        contract=_CONTRACTS[view.contract] if view.contract else None,
        soloist=None if view.soloist < 0 else view.soloist,
        called=called,
        called_holder=None if view.called_holder < 0 else view.called_holder,
        called_in_monte=None if called is None else view.called_in_monte,
        received=_cards(view.received),
        given=_cards(view.given),
        monte=monte,
        split=split,
        discards=_cards(view.discards),
        trick=tuple((p.seat, parse_card(p.action.card)) for p in obs.trick),
        tricks=tuple(
            (tuple((p.seat, parse_card(p.action.card)) for p in t.plays), t.winner)
            for t in obs.tricks
        ),
        captured=(obs.captured[0], obs.captured[1]) if len(obs.captured) == 2 else (0, 0),
        score=None,
    )


def _bid_text(bid: str) -> str:
    return bid if bid == "pass" else f"bid {bid}"


def candidates(obs: CalabresellaObservation, policy: Playout) -> list[int]:
    """The actions searched: the legal ones less exact twins, and the call narrowed (see
    the module docstring)."""
    legal = list(obs.legal_actions)
    if obs.phase is Phase.CALL:
        hand = mask_of(obs.hand)
        wanted = {CALL_BASE + policy.call_card(hand)}
        wanted |= {a for a in legal if (a - CALL_BASE) % 10 in (0, 1)}
        return [a for a in legal if a in wanted]
    if obs.phase in (Phase.PLAY, Phase.DISCARD):
        return _without_twins(obs, legal, policy)
    return legal


def _without_twins(obs: CalabresellaObservation, legal: list[int], policy: Playout) -> list[int]:
    """``legal`` (card plays or discards) with one of each set of twin cards
    (:func:`~referee.search.world_checks.without_twins`); the seat's discards are out of
    play too."""
    base = DISCARD_BASE if obs.phase is Phase.DISCARD else 0
    played = mask_of(card for _, card in plays_in_order(obs))
    out_of_play = mask_of(obs.hand) | mask_of(obs.discards) | played
    kept = without_twins([a - base for a in legal], out_of_play, policy.values)
    return [c + base for c in kept]


def bids_weigher(
    rules: Rules, obs: CalabresellaObservation, policy: Playout
) -> Callable[[Story, random.Random], bool]:
    """Keeps a story always if the other seats' dealt hands would make their bids under the
    playout's thresholds, else with probability :data:`MISBID_KEEP`."""
    order = tuple((obs.dealer + 1 + i) % obs.seats for i in range(3))
    once = rules.auction == "once"

    def keep(told: Story, rng: random.Random) -> bool:
        auction = Auction(order, once=once)
        for seat, bid in obs.bids:
            if seat != obs.seat:
                wanted = policy.bid(auction.legal_bids(), policy.strength(told.dealt[seat]))
                if wanted != bid:
                    return rng.random() < MISBID_KEEP
            auction.apply(bid)
        return True

    return keep


def choose_calabresella(bot: PimcBot, turn: Turn, rules: Rules, started: float) -> int:
    """The action for a Calabresella request (``started``: when the request came, monotonic)."""
    legal = [a.id for a in turn.legal]
    if len(legal) == 1:
        return legal[0]
    obs = engine_observation(turn)
    lim = constraints(rules, obs)
    policy = Playout(rules)
    keep = bids_weigher(rules, obs, policy)
    seed = bot.search_seed(turn)

    def run(among: Sequence[int], worlds: int, seconds: float) -> SearchResult:
        return search(
            among,
            obs.seat,
            lambda rng: sample_world(rules, obs, lim, rng, keep),
            policy,
            worlds=worlds,
            seconds=seconds,
            seed=seed,
        )

    among = candidates(obs, policy)
    if obs.phase is Phase.SPLIT and len(among) > SPLIT_KEEP and bot.worlds > SPLIT_SCREEN:
        screen = run(among, SPLIT_SCREEN, bot.seconds_left(turn, started) / 3)
        bot.note(screen, turn)
        if not screen.worlds:
            return choose_action(turn, rules.target).id  # no world in the time
        among = sorted(among, key=lambda a: -screen.worth[a])[:SPLIT_KEEP]
    found = run(among, bot.worlds, bot.seconds_left(turn, started))
    bot.note(found, turn)
    if not found.worlds:
        return choose_action(turn, rules.target).id  # no world in the time: the heuristic's
    return found.action
