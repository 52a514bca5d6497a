"""The Python bot SDK (clients/python): card helpers, Turn, the built-in bots, and the stream.

Everything here runs without the referee: the heuristic gets hand-made requests, and the
stream tests talk to a small fake referee (a ``grpc.aio`` server in this process) that plays
a scripted match. The SDK must not import the referee, so neither do these tests.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import grpc
import grpc.aio
import pytest

from tavolo_bot import (
    CARDS,
    SIGNAL_NAMES,
    Bot,
    ConfigError,
    Turn,
    beats,
    card_of,
    game_seed,
    is_card,
    load_settings,
    points_in_thirds,
    rank_of,
    run_async,
    sort_cards,
    stream_seed,
    strength,
    suit_of,
    winning_card,
)
from tavolo_bot.bots.heuristic import HeuristicBot, choose_action
from tavolo_bot.bots.random import RandomBot
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as rpc
from tavolo_bot.runner import action_id

# ---------------------------------------------------------------------------------------
# Hand-made protocol messages. Ids follow the referee's numbering (signal * 40 + card for a
# play), though the SDK relies only on ids being those of the legal list.

_SIGNAL_IDS = {name: i for i, name in enumerate(SIGNAL_NAMES) if name}
_DECLARATION_SUITS = "DCSB"


def _declaration_id(name: str) -> int:
    kind, rank, *rest = name.split("-")
    if kind == "napoli":
        return 300 + _DECLARATION_SUITS.index(rank)
    if kind == "tre":
        return 304 + 4 * "32A".index(rank) + _DECLARATION_SUITS.index(rest[0][2:])
    return 316 + "32A".index(rank)


def action(text: str) -> pb.Action:
    """The Action a referee would send for an action text."""
    words = text.split()
    if words[0] == "declare":
        return pb.Action(
            id=_declaration_id(words[1]),
            kind=pb.ACTION_KIND_DECLARE,
            declaration=words[1],
            text=text,
        )
    if text == "end-declarations":
        return pb.Action(id=320, kind=pb.ACTION_KIND_END_DECLARATIONS, text=text)
    if text == "call-out":
        return pb.Action(id=321, kind=pb.ACTION_KIND_CALL_OUT, text=text)
    signal = _SIGNAL_IDS[words[1]] if len(words) > 1 else 0
    return pb.Action(
        id=signal * 40 + CARDS.index(words[0]),
        kind=pb.ACTION_KIND_PLAY,
        card=words[0],
        signal=signal,
        text=text,
    )


def true_plays(hand: Sequence[str], trick: Sequence[tuple[int, str]]) -> list[str]:
    """The play texts the default rules allow (follow suit; any truthful signal)."""
    led = suit_of(trick[0][1].split()[0]) if trick else None
    follow = [c for c in hand if suit_of(c) == led]
    out = []
    for card in follow or hand:
        out.append(card)
        if not trick:
            out.append(f"{card} busso")
        rest = sum(1 for c in hand if suit_of(c) == suit_of(card)) - 1
        out.append(f"{card} {'striscio' if rest else 'volo'}")
    return out


def request(
    hand: Sequence[str],
    legal: Iterable[str] | None = None,
    *,
    trick: Sequence[tuple[int, str]] = (),
    played: Sequence[str] = (),
    seat: int = 0,
    players: int = 4,
    request_id: int = 7,
) -> pb.DecisionRequest:
    """A request; ``legal`` defaults to :func:`true_plays`, ``played`` fills one old trick."""
    if legal is None:
        legal = true_plays(hand, trick)
    tricks = []
    if played:
        plays = [pb.Play(seat=i % players, action=action(c)) for i, c in enumerate(played)]
        tricks.append(pb.Trick(plays=plays, winner=0))
    obs = pb.Observation(
        seat=seat,
        players=players,
        phase=pb.PHASE_PLAY,
        hand=hand,
        trick=[pb.Play(seat=s, action=action(t)) for s, t in trick],
        tricks=tricks,
    )
    return pb.DecisionRequest(
        request_id=request_id,
        deadline_ms=2000,
        time_bank_ms=500,
        attempts_left=3,
        observation=obs,
        legal_actions=[action(t) for t in legal],
    )


def heuristic(req: pb.DecisionRequest, target: int | None = None, game: str = "") -> str:
    """The heuristic's action text, checked to be one of the legal actions."""
    chosen = choose_action(Turn(req), target, game)
    assert chosen in req.legal_actions
    return chosen.text


# ---------------------------------------------------------------------------------------
# Cards.


def test_cards_ranks_suits_and_strength() -> None:
    assert len(CARDS) == len(set(CARDS)) == 40
    assert [rank_of(c) for c in ("3D", "2D", "AD", "KD", "QD", "JD", "7D", "6D", "5D", "4D")] == [
        *range(10)
    ]
    assert suit_of("QB") == "B" and suit_of("3d") == "D" and rank_of(" as ") == 2
    assert max(["KS", "3S", "AS"], key=strength) == "3S"
    assert strength("3C") == 9 and strength("4C") == 0
    assert is_card("7c") and not is_card("8D") and not is_card("") and not is_card("3X")
    with pytest.raises(ValueError, match="bad card"):
        rank_of("10D")


def test_points_in_thirds() -> None:
    assert [points_in_thirds(r + "S") for r in "32AKQJ7654"] == [1, 1, 3, 1, 1, 1, 0, 0, 0, 0]
    # The deck holds 10 2/3 points.
    assert sum(map(points_in_thirds, CARDS)) == 32


def test_beats_and_winning_card() -> None:
    assert beats("3S", "2S", "S") and not beats("2S", "3S", "S")
    assert beats("4S", "3D", "S")  # only the led suit can win
    assert not beats("3D", "4S", "S") and not beats("3D", "4D", "S")
    assert winning_card(["5C", "3D", "KC", "4C"]) == "KC"
    assert winning_card(["5C", "3D"], led_suit="D") == "3D"
    assert winning_card(["5C"], led_suit="D") is None and winning_card([]) is None
    assert sort_cards(["4B", "3B", "KD", "2C"]) == ["KD", "2C", "3B", "4B"]


# ---------------------------------------------------------------------------------------
# Turn.


def test_turn_exposes_the_request() -> None:
    req = request(["3D", "KS", "4S"], trick=[(2, "5S busso"), (3, "QS")], seat=0)
    turn = Turn(req)
    assert turn.request_id == 7 and turn.deadline_ms == 2000 and turn.time_bank_ms == 500
    assert turn.attempts_left == 3 and turn.observation is req.observation
    assert [a.text for a in turn.legal] == ["KS", "KS striscio", "4S", "4S striscio"]
    assert turn.seat == 0 and turn.partner == 2 and turn.players == 4
    assert turn.hand == ["3D", "KS", "4S"]
    assert turn.trick == [(2, "5S", "busso"), (3, "QS", "")]
    assert turn.led_suit == "S" and not turn.is_leading
    assert turn.played_cards == ["5S", "QS"]
    assert turn.trump is None
    req.observation.trump = "7B"
    assert Turn(req).trump == "7B"
    # The lists are copies: changing them leaves the turn as it was.
    turn.legal.clear()
    turn.hand.clear()
    assert len(turn.legal) == 4 and len(turn.hand) == 3


def test_turn_plays_declarations_and_find() -> None:
    legal = ["declare napoli-D", "declare tre-3-noB", "3D", "3D busso", "AS", "call-out"]
    turn = Turn(request(["3D", "2D", "AD", "3C", "3S", "AS"], legal, played=["4B", "5B"]))
    assert turn.is_leading and turn.led_suit is None and turn.trick == []
    assert [a.text for a in turn.plays()] == ["3D", "3D busso", "AS"]
    assert [a.text for a in turn.declarations()] == ["declare napoli-D", "declare tre-3-noB"]
    found = turn.find("3D busso")
    assert found is not None and found.id == 40 + CARDS.index("3D")
    assert found.signal == pb.SIGNAL_BUSSO and card_of(found) == "3D"
    assert turn.find("3D volo") is None and turn.find("AS volo") is None
    assert turn.played_cards == ["4B", "5B"]
    assert "legal=" in repr(turn)


def test_turn_without_partner_in_three_player_games() -> None:
    turn = Turn(request(["3D"], seat=1, players=3))
    assert turn.partner is None and turn.players == 3


def test_card_of_falls_back_to_the_text() -> None:
    assert card_of(pb.Action(id=2, text="AD volo")) == "AD"
    assert card_of(pb.Action(id=320, kind=pb.ACTION_KIND_END_DECLARATIONS)) is None


def test_action_id_accepts_ids_and_actions_only() -> None:
    turn = Turn(request(["3D"]))
    assert action_id(5, turn) == 5
    assert action_id(turn.legal[1], turn) == turn.legal[1].id
    for wrong in (True, "3D", None, 1.0):
        with pytest.raises(TypeError, match="choose"):
            action_id(wrong, turn)
    with pytest.raises(ValueError):
        action_id(-1, turn)


# ---------------------------------------------------------------------------------------
# Settings.


def test_settings_from_the_environment(tmp_path: Path) -> None:
    env = {"TAVOLO_REFEREE": "h:1", "TAVOLO_TICKET": " a, b ,,c "}
    settings = load_settings(env=env)
    assert settings.referee == "h:1" and settings.tickets == ("a", "b", "c")
    assert settings.tls_ca is None and settings.reconnect_seconds == 10
    assert load_settings("x:2", ["t"], env={}).tickets == ("t",)
    ca = tmp_path / "ca.pem"
    ca.write_bytes(b"PEM")
    settings = load_settings(env={**env, "TAVOLO_TLS_CA": str(ca), "TAVOLO_RECONNECT_SECONDS": "0"})
    assert settings.tls_ca == b"PEM" and settings.reconnect_seconds == 0


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"TAVOLO_TICKET": "t"}, "TAVOLO_REFEREE"),
        ({"TAVOLO_REFEREE": "h:1", "TAVOLO_TICKET": " , "}, "TAVOLO_TICKET"),
        ({"TAVOLO_REFEREE": "h:1", "TAVOLO_TICKET": "t", "TAVOLO_TLS_CA": "/no/such"}, "TLS_CA"),
        ({"TAVOLO_REFEREE": "h:1", "TAVOLO_TICKET": "t", "TAVOLO_RECONNECT_SECONDS": "-1"}, "RECO"),
    ],
)
def test_settings_errors(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(env=env)


def test_settings_seed_is_tavolo_seed_as_given() -> None:
    env = {"TAVOLO_REFEREE": "h:1", "TAVOLO_TICKET": "t"}
    assert load_settings(env=env).seed == ""
    assert load_settings(env={**env, "TAVOLO_SEED": "s"}).seed == "s"
    assert load_settings(env={**env, "TAVOLO_SEED": " s "}).seed == " s "


def test_stream_seed_and_game_seed() -> None:
    # TAVOLO_SEED, or the ticket when it is unset (empty); "/<index>" with several tickets.
    assert stream_seed("", "tk") == "tk"
    assert stream_seed("s", "tk") == "s"
    assert stream_seed("", "tk", 1, 2) == "tk/1"
    assert stream_seed("s", "tk", 0, 3) == "s/0"
    assert game_seed("s/1", 4) == "s/1/game/4"
    bot = Bot()
    bot.seed = "s/2"
    assert bot.game_seed(7) == "s/2/game/7"


# ---------------------------------------------------------------------------------------
# The heuristic bot.


def test_heuristic_takes_a_trick_cheaply() -> None:
    # Seat 3 plays last; the opponent's QS is best. KS is the cheapest card that beats it.
    req = request(["3S", "KS", "7S", "AD"], trick=[(0, "QS"), (1, "4S"), (2, "5S")], seat=3)
    assert heuristic(req).split()[0] == "KS"


def test_heuristic_takes_with_a_sure_winner_when_others_still_play() -> None:
    # Seat 1 plays second: KS could be beaten by the unseen 2S or AS, the 3S cannot.
    req = request(["3S", "KS", "7S"], trick=[(0, "QS")], seat=1)
    assert heuristic(req).split()[0] == "3S"


def test_heuristic_answers_the_partners_busso_with_its_highest() -> None:
    hand = ["2C", "7C", "4C", "AD"]
    trick = [(0, "5C busso"), (1, "KC")]
    assert heuristic(request(hand, trick=trick, seat=2)).split()[0] == "2C"
    # The same cards without the busso: the 2C could still lose to the 3C, so it ducks low.
    trick = [(0, "5C"), (1, "KC")]
    assert heuristic(request(hand, trick=trick, seat=2)).split()[0] == "4C"


def test_heuristic_has_no_partner_in_three_player_games() -> None:
    # Seat 2 of 3 plays last after seat 0's busso: there is no partner to obey; take cheaply.
    hand = ["2C", "7C", "4C", "AD"]
    req = request(hand, trick=[(0, "5C busso"), (1, "6C")], seat=2, players=3)
    assert heuristic(req).split()[0] == "7C"


def test_heuristic_says_volo_with_its_last_card_of_a_suit() -> None:
    req = request(["3D", "7S", "6S"], trick=[(0, "KD")], seat=1)
    assert heuristic(req) == "3D volo"


def test_heuristic_says_striscio_when_it_holds_more() -> None:
    req = request(["3D", "4D", "7S"], trick=[(0, "KD")], seat=1)
    assert heuristic(req) == "3D striscio"


def test_heuristic_uses_the_signal_the_legal_list_offers() -> None:
    hand = ["3D", "4D", "5D", "6D", "7D", "7S"]
    # striscio_lengths: 4 more diamonds make it lungo, and only lungo/corto are offered.
    legal = ["3D", "3D striscio-lungo", "4D", "4D striscio-lungo"]
    assert heuristic(request(hand, legal, trick=[(0, "KD")], seat=1)) == "3D striscio-lungo"
    # Gioco muto: no signals at all.
    assert heuristic(request(hand, ["3D", "4D"], trick=[(0, "KD")], seat=1)) == "3D"


def test_heuristic_bussa_when_leading_a_suit_with_its_2() -> None:
    # No card is sure to win (the 3C, AD, 3S... are unseen); lead low from the longest suit.
    req = request(["2C", "6C", "5C", "KD", "4S"])
    assert heuristic(req) == "5C busso"


def test_heuristic_leads_an_ace_it_knows_is_highest() -> None:
    req = request(["AS", "4D", "5D"], played=["3S", "2S", "4C", "5C"])
    assert heuristic(req) == "AS volo"
    # With the 2S still out the ace could lose: lead low instead.
    req = request(["AS", "4D", "5D"], played=["3S", "KS", "4C", "5C"])
    assert heuristic(req).split()[0] == "4D"


def test_heuristic_declares_first_and_the_quattro_before_the_rest() -> None:
    hand = ["3D", "2D", "AD", "3C", "3S", "3B", "4S"]
    plays = true_plays(hand, [])
    assert heuristic(request(hand, ["declare napoli-D", "declare tre-3-noB", *plays])) == (
        "declare napoli-D"
    )
    assert heuristic(request(hand, ["declare napoli-D", "declare quattro-3", *plays])) == (
        "declare quattro-3"
    )
    # declare_before_first_card: once nothing is left to declare, end the declarations.
    assert heuristic(request(hand, ["end-declarations"])) == "end-declarations"


def test_heuristic_discards_low_when_void() -> None:
    req = request(["AS", "KC", "7B", "4B"], trick=[(0, "3D")], seat=1)
    assert heuristic(req) == "4B striscio"


def _briscola(req: pb.DecisionRequest, trump: str) -> pb.DecisionRequest:
    req.observation.trump = trump
    return req


def test_heuristic_trumps_a_trick_it_cannot_follow() -> None:
    # Bastoni are trump (the 4B was shown). Seat 3 plays last, void in denari: its 7B takes
    # the opponents' 3D; without trumps it would throw its cheapest card, the 4C.
    trick = [(0, "3D"), (1, "5D"), (2, "6D")]
    hand = ["7B", "4C", "QS"]
    assert heuristic(_briscola(request(hand, hand, trick=trick, seat=3), "4B")) == "7B"
    assert heuristic(request(hand, hand, trick=trick, seat=3)) == "4C"


def test_heuristic_keeps_its_trumps_when_the_partner_has_the_trick() -> None:
    # The partner's 3D wins and seat 3 plays last: load a point, do not waste the trump.
    trick = [(0, "5D"), (1, "3D"), (2, "6D")]
    hand = ["4B", "AC", "QS"]
    assert heuristic(_briscola(request(hand, hand, trick=trick, seat=3), "7B")) == "AC"
    # Seat 0 still plays, and an earlier trick showed it has no denari: it might trump the
    # 3D, so nothing is loaded on it. Not known to lack them, it would follow suit.
    trick = [(1, "3D"), (2, "6D")]
    req = _briscola(request(hand, hand, trick=trick, seat=3), "7B")
    assert heuristic(req) == "AC"
    earlier = [(1, "4D"), (2, "5D"), (3, "7D"), (0, "KC")]
    req.observation.tricks.add(plays=[pb.Play(seat=s, action=action(c)) for s, c in earlier])
    assert heuristic(req) == "QS"


def test_heuristic_does_not_throw_points_under_a_trump() -> None:
    # Opponent 2 trumped opponent 0's denari lead: no denaro can win, the cheapest goes.
    trick = [(0, "KD"), (1, "4C"), (2, "5B")]
    req = request(["AD", "4D", "7C"], trick=trick, seat=3)
    assert heuristic(_briscola(req, "7B")).split()[0] == "4D"
    # Without trumps the ace takes the king's trick.
    assert heuristic(request(["AD", "4D", "7C"], trick=trick, seat=3)).split()[0] == "AD"


def test_heuristic_knows_a_top_card_can_be_trumped() -> None:
    # The AS is the highest spade left, but trumps are out: it is not a sure winner.
    played = ["3S", "2S", "4C", "5C"]
    assert heuristic(request(["AS", "4D", "5D"], played=played)) == "AS volo"
    led = heuristic(_briscola(request(["AS", "4D", "5D"], played=played), "7B"))
    assert led.split()[0] == "4D"


def test_heuristic_loads_points_on_the_partners_sure_trick() -> None:
    # Seat 1 (the partner of 3) leads the 3D, which nothing can beat: give it the ace.
    req = request(["AD", "KD", "4D"], trick=[(1, "3D"), (2, "5D")], seat=3)
    assert heuristic(req).split()[0] == "AD"


def test_heuristic_keeps_its_best_card_for_the_last_trick() -> None:
    # Every spade but the 4S is gone, so the 4S wins the last trick if spades are led;
    # the KC is the one to give away now, though it is worth more.
    gone = ["3S", "2S", "AS", "KS", "QS", "JS", "7S", "6S", "5S"]
    req = request(["KC", "4S"], trick=[(0, "3D")], seat=1, played=gone[:4])
    req.observation.tricks.add(plays=[pb.Play(seat=0, action=action(c)) for c in gone[4:]])
    assert heuristic(req).split()[0] == "KC"


def test_heuristic_calls_out_only_when_sure() -> None:
    hand = ["4D", "5D"]

    def scored(totals: list[int], captured: list[int]) -> pb.DecisionRequest:
        req = request(hand, [*true_plays(hand, []), "call-out"])
        req.observation.totals.extend(totals)
        req.observation.captured.extend(captured)
        req.observation.declarations.add(seat=2, declaration="napoli-C", points=3)
        return req

    # The claim counts game total, floored captured points and declarations: 38 + 0 + 3.
    assert heuristic(scored([38, 10], [2, 30]), target=41) == "call-out"
    assert heuristic(scored([38, 10], [2, 30]), target=None) != "call-out"
    assert heuristic(scored([36, 10], [5, 30]), target=41) != "call-out"


def test_heuristic_reads_the_target_from_match_started() -> None:
    bot = HeuristicBot()
    bot.on_event(pb.Event(match_started=pb.MatchStarted(rules_json='{"target": 31}')))
    assert bot.target == 31
    bot.on_event(pb.Event(match_started=pb.MatchStarted(rules_json="not json")))
    assert bot.target is None


def _random_situation(rng: random.Random) -> pb.DecisionRequest:
    deck = list(CARDS)
    rng.shuffle(deck)
    players = rng.choice((3, 4))
    hand = deck[: rng.randint(1, 10)]
    played = deck[10 : 10 + rng.randrange(0, 20, players)]
    trick_cards = deck[30 : 30 + rng.randrange(players)]
    seat = rng.randrange(players)
    trick = [((seat - len(trick_cards) + i) % players, c) for i, c in enumerate(trick_cards)]
    legal = true_plays(hand, trick)
    if rng.random() < 0.3:  # gioco muto
        legal = [t for t in legal if " " not in t]
    return request(hand, legal, trick=trick, seat=seat, players=players, played=played)


def test_heuristic_only_returns_legal_actions_and_is_fast() -> None:
    rng = random.Random("sdk")
    situations = [_random_situation(rng) for _ in range(2000)]
    start = time.perf_counter()
    for req in situations:
        heuristic(req)  # asserts the action is legal
    per_decision = (time.perf_counter() - start) / len(situations)
    assert per_decision < 0.001


def test_heuristic_is_deterministic() -> None:
    rng = random.Random(5)
    for _ in range(200):
        req = _random_situation(rng)
        assert heuristic(req) == heuristic(pb.DecisionRequest.FromString(req.SerializeToString()))


def briscola_request(
    hand: list[str], trick: Sequence[tuple[int, str]] = (), seat: int = 1, players: int = 2
) -> pb.DecisionRequest:
    """A Briscola request, bastoni trump: any card in hand may be played."""
    req = request(hand, hand, trick=trick, seat=seat, players=players)
    req.observation.trump = "7B"
    req.observation.sides = 2
    return req


def test_heuristic_learns_the_family_from_match_started() -> None:
    bot = HeuristicBot()
    bot.on_event(pb.Event(match_started=pb.MatchStarted(game="briscola", rules_json="{}")))
    assert bot.game == "briscola"
    req = briscola_request(["3D", "4B", "5C"], trick=[(0, "AD")])
    assert next(a.text for a in req.legal_actions if a.id == bot.choose(Turn(req))) == "4B"


@pytest.mark.parametrize(
    ("hand", "trick", "card", "why"),
    [
        (["3D", "4B", "5C"], [(0, "AD")], "4B",
         "the ace is Briscola's highest: an 11 is worth a trump (Tressette would follow, 3D)"),
        (["KD", "2B", "5C"], [(0, "4D")], "KD", "a higher card of the suit banks its points"),
        (["2B", "3S", "4S"], [(0, "5C")], "4S", "a trick of nothing is not worth a trump"),
        (["KB", "3S"], [(0, "5C")], "KB", "the only throw is a 3: trumping saves its 10"),
        (["AS", "4C", "KB"], [], "4C", "lead the cheapest card that is not a trump"),
    ],
)  # fmt: skip
def test_heuristic_plays_briscola(
    hand: list[str], trick: list[tuple[int, str]], card: str, why: str
) -> None:
    assert heuristic(briscola_request(hand, trick), game="briscola") == card, why


def test_heuristic_loads_the_partners_briscola_trick_when_last() -> None:
    # Seat 3 plays last; its partner's AD has the trick: give it the 3C, keep the trump.
    trick = [(0, "5D"), (1, "AD"), (2, "2D")]
    req = briscola_request(["3C", "4S", "KB"], trick, seat=3, players=4)
    assert heuristic(req, game="briscola-a-quattro") == "3C"


def test_heuristic_plays_only_legal_briscola_cards() -> None:
    rng = random.Random("briscola")
    for _ in range(300):
        deck = list(CARDS)
        rng.shuffle(deck)
        players = rng.choice((2, 4))
        seat = rng.randrange(players)
        played = deck[3 : 3 + rng.randrange(players)]
        trick = [((seat - len(played) + i) % players, c) for i, c in enumerate(played)]
        req = briscola_request(deck[: rng.randint(1, 3)], trick, seat, players)
        heuristic(req, game="briscola")  # asserts the action is legal


# ---------------------------------------------------------------------------------------
# The random bot.


def test_random_bot_is_reproducible_from_its_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    turn = Turn(request(["3D", "2D", "AD", "KS", "4B"]))

    def choices(bot: RandomBot) -> list[int]:
        return [bot.choose(turn) for _ in range(20)]

    monkeypatch.delenv("TAVOLO_SEED", raising=False)
    bot = RandomBot()
    bot.ticket = "tk"
    assert bot.seed_text() == "tk"
    expected = random.Random("tk")
    assert choices(bot) == [turn.legal[expected.randrange(len(turn.legal))].id for _ in range(20)]
    monkeypatch.setenv("TAVOLO_SEED", "s")
    other = RandomBot()
    other.ticket, other.stream_index, other.stream_count = "tk", 1, 2
    assert other.seed_text() == "s/1"
    assert choices(RandomBot("x")) == choices(RandomBot("x"))


def test_random_bot_takes_the_seed_run_gives_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVOLO_SEED", "from-env")
    bot = RandomBot()
    bot.ticket, bot.seed = "tk", "given/1"  # what run() sets
    assert bot.seed_text() == "given/1"
    assert RandomBot("mine").seed_text() == "mine"
    bot.on_event(pb.Event(game_started=pb.GameStarted(game=3, seat=0)))
    turn = Turn(request(["3D", "2D", "AD", "KS", "4B"]))
    expected = random.Random("given/1/game/3")
    assert bot.choose(turn) == turn.legal[expected.randrange(len(turn.legal))].id


def test_random_bot_seeds_each_game_on_its_own() -> None:
    turn = Turn(request(["3D", "2D", "AD", "KS", "4B", "7C", "5S"]))

    def game(bot: RandomBot, number: int) -> list[int]:
        bot.on_event(pb.Event(game_started=pb.GameStarted(game=number, seat=0)))
        return [bot.choose(turn) for _ in range(12)]

    whole = RandomBot("s")
    first, second = game(whole, 1), game(whole, 2)
    # A new process that starts at game 2 (a resumed match) plays it the same way.
    assert game(RandomBot("s"), 2) == second
    expected = random.Random("s/game/2")
    assert second == [turn.legal[expected.randrange(len(turn.legal))].id for _ in range(12)]
    assert first != second


# ---------------------------------------------------------------------------------------
# The stream, against a fake referee.

R1 = request(["3D", "KS", "4S", "AB"], request_id=11)
"""Leading: the first decision, answered once, then rejected."""
R2 = request(["3D", "KS", "4S", "AB"], request_id=12)
"""The same decision asked again after the rejection."""
R3 = request(["3D", "KS", "4S", "AB"], request_id=13, trick=[(3, "7S striscio")])
"""Following spades."""


_Context = grpc.aio.ServicerContext[pb.PlayRequest, pb.PlayResponse]

# The referee's details texts (docs/protocol.md §4.6): a reason word, then the explanation.
UNKNOWN_TICKET = "unknown_ticket: unknown ticket"
TICKET_USED = "ticket_used: this ticket has been used and its seat is closed"
SEAT_TAKEN = "seat_taken: a connection for this seat is already open"
WRONG_SOCKET = "wrong_socket: this ticket works only on its own slot's socket"
PROCESS_GONE = "process_gone: the bot process this ticket was made for has ended"


def _ev(**kwargs: object) -> pb.Event:
    return pb.Event(**kwargs)


@dataclass
class FakeReferee(rpc.RefereeServiceServicer):
    """Plays a scripted match on every stream of a known ticket; refuses unknown tickets.

    With ``break_once`` the first stream of each ticket breaks with UNAVAILABLE right
    after the re-request, which the next stream sends again. With ``in_use_once`` too,
    the second stream is refused with ALREADY_EXISTS ``seat_taken``, as by a referee that
    has not yet noticed the break. ``refusals`` maps the number of a ticket's stream (from
    1) to the status that refuses it; the streams it lets through play the script.
    """

    tickets: set[str]
    break_once: bool = False
    in_use_once: bool = False
    refusals: dict[int, tuple[grpc.StatusCode, str]] = field(default_factory=dict)
    hellos: list[pb.Hello] = field(default_factory=list)
    answers: dict[str, list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))
    problems: list[str] = field(default_factory=list)
    streams: Counter[str] = field(default_factory=Counter)
    """Streams opened with a Hello of each known ticket, refused ones included."""
    played: Counter[str] = field(default_factory=Counter)
    """Streams of each ticket that were not refused."""

    def __post_init__(self) -> None:
        if self.in_use_once:
            self.refusals.setdefault(2, (grpc.StatusCode.ALREADY_EXISTS, SEAT_TAKEN))

    async def _answer(
        self, requests: AsyncIterator[pb.PlayRequest], ticket: str, req: pb.DecisionRequest
    ) -> int:
        message = await anext(requests, None)
        if message is None or not message.HasField("decision"):
            self.problems.append(f"{ticket}: expected a decision, got {message}")
            return -1
        decision = message.decision
        if decision.request_id != req.request_id:
            self.problems.append(f"{ticket}: answered {decision.request_id}, not {req.request_id}")
        if decision.action_id not in {a.id for a in req.legal_actions}:
            self.problems.append(f"{ticket}: illegal action id {decision.action_id}")
        self.answers[ticket].append((decision.request_id, decision.action_id))
        return decision.action_id

    async def Play(
        self, request_iterator: AsyncIterator[pb.PlayRequest], context: _Context
    ) -> AsyncIterator[pb.PlayResponse]:
        first = await anext(request_iterator, None)
        if first is None or not first.HasField("hello"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message is Hello")
        assert first is not None
        hello = first.hello
        self.hellos.append(hello)
        if hello.protocol_version != 1:
            self.problems.append(f"protocol_version {hello.protocol_version}")
        if hello.ticket not in self.tickets:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, UNKNOWN_TICKET)
        ticket = hello.ticket
        self.streams[ticket] += 1
        refusal = self.refusals.get(self.streams[ticket])
        if refusal is not None:
            await context.abort(*refusal)
        self.played[ticket] += 1
        welcome = _ev(welcome=pb.Welcome(match_id="m1", slot=0))
        if self.played[ticket] == 1:
            yield pb.PlayResponse(
                events=[
                    welcome,
                    _ev(match_started=pb.MatchStarted(match_id="m1", game="tressette", games=1)),
                    _ev(game_started=pb.GameStarted(game=1, seat=0)),
                    _ev(hand_dealt=pb.HandDealt(deal=1, dealer=3, cards=R1.observation.hand)),
                ],
                request=R1,
            )
            refused = await self._answer(request_iterator, ticket, R1)
            rejected = pb.ActionRejected(
                request_id=R1.request_id,
                action_id=refused,
                reason="must_follow_suit",
                message="scripted refusal",
                attempts_left=2,
            )
            yield pb.PlayResponse(events=[_ev(action_rejected=rejected)], request=R2)
            if self.break_once:
                await context.abort(grpc.StatusCode.UNAVAILABLE, "referee restarting")
        else:
            yield pb.PlayResponse(events=[welcome], request=R2)  # the pending request again
        await self._answer(request_iterator, ticket, R2)
        played = _ev(card_played=pb.CardPlayed(seat=3, card="7S", signal=pb.SIGNAL_STRISCIO))
        yield pb.PlayResponse(events=[played], request=R3)
        await self._answer(request_iterator, ticket, R3)
        yield pb.PlayResponse(
            events=[
                _ev(trick_won=pb.TrickWon(trick=1, winner=0)),
                _ev(game_over=pb.GameOver(game=1, termination="deals_played", winner=0)),
                _ev(match_over=pb.MatchOver(match_id="m1")),
            ]
        )


async def _with_referee(
    referee: rpc.RefereeServiceServicer, body: object, tls: tuple[bytes, bytes] | None = None
) -> object:
    """Run ``body(address)`` (a coroutine function) while the fake referee serves.

    With ``tls`` (key, certificate for ``localhost``) the referee serves over TLS.
    """
    server = grpc.aio.server()
    rpc.add_RefereeServiceServicer_to_server(referee, server)  # type: ignore[no-untyped-call]
    if tls is None:
        address = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
    else:
        credentials = grpc.ssl_server_credentials([tls])
        address = f"localhost:{server.add_secure_port('localhost:0', credentials)}"
    await server.start()
    try:
        return await body(address)  # type: ignore[operator]
    finally:
        await server.stop(None)


@dataclass
class Finished:
    code: int
    stdout: str
    stderr: str


def _play_process(
    referee: FakeReferee,
    module: str,
    tickets: str,
    tls: tuple[bytes, bytes] | None = None,
    **env: str,
) -> Finished:
    """Run ``python -m module`` against the fake referee; how it ended."""

    async def body(address: str) -> Finished:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}
        full_env.update(TAVOLO_REFEREE=address, TAVOLO_TICKET=tickets, **env)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            module,
            env=full_env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), timeout=60)
        assert process.returncode is not None
        return Finished(process.returncode, out.decode(), err.decode())

    result = asyncio.run(_with_referee(referee, body, tls))
    assert isinstance(result, Finished)
    return result


def _expected_random_answers(seed: str) -> list[tuple[int, int]]:
    """The random bot's answers with seed text ``seed``: the fake referee plays game 1."""
    rng = random.Random(f"{seed}/game/1")
    return [
        (r.request_id, r.legal_actions[rng.randrange(len(r.legal_actions))].id)
        for r in (R1, R2, R3)
    ]


def test_random_bot_plays_a_match_and_exits_0() -> None:
    referee = FakeReferee({"tk-1"})
    done = _play_process(referee, "tavolo_bot.bots.random", "tk-1")
    assert done.code == 0, done.stderr
    assert referee.problems == []
    assert [(h.ticket, h.protocol_version) for h in referee.hellos] == [("tk-1", 1)]
    # Seeded with the ticket: the same choices as random.Random("tk-1/game/1") makes.
    assert referee.answers["tk-1"] == _expected_random_answers("tk-1")
    # The rejection is reported on stderr, on one line.
    assert done.stderr.count("\n") == 1 and "rejected (must_follow_suit" in done.stderr


def test_heuristic_bot_plays_a_match_and_exits_0() -> None:
    referee = FakeReferee({"tk-h"})
    done = _play_process(referee, "tavolo_bot.bots.heuristic", "tk-h")
    assert done.code == 0, done.stderr
    assert referee.problems == [] and len(referee.answers["tk-h"]) == 3


def test_unknown_ticket_exits_non_zero_with_one_line() -> None:
    done = _play_process(FakeReferee({"tk-1"}), "tavolo_bot.bots.random", "wrong")
    assert done.code != 0
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "UNAUTHENTICATED" in lines[0] and "unknown ticket" in lines[0]
    assert "wrong" not in lines[0]  # tickets are secrets


def test_several_tickets_play_on_concurrent_streams() -> None:
    referee = FakeReferee({"tk-a", "tk-b"})
    done = _play_process(referee, "tavolo_bot.bots.random", "tk-a,tk-b", TAVOLO_SEED="seed")
    assert done.code == 0, done.stderr
    assert referee.problems == []
    assert sorted(h.ticket for h in referee.hellos) == ["tk-a", "tk-b"]
    assert referee.answers["tk-a"] == _expected_random_answers("seed/0")
    assert referee.answers["tk-b"] == _expected_random_answers("seed/1")


def test_reconnects_after_the_stream_breaks() -> None:
    referee = FakeReferee({"tk-r"}, break_once=True)
    done = _play_process(referee, "tavolo_bot.bots.random", "tk-r", TAVOLO_RECONNECT_SECONDS="5")
    assert done.code == 0, done.stderr
    assert referee.problems == [] and referee.streams["tk-r"] == 2
    # The re-sent request is answered as before, and only then the next one.
    assert referee.answers["tk-r"] == _expected_random_answers("tk-r")


def test_reconnects_while_the_referee_still_holds_the_broken_stream() -> None:
    referee = FakeReferee({"tk-r"}, break_once=True, in_use_once=True)
    done = _play_process(referee, "tavolo_bot.bots.random", "tk-r")
    assert done.code == 0, done.stderr
    assert referee.problems == [] and referee.streams["tk-r"] == 3
    assert referee.answers["tk-r"] == _expected_random_answers("tk-r")


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to make a certificate")
def test_tls_with_the_ca_of_tavolo_tls_ca(tmp_path: Path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True,
    )  # fmt: skip
    referee = FakeReferee({"tk-s"})
    tls = (key.read_bytes(), cert.read_bytes())
    done = _play_process(
        referee, "tavolo_bot.bots.random", "tk-s", tls=tls, TAVOLO_TLS_CA=str(cert)
    )
    assert done.code == 0, done.stderr
    assert referee.answers["tk-s"] == _expected_random_answers("tk-s")


def test_the_readme_example_bot_plays(tmp_path: Path) -> None:
    readme = Path(__file__).resolve().parent.parent / "clients" / "python" / "README.md"
    example = re.search(r"```python\n(.*?)```", readme.read_text(encoding="utf-8"), re.S)
    assert example is not None
    (tmp_path / "my_bot.py").write_text(example.group(1), encoding="utf-8")
    referee = FakeReferee({"tk-x"})

    async def body(address: str) -> Finished:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(tmp_path / "my_bot.py"),
            env={**env, "TAVOLO_REFEREE": address, "TAVOLO_TICKET": "tk-x"},
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(process.communicate(), timeout=60)
        assert process.returncode is not None
        return Finished(process.returncode, "", err.decode())

    done = asyncio.run(_with_referee(referee, body))
    assert isinstance(done, Finished) and done.code == 0, done
    assert referee.problems == [] and len(referee.answers["tk-x"]) == 3


# In-process runs: faster, and they reach the failure paths.


class _Raising(Bot):
    def choose(self, turn: Turn) -> int:
        raise RuntimeError("bot bug")


class _Recording(Bot):
    def __init__(self) -> None:
        self.events: list[str] = []
        self.over = 0

    def choose(self, turn: Turn) -> pb.Action:
        return turn.legal[-1]

    def on_event(self, event: pb.Event) -> None:
        self.events.append(str(event.WhichOneof("event")))

    def on_match_over(self) -> None:
        self.over += 1


def _run_in_process(referee: rpc.RefereeServiceServicer, factory: type[Bot], tickets: str) -> int:
    async def body(address: str) -> int:
        return await run_async(factory, referee=address, tickets=tickets)

    code = asyncio.run(_with_referee(referee, body))
    assert isinstance(code, int)
    return code


def test_hooks_see_every_event_and_actions_are_accepted() -> None:
    made: list[_Recording] = []

    class Remembered(_Recording):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    referee = FakeReferee({"tk"})
    assert _run_in_process(referee, Remembered, "tk") == 0
    assert referee.problems == []
    assert [a for _, a in referee.answers["tk"]] == [r.legal_actions[-1].id for r in (R1, R2, R3)]
    (bot,) = made
    assert bot.ticket == "tk" and bot.over == 1
    assert bot.events == [
        "welcome",
        "match_started",
        "game_started",
        "hand_dealt",
        "action_rejected",
        "card_played",
        "trick_won",
        "game_over",
        "match_over",
    ]


@pytest.mark.parametrize("seed", [None, "s"])
def test_each_ticket_gets_one_bot_of_its_own(
    seed: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if seed is None:
        monkeypatch.delenv("TAVOLO_SEED", raising=False)
    else:
        monkeypatch.setenv("TAVOLO_SEED", seed)
    monkeypatch.setenv("TAVOLO_RECONNECT_SECONDS", "5")
    made: list[_Recording] = []

    class Remembered(_Recording):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    # Each stream breaks once: a reconnection keeps its bot, it does not make another.
    referee = FakeReferee({"tk-a", "tk-b"}, break_once=True)
    assert _run_in_process(referee, Remembered, "tk-a,tk-b") == 0
    assert referee.problems == [] and referee.streams == {"tk-a": 2, "tk-b": 2}
    assert len(made) == 2 and made[0] is not made[1]
    base = seed or "{ticket}"
    for index, (bot, ticket) in enumerate(zip(made, ["tk-a", "tk-b"], strict=True)):
        assert (bot.ticket, bot.stream_index, bot.stream_count) == (ticket, index, 2)
        assert bot.seed == base.format(ticket=ticket) + f"/{index}"
        assert bot.game_seed(1) == bot.seed + "/game/1"
        # Each bot heard its own stream's events once: no event of the other stream.
        assert bot.over == 1 and bot.events.count("welcome") == 1
        assert bot.events.count("match_over") == 1
    one: list[_Recording] = []

    class Single(_Recording):
        def __init__(self) -> None:
            super().__init__()
            one.append(self)

    assert _run_in_process(FakeReferee({"tk"}), Single, "tk") == 0
    (bot,) = one
    assert bot.seed == (seed or "tk") and bot.stream_count == 1


@pytest.mark.parametrize(
    ("code", "details"),
    [
        (grpc.StatusCode.ALREADY_EXISTS, TICKET_USED),
        (grpc.StatusCode.PERMISSION_DENIED, WRONG_SOCKET),
        (grpc.StatusCode.PERMISSION_DENIED, PROCESS_GONE),
        (grpc.StatusCode.UNAUTHENTICATED, UNKNOWN_TICKET),
    ],
)
def test_a_final_refusal_ends_the_stream_at_once(
    code: grpc.StatusCode,
    details: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("TAVOLO_RECONNECT_SECONDS", "5")
    referee = FakeReferee({"tk"}, refusals={1: (code, details)})
    start = time.monotonic()
    assert _run_in_process(referee, _Recording, "tk") == 1
    assert time.monotonic() - start < 2
    assert len(referee.hellos) == 1  # one connection attempt: no retry
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("tavolo_bot: the referee at ")
    assert f"ended the stream: {code.name}: {details}" in lines[0]


def test_ticket_used_after_a_break_is_not_retried(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The stream breaks, and the reconnection finds the match over: no more attempts.
    monkeypatch.setenv("TAVOLO_RECONNECT_SECONDS", "5")
    referee = FakeReferee(
        {"tk"}, break_once=True, refusals={2: (grpc.StatusCode.ALREADY_EXISTS, TICKET_USED)}
    )
    start = time.monotonic()
    assert _run_in_process(referee, _Recording, "tk") == 1
    assert time.monotonic() - start < 3
    assert len(referee.hellos) == 2 and referee.played["tk"] == 1
    lines = [x for x in capsys.readouterr().err.splitlines() if "rejected" not in x]
    assert len(lines) == 1, lines
    assert "ALREADY_EXISTS: ticket_used" in lines[0]
    assert "(the match of this ticket is over)" in lines[0]


def test_seat_taken_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVOLO_RECONNECT_SECONDS", "5")
    taken = (grpc.StatusCode.ALREADY_EXISTS, SEAT_TAKEN)
    referee = FakeReferee({"tk"}, refusals={1: taken, 2: taken})
    assert _run_in_process(referee, _Recording, "tk") == 0
    assert referee.problems == []
    assert len(referee.hellos) == 3 and referee.played["tk"] == 1


def test_seat_taken_is_retried_only_within_the_window(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TAVOLO_RECONNECT_SECONDS", "0.5")
    taken = (grpc.StatusCode.ALREADY_EXISTS, SEAT_TAKEN)
    referee = FakeReferee({"tk"}, refusals=dict.fromkeys(range(1, 1000), taken))
    start = time.monotonic()
    assert _run_in_process(referee, _Recording, "tk") == 1
    assert 0.25 < time.monotonic() - start < 5  # the last wait would end past the window
    assert len(referee.hellos) > 2 and referee.played["tk"] == 0
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert f"ALREADY_EXISTS: {SEAT_TAKEN}" in lines[0] and "gave up after retrying" in lines[0]


def test_a_failing_bot_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run_in_process(FakeReferee({"tk"}), _Raising, "tk") == 1
    err = capsys.readouterr().err
    assert "the bot raised an exception" in err and "RuntimeError: bot bug" in err


def test_gives_up_on_an_unreachable_referee(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TAVOLO_RECONNECT_SECONDS", "0.3")
    start = time.monotonic()
    # Port 1 on localhost: nothing listens there.
    code = asyncio.run(run_async(_Recording, referee="127.0.0.1:1", tickets="tk"))
    assert code == 1 and time.monotonic() - start < 5
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "cannot reach the referee" in lines[0]


def test_missing_settings_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TAVOLO_REFEREE", raising=False)
    assert asyncio.run(run_async(_Recording, tickets="tk")) == 2
    assert "TAVOLO_REFEREE" in capsys.readouterr().err


class _Quitter(FakeReferee):
    """Ends every stream with status OK right after the Welcome, before any MatchOver."""

    async def Play(
        self, request_iterator: AsyncIterator[pb.PlayRequest], context: _Context
    ) -> AsyncIterator[pb.PlayResponse]:
        await anext(request_iterator, None)
        yield pb.PlayResponse(events=[_ev(welcome=pb.Welcome(match_id="m1"))])


def test_a_stream_ended_before_match_over_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run_in_process(_Quitter({"tk"}), _Recording, "tk") == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "before the match was over" in lines[0]


# ---------------------------------------------------------------------------------------
# Compact observations: the SDK asks for them and hands the bot complete ones. The fake
# referee replays what the real one sent (tests/fixtures/compact/, written by
# tests/make_compact_fixture.py), each slot of a match on a ticket of its own.

_COMPACT_FIXTURE = Path(__file__).resolve().parent / "fixtures" / "compact"


@dataclass
class _Row:
    request_id: int
    compact: pb.Observation
    full: pb.Observation


def _fixture_rows(name: str) -> dict[int, list[_Row]]:
    """Slot -> its requests, in order, from one fixture file."""
    import base64
    import json

    rows: dict[int, list[_Row]] = defaultdict(list)
    for line in (_COMPACT_FIXTURE / name).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rows[row["slot"]].append(
            _Row(
                row["request_id"],
                pb.Observation.FromString(base64.b64decode(row["compact"])),
                pb.Observation.FromString(base64.b64decode(row["full"])),
            )
        )
    return rows


@dataclass
class _Replay(rpc.RefereeServiceServicer):
    """Each ticket ``s<slot>`` gets that slot's requests as the fixture has them."""

    rows: dict[int, list[_Row]]
    hellos: list[pb.Hello] = field(default_factory=list)

    async def Play(
        self, request_iterator: AsyncIterator[pb.PlayRequest], context: _Context
    ) -> AsyncIterator[pb.PlayResponse]:
        first = await anext(request_iterator, None)
        assert first is not None
        self.hellos.append(first.hello)
        slot = int(first.hello.ticket[1:])
        welcome = _ev(welcome=pb.Welcome(match_id="m1", slot=slot))
        events = [welcome]
        for row in self.rows[slot]:
            request = pb.DecisionRequest(
                request_id=row.request_id,
                observation=row.compact,
                legal_actions=[pb.Action(id=row.request_id, kind=pb.ACTION_KIND_PLAY)],
            )
            yield pb.PlayResponse(events=events, request=request)
            events = []
            await anext(request_iterator, None)
        yield pb.PlayResponse(events=[*events, _ev(match_over=pb.MatchOver(match_id="m1"))])


class _Observing(Bot):
    """Keeps the observation of every turn, by ticket."""

    seen: ClassVar[dict[str, list[pb.Observation]]] = {}

    def choose(self, turn: Turn) -> pb.Action:
        copy = pb.Observation()
        copy.CopyFrom(turn.observation)
        self.seen.setdefault(self.ticket, []).append(copy)
        return turn.legal[0]


@pytest.mark.parametrize(
    "name",
    ["tressette.jsonl", "tressette-a-due.jsonl", "tressette-a-tre.jsonl", "calabresella.jsonl"],
)
def test_the_bot_sees_complete_observations(name: str) -> None:
    rows = _fixture_rows(name)
    assert any(r.compact.compact for slot in rows.values() for r in slot)
    referee = _Replay(rows)
    _Observing.seen = {}
    tickets = ",".join(f"s{slot}" for slot in rows)
    assert _run_in_process(referee, _Observing, tickets) == 0
    # Every stream asked for compact observations; each bot saw its own stream's, complete.
    assert len(referee.hellos) == len(rows)
    assert all(h.compact_observations for h in referee.hellos)
    for slot, slot_rows in rows.items():
        assert _Observing.seen[f"s{slot}"] == [r.full for r in slot_rows]


def test_a_compact_observation_with_nothing_before_it_stops_the_stream(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = _fixture_rows("tressette.jsonl")
    slot = rows[0]
    first_compact = next(i for i, r in enumerate(slot) if r.compact.compact)
    referee = _Replay({0: slot[first_compact:]})
    _Observing.seen = {}
    assert _run_in_process(referee, _Observing, "s0") == 1
    assert "s0" not in _Observing.seen
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "tavolo_bot: the referee sent a compact observation as the first of this stream; "
        "this stream stops"
    ]
