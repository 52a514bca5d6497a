"""pimc's Calabresella: worlds that never contradict the seat, and a bot that plays every step.

The hypothesis test plays Calabresella deals (3 and 4 at the table, both auction modes)
by random legal actions to a random point, and gives the seat to act's observation to
the sampler:

- the true deal meets the sampler's constraints (every hidden card is where they allow, and
  each place holds as many as they say);
- every sampled world, rebuilt here from its dealt hands and monte and replayed with the
  true history (the steps hidden from the seat, other seats' discards and the soloist's
  give, taken as the world took them), is accepted by the engine at every step and shows
  the seat exactly the observation it was given.

Then ``tavolo play pimc heuristic …`` over gRPC (3 and 4 at the table), checked by
``tavolo verify``; and a hand worked out by hand where only searching the contracts finds
the best bid.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.bots.pimc import PimcBot
from referee.bots.pimc_calabresella import SPLIT_SCREEN, bids_weigher, engine_observation
from referee.engine.cards import cards_of, mask_of, parse_card
from referee.engine.deals import Deal
from referee.engine.registry import new_game, preset
from referee.engine.rules import Rules
from referee.families.calabresella.auction import BID_PASS, BID_SCEGLIETE, Contract, is_bid
from referee.families.calabresella.codec import CALABRESELLA_CODEC
from referee.families.calabresella.deal import DISCARD_BASE, GIVE_BASE, CalabresellaDeal, Phase
from referee.families.calabresella.game import CalabresellaGame
from referee.protocol import fill_decision
from referee.search.calabresella_playout import Playout
from referee.search.calabresella_worlds import (
    DISCARDS,
    HAND,
    Constraints,
    constraints,
    sample_world,
)
from tavolo_bot.bots.heuristic import choose_action
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.turn import Turn
from tests.test_cli import tavolo
from tests.test_pimc_worlds import play_randomly

CALABRESELLA = preset("calabresella")


def _rules(seats: int, auction: str) -> Rules:
    return CALABRESELLA.with_knobs([f"table_seats={seats}", f"auction={auction}"])


def _played_to(
    rules: Rules, seed: str, dealer: int, steps: int, rng: random.Random
) -> tuple[CalabresellaDeal, list[tuple[int, int]]] | None:
    def pool(legal: tuple[int, ...]) -> Sequence[int]:
        # Bids: pass, the lowest contract or any, so that every contract comes up often.
        return [legal[0], legal[min(1, len(legal) - 1)], *legal] if is_bid(legal[0]) else legal

    return play_randomly(CalabresellaDeal.from_seed(rules, seed, 1, dealer), steps, rng, pool)


def _meets(lim: Constraints, truth: CalabresellaDeal) -> None:
    """The true deal's hidden cards are where the limits allow them."""
    hidden = 0
    for (kind, seat), room, allowed in zip(lim.agents, lim.room, lim.allowed, strict=True):
        held = (
            truth.hand(seat)
            if kind == HAND
            else truth.discards(seat)
            if kind == DISCARDS
            else truth.monte
        )
        assert held & ~lim.unknown == 0, f"{kind} {seat} holds a card the seat knows elsewhere"
        assert held & ~allowed == 0, f"{kind} {seat} holds {cards_of(held & ~allowed)}, ruled out"
        assert held.bit_count() == room, f"{kind} {seat}: {held.bit_count()} cards, not {room}"
        hidden |= held
    assert hidden == lim.unknown


def _replay(
    world: CalabresellaDeal, history: list[tuple[int, int]], rules: Rules, me: int
) -> CalabresellaDeal:
    """A deal rebuilt from the world's dealt cards, played with the true history; the steps
    hidden from ``me`` as the world took them."""
    again = CalabresellaDeal(
        rules, [world.dealt_hand(s) for s in range(rules.players)], world.dealer, world.monte
    )
    discards = {s: cards_of(world.discards(s)) for s in range(rules.players)}
    for seat, action in history:
        if seat != me and DISCARD_BASE <= action < DISCARD_BASE + 40:
            action = DISCARD_BASE + discards[seat].pop()
        elif GIVE_BASE <= action < GIVE_BASE + 40 and me not in (seat, world.called_holder):
            holder = world.called_holder
            assert holder is not None
            (card,) = world.observation(holder).received
            action = GIVE_BASE + card
        again.apply_action(action)  # raises if the world contradicts an action
    return again


@settings(max_examples=250, deadline=None)
@given(
    seats=st.sampled_from([3, 4]),
    auction=st.sampled_from(["once", "open"]),
    seed=st.text(max_size=8),
    dealer=st.integers(0, 3),
    steps=st.integers(0, 48),
    choices=st.integers(0, 2**32 - 1),
)
def test_sampled_worlds_agree_with_everything_the_seat_saw(
    seats: int, auction: str, seed: str, dealer: int, steps: int, choices: int
) -> None:
    rules = _rules(seats, auction)
    rng = random.Random(choices)
    played = _played_to(rules, seed, dealer % seats, steps, rng)
    if played is None:
        return
    truth, history = played
    me = truth.current_player()
    assert me is not None
    obs = truth.observation(me)
    lim = constraints(rules, obs)
    _meets(lim, truth)
    # Half the time weighed by the auction, as pimc draws them: still never inconsistent.
    keep = bids_weigher(rules, obs, Playout(rules)) if choices % 2 else None
    found = 0
    for _ in range(60):
        world = sample_world(rules, obs, lim, rng, keep)
        if world is None:
            continue
        found += 1
        for seat in range(rules.players):
            if seat == me:
                assert world.dealt_hand(seat) == truth.dealt_hand(seat)
        again = _replay(world, history, rules, me)
        assert again.observation(me) == obs
        assert again.phase is obs.phase is not Phase.OVER
        if found == 5:
            break
    assert found, f"no world in 60 draws at {obs.phase.name} for {rules}"


def _pimc_steps(record: Path) -> Counter[str]:
    """What pimc did in a record: its lines by type, and the contracts it won."""
    done: Counter[str] = Counter()
    seats: list[str] = []
    for text in record.read_text().splitlines():
        line = json.loads(text)
        kind = line["type"]
        assert kind not in ("rejected", "forfeit", "incident"), line
        if kind == "game":
            seats = line["seats"]
        elif kind == "result":
            assert line["termination"] in ("deals_played", "target_reached"), line
        elif kind == "contract" and seats[line["soloist"]] == "pimc":
            done["contract"] += 1
        elif "seat" in line and seats[line["seat"]] == "pimc":
            done[kind] += 1
    return done


@pytest.mark.parametrize(
    ("seats", "entries"),
    [(3, ["pimc", "heuristic", "heuristic"]), (4, ["pimc", *["heuristic"] * 3])],
)
def test_pimc_plays_calabresella_over_grpc(tmp_path: Path, seats: int, entries: list[str]) -> None:
    """Real bot processes over gRPC: pimc bids, calls, gives, discards and plays without an
    illegal action or a timeout, and the record verifies."""
    record = tmp_path / "match.jsonl"
    result = tavolo(
        "play", *entries, "--game", "calabresella", "--rule", f"table_seats={seats}",
        "--deals", "2", "--seed", "a", "--record", record, "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith(("pimc", "heur"))]
    assert len(rows) == len(entries), result.output
    for row in rows:
        assert row.endswith(" 0/0/0"), f"timeouts/illegal/crashes: {row}"
    done = _pimc_steps(record)
    # Seed "a" gives pimc contracts at both tables (which steps follow depends on how far
    # the time let each search go: the steps of every contract are checked in process).
    for step in ("bid", "contract", "play"):
        assert done[step], f"pimc made no {step} step: {dict(done)}"
    verified = tavolo("verify", record)
    assert verified.exit_code == 0, verified.output


def _turn(game: CalabresellaGame, seat: int) -> Turn:
    """The request the referee would send ``seat``, as the bot's SDK reads it."""
    request = pb.DecisionRequest(request_id=1)
    fill_decision(request, game, seat, game.legal_actions(), 1)
    return Turn(request)


def test_pimc_bids_the_contract_its_hand_sweeps() -> None:
    """Worked by hand: the eldest holding the 3, 2 and ace of every suit leads the first
    trick and then wins each with a card no other hand can beat, so every contract sweeps
    all 12 tricks (cappotto, ×2) and scegliete, the highest, pays the most: 16 × 2 from each
    defender. The heuristic's thresholds stop at solissimo; pimc, searching the contracts
    on its worlds, bids scegliete."""
    rules = _rules(3, "once")
    mine = mask_of(parse_card(r + s) for r in "32A" for s in "DCSB")
    rest = [c for c in range(40) if not mine >> c & 1]
    random.Random(7).shuffle(rest)

    def deal(number: int, dealer: int) -> Deal:
        hands = (mine, mask_of(rest[:12]), mask_of(rest[12:24]))
        return Deal("calabresella", "sweep", number, 2, hands, mask_of(rest[24:]))

    game = new_game(rules, "sweep", deals=1, deal_source=deal)
    assert isinstance(game, CalabresellaGame)
    assert game.current_player() == 0  # the eldest, after dealer 2
    turn = _turn(game, 0)
    assert choose_action(turn, rules.target).bid == "solissimo"
    bot = PimcBot(worlds=16, ms_per_decision=60_000)
    bot.rules, bot.seed = rules, "sweep"
    chosen = bot.choose(turn)
    assert chosen == BID_SCEGLIETE, CALABRESELLA_CODEC.name(chosen)
    assert not bot.cut_short


@pytest.mark.parametrize("contract", list(Contract))
@pytest.mark.parametrize("seats", [3, 4])
def test_pimc_reads_and_takes_every_step(contract: Contract, seats: int) -> None:
    """At every decision of a deal played to its end (the first bidder bidding
    ``contract``), the observation pimc rebuilds from the request is the engine's own, so
    the sampler's replay can match it, and pimc (a few worlds, no time limit) picks a
    legal action: the bid, call, give, discards, split and cards of every contract."""
    rules = _rules(seats, "once")
    rng = random.Random(f"{contract}/{seats}")
    bot = PimcBot(worlds=3, ms_per_decision=60_000)
    splitter = PimcBot(worlds=SPLIT_SCREEN + 2, ms_per_decision=60_000)  # screens, then keeps
    for one in (bot, splitter):
        one.rules, one.seed = rules, "steps"
    for n in range(2):
        game = new_game(rules, f"read/{n}", deals=1)
        assert isinstance(game, CalabresellaGame)
        while not game.is_terminal():
            seat = game.current_player()
            assert seat is not None
            turn = _turn(game, seat)
            assert engine_observation(turn) == game.deal.observation(seat)
            legal = game.legal_actions()
            assert (splitter if game.deal.phase is Phase.SPLIT else bot).choose(turn) in legal
            if is_bid(legal[0]):
                wanted = BID_PASS + int(contract)
                first = not game.deal.auction.bids
                game.apply_action(wanted if first and wanted in legal else BID_PASS)
            else:
                game.apply_action(rng.choice(legal))
