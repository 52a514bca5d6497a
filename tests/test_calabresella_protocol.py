"""Calabresella through the stack: games, records, the protocol's hidden cards, matches."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from referee.engine.cards import CARD_NAMES
from referee.engine.errors import RulesError
from referee.engine.registry import new_game, preset
from referee.families.calabresella.auction import BID_PASS, CONTRACT_NAMES, Contract
from referee.families.calabresella.codec import CALABRESELLA_CODEC
from referee.families.calabresella.events import Bid, Called, Discarded, Given
from referee.families.calabresella.game import CalabresellaGame
from referee.protocol import fill_observation, legal_messages, public_event
from referee.records import RecordError, verify_lines
from tavolo_bot.proto import referee_pb2 as pb
from tests.test_cli import tavolo

CALABRESELLA = preset("calabresella")
CARD = re.compile(r"\b[32AKQJ7654][DCSB]\b")


def forced_game(contract: Contract, seed: str, seats: int = 3) -> CalabresellaGame:
    """A game where the first bidder bids ``contract``, the others pass; then random play."""
    rules = CALABRESELLA.with_knobs([f"table_seats={seats}"])
    game = new_game(rules, seed, deals=1, record=True)
    assert isinstance(game, CalabresellaGame)
    return game


def step(game: CalabresellaGame, contract: Contract, rng: random.Random) -> None:
    legal = game.legal_actions()
    if legal[0] == BID_PASS:
        wanted = BID_PASS + int(contract)
        bids_made = len(game.deal.auction.bids)
        game.apply_action(wanted if bids_made == 0 and wanted in legal else BID_PASS)
        return
    game.apply_action(rng.choice(legal))


def observed_cards(message: pb.Observation) -> set[str]:
    """Every card an observation names (its legal list is checked apart)."""
    return set(CARD.findall(str(message)))


@pytest.mark.parametrize("contract", list(Contract))
@pytest.mark.parametrize("seats", [3, 4])
def test_protocol_observations_show_only_what_the_rules_allow(
    contract: Contract, seats: int
) -> None:
    """For every contract: a seat's protocol observation names no card it may not know.

    What it may know: its own cards now and as dealt, cards played, the called card, the
    cards it received or gave, the monte cards it was shown, its own discards.
    """
    for n in range(6):
        game = forced_game(contract, f"hide-{contract.name}-{n}", seats)
        rng = random.Random(n)
        while not game.is_terminal():
            deal = game.deal
            for seat in range(seats):
                obs = game.observation(seat)
                out = pb.Observation()
                fill_observation(
                    out,
                    obs,
                    family=CALABRESELLA.family,
                    game=1,
                    deal=1,
                    players=seats,
                    quattro_points=0,
                    totals=game.totals,
                )
                allowed = {CARD_NAMES[c] for c in obs.hand}
                allowed |= {CARD_NAMES[c] for c in _cards(deal.dealt_hand(seat))}
                allowed |= {CARD_NAMES[c] for _, c in obs.trick}
                allowed |= {CARD_NAMES[c] for plays, _ in obs.tricks for _, c in plays}
                for part in (obs.received, obs.given, obs.monte, obs.discards):
                    allowed |= {CARD_NAMES[c] for c in part}
                if obs.called is not None:
                    allowed.add(CARD_NAMES[obs.called])
                leaks = observed_cards(out) - allowed
                assert not leaks, f"{contract.name}: seat {seat} is shown {leaks}"
                # The monte is shown as the rules say, never more.
                view = out.calabresella
                if contract is Contract.SOLISSIMO or (seat == deal.dealer and seats == 4):
                    assert not view.monte
            step(game, contract, rng)


def _cards(mask: int) -> list[int]:
    return [c for c in range(40) if mask >> c & 1]


def test_face_down_steps_send_no_event() -> None:
    assert public_event(CALABRESELLA.family, Given(0, "3D")) is None
    assert public_event(CALABRESELLA.family, Discarded(0, "3D")) is None
    bid = public_event(CALABRESELLA.family, Bid(1, "solo"))
    assert bid is not None and bid.bid_made.bid == "solo"
    call = public_event(CALABRESELLA.family, Called(1, "3D", None))
    assert call is not None and call.card_called.holder == -1


def test_split_actions_name_the_monte_cards() -> None:
    monte = (3, 17, 25, 38)
    [first, all_four] = legal_messages(CALABRESELLA_CODEC, (560 + 0b0101, 560 + 0b1111), monte)
    assert list(first.cards) == [CARD_NAMES[3], CARD_NAMES[25]]
    assert first.kind == pb.ACTION_KIND_SPLIT and len(all_four.cards) == 4


def test_a_whole_game_records_and_verifies() -> None:
    game = new_game(CALABRESELLA, "record-1", record=True)
    rng = random.Random(3)
    while not game.is_terminal():
        game.apply_action(rng.choice(game.legal_actions()))
    assert game.events is not None
    lines = [json.dumps(e, separators=(",", ":"), ensure_ascii=False) for e in game.lines()]
    verified = verify_lines(lines, "game")
    assert verified.outcome == game.outcome
    kinds = {json.loads(line)["type"] for line in lines}
    assert {"deal", "bid", "play", "trick", "score", "result"} <= kinds
    # Payouts balance: one player's gain is the others' loss.
    assert game.outcome is not None and sum(game.outcome.totals) == 0
    # A tampered monte does not verify.
    deal_at = next(i for i, line in enumerate(lines) if '"type":"deal"' in line)
    tampered = json.loads(lines[deal_at])
    tampered["monte"] = list(reversed(tampered["hands"][0][:4]))
    bad = [*lines[:deal_at], json.dumps(tampered, separators=(",", ":")), *lines[deal_at + 1 :]]
    with pytest.raises(RecordError, match=rf"game:{deal_at + 1}: .*monte"):
        verify_lines(bad, "game")


def test_four_at_the_table_the_dealer_sits_out() -> None:
    rules = CALABRESELLA.with_knobs(["table_seats=4"])
    assert (rules.players, rules.sides) == (4, 4)
    game = new_game(rules, "four", deals=3, record=True)
    rng = random.Random(1)
    while not game.is_terminal():
        seat = game.current_player()
        assert seat != game.deal.dealer, "the dealer never acts"
        game.apply_action(rng.choice(game.legal_actions()))
    assert game.events is not None
    for line in game.lines():
        if line["type"] == "deal":
            assert line["hands"][line["dealer"]] == []
        if line["type"] == "score":
            dealer = next(
                e for e in game.lines() if e["type"] == "deal" and e["deal"] == line["deal"]
            )
            assert line["points"][dealer["dealer"]] == 0


def test_all_pass_the_same_dealer_deals_again() -> None:
    game = new_game(CALABRESELLA, "passes", deals=2, record=True)
    dealer = game.deal.dealer
    for _ in range(3):
        game.apply_action(BID_PASS)
    assert game.events is not None
    assert game.lines()[-2] == {"type": "redeal", "deal": 1}
    assert game.lines()[-1]["type"] == "deal" and game.lines()[-1]["dealer"] == dealer
    assert game.deal_number == 2


def test_knobs() -> None:
    with pytest.raises(RulesError, match="'cappotto' in calabresella is none or double"):
        CALABRESELLA.with_knobs(["cappotto=fixed"])
    with pytest.raises(RulesError, match="between 3 and 4"):
        CALABRESELLA.with_knobs(["table_seats=5"])
    assert set(CONTRACT_NAMES.values()) == {"chiamo", "solo", "solissimo", "dividete", "scegliete"}


def test_deal_command_shows_hands_and_monte() -> None:
    result = tavolo("deal", "--game", "calabresella", "--seed", "d", "--json")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert [len(h) for h in shown["hands"]] == [12, 12, 12] and len(shown["monte"]) == 4
    assert len({c for h in shown["hands"] for c in h} | set(shown["monte"])) == 40


@pytest.mark.parametrize("table", ["3", "4"])
def test_deal_command_text_and_json_agree(table: str) -> None:
    for number in ("1", "2", "3"):
        args = ["deal", "--game", "calabresella", "--seed", "x", "--deal", number]
        args += ["--rule", f"table_seats={table}"]
        shown = json.loads(tavolo(*args, "--json").stdout)
        head, *seats = tavolo(*args).stdout.splitlines()
        # The text once said "dealer seat 2" for every Calabresella deal.
        assert head.endswith(f"deal {number}, dealer seat {shown['dealer']}")
        for seat, hand in enumerate(shown["hands"]):
            assert seats[seat] == f"  seat {seat}: {' '.join(hand)}"


def test_a_match_over_grpc_records_and_verifies(tmp_path: Path) -> None:
    record = tmp_path / "c.jsonl"
    result = tavolo(
        "play", "heuristic", "random", "random", "--game", "calabresella", "--seed", "m",
        "--deals", "4", "--quiet", "--record", record,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.output.count("0/0/0") == 3
    assert tavolo("verify", record).exit_code == 0
    text = record.read_text(encoding="utf-8")
    assert '"type":"bid"' in text and '"type":"rejected"' not in text
