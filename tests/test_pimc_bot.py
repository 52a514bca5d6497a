"""The pimc bot: a volo read to find the one winning play, legal play over gRPC in every
Tressette family, its knobs, and its determinism.

The bot is given observations only as the referee sends them: protocol messages built by
:mod:`referee.protocol` (here), or a real referee's stream to a real sandboxed process.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.bots.pimc import DEFAULT_WORLDS, PimcBot, PimcConfigError, engine_observation, knobs
from referee.engine.cards import CARD_NAMES, mask_of, parse_card
from referee.engine.registry import preset
from referee.engine.rules import Rules
from referee.families.tressette.actions import NUM_CARDS, parse_action
from referee.families.tressette.deal import TressetteDeal
from referee.families.tressette.game import new_deal
from referee.protocol import fill_observation, legal_messages
from referee.records import without_think_times
from referee.search.pimc import search_tressette
from tavolo_bot.bots.heuristic import choose_action
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.turn import Turn, card_of
from tests.test_cli import assert_one_error, console_script, run, runner
from tests.test_pimc_worlds import played_to
from tests.test_properties import rule_sets
from tournaments.cli.main import app

NO_DECLARATIONS = preset("tressette").with_knobs(["declarations=false"])

# Seats 0 and 2 play against 1 and 3; seat 3 deals, so seat 0 leads the first trick.
VOLO_HANDS = (
    "4D 3C AC 7C 5C 4C 2S 4S 3B 7B",
    "3D AD KD QD 5D 2C QC QS 2B QB",
    "2D JD 6D JC 6C AS JS JB 5B 4B",
    "7D KC 3S KS 7S 6S 5S AB KB 6B",
)
VOLO_PLAYS = (
    "3C", "QC", "JC", "KC volo",
    "3B", "QB", "JB", "KB",
    "4C", "2C volo", "6C", "AB",
    "3D", "6D", "7D", "4D",
    "2B volo", "4B", "6B volo", "7B volo",
    "5D", "JD", "5S", "2S",
    "2D volo", "6S", "4S volo", "QD",  # seat 0's 4S volo: its last spade
    "5B", "7S", "AC", "QS",
    "JS",  # trick 9: seat 2 leads; seat 3 holds 3S and KS
)  # fmt: skip


def request_for(rules: Rules, deal: TressetteDeal, seat: int) -> pb.DecisionRequest:
    """The request a referee sends ``seat`` at this point."""
    request = pb.DecisionRequest(request_id=1, deadline_ms=1000, attempts_left=1)
    fill_observation(
        request.observation,
        deal.observation(seat),
        family=rules.family,
        game=1,
        deal=1,
        players=rules.players,
        quattro_points=rules.quattro_points,
        totals=deal.totals,
    )
    request.legal_actions.extend(legal_messages(rules.family.codec, deal.legal_actions()))
    return request


def pimc_bot(rules: Rules, seed: str = "volo", worlds: int = DEFAULT_WORLDS) -> PimcBot:
    bot = PimcBot(worlds, ms_per_decision=60_000)
    bot.seed = seed
    rules_json = json.dumps(rules.to_dict())
    bot.on_event(pb.Event(match_started=pb.MatchStarted(match_id="m", rules_json=rules_json)))
    bot.on_event(pb.Event(game_started=pb.GameStarted(game=1, seat=3)))
    return bot


def best_for_side(deal: TressetteDeal, side: int) -> int:
    """Card thirds ``side`` ends with over the other, both sides playing their best."""
    if deal.is_terminal():
        assert deal.score is not None
        return deal.score.thirds[side] - deal.score.thirds[1 - side]
    seat = deal.current_player()
    assert seat is not None
    worths = []
    for action in deal.legal_actions():
        if action < NUM_CARDS:
            after = deal.clone()
            after.apply_action(action)
            worths.append(best_for_side(after, side))
    return max(worths) if seat % 2 == side else min(worths)


def chosen_card(turn: Turn, action_id: int) -> str:
    action = next(a for a in turn.legal if a.id == action_id)
    card = card_of(action)
    assert card is not None
    return card


def test_a_volo_read_finds_the_one_winning_play_and_the_heuristic_misses_it() -> None:
    """Trick 9: seat 2 leads JS; seat 3 holds 3S and KS; seats 0 and 1 play after it.

    The 3S is sure to win the trick, and the heuristic plays it; then the KS is left for the
    last trick and falls to the AS, which seat 2 holds. The KS wins this trick too, unless
    a seat after seat 3 holds the AS: seat 1 is seat 3's partner, and seat 0 said volo
    with its 4S in trick 7, its last spade. So KS now and 3S last win both tricks: 1 point
    for the cards and the last trick's bonus more. Without the volo, seat 0 may hold the AS
    and the 3S is the better play; pimc then plays it too.
    """
    rules = NO_DECLARATIONS
    deal = new_deal(rules, [mask_of(map(parse_card, h.split())) for h in VOLO_HANDS], 3)
    for text in VOLO_PLAYS:
        deal.apply_action(parse_action(text))
    assert deal.current_player() == 3
    three, king = parse_card("3S"), parse_card("KS")
    worth = {}
    for card in (three, king):
        after = deal.clone()
        after.apply_action(card)
        worth[card] = best_for_side(after, 1)
    assert worth[king] > worth[three], "KS is the winning play, whatever the others do"

    turn = Turn(request_for(rules, deal, 3))
    assert chosen_card(turn, pimc_bot(rules).choose(turn)) == "KS"
    assert card_of(choose_action(turn)) == "3S"

    # The same observation with every signal taken off: only the volo told where the AS is not.
    obs = engine_observation(turn)
    plain = [tuple((s, a % NUM_CARDS) for s, a in plays) for plays, _ in obs.tricks]
    unsignalled = dataclasses.replace(
        obs,
        tricks=tuple((p, w) for p, (_, w) in zip(plain, obs.tricks, strict=True)),
        trick=tuple((s, a % NUM_CARDS) for s, a in obs.trick),
    )
    found = search_tressette(
        rules, unsignalled, [three, king], worlds=DEFAULT_WORLDS, seconds=60, seed="volo"
    )
    assert CARD_NAMES[found.action] == "3S"


@settings(max_examples=60, deadline=None)
@given(
    rules=rule_sets(),
    seed=st.text(max_size=6),
    steps=st.integers(0, 38),
    choices=st.integers(0, 2**32 - 1),
)
def test_every_choice_is_one_of_the_legal_actions_sent(
    rules: Rules, seed: str, steps: int, choices: int
) -> None:
    """Any point of any Tressette-family deal, as the protocol's request: the answer is
    the id of one of the request's legal actions."""
    played = played_to(rules, seed, 0, steps, random.Random(choices))
    if played is None:
        return
    deal, _ = played
    seat = deal.current_player()
    assert seat is not None
    request = request_for(rules, deal, seat)
    chosen = pimc_bot(rules, seed, worlds=3).choose(Turn(request))
    assert chosen in {a.id for a in request.legal_actions}


@pytest.mark.parametrize(
    "game",
    ["tressette", "tressette-a-tre", "tressette-a-due", "ciapano", "tressette-briscola",
     "tressette-study"],
)  # fmt: skip
def test_pimc_plays_every_tressette_family_legally_over_grpc(tmp_path: Path, game: str) -> None:
    """Real bot processes in the sandbox, seeing only their streams: no illegal action, no
    timeout, no crash, and a record that verifies."""
    record = tmp_path / "match.jsonl"
    done = run(
        "play", "pimc", "random", *(["random"] * (preset(game).sides - 2)), "--game", game,
        "--deals", "1", "--seed", f"pimc-{game}", "--record", str(record),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("pimc "))
    assert row.split()[-1] == "0/0/0", row
    lines = record.read_text(encoding="utf-8").splitlines()
    rejected = [x for x in lines if json.loads(x)["type"] in ("rejected", "incident", "forfeit")]
    assert rejected == []
    verified = run("verify", str(record))
    assert verified.returncode == 0, verified.stderr


def test_knobs_come_from_the_arguments_then_the_environment() -> None:
    assert knobs([], {}) == (48, 400)
    assert knobs([], {"TAVOLO_PIMC_WORLDS": "12"}) == (12, 400)
    assert knobs(["--worlds", "9", "--ms-per-decision=250"], {"TAVOLO_PIMC_WORLDS": "12"}) == (
        9,
        250,
    )
    for argv, env, message in (
        (["--worlds", "0"], {}, "worlds must be a whole number from 1, not '0'"),
        ([], {"TAVOLO_PIMC_MS_PER_DECISION": "fast"}, "ms-per-decision must be a whole"),
        (["--depth", "3"], {}, "unknown argument '--depth'"),
        (["--worlds"], {}, "--worlds needs a value"),
    ):
        with pytest.raises(PimcConfigError, match=message):
            knobs(argv, env)


def test_a_bad_knob_stops_the_process_with_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "referee.bots.pimc", "--worlds", "-3"],
        capture_output=True,
        text=True,
        env={**os.environ, "TAVOLO_REFEREE": "localhost:1", "TAVOLO_TICKET": "t"},
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == "pimc: worlds must be a whole number from 1, not '-3'\n"


def test_a_bad_knob_in_process_is_one_error() -> None:
    result = runner.invoke(
        app,
        ["play", "pimc", "heuristic", "--in-process", "--seed", "s", "--deals", "1"],
        env={"TAVOLO_PIMC_MS_PER_DECISION": "-1"},  # 0 is no clock
    )
    assert_one_error(result, "built-in player pimc: ms-per-decision must be a whole number")


def test_the_same_seed_replays_the_same_match_whatever_the_hash_seed(tmp_path: Path) -> None:
    """In-process, so only pimc's own randomness varies: two interpreters with different
    string hashing play the same seeded match to the same record."""
    records = []
    for hash_seed in ("1", "2"):
        record = tmp_path / f"match-{hash_seed}.jsonl"
        env = {
            **os.environ,
            "PYTHONHASHSEED": hash_seed,
            "TAVOLO_PIMC_WORLDS": "6",
            "TAVOLO_PIMC_MS_PER_DECISION": "60000",
        }
        done = subprocess.run(
            [console_script(), "play", "pimc", "heuristic", "--in-process", "--deals", "1",
             "--seed", "same", "--record", str(record)],
            capture_output=True, text=True, env=env, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        records.append(without_think_times(record.read_text(encoding="utf-8").splitlines()))
    assert records[0] == records[1]
