"""pimc plays Briscola: worlds that replay to the seat's observation, reproducible from a
seed, the one card that wins a deal found, and clean play in process and over gRPC.

Strength is measured by ``tavolo bench bots``, not here: these tests assert only what
no luck of the deal can give.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.cards import CARD_NAMES, FULL_DECK, mask_of, parse_card
from referee.engine.observation import Observation, Phase
from referee.engine.registry import new_game, preset
from referee.engine.rules import Rules
from referee.families.briscola.deal import BriscolaDeal
from referee.search.briscola_worlds import constraints, sample_world, twins_removed
from referee.search.pimc import search_briscola
from referee.search.world_checks import same_view
from tavolo_bot.turn import Turn
from tests.test_cli import console_script, run
from tests.test_pimc_bot import chosen_card, pimc_bot, request_for

PRESETS = ("briscola", "briscola-a-quattro")


def played_to(rules: Rules, seed: str, steps: int, rng: random.Random) -> BriscolaDeal | None:
    """Deal 1 of ``seed`` after ``steps`` random plays; None if it ended on the way."""
    game = new_game(rules, seed, deals=1)
    for _ in range(steps):
        if game.is_terminal():
            return None
        game.apply_action(rng.choice(game.legal_actions()))
    deal = game.deal
    assert isinstance(deal, BriscolaDeal)
    return None if deal.is_terminal() else deal


def to_act(deal: BriscolaDeal) -> Observation:
    """What the seat to act sees."""
    me = deal.current_player()
    assert me is not None
    return deal.observation(me)


@settings(max_examples=40, deadline=None)
@given(
    name=st.sampled_from(PRESETS),
    seed=st.text(max_size=6),
    steps=st.integers(0, 39),
    choices=st.integers(0, 2**32 - 1),
)
def test_every_sampled_world_replays_to_the_seats_observation(
    name: str, seed: str, steps: int, choices: int
) -> None:
    """Any point of any deal: the true hands meet the constraints, and every world the sampler
    gives was accepted by the engine play by play and shows the seat what it saw."""
    rules = preset(name)
    rng = random.Random(choices)
    deal = played_to(rules, seed, steps, rng)
    if deal is None:
        return
    obs = to_act(deal)
    me = obs.seat
    lim = constraints(rules, obs)
    for seat in range(rules.players):
        if seat != me:
            hidden = deal.hand(seat) & ~lim.held[seat]
            assert hidden & ~lim.unknown == 0
            assert hidden.bit_count() == lim.need[seat]
    assert (
        lim.unknown | mask_of(obs.hand) | mask_of(c for _, c in deal.plays) | 1 << deal.trump
    ) == FULL_DECK
    for _ in range(5):
        world = sample_world(rules, obs, lim, rng)
        assert world is not None, "nothing in Briscola rules a world out: every draw fits"
        assert same_view(world.observation(me), obs)
        assert world.plays == deal.plays
        assert world.stock_left() == deal.stock_left()


def test_the_trump_another_seat_drew_is_in_its_hand_in_every_world() -> None:
    rules = preset("briscola")
    rng = random.Random(3)
    # 17 tricks: the stock is gone, its last card drawn by the seat that lost the 17th
    # trick; the winner leads the 18th.
    deal = played_to(rules, "trump-drawn", 34, rng)
    assert deal is not None and deal.stock_left() == 0
    drawer = deal.draws()[-1][0]
    obs = to_act(deal)
    assert obs.seat != drawer and deal.hand(drawer) >> deal.trump & 1
    lim = constraints(rules, obs)
    for _ in range(10):
        world = sample_world(rules, obs, lim, rng)
        assert world is not None
        assert world.hand(drawer) >> deal.trump & 1


def test_worlds_and_searches_are_reproducible_from_a_seed() -> None:
    rules = preset("briscola-a-quattro")
    deal = played_to(rules, "again", 14, random.Random(5))
    assert deal is not None
    obs = to_act(deal)
    lim = constraints(rules, obs)

    def worlds(seed: str) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        rng = random.Random(seed)
        out = []
        for _ in range(6):
            world = sample_world(rules, obs, lim, rng)
            assert world is not None
            out.append((tuple(world.hand(s) for s in range(4)), world.stock))
        return out

    assert worlds("w") == worlds("w")
    assert worlds("w") != worlds("v")
    found = [
        search_briscola(rules, obs, obs.legal_actions, worlds=12, seconds=60, seed="s")
        for _ in range(2)
    ]
    assert found[0] == found[1]


def test_twins_are_read_in_briscolas_order() -> None:
    """The 4 and the 2 are next to each other in Briscola (… 5 4 2), not in card ids; the 7
    and the 2 are twins only once the 6, 5 and 4 are out of play."""
    rules = preset("briscola")

    def kept(hand: str, played: str) -> list[str]:
        cards = [parse_card(c) for c in hand.split()]
        plays = [(i % 2, parse_card(c)) for i, c in enumerate(played.split())]
        obs = Observation(
            seat=0, dealer=1, phase=Phase.PLAY, hand=tuple(sorted(cards)), current_player=0,
            legal_actions=tuple(sorted(cards)), trick=(), tricks=((tuple(plays), 0),) if plays
            else (), declarations=(), captured=(0, 0), totals=(0, 0), trump=parse_card("7B"),
        )  # fmt: skip
        return [CARD_NAMES[c] for c in twins_removed(rules, obs, cards)]

    assert kept("4D 2D AS", "") == ["4D", "AS"]
    assert kept("7D 2D AS", "") == ["7D", "2D", "AS"]
    assert kept("7D 2D AS", "6D 5D 4D 3C") == ["7D", "AS"]
    assert kept("KD QD AS", "") == ["KD", "QD", "AS"], "a king and a cavallo differ in worth"


# Deal 1 of "endgame-9", played at random (random.Random(9)) for 37 plays: seat 1 has led
# the 5C to the 19th trick, and seat 0 holds the 3D and the KS, spades being trump. The 3D
# loses its 10 points under the 5C; the KS takes the trick and with it the deal.
ENDGAME = ("endgame-9", 9, 37)


def test_pimc_plays_the_one_card_that_wins_the_deal() -> None:
    rules = preset("briscola")
    seed, choices, steps = ENDGAME
    deal = played_to(rules, seed, steps, random.Random(choices))
    assert deal is not None and deal.current_player() == 0
    assert sorted(CARD_NAMES[c] for c in deal.legal_actions()) == ["3D", "KS"]
    winner = {}
    for card in deal.legal_actions():
        after = deal.clone()
        after.apply_action(card)
        while not after.is_terminal():  # one card each left: the last trick is forced
            after.apply_action(after.legal_actions()[0])
        assert after.score is not None
        winner[CARD_NAMES[card]] = after.score.winner
    assert winner == {"KS": 0, "3D": 1}

    turn = Turn(request_for(rules, deal, 0))
    assert chosen_card(turn, pimc_bot(rules, seed).choose(turn)) == "KS"


def test_pimc_and_the_heuristic_play_briscola_in_process(tmp_path: Path) -> None:
    """A small seeded duplicate match of each Briscola, no clock: no fault, a record that
    verifies."""
    env = {**os.environ, "TAVOLO_PIMC_WORLDS": "8", "TAVOLO_PIMC_MS_PER_DECISION": "0"}
    for name, entries in (
        ("briscola", ["pimc", "random"]),
        ("briscola-a-quattro", ["pimc", "heuristic"]),
    ):
        record = tmp_path / f"{name}.jsonl"
        done = subprocess.run(
            [console_script(), "play", *entries, "--in-process", "--game", name, "--sets", "1",
             "--deals", "1", "--seed", "pimc-briscola", "--record", str(record)],
            capture_output=True, text=True, env=env, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        rows = [line for line in done.stdout.splitlines() if line.startswith(tuple(entries))]
        assert len(rows) == 2 and all(row.split()[-1] == "0/0/0" for row in rows), done.stdout
        assert run("verify", str(record)).returncode == 0


def test_pimc_plays_briscola_over_grpc(tmp_path: Path) -> None:
    """Real bot processes in the sandbox, seeing only their streams and their own draws."""
    record = tmp_path / "match.jsonl"
    done = run(
        "play", "pimc", "random", "--game", "briscola", "--sets", "1", "--seed", "pimc-grpc",
        "--record", str(record),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("pimc "))
    assert row.split()[-1] == "0/0/0", row
    lines = [json.loads(x) for x in record.read_text(encoding="utf-8").splitlines()]
    assert not [x for x in lines if x["type"] in ("rejected", "incident", "forfeit")]
    assert any(x["type"] == "draw" for x in lines)
    verified = run("verify", str(record))
    assert verified.returncode == 0, verified.stderr
