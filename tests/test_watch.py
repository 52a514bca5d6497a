"""``tavolo watch``: a real referee, real bot processes, and the command as its own process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from google.protobuf.json_format import Parse

from referee.engine.registry import presets
from referee.entries import parse_entry
from referee.service.server import Referee
from tavolo_bot.proto import referee_pb2 as pb
from tests.bots.harness import PUBLIC_EVENTS, limits, play, run, serving
from tests.test_cli import run_async
from tournaments.cli.watch import event_lines


async def _played_and_watched(
    referee: Referee, tmp_path: Path, game: str, entries: tuple[str, ...]
) -> tuple[list[dict[str, object]], tuple[int, str, str], tuple[int, str, str]]:
    table = await play(
        referee,
        tuple(parse_entry(e) for e in entries),
        tmp_path / "record.jsonl",
        rules=presets()[game],
        seed=f"watch-{game}",
        deals=2,
        limits=limits(deadline_ms=1000),
    )
    table.verify()
    # A finished table replays from its start, then the stream ends.
    table_id = table.match.match_id
    text = await run_async("watch", table_id, "--referee", referee.address)
    as_json = await run_async("watch", table_id, "--referee", referee.address, "--json")
    return table.lines(), text, as_json


@pytest.mark.parametrize(
    ("game", "entries"),
    [
        ("tressette", ("heuristic", "random")),
        ("calabresella", ("heuristic", "random", "random")),
        ("briscola", ("random", "random")),
        ("briscola-a-quattro", ("random", "random")),
    ],
)
def test_watch_follows_a_table_line_by_line(
    tmp_path: Path, game: str, entries: tuple[str, ...]
) -> None:
    async def scenario() -> tuple[
        list[dict[str, object]], tuple[int, str, str], tuple[int, str, str]
    ]:
        async with serving() as referee:
            return await _played_and_watched(referee, tmp_path, game, entries)

    lines, (code, out, err), (jcode, jout, jerr) = run(scenario())
    assert code == 0 and jcode == 0, err + jerr
    public = [line for line in lines if line["type"] in PUBLIC_EVENTS]
    # --json: one WatchResponse per public line of the record, in order.
    responses = [Parse(text, pb.WatchResponse()) for text in jout.splitlines()]
    assert [r.event.WhichOneof("event") for r in responses] == [
        PUBLIC_EVENTS[str(line["type"])] for line in public
    ]
    # Text: the same events, each as event_lines() words it, one line each (a scored deal
    # adds a line per seat's hand, and Calabresella the cards set aside).
    expected = [text for r in responses for text in event_lines(r.event)]
    assert out.splitlines() == expected
    plays = [line for line in public if line["type"] == "play"]
    assert sum(1 for text in expected if " plays " in text) == len(plays)
    first = next(r.event.card_played for r in responses if r.event.HasField("card_played"))
    assert (first.seat, first.card) == (plays[0]["seat"], plays[0]["card"])
    if game.startswith("briscola"):
        # Draws are face down: none reaches a spectator; each deal's score is in card points.
        assert not any(" draws " in text for text in expected)
        scores = [line for line in public if line["type"] == "score"]
        heads = [text for text in expected if text.startswith("deal ")]
        assert len(heads) == len(scores) == 4  # two deals in each game of the duplicate set
        for head, score in zip(heads, scores, strict=True):
            assert f"cards {score['card_points'][0]}-{score['card_points'][1]} of 120" in head


def test_watch_lists_a_waiting_table_and_refuses_an_unknown_one(tmp_path: Path) -> None:
    async def scenario() -> tuple[tuple[int, str, str], ...]:
        async with serving() as referee:
            # Two remote entries that never connect keep the table waiting to start.
            waiting = asyncio.ensure_future(
                play(
                    referee,
                    (parse_entry("remote"), parse_entry("remote")),
                    tmp_path / "waiting.jsonl",
                    limits=limits(connect_timeout=20),
                )
            )
            for _ in range(200):
                if referee.feeds:
                    break
                await asyncio.sleep(0.01)
            listed = await run_async("watch", "--referee", referee.address)
            as_json = await run_async("watch", "--referee", referee.address, "--json")
            unknown = await run_async("watch", "no-such-table", "--referee", referee.address)
            waiting.cancel()
            return listed, as_json, unknown

    (code, out, _), (jcode, jout, _), (ucode, uout, uerr) = run(scenario())
    assert code == 0 and jcode == 0
    listing = json.loads(jout)
    [table] = listing["tables"]
    assert table["game"] == 0
    header, _, row = out.splitlines()
    assert header.split() == ["table", "game", "entries"]
    # Without `tavolo serve --public-names` no entry name reaches a spectator.
    assert row.split()[0] == table["table_id"] and "(names not public)" in row
    assert ucode == 1 and uout == ""
    [error] = uerr.splitlines()
    assert error.startswith("error: ") and "no table 'no-such-table'" in error


def test_watch_an_unreachable_referee_is_one_error_line() -> None:
    code, out, err = run(run_async("watch", "--referee", "127.0.0.1:1"))
    assert code == 1 and out == ""
    [error] = err.splitlines()
    assert error.startswith("error: 127.0.0.1:1: UNAVAILABLE")


def _event(**kwargs: object) -> pb.Event:
    return pb.Event(**kwargs)  # type: ignore[arg-type]


def test_event_lines_words_every_spectator_event() -> None:
    busso = pb.CardPlayed(seat=2, card="3D", signal=pb.SIGNAL_BUSSO)
    assert event_lines(_event(card_played=busso)) == ["seat 2 plays 3D busso"]
    assert event_lines(_event(card_played=pb.CardPlayed(seat=1, card="QB"))) == ["seat 1 plays QB"]
    assert event_lines(_event(trick_won=pb.TrickWon(trick=3, winner=1))) == ["trick 3 to seat 1"]
    declared = pb.Declared(seat=0, declaration="napoli-D", cards=["3D", "2D", "AD"], points=3)
    assert event_lines(_event(declared=declared)) == [
        "seat 0 declares napoli-D (3D 2D AD): 3 points"
    ]
    assert event_lines(_event(declarations_ended=pb.DeclarationsEnded(seat=3))) == [
        "seat 3 has nothing more to declare"
    ]
    assert event_lines(_event(called_out=pb.CalledOut(seat=2, claimed=15, correct=False))) == [
        "seat 2 calls out with 15 points claimed: wrong"
    ]
    assert event_lines(_event(card_drawn=pb.Draw(seat=1, card="7C"))) == ["seat 1 draws 7C"]
    assert event_lines(_event(bid_made=pb.BidMade(seat=0, bid="solo"))) == ["seat 0 bids solo"]
    assert event_lines(_event(card_called=pb.CardCalled(seat=0, card="3S", holder=-1))) == [
        "seat 0 calls 3S (in the monte)"
    ]
    assert event_lines(_event(card_called=pb.CardCalled(seat=0, card="3S", holder=2))) == [
        "seat 0 calls 3S (held by seat 2)"
    ]
    assert event_lines(_event(monte_split=pb.MonteSplit(seat=1, take=["2C", "JS"]))) == [
        "seat 1 takes 2C JS from the monte"
    ]
    assert event_lines(_event(monte_split=pb.MonteSplit(seat=2))) == [
        "seat 2 takes nothing from the monte"
    ]
    over = pb.GameOver(game=2, termination="target_reached", winner=1, totals=[30, 41])
    over.forfeit_seat = -1
    assert event_lines(_event(game_over=over)) == [
        "game 2 over (target_reached): side 1 wins, totals 30-41"
    ]
    forfeit = pb.GameOver(game=1, termination="timeout", winner=-1, totals=[0, 0], forfeit_seat=3)
    assert event_lines(_event(game_over=forfeit)) == [
        "game 1 over (timeout, seat 3 forfeited): a draw, totals 0-0"
    ]


def test_event_lines_word_scored_deals() -> None:
    hands = [pb.Hand(cards=["3D", "2D"]), pb.Hand(cards=["AS", "KS"])]
    tressette = pb.DealScored(
        deal=1, last_trick=3, thirds=[17, 18], card_points=[5, 6], declarations=[3, 0],
        points=[8, 6], totals=[8, 6], cappotto=-1, hands=hands,
    )  # fmt: skip
    assert event_lines(_event(deal_scored=tressette)) == [
        "deal 1 scored: points 8-6 (cards 5-6, declarations 3-0, last trick seat 3), totals 8-6",
        "  seat 0: 3D 2D",
        "  seat 1: AS KS",
    ]
    calabresella = pb.DealScored(
        deal=2, contract="solo", soloist=1, success=True, cappotto=-1, points=[-2, 4, -2],
        totals=[-2, 4, -2], hands=hands, set_aside=["4B", "5B", "6B", "7B"],
    )  # fmt: skip
    assert event_lines(_event(deal_scored=calabresella)) == [
        "deal 2 scored: solo by seat 1, made it; payouts -2 / +4 / -2, totals -2 / +4 / -2",
        "  seat 0: 3D 2D",
        "  seat 1: AS KS",
        "  set aside: 4B 5B 6B 7B",
    ]
    calabresella.cappotto = 1
    assert event_lines(_event(deal_scored=calabresella))[0].startswith(
        "deal 2 scored: solo by seat 1, made it, cappotto;"
    )
    briscola = pb.DealScored(
        deal=1, card_points=[74, 46], points=[1, 0], totals=[1, 0], cappotto=-1, hands=hands
    )
    assert event_lines(_event(deal_scored=briscola)) == [
        "deal 1 scored: cards 74-46 of 120, side 0 wins the deal; deals won 1-0",
        "  seat 0: 3D 2D",
        "  seat 1: AS KS",
    ]
    drawn = pb.DealScored(
        deal=2, card_points=[60, 60], points=[0, 0], totals=[1, 0], cappotto=-1, hands=hands
    )
    assert event_lines(_event(deal_scored=drawn))[0] == (
        "deal 2 scored: cards 60-60 of 120, a draw; deals won 1-0"
    )
    redeal = pb.DealScored(deal=3, cappotto=-1, soloist=-1, hands=hands)
    assert event_lines(_event(deal_scored=redeal)) == [
        "deal 3: everyone passed, the same dealer deals again",
        "  seat 0: 3D 2D",
        "  seat 1: AS KS",
    ]


def test_watch_with_an_unreadable_certificate_is_one_error_line(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-ca.pem"
    code, out, err = run(run_async("watch", "--tls-ca", str(missing)))
    assert code == 2 and out == ""
    assert err.splitlines() == [f"error: cannot read {missing}: No such file or directory"]
