"""Deal books: given deals played in order instead of seeded ones, checked line by line,
named in the record, and verified against the book."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest

from referee.engine.deal_book import BookError, deal_line, parse_book
from referee.engine.game_base import AnyGame
from referee.engine.registry import new_game, preset
from referee.engine.rules import Rules
from referee.records import RecordError, dumps, verify_lines
from tests.test_cli import assert_one_error, tavolo
from tournaments.config import load_config
from tournaments.storage import Store

LINE = {
    "dealer": 3,
    "hands": [
        ["JD", "AC", "JC", "5C", "AS", "7S", "6S", "2B", "AB", "6B"],
        ["KD", "5D", "4D", "3C", "6C", "3S", "2S", "JS", "QB", "5B"],
        ["2D", "AD", "7D", "6D", "KC", "7C", "5S", "JB", "7B", "4B"],
        ["3D", "QD", "2C", "QC", "4C", "KS", "QS", "4S", "3B", "KB"],
    ],
}
"""A Tressette deal written by hand in the book's form."""


def book_text(*lines: dict[str, object]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def seeded_lines(game: str, seed: str, count: int, *knobs: str) -> bytes:
    """A book of deals 1..count of ``seed``, as ``tavolo deal --json`` prints them."""
    out = []
    for number in range(1, count + 1):
        result = tavolo(
            "deal", "--seed", seed, "--game", game, "--deal", number, "--json",
            *[a for k in knobs for a in ("--rule", k)],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        out.append(result.stdout)
    return "".join(out).encode()


def play_out(state: AnyGame, seed: int = 1) -> list[str]:
    """The record of a game played to its end by uniformly random legal actions."""
    rng = random.Random(seed)
    while state.outcome is None:
        state.apply_action(rng.choice(state.legal_actions()))
    assert state.events is not None
    return [dumps(e) for e in state.lines()]


def without_book_fields(lines: list[str]) -> list[dict[str, object]]:
    out = []
    for line in lines:
        obj = json.loads(line)
        obj.pop("book", None)
        obj.pop("book_line", None)
        out.append(obj)
    return out


# -- a book deals exactly its lines ---------------------------------------------------------


@pytest.mark.parametrize(
    ("preset_name", "knobs"),
    [
        ("tressette", ()),
        ("tressette-briscola", ()),
        ("tressette-a-tre", ()),
        ("tressette-a-due", ()),
        ("ciapano", ()),
        ("briscola", ()),
        ("briscola-a-quattro", ()),
    ],
)
def test_a_book_of_seeded_deals_plays_as_the_seed_does(preset_name: str, knobs: tuple[str, ...]):
    """A book of `tavolo deal --json` lines, played in order, is the seeded game itself:
    the same hands, dealers, stock and trump, so the same record but for the book fields."""
    rules = preset(preset_name).with_knobs(list(knobs))
    data = seeded_lines(preset_name, "booked", 3, *knobs)
    book = parse_book(data, rules, "seeded.jsonl")
    assert [d.line for d in book.deals] == [1, 2, 3]
    from_book = play_out(new_game(rules, "booked", deals=3, record=True, book=book))
    from_seed = play_out(new_game(rules, "booked", deals=3, record=True))
    assert without_book_fields(from_book) == without_book_fields(from_seed)
    header = json.loads(from_book[0])
    assert header["book"] == {"sha256": book.sha256, "start": 1}
    deal_lines = [json.loads(x) for x in from_book if '"type":"deal"' in x]
    assert [d["book_line"] for d in deal_lines] == [1, 2, 3]


def test_calabresella_deals_a_book_and_its_monte():
    rules = preset("calabresella")
    line = json.loads(seeded_lines("calabresella", "c", 1).decode())
    book = parse_book(book_text(line), rules, "c.jsonl")
    state = new_game(rules, "c", deals=1, record=True, book=book)
    first = json.loads(play_out(state)[1])
    assert first["hands"] == line["hands"] and first["monte"] == line["monte"]
    assert first["dealer"] == line["dealer"] and first["book_line"] == 1


def test_four_at_a_calabresella_table_the_dealer_holds_nothing():
    rules = preset("calabresella").with_knobs(["table_seats=4"])
    data = seeded_lines("calabresella", "c4", 1, "table_seats=4")
    line = json.loads(data)
    assert line["hands"][line["dealer"]] == []
    book = parse_book(data, rules, "c4.jsonl")
    assert book.deals[0].hands[line["dealer"]] == 0
    line["hands"][line["dealer"]] = [line["monte"].pop()]
    with pytest.raises(BookError, match="holds 1 cards, not 0 \\(the dealer sits out\\)"):
        parse_book(book_text(line), rules, "c4.jsonl")


def test_games_start_where_their_set_starts_and_go_round_the_book():
    rules = Rules()
    book = parse_book(seeded_lines("tressette", "round", 3), rules, "r.jsonl")
    state = new_game(rules, "x", deals=4, record=True, book=book, book_start=2)
    lines = play_out(state)
    assert json.loads(lines[0])["book"]["start"] == 3
    used = [json.loads(x)["book_line"] for x in lines if '"type":"deal"' in x]
    assert used == [3, 1, 2, 3]


def test_the_hand_written_line_round_trips():
    book = parse_book(book_text(LINE), Rules(), "hand.jsonl")
    assert deal_line(book.deals[0].deal(1), Rules()) == LINE


# -- bad books: one error naming the file, the line and the problem ------------------------


def bad(**changes: object) -> dict[str, object]:
    line = json.loads(json.dumps(LINE))
    line.update(changes)
    return line


def hands_with(seat: int, cards: list[str]) -> list[list[str]]:
    hands = json.loads(json.dumps(LINE["hands"]))
    hands[seat] = cards
    return hands


H = LINE["hands"]
BAD_LINES = [
    ("a wrong card count", bad(hands=hands_with(2, H[2][:9])), "seat 2 holds 9 cards, not 10"),
    (
        "a repeated card",
        bad(hands=hands_with(2, [*H[2][:9], "3D"])),
        "3D is dealt twice: to seat 2 and to seat 3",
    ),
    (
        "a missing card",
        bad(hands=hands_with(3, H[3][1:])),
        "seat 3 holds 9 cards, not 10; missing from the deal: 3D",
    ),
    ("the wrong number of hands", bad(hands=H[:3]), "3 hands, but tressette has 4 seats"),
    ("an unknown card", bad(hands=hands_with(1, ["ZZ", *H[1][1:]])), "seat 1: 'ZZ' is not a card"),
    ("a ten", bad(hands=hands_with(1, ["10D", *H[1][1:]])), "'10D' is not a card"),
    ("a bad dealer", bad(dealer=4), "field 'dealer' must be a seat from 0 to 3, got 4"),
    ("no hands", {"dealer": 0}, "missing field 'hands'"),
    ("an unknown field", bad(note="nice"), "unknown field 'note'"),
    ("another game", bad(game="calabresella"), "a deal of 'calabresella', but the game is"),
    ("a widow in tressette", bad(widow=[]), "field 'widow' has no place in tressette"),
    ("a trump without the briscola", bad(trump="3D"), "field 'trump' has no place"),
]


@pytest.mark.parametrize(("what", "line", "message"), BAD_LINES, ids=[b[0] for b in BAD_LINES])
def test_a_bad_line_names_the_file_the_line_and_the_problem(what: str, line, message: str):
    data = book_text(LINE, LINE, line)
    with pytest.raises(BookError) as info:
        parse_book(data, Rules(), "deals.jsonl")
    assert str(info.value).startswith("deals.jsonl:3: "), str(info.value)
    assert message in str(info.value)


def test_a_widow_short_of_a_card_names_it():
    rules = preset("tressette-a-tre")
    line = json.loads(seeded_lines("tressette-a-tre", "w", 1))
    lost = line["widow"].pop()
    with pytest.raises(BookError, match=f"w.jsonl:1: field 'widow' holds 3 cards, not 4; .*{lost}"):
        parse_book(book_text(line), rules, "w.jsonl")
    del line["widow"]
    with pytest.raises(BookError, match="missing field 'widow'"):
        parse_book(book_text(line), rules, "w.jsonl")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "the book has no deals"),
        (b"{not json}\n", ":1: not JSON"),
        (b"[1, 2]\n", ":1: a deal must be a JSON object"),
        (book_text(LINE) + b"\n" + book_text(LINE), ":2: not JSON"),
        (b"\xff\n", "not UTF-8"),
    ],
)
def test_a_book_that_is_not_deals(data: bytes, message: str):
    with pytest.raises(BookError, match=message):
        parse_book(data, Rules(), "deals.jsonl")


def test_briscolas_trump_is_the_stocks_last_card():
    rules = preset("briscola")
    line = json.loads(seeded_lines("briscola", "trump", 1))
    assert len(line["stock"]) == 34  # 40 cards less two hands of three
    parse_book(book_text({**line, "trump": line["stock"][-1]}), rules, "t.jsonl")
    with pytest.raises(BookError, match="field 'trump' must be the stock's last card"):
        parse_book(book_text({**line, "trump": line["stock"][0]}), rules, "t.jsonl")
    with pytest.raises(BookError, match="field 'stock' holds 33 cards, not 34"):
        parse_book(book_text({**line, "stock": line["stock"][1:]}), rules, "t.jsonl")


def test_the_briscola_trump_must_be_the_dealers():
    rules = preset("tressette-briscola")
    with pytest.raises(BookError, match="missing field 'trump'"):
        parse_book(book_text(LINE), rules, "b.jsonl")
    with pytest.raises(BookError, match="2B, which the dealer \\(seat 3\\) does not hold"):
        parse_book(book_text(bad(trump="2B")), rules, "b.jsonl")
    book = parse_book(book_text(bad(trump="KB")), rules, "b.jsonl")
    state = new_game(rules, "b", deals=1, record=True, book=book)
    assert state.events is not None and state.lines()[1]["trump"] == "KB"


# -- the verifier --------------------------------------------------------------------------


@pytest.fixture
def booked(tmp_path: Path) -> tuple[Path, list[str]]:
    path = tmp_path / "deals.jsonl"
    path.write_bytes(seeded_lines("tressette", "v", 2))
    book = parse_book(path.read_bytes(), Rules(), str(path))
    return path, play_out(new_game(Rules(), "v", deals=2, record=True, book=book))


def test_verify_checks_hands_against_the_book(booked: tuple[Path, list[str]]):
    path, lines = booked
    done = verify_lines(lines, book=(path.read_bytes(), str(path)))
    assert done.book_checked and len(done.books) == 1
    # Without the book, the play is checked and the hands are taken from the record.
    done = verify_lines(lines)
    assert not done.book_checked and done.books == (json.loads(lines[0])["book"]["sha256"],)


def test_verify_refuses_another_book(booked: tuple[Path, list[str]], tmp_path: Path):
    _, lines = booked
    other = seeded_lines("tressette", "other", 2)
    with pytest.raises(RecordError, match=r"dealt from the book with SHA-256 .* but o.jsonl has"):
        verify_lines(lines, book=(other, "o.jsonl"))


def test_verify_finds_hands_that_are_not_the_books(booked: tuple[Path, list[str]]):
    """The record's hands changed (two cards swapped between seats) and its header's SHA-256
    kept: the book shows the lie. Without the book, the header cannot be trusted for it."""
    path, lines = booked
    deal = json.loads(lines[1])
    a, b = deal["hands"][0][0], deal["hands"][1][0]
    deal["hands"][0][0], deal["hands"][1][0] = b, a
    deal["hands"] = [sorted(h, key=lambda c: ("DCSB".index(c[1]), "32AKQJ7654".index(c[0])))
                     for h in deal["hands"]]  # fmt: skip
    tampered = [lines[0], dumps(deal), *lines[2:]]
    with pytest.raises(RecordError, match="deal 1: field 'hands' does not match the book"):
        verify_lines(tampered, "t.jsonl", book=(path.read_bytes(), str(path)))


def test_a_seeded_record_is_not_checked_against_a_book(booked: tuple[Path, list[str]]):
    path, _ = booked
    seeded = play_out(new_game(Rules(), "v", deals=1, record=True))
    with pytest.raises(RecordError, match="a deal book was given, but this game was dealt"):
        verify_lines(seeded, book=(path.read_bytes(), str(path)))


def test_a_book_header_must_be_well_formed(booked: tuple[Path, list[str]]):
    _, lines = booked
    header = json.loads(lines[0])
    header["book"]["start"] = 0
    with pytest.raises(RecordError, match="'start' must be a line number from 1"):
        verify_lines([dumps(header), *lines[1:]])


# -- the command line ----------------------------------------------------------------------


def test_play_a_book_in_duplicate_sets_and_verify_it(tmp_path: Path):
    book = tmp_path / "deals.jsonl"
    book.write_bytes(seeded_lines("tressette", "cli", 4))
    record = tmp_path / "r.jsonl"
    result = tavolo(
        "play", "random", "random", "--seed", "s", "--book", book, "--deals", "2", "--sets",
        "2", "--record", record, "--quiet", "--in-process",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    games = [json.loads(x) for x in record.read_text().splitlines() if '"type":"game"' in x]
    assert [g["book"]["start"] for g in games] == [1, 1, 3, 3]
    result = tavolo("verify", record, "--book", book)
    assert result.exit_code == 0, result.output
    assert "hands checked" in result.stdout
    result = tavolo("verify", record)
    assert result.exit_code == 0 and "not checked; give --book FILE" in result.stdout


def test_play_a_bad_book_is_one_error(tmp_path: Path):
    book = tmp_path / "deals.jsonl"
    book.write_bytes(book_text(LINE, bad(hands=hands_with(0, H[0][:8]))))
    result = tavolo("play", "random", "random", "--seed", "s", "--book", book, "--quiet")
    assert_one_error(result, f"{book}:2:", "seat 0 holds 8 cards, not 10")
    result = tavolo("play", "random", "random", "--seed", "s", "--book", tmp_path / "none")
    assert_one_error(result, "cannot read the deal book")


def test_play_one_deal_from_given_hands(tmp_path: Path):
    record = tmp_path / "r.jsonl"
    text = ";".join(",".join(hand) for hand in H)
    result = tavolo(
        "play", "random", "heuristic", "--seed", "s", "--hands", text, "--dealer", "3",
        "--record", record, "--quiet", "--in-process",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = record.read_text().splitlines()
    deals = [json.loads(x) for x in lines if '"type":"deal"' in x]
    assert len(deals) == 2  # one deal, once for each seating of the two entries
    assert all(d["hands"] == H and d["dealer"] == 3 and d["book_line"] == 1 for d in deals)
    assert tavolo("verify", record).exit_code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--hands", ";".join(",".join(h) for h in H)), "--hands needs --dealer"),
        (("--hands", "3D,2D;;;", "--dealer", "0"), "--hands: seat 0 holds 2 cards, not 10"),
        (("--hands", ";".join(",".join(h) for h in H), "--dealer", "0", "--deals", "2"),
         "--deals must be 1"),
        (("--dealer", "1"), "--dealer and --trump go with --hands"),
    ],
)  # fmt: skip
def test_given_hands_errors(args: tuple[str, ...], message: str):
    result = tavolo("play", "random", "random", "--seed", "s", "--in-process", *args)
    assert_one_error(result, message)


def test_calabresella_hands_leave_the_monte(tmp_path: Path):
    line = json.loads(seeded_lines("calabresella", "m", 1))
    record = tmp_path / "r.jsonl"
    text = ";".join(",".join(hand) for hand in line["hands"])
    result = tavolo(
        "play", "random", "random", "random", "--game", "calabresella", "--seed", "s",
        "--hands", text, "--dealer", str(line["dealer"]), "--record", record, "--quiet",
        "--in-process",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    deal = next(json.loads(x) for x in record.read_text().splitlines() if '"type":"deal"' in x)
    assert deal["monte"] == line["monte"]


def test_rules_other_than_the_books_are_refused():
    rules = dataclasses.replace(Rules(), game="tressette-a-tre")
    with pytest.raises(BookError, match="4 hands, but tressette-a-tre has 3 seats"):
        parse_book(book_text(LINE), rules, "deals.jsonl")


# -- tournaments ---------------------------------------------------------------------------

TOURNAMENT = """name = "booked"
seed = "booked"

[game]
preset = "tressette"
deals = 1
book = "deals.jsonl"

[match]
games = 4

[[entry]]
name = "a"
bot = "random"

[[entry]]
name = "b"
bot = "random"
"""


def test_a_tournament_deals_its_book_to_every_match(tmp_path: Path):
    (tmp_path / "deals.jsonl").write_bytes(seeded_lines("tressette", "tb", 2))
    path = tmp_path / "t.toml"
    path.write_text(TOURNAMENT, encoding="utf-8")
    config = load_config(path)
    assert config.book is not None and len(config.book.deals) == 2
    without = load_config(
        _write(tmp_path / "u.toml", TOURNAMENT.replace('book = "deals.jsonl"\n', ""))
    )
    assert config.fingerprint() != without.fingerprint()
    db = tmp_path / "t.db"
    result = tavolo("tournament", "run", path, "--db", db, "--quiet")
    assert result.exit_code == 0, result.output
    with Store.open_for_reading(db) as store:
        records = [text.splitlines() for _, _, text in store.records()]
    assert len(records) == 4
    used = [
        [json.loads(x)["book_line"] for x in lines if '"type":"deal"' in x] for lines in records
    ]
    assert sorted(used) == [[1], [1], [2], [2]]  # set 1 deals line 1 twice, set 2 line 2
    result = tavolo("tournament", "verify", "--db", db, "--book", tmp_path / "deals.jsonl")
    assert result.exit_code == 0 and "hands checked" in result.output, result.output


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_tournament_with_a_bad_book_is_one_error(tmp_path: Path):
    (tmp_path / "deals.jsonl").write_bytes(book_text(LINE, bad(dealer="north")))
    path = _write(tmp_path / "t.toml", TOURNAMENT)
    result = tavolo("tournament", "run", path, "--db", tmp_path / "t.db", "--quiet")
    assert_one_error(result, "deals.jsonl:2:", "field 'dealer' must be a seat")
    path = _write(tmp_path / "t.toml", TOURNAMENT.replace("deals = 1\n", ""))
    (tmp_path / "deals.jsonl").write_bytes(book_text(LINE))
    result = tavolo("tournament", "run", path, "--db", tmp_path / "t.db", "--quiet")
    assert_one_error(result, "key 'game.book'", "needs a number of deals per game")
