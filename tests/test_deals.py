"""Seeded deals: the test vectors of docs/deals.md, an independent reimplementation, the CLI."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

import referee.engine.deals as deals
from referee.engine.cards import CARD_NAMES, FULL_DECK, cards_of, names, parse_card
from referee.engine.deals import (
    WordStream,
    deal_cards,
    dealer_of,
    first_dealer,
    shuffled_deck,
)
from referee.engine.registry import presets
from tournaments.cli.main import app

# -- the test vectors of docs/deals.md, copied by hand ---------------------------------------

VECTORS = [
    {
        "game": "tressette",
        "seed": "demo",
        "deal": 1,
        "players": 4,
        "message": "7461766f6c6f2d6465616c2d7631007472657373657474650064656d6f003100"
        "0000000000000000",
        "block0": "685afd6b1939c302afac6ed3d5146a9b5998ad32970a7fedc75b5faff592527b"
        "81bcad146aff2f4ca31939524a1f23b3c157c6baae95ee5507da1c1e02e84898",
        "words": "1750793579 423215874 2947313363 3574885019 1503178034 2534047725 "
        "3344654255 4120007291",
        "draws": "19 3 37 1 14 20 33 26 20 23 12 26 22 22 20 18 3 12 20 2 12 17 8 0 6 6 0 4 5 7 "
        "2 1 1 4 4 0 2 1 0",
        "deck": "3B 2C 3C 4D KC JB 4B QS 7B 2S 6D JD QD 7C JC 7D 3D 5D 6C 5S "
        "AD JS 4S 5B 5C 2B 6S AS AB AC KS QB 7S KB 3S QC 2D 6B KD 4C",
        "first_word": 3571043813,
        "first_dealer": 1,
        "json": '{"game": "tressette", "seed": "demo", "deal": 1, "dealer": 1, "hands": '
        '[["QD", "JD", "6D", "JC", "7C", "3S", "KS", "7S", "KB", "QB"], '
        '["3D", "2D", "KD", "7D", "5D", "QC", "6C", "4C", "5S", "6B"], '
        '["AD", "4D", "3C", "2C", "KC", "5C", "JS", "4S", "3B", "5B"], '
        '["AC", "2S", "AS", "QS", "6S", "2B", "AB", "JB", "7B", "4B"]]}',
    },
    {
        "game": "tressette",
        "seed": "caffè ☕",
        "deal": 7,
        "players": 4,
        "message": "7461766f6c6f2d6465616c2d7631007472657373657474650063616666c3a820"
        "e298950037000000000000000000",
        "block0": "cba899c882540ac8a5d01370ef24a5092e2bc393dcaccb85a0c19db4860e8fa6"
        "ed2d8934b6eb10f27f30296997a25f6c8f6f266e31a49879c237b0ce9f3606ca",
        "words": "3416824264 2186545864 2781877104 4012156169 774620051 3702311813 "
        "2697043380 2249101222",
        "draws": "24 22 8 8 23 18 10 16 20 1 21 4 18 9 4 1 0 7 5 19 11 3 5 11 5 2 2 1 2 10 "
        "1 0 7 0 2 4 0 0 0",
        "deck": "7S JC 6S 7D JS AB 7B 5B JB AC KB KC 4B QC AD 6C 2B 4S KD 2C "
        "4C JD 6D 3D 3B 5S 4D QB QD 2S 2D 3S 7C 3C 5C KS 6B 5D AS QS",
        "first_word": 1719912440,
        "first_dealer": 0,
        "json": '{"game": "tressette", "seed": "caffè ☕", "deal": 7, "dealer": 2, '
        '"hands": [["QD", "4D", "AC", "2S", "5S", "AB", "QB", "JB", "7B", "5B"], '
        '["2D", "AD", "3C", "KC", "QC", "7C", "5C", "3S", "KB", "4B"], '
        '["KD", "5D", "2C", "6C", "AS", "KS", "QS", "4S", "2B", "6B"], '
        '["3D", "JD", "7D", "6D", "JC", "4C", "JS", "7S", "6S", "3B"]]}',
    },
    {
        "game": "tressette-a-tre",
        "seed": "tavolo",
        "deal": 2,
        "players": 3,
        "message": "7461766f6c6f2d6465616c2d7631007472657373657474652d612d7472650074"
        "61766f6c6f0032000000000000000000",
        "block0": "a336a4441bcbc5b9a7dfe9fc7ac6f75c454e931e144b4b601a066e937699bdf0"
        "9ca83ec760df6c061a9a3d8b7e50379263d76405ab5c674b949be315c91593db",
        "words": "2738267204 466339257 2816469500 2059859804 1162777374 340478816 "
        "436629139 1989787120",
        "draws": "4 33 16 22 18 6 17 13 7 0 5 12 17 15 25 23 13 9 6 12 11 2 14 8 2 8 2 4 9 0 "
        "8 4 5 4 0 3 3 1 1",
        "deck": "2B QS 2D 2S KD 3C 4C 4S 3S 6S 3B 7B 4B 7S 6B JB 5D QC AD 2C "
        "5S QB 4D AB KS JS JC 5B AC JD 3D 6D KC 6C 7D 5C AS 7C KB QD",
        "first_word": 3426444367,
        "first_dealer": 1,
        "json": '{"game": "tressette-a-tre", "seed": "tavolo", "deal": 2, "dealer": 2, '
        '"hands": [["2D", "JC", "2S", "KS", "QS", "JS", "7S", "2B", "JB", "6B", "5B", "4B"], '
        '["3D", "AD", "KD", "JD", "6D", "5D", "3C", "2C", "AC", "QC", "4C", "4S"], '
        '["7D", "4D", "KC", "6C", "5C", "3S", "6S", "5S", "3B", "AB", "QB", "7B"]], '
        '"widow": ["QD", "7C", "AS", "KB"]}',
    },
    {
        # Word 1 of this stream (4294967279) is rejected for n = 39.
        "game": "tressette",
        "seed": "reject",
        "deal": 61300806,
        "players": 4,
        "message": "7461766f6c6f2d6465616c2d7631007472657373657474650072656a65637400"
        "3631333030383036000000000000000000",
        "block0": "17ec5d78ffffffefaa75178c509f6de7f41368edf09b460c4d4273104b40b49c"
        "44c474a1b4b6c86ad06adcd65994de7e2117d59b085cac57fccd77a318f89268",
        "words": "401366392 4294967279 2859800460 1352625639 4094912749 4036707852 "
        "1296200464 1262531740",
        "draws": "32 36 21 20 24 34 16 28 10 27 0 6 15 22 2 21 5 4 0 19 4 12 1 6 2 3 4 0 8 0 "
        "5 5 5 2 3 2 3 2 0",
        "deck": "6C 2B KC 6D KB QC 3B 2C 4D KS 5C 5D JB 5B KD JS 4B 2D AC 7S "
        "4C 4S QD JD 6B AD AS JC 7D 3D 6S 3C 5S 7C QB QS 3S 2S 7B AB",
        "first_word": 3353375340,
        "first_dealer": 0,
        "json": '{"game": "tressette", "seed": "reject", "deal": 61300806, "dealer": 1, '
        '"hands": [["KD", "5D", "3C", "7C", "5C", "6S", "5S", "QB", "JB", "5B"], '
        '["2D", "AC", "3S", "2S", "QS", "JS", "7S", "AB", "7B", "4B"], '
        '["QD", "JD", "6D", "KC", "6C", "4C", "4S", "2B", "KB", "6B"], '
        '["3D", "AD", "7D", "4D", "2C", "QC", "JC", "AS", "KS", "3B"]]}',
    },
]
IDS = [f"{v['game']}/{v['seed']}/{v['deal']}" for v in VECTORS]


def _ints(text: str) -> list[int]:
    return [int(t) for t in text.split()]


def _deck(text: str) -> list[int]:
    return [parse_card(t) for t in text.split()]


@pytest.mark.parametrize("v", VECTORS, ids=IDS)
def test_vector_hashed_bytes_and_first_block(v):
    message = bytes.fromhex(v["message"])
    assert message == (
        b"tavolo-deal-v1\x00"
        + v["game"].encode()
        + b"\x00"
        + v["seed"].encode("utf-8")
        + b"\x00"
        + str(v["deal"]).encode()
        + b"\x00"
        + bytes(8)
    )
    assert hashlib.sha512(message).hexdigest() == v["block0"]
    stream = WordStream(v["game"], v["seed"], v["deal"])
    assert len(stream.words) == 16
    assert stream.words[:8] == _ints(v["words"])
    assert bytes.fromhex(v["block0"]) == b"".join(w.to_bytes(4, "big") for w in stream.words)


@pytest.mark.parametrize("v", VECTORS, ids=IDS)
def test_vector_draws_and_deck(v):
    assert deals._draws(v["game"], v["seed"], v["deal"]) == _ints(v["draws"])
    assert shuffled_deck(v["game"], v["seed"], v["deal"]) == _deck(v["deck"])
    assert names(shuffled_deck(v["game"], v["seed"], v["deal"])) == v["deck"].split()


@pytest.mark.parametrize("v", VECTORS, ids=IDS)
def test_vector_dealers(v):
    assert WordStream(v["game"], v["seed"], 0).words[0] == v["first_word"]
    assert first_dealer(v["game"], v["seed"], v["players"]) == v["first_dealer"]
    assert v["first_word"] % v["players"] == v["first_dealer"]
    expected = (v["first_dealer"] + v["deal"] - 1) % v["players"]
    assert dealer_of(v["game"], v["seed"], v["deal"], v["players"]) == expected


@pytest.mark.parametrize("v", VECTORS, ids=IDS)
def test_vector_hands(v):
    shown = json.loads(v["json"])
    dealt = deal_cards(v["game"], v["seed"], v["deal"], shown["dealer"], v["players"])
    assert [names(cards_of(h)) for h in dealt.hands] == shown["hands"]
    assert names(cards_of(dealt.widow)) == shown.get("widow", [])


@pytest.mark.parametrize("v", VECTORS, ids=IDS)
def test_vector_cli_output(v):
    result = CliRunner().invoke(
        app, ["deal", "--game", v["game"], "--seed", v["seed"], "--deal", str(v["deal"]), "--json"]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == v["json"] + "\n"


def test_rejected_word_moves_later_draws_along():
    # Vector 4: word 1 is rejected for n = 39, so draw 2 (i = 38) comes from word 2.
    v = VECTORS[3]
    words = WordStream(v["game"], v["seed"], v["deal"]).words
    assert words[1] >= 2**32 - 2**32 % 39
    draws = _ints(v["draws"])
    assert draws[0] == words[0] % 40
    assert draws[1] == words[2] % 39
    assert draws[2] == words[3] % 38


# -- an independent reimplementation, written from docs/deals.md ------------------------------


def _words(game: str, seed: str, deal: int) -> Iterator[int]:
    prefix = b"tavolo-deal-v1\x00" + game.encode() + b"\x00" + seed.encode("utf-8") + b"\x00"
    prefix += str(deal).encode("ascii") + b"\x00"
    counter = 0
    while True:
        block = hashlib.sha512(prefix + counter.to_bytes(8, "big")).digest()
        for k in range(16):
            yield int.from_bytes(block[4 * k : 4 * k + 4], "big")
        counter += 1


def _below(stream: Iterator[int], n: int) -> int:
    limit = 2**32 - 2**32 % n
    while True:
        word = next(stream)
        if word < limit:
            return word % n


def _plain_deck(game: str, seed: str, deal: int) -> list[int]:
    stream = _words(game, seed, deal)
    deck = list(range(40))
    i = 39
    while i >= 1:
        j = _below(stream, i + 1)
        deck[i], deck[j] = deck[j], deck[i]
        i -= 1
    return deck


def _plain_first_dealer(game: str, seed: str, players: int) -> int:
    return _below(_words(game, seed, 0), players)


def _plain_deal(game: str, seed: str, number: int, players: int):
    dealer = (_plain_first_dealer(game, seed, players) + number - 1) % players
    deck = _plain_deck(game, seed, number)
    packet = 5 if players == 4 else 4
    dealt = 40 if players == 4 else 36
    hands: list[list[int]] = [[] for _ in range(players)]
    position = 0
    while position < dealt:
        for k in range(players):
            seat = (dealer + 1 + k) % players
            hands[seat].extend(deck[position : position + packet])
            position += packet
    return dealer, [sorted(h) for h in hands], sorted(deck[dealt:])


SEEDS = ["", "0", "a", "demo", "caffè ☕", "tavolo", "x\x00y", "Ünïcödé 🃏", "seed with spaces"]
CASES = [(seed, number) for seed in SEEDS for number in (1, 2, 3, 7, 10, 41, 100, 12345)]
CASES += [(f"s{k}", k % 13 + 1) for k in range(200 - len(CASES))]


@pytest.mark.parametrize(("game", "players"), [("tressette", 4), ("tressette-a-tre", 3)])
def test_independent_reimplementation_agrees(game, players):
    assert len(CASES) == 200
    for seed, number in CASES:
        assert shuffled_deck(game, seed, number) == _plain_deck(game, seed, number), seed
        first = first_dealer(game, seed, players)
        assert first == _plain_first_dealer(game, seed, players), seed
        dealer, hands, widow = _plain_deal(game, seed, number, players)
        assert dealer_of(game, seed, number, players) == dealer
        dealt = deal_cards(game, seed, number, dealer, players)
        assert dealt.dealer == dealer
        assert dealt.number == number and dealt.game == game and dealt.seed == seed
        assert [cards_of(h) for h in dealt.hands] == hands, (seed, number)
        assert cards_of(dealt.widow) == widow, (seed, number)


@pytest.mark.parametrize("v", VECTORS, ids=IDS)
def test_independent_reimplementation_gives_the_vectors(v):
    assert _plain_deck(v["game"], v["seed"], v["deal"]) == _deck(v["deck"])
    dealer, hands, widow = _plain_deal(v["game"], v["seed"], v["deal"], v["players"])
    shown = json.loads(v["json"])
    assert dealer == shown["dealer"]
    assert [names(h) for h in hands] == shown["hands"]
    assert names(widow) == shown.get("widow", [])


# -- rejection sampling ---------------------------------------------------------------------


def test_below_skips_a_rejected_word():
    stream = WordStream("tressette", "demo", 1)
    stream.words = [0xFFFFFFFF, 5]
    assert stream.below(40, 0) == (5, 2)


def test_below_accepts_the_last_word_under_the_limit():
    limit = 2**32 - 2**32 % 40
    assert limit == 4294967280
    stream = WordStream("tressette", "demo", 1)
    stream.words = [limit - 1, limit, 7]
    assert stream.below(40, 0) == ((limit - 1) % 40, 1)
    assert stream.below(40, 1) == (7, 3)


def test_below_never_rejects_for_powers_of_two():
    stream = WordStream("tressette", "demo", 1)
    stream.words = [0xFFFFFFFF]
    assert stream.below(4, 0) == (3, 1)
    assert stream.below(32, 0) == (31, 1)


def test_below_reads_the_next_block_when_words_run_out():
    stream = WordStream("tressette", "demo", 1)
    stream.words = [0xFFFFFFFF] * 16
    # The stream has produced block 0, so the next words it appends are block 1's.
    block1 = hashlib.sha512(bytes.fromhex(VECTORS[0]["message"])[:-8] + (1).to_bytes(8, "big"))
    first_of_block1 = int.from_bytes(block1.digest()[:4], "big")
    assert stream.below(40, 0) == (first_of_block1 % 40, 17)
    assert len(stream.words) == 32


def test_word_stream_blocks_follow_the_counter():
    stream = WordStream("tressette-a-tre", "caffè ☕", 3, blocks=3)
    plain = _words("tressette-a-tre", "caffè ☕", 3)
    assert stream.words == [next(plain) for _ in range(48)]


def test_first_dealer_of_three_skips_the_top_word(monkeypatch):
    # 2**32 mod 3 == 1, so only 0xFFFFFFFF is rejected when drawing one of three seats.
    class Stream(WordStream):
        def __init__(self, game: str, seed: str, deal: int, blocks: int = 1) -> None:
            super().__init__(game, seed, deal, blocks)
            self.words[:2] = [0xFFFFFFFF, 0xFFFFFFFE]

    monkeypatch.setattr(deals, "WordStream", Stream)
    assert first_dealer("tressette-a-tre", "any", 3) == 0xFFFFFFFE % 3
    assert first_dealer("tressette", "any", 4) == 0xFFFFFFFF % 4


def test_slow_path_equals_fast_path(monkeypatch):
    seeds = [("tressette", s, n) for s in ("demo", "caffè ☕", "a", "b") for n in (1, 2, 9)]
    seeds += [("tressette-a-tre", "tavolo", n) for n in (1, 2, 3)]
    fast = {key: shuffled_deck(*key) for key in seeds}
    fast_draws = {key: deals._draws(*key) for key in seeds}
    fast_hands = {key: deal_cards(*key, 0, 4 if key[0] == "tressette" else 3) for key in seeds}
    # With a limit of 0 no block passes the fast check: every deal takes the WordStream loop.
    monkeypatch.setattr(deals, "_LOWEST_LIMIT", 0)
    for key in seeds:
        assert deals._draws(*key) == fast_draws[key]
        assert shuffled_deck(*key) == fast[key]
        assert deal_cards(*key, 0, 4 if key[0] == "tressette" else 3) == fast_hands[key]


def test_lowest_limit_is_the_smallest_limit_of_a_shuffle():
    limits = [2**32 - 2**32 % n for n in range(2, 41)]
    assert min(limits) == deals._LOWEST_LIMIT == 2**32 - 22


def test_the_rejection_vector_takes_the_slow_path():
    v = VECTORS[3]
    prefix = bytes.fromhex(v["message"])[:-8]
    words = []
    for c in range(3):
        block = hashlib.sha512(prefix + c.to_bytes(8, "big")).digest()
        words += [int.from_bytes(block[4 * k : 4 * k + 4], "big") for k in range(16)]
    assert max(words) >= deals._LOWEST_LIMIT
    assert deals._draws(v["game"], v["seed"], v["deal"]) == _ints(v["draws"])


# -- properties of every deal -------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "players", "hand_size", "widow_size"),
    [("tressette", 4, 10, 4 - 4), ("tressette-a-tre", 3, 12, 4)],
)
def test_every_deal_conserves_the_deck(game, players, hand_size, widow_size):
    for k in range(300):
        seed, number = f"conserve-{k}", k % 17 + 1
        deck = shuffled_deck(game, seed, number)
        assert sorted(deck) == list(range(40))
        dealer = dealer_of(game, seed, number, players)
        dealt = deal_cards(game, seed, number, dealer, players)
        assert len(dealt.hands) == players
        assert all(len(cards_of(h)) == hand_size for h in dealt.hands)
        assert len(cards_of(dealt.widow)) == widow_size
        union = dealt.widow
        for hand in dealt.hands:
            assert union & hand == 0
            union |= hand
        assert union == FULL_DECK


def test_packets_follow_the_dealer():
    deck = shuffled_deck("tressette", "packets", 5)
    for dealer in range(4):
        dealt = deal_cards("tressette", "packets", 5, dealer, 4)
        eldest = (dealer + 1) % 4
        assert cards_of(dealt.hands[eldest]) == sorted(deck[0:5] + deck[20:25])
        assert cards_of(dealt.hands[dealer]) == sorted(deck[15:20] + deck[35:40])
    deck = shuffled_deck("tressette-a-tre", "packets", 5)
    for dealer in range(3):
        dealt = deal_cards("tressette-a-tre", "packets", 5, dealer, 3)
        eldest = (dealer + 1) % 3
        assert cards_of(dealt.hands[eldest]) == sorted(deck[0:4] + deck[12:16] + deck[24:28])
        assert cards_of(dealt.hands[dealer]) == sorted(deck[8:12] + deck[20:24] + deck[32:36])
        assert cards_of(dealt.widow) == sorted(deck[36:])


def test_different_deal_numbers_give_different_decks():
    for game in ("tressette", "tressette-a-tre"):
        decks = {tuple(shuffled_deck(game, "many", n)) for n in range(0, 500)}
        assert len(decks) == 500


def test_different_seeds_and_families_give_different_decks():
    decks = {
        tuple(shuffled_deck(game, seed, 1))
        for game in ("tressette", "tressette-a-tre")
        for seed in ("a", "b", "A", "a ", " a", "caffè", "caffe\u0300", "x\x00y", "x\x00z")
    }
    assert len(decks) == 18


@pytest.mark.parametrize("name", sorted(presets()))
def test_a_family_deals_a_given_deck_as_it_deals_the_seeds_shuffle(name: str):
    rules = presets()[name]
    fam = rules.family
    for k in range(40):
        seed, number, dealer = f"deck-{k}", k % 5 + 1, k % rules.players
        seeded = fam.deal(rules, seed, number, dealer)
        given = fam.deal_deck(rules, shuffled_deck(rules.game, seed, number), number, dealer)
        assert given == seeded._replace(seed="")


def test_a_deck_must_hold_every_card_once():
    with pytest.raises(ValueError, match="each of the 40 cards once"):
        deals.deal_deck("tressette", [0] * 40, 1, 0, 4)
    with pytest.raises(ValueError, match="each of the 40 cards once"):
        briscola = presets()["briscola"]
        briscola.family.deal_deck(briscola, list(range(39)), 1, 0)


def test_the_dealer_passes_to_the_next_seat():
    for players, game in ((4, "tressette"), (3, "tressette-a-tre")):
        first = first_dealer(game, "rotation", players)
        assert dealer_of(game, "rotation", 1, players) == first
        for number in range(2, 12):
            before = dealer_of(game, "rotation", number - 1, players)
            assert dealer_of(game, "rotation", number, players) == (before + 1) % players


def test_first_dealers_cover_every_seat():
    for players, game in ((4, "tressette"), (3, "tressette-a-tre")):
        counts = [0] * players
        for k in range(1200):
            counts[first_dealer(game, f"first-{k}", players)] += 1
        expected = 1200 / players
        assert all(0.8 * expected < c < 1.2 * expected for c in counts), counts


def test_cards_land_in_each_seat_about_equally():
    # 4000 deals: each (card, seat) count is Binomial(4000, 1/4), mean 1000, sd about 27.
    # The bounds are more than 5 sd away, and the seeds are fixed, so this cannot flake.
    deals_played = 4000
    counts = [[0] * 4 for _ in range(40)]
    for number in range(1, deals_played + 1):
        dealt = deal_cards("tressette", "uniform", number, number % 4, 4)
        for seat, hand in enumerate(dealt.hands):
            for card in cards_of(hand):
                counts[card][seat] += 1
    for card in range(40):
        assert sum(counts[card]) == deals_played
        for seat in range(4):
            assert 850 < counts[card][seat] < 1150, (CARD_NAMES[card], seat, counts[card])


def test_deck_positions_are_about_uniform():
    # Each card at each of the 40 positions: Binomial(4000, 1/40), mean 100, sd about 9.9.
    positions = [[0] * 40 for _ in range(40)]
    for number in range(1, 4001):
        for position, card in enumerate(shuffled_deck("tressette-a-tre", "positions", number)):
            positions[card][position] += 1
    flat = [c for row in positions for c in row]
    assert min(flat) > 50 and max(flat) < 150
    assert abs(sum(flat) / len(flat) - 100) < 1e-9


# -- the tavolo deal command ----------------------------------------------------------------


def _run(*args: str):
    return CliRunner().invoke(app, ["deal", *args])


def test_cli_json_keys_for_tressette():
    result = _run("--seed", "demo", "--json")
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert list(out) == ["game", "seed", "deal", "dealer", "hands"]
    assert out["game"] == "tressette" and out["seed"] == "demo" and out["deal"] == 1
    assert [len(h) for h in out["hands"]] == [10, 10, 10, 10]


def test_cli_json_keys_for_tressette_a_tre():
    result = _run("--game", "tressette-a-tre", "--seed", "demo", "--deal", "3", "--json")
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert list(out) == ["game", "seed", "deal", "dealer", "hands", "widow"]
    assert out["game"] == "tressette-a-tre" and out["deal"] == 3
    assert [len(h) for h in out["hands"]] == [12, 12, 12]
    assert len(out["widow"]) == 4
    every = [c for h in out["hands"] for c in h] + out["widow"]
    assert sorted(every, key=parse_card) == list(CARD_NAMES)


def test_cli_presets_deal_as_their_family():
    plain = json.loads(_run("--seed", "demo", "--deal", "4", "--json").stdout)
    for preset in ("tressette-muto", "treseta"):
        result = _run("--game", preset, "--seed", "demo", "--deal", "4", "--json")
        assert result.exit_code == 0
        assert json.loads(result.stdout) == plain


def test_cli_matches_the_game_record():
    from referee.engine.registry import preset
    from referee.families.tressette.game import TressetteGame

    state = TressetteGame(preset("tressette-a-tre"), "cli-record", record=True)
    assert state.events is not None
    deal_line = state.lines()[1]
    out = json.loads(
        _run("--game", "tressette-a-tre", "--seed", "cli-record", "--deal", "1", "--json").stdout
    )
    assert out["dealer"] == deal_line["dealer"]
    assert out["hands"] == deal_line["hands"]
    assert out["widow"] == deal_line["widow"]


def test_cli_text_output():
    result = _run("--seed", "demo")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "tressette, seed 'demo', deal 1, dealer seat 1",
        "  seat 0: QD JD 6D JC 7C 3S KS 7S KB QB",
        "  seat 1: 3D 2D KD 7D 5D QC 6C 4C 5S 6B",
        "  seat 2: AD 4D 3C 2C KC 5C JS 4S 3B 5B",
        "  seat 3: AC 2S AS QS 6S 2B AB JB 7B 4B",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seed", "demo", "--deal", "0"], "error: --deal must be 1 or more, got 0"),
        (["--seed", "demo", "--deal", "-3"], "error: --deal must be 1 or more, got -3"),
        (["--seed", "demo", "--game", "nope"], "error: unknown game 'nope'"),
        (["--seed", "demo", "--rule", "signals=loud"], "error: knob 'signals' cannot be"),
    ],
)
def test_cli_errors_are_one_line(args, message):
    result = _run(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(message)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


# -- seed commitments (docs/deals.md §6) -------------------------------------------------------

COMMITMENTS = {
    "demo": "32c179dd59c4129f468cc0f3b2198069330e1f86a8f4b23c2decfd3ca1c5a66e",
    "caffè ☕": "4df3ccb8cc5bee58493f1d622f8e3b91a4d15ca557aa777d259a35ab7eb754b4",
}
"""The vectors docs/deals.md gives."""


@pytest.mark.parametrize(("seed", "commitment"), COMMITMENTS.items())
def test_seed_commitment_vectors(seed: str, commitment: str) -> None:
    # As the page words it: the domain, a zero byte, the seed's UTF-8.
    by_hand = hashlib.sha256(b"tavolo-seed-commitment-v1" + b"\x00" + seed.encode()).hexdigest()
    assert deals.seed_commitment(seed) == by_hand == commitment
    done = CliRunner().invoke(app, ["seed", "commit", seed])
    assert done.exit_code == 0 and done.stdout == commitment + "\n"
    # Short seeds can be guessed from their commitment: said once, on stderr.
    assert done.stderr.count("warning: ") == 1 and "tavolo seed new" in done.stderr


def test_seed_new_and_check() -> None:
    runner = CliRunner()
    made = runner.invoke(app, ["seed", "new", "--json"])
    assert made.exit_code == 0
    fresh = json.loads(made.stdout)
    assert len(fresh["seed"]) == 32 and int(fresh["seed"], 16) >= 0
    assert fresh["commitment"] == deals.seed_commitment(fresh["seed"])
    assert runner.invoke(app, ["seed", "commit", fresh["seed"]]).stderr == ""
    other = json.loads(runner.invoke(app, ["seed", "new", "--json"]).stdout)
    assert other["seed"] != fresh["seed"]

    ok = runner.invoke(app, ["seed", "check", fresh["seed"], fresh["commitment"].upper()])
    assert ok.exit_code == 0 and "matches" in ok.stdout
    wrong = runner.invoke(app, ["seed", "check", other["seed"], fresh["commitment"]])
    assert wrong.exit_code == 1
    assert wrong.stderr.splitlines() == [
        f"error: seed {other['seed']!r} does not match commitment {fresh['commitment']}"
    ]
    bad = runner.invoke(app, ["seed", "check", "demo", "xyz"])
    assert bad.exit_code == 2
    assert bad.stderr.splitlines() == ["error: the commitment must be 64 hex digits, got 'xyz'"]
