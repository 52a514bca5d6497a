"""The replay viewer in a real browser, and ``tavolo replay`` that writes it.

Each page is written by the installed ``tavolo replay`` console script from a golden record
(or a match ``tavolo play`` recorded), opened from ``file://`` in headless chromium, and read
back from its DOM. What the page must show at a step is worked out here from the record's
lines, independently of replay.js: the cards played, the trick and its signals, the winner,
the running points, and which cards the rules keep face down (absent from the DOM).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from referee.engine.cards import parse_card
from referee.engine.registry import new_game, preset
from referee.families.calabresella.auction import BID_CHIAMO, BID_PASS
from referee.families.calabresella.deal import call_action
from referee.families.calabresella.game import CalabresellaGame
from referee.families.tressette.actions import play_action
from referee.families.tressette.game import TressetteGame
from referee.records import dumps
from tests.bots.harness import record_lines
from tests.browser import screenshot
from tests.test_cli import play_args, run
from tournaments.web.pages import ASSETS
from tournaments.web.replay_page import replay_page

GOLDEN = Path(__file__).parent / "golden"
RECORDS = {
    "tressette": "golden-1-tressette.jsonl",
    "a-due": "golden-10-tressette-a-due.jsonl",
    "calabresella": "golden-8-calabresella.jsonl",
    "calabresella-four": "golden-9-calabresella-four-stramazzo.jsonl",
}
RANKS = "32AKQJ7654"
CARD = re.compile(r"(?<![0-9A-Za-z])[32AKQJ7654][DCSB](?![0-9A-Za-z])")

SNAPSHOT = """() => {
  const q = (sel) => [...document.querySelectorAll(sel)];
  const cards = (sel) => q(sel).map((e) => e.dataset.card);
  const nums = (prefix) => q(`[id^="${prefix}"]`).map((e) => Number(e.textContent));
  const counter = document.getElementById("step-counter");
  const info = document.getElementById("trick-info");
  const seats = q("#seats tr.seat").map((row) => {
    const s = row.id.slice(5);
    const slot = document.getElementById("play-" + s);
    const card = slot.querySelector("[data-card]");
    const signal = slot.querySelector(".signal");
    return {
      name: row.querySelector(".seat-name").textContent,
      hand: cards(`#hand-${s} [data-card]`),
      played: cards(`#hand-${s} [data-card].played`),
      received: cards(`#received-${s} [data-card]`),
      receivedBacks: q(`#received-${s} .back`).length,
      drawn: cards(`#drawn-${s} [data-card]`),
      discards: cards(`#discards-${s} [data-card]`),
      discardBacks: q(`#discards-${s} .back`).length,
      play: card ? card.dataset.card : null,
      signal: signal ? signal.dataset.signal : null,
      winner: slot.classList.contains("winner"),
      declarations: q(`#play-${s} .declaration`).map((e) => e.dataset.declaration),
    };
  });
  const backs = q("#replay .back");
  const count = document.getElementById("stock-count");
  const result = document.getElementById("result");
  return {
    step: Number(counter.dataset.step), line: Number(counter.dataset.line),
    game: Number(counter.dataset.game), deal: counter.dataset.deal, seats,
    thirds: nums("thirds-"), floored: nums("floored-"), declared: nums("declared-"),
    cardPoints: nums("card-points-"), totals: nums("total-"),
    winner: info.dataset.winner === undefined ? null : Number(info.dataset.winner),
    trickInfo: info.textContent, log: q("#log li").map((li) => li.dataset.type),
    logText: document.getElementById("log").textContent,
    monte: cards("#monte [data-card]"), stock: cards("#stock [data-card]"),
    stockCount: count ? Number(count.textContent) : null,
    backsWithText: backs.filter((b) => b.textContent || Object.keys(b.dataset).length).length,
    result: result.hidden ? null : result.textContent,
    hash: location.hash, html: document.getElementById("replay").outerHTML,
  };
}"""
"""What the page shows, read from its DOM (the viewer's element ids, docs/replay-viewer.md)."""


def replay_cli(*args: str | Path) -> Any:
    return run("replay", *args)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each golden record of RECORDS as a page written by the real ``tavolo replay``."""
    folder = tmp_path_factory.mktemp("replays")
    out = {}
    for key, name in RECORDS.items():
        record = shutil.copy(GOLDEN / name, folder / name)
        done = replay_cli(record)
        assert done.returncode == 0, done.stderr
        page = folder / name.replace(".jsonl", ".html")
        assert done.stdout.strip().endswith(str(page)), done.stdout
        assert done.stderr == ""
        out[key] = page
    return out


def snapshot(page: Any) -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate(SNAPSHOT)
    return result


def at(page: Any, html: Path, fragment: str, step: int | None = None) -> dict[str, Any]:
    """Open ``html#fragment`` (a deep link) and wait until it shows ``step``."""
    page.goto(html.as_uri() + "#" + fragment)
    if step is not None:
        page.wait_for_selector(f'#step-counter[data-step="{step}"]')
    return snapshot(page)


def cards_at(page: Any, selector: str) -> list[str]:
    """The cards shown at ``selector``, in page order."""
    found: list[str] = page.eval_on_selector_all(selector, "es => es.map(e => e.dataset.card)")
    return found


def write_page(path: Path, lines: list[str]) -> Path:
    """``lines`` as a stand-alone page made by replay_page() itself (no verification)."""
    page = replay_page(lines, title=path.stem, crumbs=[], assets=None, source=path.stem)
    path.write_text(page, encoding="utf-8")
    return path


def wait_for_hash(page: Any, fragment: str) -> None:
    """The address names what is shown (it follows the stepping once it pauses)."""
    page.wait_for_function(f"location.hash === {json.dumps(fragment)}")


def shown_cards(view: dict[str, Any]) -> set[str]:
    """Every card name anywhere in the viewer's DOM (the embedded record is outside it)."""
    return set(CARD.findall(view["html"]))


# -- what a Tressette step shows, worked out from the record ----------------------------------


def expected(lines: list[dict[str, Any]], step: int) -> dict[str, Any]:
    """The state after ``lines[step]``: cards played, the trick, its winner, thirds per side."""
    start = max(i for i in range(step + 1) if lines[i]["type"] == "deal")
    values = lines[0]["rules"]["card_values"]
    sides = len(lines[-1]["totals"])
    seats = len(lines[start]["hands"])
    played: dict[int, set[str]] = {s: set() for s in range(seats)}
    trick: dict[int, tuple[str, str | None]] = {}
    thirds = [0] * sides
    declared = [0] * sides
    winner: int | None = None
    for line in lines[start : step + 1]:
        if line["type"] == "declare":
            declared[line["seat"] % sides] += line["points"]
        elif line["type"] == "play":
            if winner is not None:
                trick, winner = {}, None
            trick[line["seat"]] = (line["card"], line["signal"])
            played[line["seat"]].add(line["card"])
        elif line["type"] == "trick":
            winner = line["winner"]
            thirds[winner % sides] += sum(values[RANKS.index(c[0])] for c, _ in trick.values())
    return {
        "hands": lines[start]["hands"],
        "played": played,
        "trick": trick,
        "winner": winner,
        "thirds": thirds,
        "floored": [t // 3 for t in thirds],
        "declared": declared,
    }


def check_step(view: dict[str, Any], lines: list[dict[str, Any]], step: int) -> None:
    want = expected(lines, step)
    assert view["step"] == step
    assert view["line"] == step + 1  # a one-game record: the game's lines are the file's
    for s, seat in enumerate(view["seats"]):
        assert seat["hand"] == want["hands"][s], f"seat {s}: all its cards, as dealt"
        assert set(seat["played"]) == want["played"][s], f"seat {s}: the cards greyed"
        card, signal = want["trick"].get(s, (None, None))
        assert (seat["play"], seat["signal"]) == (card, signal), f"seat {s} in the trick"
        assert seat["winner"] == (want["winner"] == s and s in want["trick"])
    assert view["winner"] == want["winner"]
    if want["winner"] is not None:
        assert "won by" in view["trickInfo"]
    start = max(i for i in range(step + 1) if lines[i]["type"] == "deal")
    score = next((x for x in lines[start : step + 1] if x["type"] == "score"), None)
    if score is None:
        assert view["thirds"] == want["thirds"]
        assert view["floored"] == want["floored"]
        assert view["declared"] == want["declared"]
    else:  # the score line's own figures, the last trick included
        assert view["thirds"] == score["thirds"] != want["thirds"]
        assert view["floored"] == score["card_points"]
        assert view["declared"] == score["declarations"]
        assert view["totals"] == score["totals"]


def deal_number(lines: list[dict[str, Any]], step: int) -> int:
    """The number of the deal ``step`` is in; 0 before the first."""
    starts = [x["deal"] for x in lines[: step + 1] if x["type"] == "deal"]
    return starts[-1] if starts else 0


def first(lines: list[dict[str, Any]], test: Any, after: int = 0) -> int:
    return next(i for i, line in enumerate(lines) if i >= after and test(line))


def test_tressette_steps_show_cards_signals_declarations_winner_and_points(
    page: Any, pages: dict[str, Path], tmp_path: Path
) -> None:
    html = pages["tressette"]
    lines = record_lines(GOLDEN / RECORDS["tressette"])
    declare = first(lines, lambda x: x["type"] == "declare")
    deals = [i for i, x in enumerate(lines) if x["type"] == "deal"]
    scores = [i for i, x in enumerate(lines) if x["type"] == "score"]
    tricks = [i for i, x in enumerate(lines) if x["type"] == "trick"]
    steps = {
        "busso": first(lines, lambda x: x.get("signal") == "busso"),
        "volo": first(lines, lambda x: x.get("signal") == "volo", deals[2]),
        "striscio": first(lines, lambda x: x.get("signal") == "striscio", deals[4]),
        "declare": declare,
        "after-declare": declare + 1,
        "trick-5": tricks[4],
        "mid-deal-5": deals[4] + 7,
        "last-trick-2": scores[1] - 1,
        "score-1": scores[0],
        "score-7": scores[-1],
    }
    shots = {"busso", "declare", "trick-5", "score-1"}
    for label, step in steps.items():
        view = at(page, html, f"game=1&step={step}", step)
        check_step(view, lines, step)
        if label in shots:
            screenshot(page, tmp_path, f"tressette-{label}")
    # The signal is on the card in the trick (checked above) and in the log.
    view = at(page, html, f"step={steps['volo']}", steps["volo"])
    assert view["logText"].rstrip().endswith(f"plays {lines[steps['volo']]['card']} volo.")
    # The declaration: on the trick, with its cards marked in the hand, and in the log.
    line = lines[declare]
    for step in (declare, declare + 1):
        view = at(page, html, f"step={step}", step)
        seat = view["seats"][line["seat"]]
        assert seat["declarations"] == [line["declaration"]]
        assert "declare" in view["log"]
        assert line["declaration"] in view["logText"]
        marked = cards_at(page, f"#hand-{line['seat']} .declared")
        assert marked == line["cards"]
    # A trick later the declaration is no longer on the trick, but still in the log.
    later = first(lines, lambda x: x["type"] == "trick", declare) + 1
    view = at(page, html, f"step={later}", later)
    assert view["seats"][line["seat"]]["declarations"] == []
    assert view["backsWithText"] == 0


def test_keys_step_by_card_trick_deal_and_game_and_keep_the_hash(
    page: Any, pages: dict[str, Path], tmp_path: Path
) -> None:
    html = pages["tressette"]
    lines = record_lines(GOLDEN / RECORDS["tressette"])
    stops = [i for i, x in enumerate(lines) if x["type"] in ("deal", "trick", "score", "result")]
    deals = [i for i, x in enumerate(lines) if x["type"] == "deal"]
    page.goto(html.as_uri())
    page.wait_for_selector(f'#step-counter[data-step="{deals[0]}"]')
    history = page.evaluate("history.length")
    step = deals[0]

    def press(key: str, to: int) -> None:
        nonlocal step
        page.keyboard.press(key)
        page.wait_for_selector(f'#step-counter[data-step="{to}"]')
        wait_for_hash(page, f"#game=1&deal={deal_number(lines, to)}&step={to}")
        view = snapshot(page)
        if to == 0:
            assert view["seats"] == [], "before the first deal"
        else:
            check_step(view, lines, to)
        step = to

    for _ in range(3):
        press("ArrowRight", step + 1)
    press("ArrowLeft", step - 1)
    press("ArrowDown", next(k for k in stops if k > step))
    press("Shift+ArrowRight", next(k for k in stops if k > step))
    press("ArrowUp", max(k for k in stops if k < step))
    press("Shift+ArrowLeft", max(k for k in stops if k < step))
    press("PageDown", deals[1])
    press("PageDown", deals[2])
    press("ArrowRight", deals[2] + 1)
    press("PageUp", deals[2])
    press("PageUp", deals[1])
    screenshot(page, tmp_path, "keys-deal-2")
    press("End", len(lines) - 1)
    view = snapshot(page)
    assert view["result"] is not None and lines[-1]["termination"] in view["result"]
    assert view["totals"] == lines[-1]["totals"]
    screenshot(page, tmp_path, "keys-end")
    press("Home", 0)
    # replaceState: stepping adds nothing to the browser's history.
    assert page.evaluate("history.length") == history
    # The clickable list of deals and tricks.
    page.click('#deals-nav .deal-row[data-deal="3"] .nav-deal')
    page.wait_for_selector(f'#step-counter[data-step="{deals[2]}"]')
    page.click('#deals-nav .deal-row[data-deal="3"] .nav-trick >> nth=4')
    trick5 = [i for i in range(deals[2], deals[3]) if lines[i]["type"] == "trick"][4]
    page.wait_for_selector(f'#step-counter[data-step="{trick5}"]')
    check_step(snapshot(page), lines, trick5)
    # The slider and the step box.
    page.fill("#step-input", "100")
    page.press("#step-input", "Enter")
    page.wait_for_selector('#step-counter[data-step="100"]')
    check_step(snapshot(page), lines, 100)


def test_deep_links_open_at_the_deal_and_step(
    page: Any, pages: dict[str, Path], tmp_path: Path
) -> None:
    html = pages["tressette"]
    lines = record_lines(GOLDEN / RECORDS["tressette"])
    deals = [i for i, x in enumerate(lines) if x["type"] == "deal"]
    view = at(page, html, "game=1&deal=3", deals[2])
    assert view["deal"] == "3"
    check_step(view, lines, deals[2])
    wait_for_hash(page, f"#game=1&deal=3&step={deals[2]}")
    step = deals[4] + 13
    view = at(page, html, f"game=1&deal=5&step={step}", step)
    check_step(view, lines, step)
    screenshot(page, tmp_path, "deep-link")
    # A link to what the record does not have says so, and shows the start instead.
    view = at(page, html, "game=4&deal=99", deals[0])
    notice = page.text_content("#replay-notice")
    assert page.is_visible("#replay-notice")
    assert notice is not None and "game 4" in notice and "deal 99" in notice
    screenshot(page, tmp_path, "deep-link-missing")


def test_a_link_followed_while_the_address_is_pending_is_not_overwritten(
    page: Any, pages: dict[str, Path]
) -> None:
    html = pages["tressette"]
    lines = record_lines(GOLDEN / RECORDS["tressette"])
    # The page's clock stands still, so the address update of step 13 is still pending when
    # the address changes; the hashchange comes after that update has run, the order a
    # loaded machine once produced.
    page.clock.install(time=1_000_000)
    page.clock.pause_at(2_000_000)
    at(page, html, "step=13", 13)
    assert page.evaluate("location.hash") == "#step=13"
    page.evaluate('history.replaceState(null, "", "#step=58")')
    page.clock.run_for(500)
    assert page.evaluate("location.hash") == "#step=58"
    page.evaluate('window.dispatchEvent(new HashChangeEvent("hashchange"))')
    page.wait_for_selector('#step-counter[data-step="58"]')
    page.clock.run_for(500)
    wait_for_hash(page, f"#game=1&deal={deal_number(lines, 58)}&step=58")


# -- Calabresella: the monte and the face-down exchanges -------------------------------------


def test_calabresella_monte_is_absent_until_the_rules_reveal_it(
    page: Any, pages: dict[str, Path], tmp_path: Path
) -> None:
    html = pages["calabresella"]
    lines = record_lines(GOLDEN / RECORDS["calabresella"])
    deals = [i for i, x in enumerate(lines) if x["type"] == "deal"]
    # Deal 1 is scegliete: the monte is shown face up at the split.
    monte = set(lines[deals[0]]["monte"])
    split = first(lines, lambda x: x["type"] == "split")
    for step in range(deals[0], split):
        view = at(page, html, f"step={step}", step)
        assert not monte & shown_cards(view), f"step {step} shows the monte"
        assert len(page.query_selector_all("#monte .back")) == 4
    screenshot(page, tmp_path, "scegliete-before-split")
    view = at(page, html, f"step={split}", split)
    assert set(view["monte"]) == monte
    taker = lines[split]["seat"]
    assert view["seats"][taker]["received"] == lines[split]["take"]
    screenshot(page, tmp_path, "scegliete-split")
    # Deal 2 is solo: the soloist takes the monte face down; each monte card shows when
    # it is played, and the ones discarded only when the deal is over.
    monte = set(lines[deals[1]]["monte"])
    score = first(lines, lambda x: x["type"] == "score", deals[1])
    contract = first(lines, lambda x: x["type"] == "contract", deals[1])
    soloist = lines[contract]["soloist"]
    discards = [x["card"] for x in lines[contract:score] if x["type"] == "discard"]
    assert monte - {x["card"] for x in lines[contract:score] if x["type"] == "play"}, (
        "the test wants a monte card that is discarded, never played"
    )
    view = at(page, html, f"step={deals[1]}", deals[1])
    played: set[str] = set()
    for step in range(deals[1], score):
        if step > deals[1]:
            page.keyboard.press("ArrowRight")
            page.wait_for_selector(f'#step-counter[data-step="{step}"]')
            view = snapshot(page)
        if lines[step]["type"] == "play":
            played.add(lines[step]["card"])
        assert monte & shown_cards(view) == monte & played, f"step {step}"
        assert view["backsWithText"] == 0
        if step > contract:
            seat = view["seats"][soloist]
            assert seat["receivedBacks"] == len(monte - played), f"step {step}"
        if step == contract + len(discards):
            assert view["seats"][soloist]["discardBacks"] == 4
            assert view["seats"][soloist]["discards"] == []
            # Which cards went face down is not said in the log, nor marked in the hand.
            assert page.query_selector_all('#log li[data-type="discard"] [data-card]') == []
            assert page.query_selector_all("#seats .discarded") == []
            screenshot(page, tmp_path, "solo-discarded")
    page.keyboard.press("ArrowRight")
    page.wait_for_selector(f'#step-counter[data-step="{score}"]')
    view = snapshot(page)
    assert monte <= shown_cards(view)
    assert view["seats"][soloist]["discards"] == discards
    assert cards_at(page, '#log li[data-type="discard"] [data-card]') == discards
    assert cards_at(page, "#set-aside [data-card]") == lines[score]["set_aside"]
    screenshot(page, tmp_path, "solo-scored")
    # Show everything: the whole monte and the discards at the contract.
    view = at(page, html, f"step={contract + 2}&all=1", contract + 2)
    assert page.is_checked("#show-all")
    assert set(view["monte"]) == monte
    assert view["seats"][soloist]["discards"] == discards[:2]
    screenshot(page, tmp_path, "solo-show-everything")
    page.uncheck("#show-all")
    page.wait_for_function("!location.hash.includes('all=1')")
    assert not monte & shown_cards(snapshot(page))


def test_calabresella_with_four_every_exchange_lands_in_the_right_hand(
    page: Any, pages: dict[str, Path], tmp_path: Path
) -> None:
    html = pages["calabresella-four"]
    lines = record_lines(GOLDEN / RECORDS["calabresella-four"])
    deals = [i for i, x in enumerate(lines) if x["type"] == "deal"]
    ends = [i for i, x in enumerate(lines) if x["type"] == "score"]
    for number, (start, end) in enumerate(zip(deals, ends, strict=True), 1):
        dealt = lines[start]["hands"]
        used: dict[int, list[str]] = {s: [] for s in range(len(dealt))}
        for x in lines[start:end]:
            if x["type"] in ("play", "discard", "give"):
                used[x["seat"]].append(x["card"])
        got = {s: [c for c in cards if c not in dealt[s]] for s, cards in used.items()}
        contract = first(lines, lambda x: x["type"] == "contract", start)
        public = lines[contract]["contract"] == "scegliete"
        split = first(lines, lambda x: x["type"] in ("split", "trick"), start)
        # In play (hidden mode): what each seat received shows as backs, counted right.
        view = at(page, html, f"step={split}", split)
        for s, seat in enumerate(view["seats"]):
            assert seat["hand"][: len(dealt[s])] == dealt[s]
            assert seat["receivedBacks"] + len(seat["received"]) == len(got[s]), (number, s)
            if not public:
                assert seat["received"] == [], (number, s)
        assert not dealt[lines[start]["dealer"]], "the dealer sits out"
        # At the score every card a seat played, discarded or gave is shown in its hand.
        view = at(page, html, f"step={end}", end)
        for s, seat in enumerate(view["seats"]):
            assert sorted(seat["received"]) == sorted(got[s]), (number, s)
            assert set(used[s]) <= set(seat["hand"]), (number, s)
        screenshot(page, tmp_path, f"four-deal-{number}")
    assert "sits out" in page.text_content(f"#seat-{lines[deals[-1]]['dealer']}")


def chiamo_record(path: Path) -> Path:
    """One deal of chiamo, played through the engine: the eldest calls the next seat's first
    card, gives it his own first card, discards and plays the first legal actions."""
    game = CalabresellaGame(
        preset("calabresella"), "viewer-chiamo", deals=1, seats=["ann", "bob", "cy"], record=True
    )
    assert game.events is not None
    deal = game.lines()[-1]
    eldest = (deal["dealer"] + 1) % 3
    game.apply_action(BID_CHIAMO)
    game.apply_action(BID_PASS)
    game.apply_action(BID_PASS)
    game.apply_action(call_action(parse_card(deal["hands"][(eldest + 1) % 3][0])))
    while not game.is_terminal():
        game.apply_action(game.legal_actions()[0])
    path.write_text("".join(dumps(e) + "\n" for e in game.lines()), encoding="utf-8")
    return path


def test_calabresella_chiamo_shows_the_called_card_and_hides_the_swap(
    page: Any, tmp_path: Path
) -> None:
    record = chiamo_record(tmp_path / "chiamo.jsonl")
    done = replay_cli(record)
    assert done.returncode == 0, done.stderr
    html = record.with_suffix(".html")
    lines = record_lines(record)
    call = first(lines, lambda x: x["type"] == "call")
    give = first(lines, lambda x: x["type"] == "give")
    score = first(lines, lambda x: x["type"] == "score")
    soloist, holder, called = lines[call]["seat"], lines[call]["holder"], lines[call]["card"]
    given = lines[give]["card"]
    monte = lines[1]["monte"]
    assert holder is not None and lines[give]["seat"] == soloist
    # The call is public: the card and who hands it over.
    view = at(page, html, f"step={call}", call)
    assert cards_at(page, "#called [data-card]") == [called]
    assert cards_at(page, f"#hand-{holder} .handed") == [called]
    assert view["seats"][soloist]["received"] == [called]
    # The give is face down: a back for the holder, nothing said of which card.
    view = at(page, html, f"step={give}", give)
    assert view["seats"][holder]["received"] == [] and view["seats"][holder]["receivedBacks"] == 1
    assert view["seats"][soloist]["received"] == [called]
    assert view["seats"][soloist]["receivedBacks"] == 4, "the monte, taken face down"
    assert page.query_selector_all("#seats .given") == []
    assert page.query_selector_all('#log li[data-type="give"] [data-card]') == []
    assert not set(monte) & shown_cards(view)
    screenshot(page, tmp_path, "chiamo-give")
    # At the score: the swap and the monte, face up, in the hands that got them.
    view = at(page, html, f"step={score}", score)
    assert view["seats"][holder]["received"] == [given]
    assert sorted(view["seats"][soloist]["received"]) == sorted([called, *monte])
    assert cards_at(page, f"#hand-{soloist} .given") == [given]
    screenshot(page, tmp_path, "chiamo-scored")


# -- Tressette a due: the stock and the draws --------------------------------------------------


def test_tressette_a_due_shows_the_stock_count_and_each_draw(
    page: Any, pages: dict[str, Path], tmp_path: Path
) -> None:
    html = pages["a-due"]
    lines = record_lines(GOLDEN / RECORDS["a-due"])
    deal = lines[1]
    stock = deal["stock"]
    end = first(lines, lambda x: x["type"] == "score")
    draws = [i for i in range(1, end) if lines[i]["type"] == "draw"]
    assert len(draws) == len(stock) == 20
    for n, step in enumerate(draws, 1):
        view = at(page, html, f"step={step}", step)
        assert view["stockCount"] == 20 - n
        line = lines[step]
        assert view["seats"][line["seat"]]["drawn"][-1] == line["card"] == stock[n - 1]
        assert not set(stock[n:]) & shown_cards(view), f"step {step} shows the stock"
        assert view["stock"] == []
        if n == 2:
            screenshot(page, tmp_path, "a-due-draws")
    # Show everything: the stock in draw order.
    view = at(page, html, f"step={draws[1]}&all=1", draws[1])
    assert view["stock"] == stock[2:]
    screenshot(page, tmp_path, "a-due-stock")
    view = at(page, html, f"step={end}", end)
    assert view["stockCount"] == 0
    assert view["thirds"] == lines[end]["thirds"]


def test_tressette_a_tre_widow_is_face_down_until_the_score(page: Any, tmp_path: Path) -> None:
    name = "golden-4-tressette-a-tre.jsonl"
    lines = record_lines(GOLDEN / name)
    html = write_page(
        tmp_path / "a-tre.html", (GOLDEN / name).read_text(encoding="utf-8").splitlines()
    )
    widow = set(lines[1]["widow"])
    score = first(lines, lambda x: x["type"] == "score")
    for step in (1, score // 2, score - 1):
        view = at(page, html, f"step={step}", step)
        assert not widow & shown_cards(view), f"step {step} shows the widow"
        assert len(page.query_selector_all("#widow .back")) == 4
        check_step(view, lines, step)
    view = at(page, html, f"step={score}", score)
    assert cards_at(page, "#widow [data-card]") == lines[1]["widow"]
    assert f"seat {lines[score]['last_trick']}" in (page.text_content("#widow") or "")
    check_step(view, lines, score)
    screenshot(page, tmp_path, "a-tre-widow")


# -- a match, forfeits and notes --------------------------------------------------------------


def test_a_match_record_has_a_game_selector(page: Any, tmp_path: Path) -> None:
    record = tmp_path / "match.jsonl"
    played = run(*play_args(record, "random", "random", seed="viewer-match", deals="1"))
    assert played.returncode == 0, played.stderr
    done = replay_cli(record, "-o", tmp_path / "out" / "match.html")
    assert done.returncode != 0, "the output folder does not exist"
    assert done.stderr.startswith("error: ") and "cannot write" in done.stderr
    html = tmp_path / "match.html"
    done = replay_cli(record, "-o", html)
    assert done.returncode == 0, done.stderr
    lines = record_lines(record)
    starts = [i for i, x in enumerate(lines) if x["type"] == "game"]
    assert len(starts) == 2
    second = lines[starts[1] :]
    page.goto(html.as_uri())
    page.wait_for_selector('#step-counter[data-step="1"]')
    assert page.is_visible("#game-select")
    assert page.eval_on_selector_all("#game-select option", "os => os.length") == 2
    view = snapshot(page)
    assert [s["name"] for s in view["seats"]] == lines[0]["seats"]
    screenshot(page, tmp_path, "match-game-1")
    page.select_option("#game-select", "1")
    page.wait_for_selector('#step-counter[data-game="2"]')
    view = snapshot(page)
    assert [s["name"] for s in view["seats"]] == second[0]["seats"] != lines[0]["seats"]
    assert view["line"] == starts[1] + 2  # file line numbers run on across games
    wait_for_hash(page, "#game=2&deal=1&step=1")
    check_step(view | {"line": 2}, second, 1)
    page.keyboard.press("End")
    page.wait_for_selector(f'#step-counter[data-step="{len(second) - 1}"]')
    view = snapshot(page)
    assert view["totals"] == second[-1]["totals"]
    assert view["result"] is not None
    screenshot(page, tmp_path, "match-game-2")
    view = at(page, html, "game=1&step=5", 5)
    assert view["game"] == 1 and page.input_value("#game-select") == "0"


def notes_record(path: Path) -> Path:
    """The record of docs/records.md: a refused action and an incident, then play to the end."""
    game = TressetteGame(
        preset("tressette"), "docs-rejected", deals=1, seats=["alpha", "beta", "alpha", "beta"],
        record=True,
    )  # fmt: skip
    game.apply_action(play_action(parse_card("AD"), 0))
    game.note_rejected(1, play_action(parse_card("QC"), 0))
    game.note_incident(
        1, "timeout", "no answer to request 3 within 1000 ms; the referee played at random"
    )
    while not game.is_terminal():
        game.apply_action(game.legal_actions()[0])
    assert game.events is not None
    path.write_text("".join(dumps(e) + "\n" for e in game.lines()), encoding="utf-8")
    return path


def test_rejected_incident_and_forfeit_lines_are_in_the_log(page: Any, tmp_path: Path) -> None:
    record = notes_record(tmp_path / "notes.jsonl")
    done = replay_cli(record)
    assert done.returncode == 0, done.stderr
    html = record.with_suffix(".html")
    view = at(page, html, "step=3", 3)
    assert view["log"][-2:] == ["play", "rejected"]
    assert "must_follow_suit" in view["logText"]
    view = at(page, html, "step=4", 4)
    assert view["log"][-1] == "incident" and "the referee played at random" in view["logText"]
    screenshot(page, tmp_path, "notes")
    # A call-out (golden-3), where it happened, just before the result.
    name = "golden-3-treseta-call-out.jsonl"
    called = write_page(
        tmp_path / "call-out.html", (GOLDEN / name).read_text(encoding="utf-8").splitlines()
    )
    lines = record_lines(GOLDEN / name)
    step = first(lines, lambda x: x["type"] == "call-out")
    view = at(page, called, f"step={step}", step)
    assert view["log"][-1] == "call-out"
    assert f"claiming {lines[step]['claimed']}: wrong" in view["logText"]
    assert lines[step + 1]["type"] == "result"
    # A forfeit in Calabresella, whose detail names a card still face down: golden-8 cut
    # in deal 2, after the soloist discarded the monte's JD.
    lines = (GOLDEN / RECORDS["calabresella"]).read_text(encoding="utf-8").splitlines()
    cut = [json.loads(x)["type"] for x in lines].index("play", 60)
    forfeit = {
        "type": "forfeit", "seat": 0, "reason": "illegal_action",
        "detail": "3 illegal actions for one decision; the last: seat 0 plays JD: "
        "JD is not in seat 0's hand",
    }  # fmt: skip
    result = {
        "type": "result",
        "termination": "illegal_action",
        "winner": 1,
        "totals": [48, -96, 48],
        "deals": 2,
    }
    cut_lines = [*lines[:cut], dumps(forfeit), dumps(result)]
    html = write_page(tmp_path / "forfeit.html", cut_lines)
    view = at(page, html, f"step={cut}", cut)
    assert view["log"][-1] == "forfeit"
    assert "JD" not in shown_cards(view)
    assert "(a face-down card)" in view["logText"]
    screenshot(page, tmp_path, "forfeit-open")
    view = at(page, html, f"step={cut + 1}", cut + 1)
    assert "JD" in shown_cards(view), "the game is over: the record shows every card"
    assert "seat 0 plays JD" in view["logText"]
    assert view["totals"] == result["totals"]


# -- a record the viewer cannot read ----------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        ("format", ["record line 1", '"tavolo-record/2"', "tavolo-record/1"]),
        ("line-3", ["record line 3", "not JSON"]),
        ("first", ["record line 1", 'starts with a "game" line']),
    ],
)
def test_an_unreadable_record_gets_one_clear_message(
    page: Any, tmp_path: Path, change: str, needles: list[str]
) -> None:
    lines = (GOLDEN / RECORDS["tressette"]).read_text(encoding="utf-8").splitlines()
    if change == "format":
        lines[0] = lines[0].replace("tavolo-record/1", "tavolo-record/2")
    elif change == "line-3":
        lines[2] = lines[2][:-3]
    else:
        lines = lines[1:]
    html = write_page(tmp_path / "bad.html", lines)
    page.goto(html.as_uri())
    page.wait_for_selector("#replay-error:not([hidden])")
    message = page.text_content("#replay-error")
    assert message is not None
    for needle in needles:
        assert needle in message, message
    assert not page.is_visible("#replay-view")
    screenshot(page, tmp_path, f"unreadable-{change}")


# -- tavolo replay: errors, byte-stable pages, assets beside the page ------------------------


def test_replay_refuses_a_tampered_record_and_a_missing_file(tmp_path: Path) -> None:
    lines = (GOLDEN / RECORDS["tressette"]).read_text(encoding="utf-8").splitlines()
    number = 7  # the first trick line
    assert lines[number - 1] == '{"type":"trick","trick":1,"winner":2}'
    lines[number - 1] = lines[number - 1].replace('"winner":2', '"winner":3')
    record = tmp_path / "tampered.jsonl"
    record.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # A record that does not replay: exit 1; a missing file, a mistake in the command: 2.
    for path, needle, code in (
        (
            record,
            f"error: {record}:{number}: 'trick' line: field 'winner' is 3, the replay gives 2",
            1,
        ),
        (tmp_path / "missing.jsonl", f"error: {tmp_path / 'missing.jsonl'}: no such file", 2),
    ):
        done = replay_cli(path)
        assert done.returncode == code
        assert done.stdout == ""
        assert done.stderr.count("\n") == 1 and done.stderr.startswith(needle), done.stderr
        assert "Traceback" not in done.stderr
        assert not path.with_suffix(".html").exists()


def test_pages_are_byte_stable_and_stand_alone(page: Any, tmp_path: Path) -> None:
    record = shutil.copy(GOLDEN / RECORDS["calabresella"], tmp_path / "game.jsonl")
    outs = [tmp_path / "a" / "one.html", tmp_path / "b" / "two.html"]
    for out in outs:
        out.parent.mkdir()
        done = replay_cli(record, "-o", out)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip().endswith(str(out))
    first_bytes = outs[0].read_bytes()
    assert first_bytes == outs[1].read_bytes()
    text = first_bytes.decode("utf-8")
    assert str(tmp_path) not in text
    assert "<script src=" not in text and "<link " not in text, "every asset inlined"
    assert "http://" not in text and "https://" not in text, "no network"
    # The page the report makes: the assets beside it, in their own folder.
    lines = Path(record).read_text(encoding="utf-8").splitlines()
    site = tmp_path / "site"
    (site / "assets").mkdir(parents=True)
    for name in ("tavolo.css", "replay.css", "replay.js"):
        shutil.copy(ASSETS / name, site / "assets" / name)
    crumbs = [("report", "../index.html"), ("game", None)]
    made = replay_page(lines, title="game", crumbs=crumbs, assets="assets", source="game.jsonl")
    assert made == replay_page(
        lines, title="game", crumbs=crumbs, assets="assets", source="game.jsonl"
    )
    assert '<script src="assets/replay.js"></script>' in made
    (site / "game.html").write_text(made, encoding="utf-8")
    view = at(page, site / "game.html", "step=4", 4)
    assert len(view["monte"]) == 4
    screenshot(page, tmp_path, "with-assets")


def test_entry_names_are_shown_as_text_never_as_markup(page: Any, tmp_path: Path) -> None:
    names = ["<b>bold</b>", "</script><i>it</i>", "<img src=x onerror=alert(1)>", "Zoë & co"]
    lines = (GOLDEN / RECORDS["tressette"]).read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["seats"] = names
    record = tmp_path / "names.jsonl"
    record.write_text("\n".join([dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    done = replay_cli(record)
    assert done.returncode == 0, done.stderr
    view = at(page, record.with_suffix(".html"), "step=1", 1)
    assert [s["name"] for s in view["seats"]] == names
    assert page.query_selector_all("#replay b, #replay i, #replay img") == []
    screenshot(page, tmp_path, "names")


SWEEP = """(showAll) => {
  const $ = (id) => document.getElementById(id);
  if ($("show-all").checked !== showAll) $("show-all").click();
  const key = (k) => document.dispatchEvent(new KeyboardEvent("keydown", { key: k }));
  key("Home");
  const steps = [Number($("step-counter").dataset.step)];
  for (let n = 0; n < 5000 && $("step-counter").dataset.step !== $("step-slider").max; n++) {
    key("ArrowRight");
    steps.push(Number($("step-counter").dataset.step));
  }
  return steps;
}"""
"""Step through a whole game with the right arrow; the steps the counter showed."""
HIDING = ("golden-4", "golden-8", "golden-9", "golden-10")
"""The records with cards face down (widow, monte, stock): swept with "show everything" too."""


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN.glob("*.jsonl")))
def test_every_step_of_every_golden_record_draws(page: Any, tmp_path: Path, name: str) -> None:
    lines = (GOLDEN / name).read_text(encoding="utf-8").splitlines()
    html = write_page(tmp_path / "sweep.html", lines)
    page.goto(html.as_uri())
    page.wait_for_selector("#step-counter[data-step]")
    for show_all in (False, True) if name.startswith(HIDING) else (False,):
        steps = page.evaluate(SWEEP, show_all)
        assert steps == list(range(len(lines))), f"show everything: {show_all}"
        assert page.is_hidden("#replay-error")
    screenshot(page, tmp_path, name.removesuffix(".jsonl"))


def test_briscola_shows_the_trump_the_dealer_turned(page: Any, tmp_path: Path) -> None:
    name = "golden-6-tressette-briscola.jsonl"
    record = shutil.copy(GOLDEN / name, tmp_path / name)
    assert replay_cli(record).returncode == 0
    lines = record_lines(GOLDEN / name)
    deals = [line for line in lines if line["type"] == "deal"]
    html = tmp_path / name.replace(".jsonl", ".html")
    for number, deal in enumerate(deals[:2], 1):
        at(page, html, f"game=1&deal={number}")
        page.wait_for_selector(f'#step-counter[data-deal="{number}"]')
        assert cards_at(page, "#trump [data-card]") == [deal["trump"]]
        suit = {"D": "denari", "C": "coppe", "S": "spade", "B": "bastoni"}[deal["trump"][1]]
        note = page.text_content("#trump .note") or ""
        assert f"{suit} are trumps" in note
        assert lines[0]["seats"][deal["dealer"]] in note
        screenshot(page, tmp_path, f"briscola-deal-{number}")


# -- Briscola: the trump under the stock, face-down draws, card points of 120 ------------------

SUIT_NAMES = {"D": "denari", "C": "coppe", "S": "spade", "B": "bastoni"}


def briscola_record(path: Path, game: str, seats: list[str]) -> Path:
    """A whole game of ``game`` played through the engine, each seat playing its first legal
    card."""
    played = new_game(preset(game), f"viewer-{game}", seats=seats, record=True)
    while not played.is_terminal():
        played.apply_action(played.legal_actions()[0])
    assert played.events is not None
    path.write_text("".join(dumps(e) + "\n" for e in played.lines()), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("game", "seats"),
    [("briscola", ["ann", "bob"]), ("briscola-a-quattro", ["ann", "bob", "cy", "di"])],
)
def test_briscola_shows_the_trump_under_the_stock_the_draws_and_card_points(
    page: Any, tmp_path: Path, game: str, seats: list[str]
) -> None:
    record = briscola_record(tmp_path / f"{game}.jsonl", game, seats)
    done = replay_cli(record)
    assert done.returncode == 0, done.stderr
    html = record.with_suffix(".html")
    lines = record_lines(record)
    deal = lines[1]
    trump, stock = deal["trump"], deal["stock"]
    assert stock[-1] == trump
    score = first(lines, lambda x: x["type"] == "score")
    draws = [i for i in range(1, score) if lines[i]["type"] == "draw"]
    assert len(draws) == len(stock)
    trump_note = f"Turned up under the stock and drawn last: {SUIT_NAMES[trump[1]]} are trumps."
    # The deal: the trump face up, the rest of the stock face down and counted.
    view = at(page, html, "step=1", 1)
    assert cards_at(page, "#trump [data-card]") == [trump]
    assert page.text_content("#trump .note") == trump_note
    assert view["stockCount"] == len(stock)
    assert page.text_content("#stock .note") == (
        "Face down; each card drawn was seen by its drawer alone, the trump by all."
    )
    assert not set(stock[:-1]) & shown_cards(view)
    screenshot(page, tmp_path, f"{game}-deal")
    # A draw: the card joins its drawer's hand; the stock below it stays face down.
    for n, step in enumerate(draws[: len(seats) + 1], 1):
        view = at(page, html, f"step={step}", step)
        line = lines[step]
        assert view["seats"][line["seat"]]["drawn"][-1] == line["card"] == stock[n - 1]
        assert view["stockCount"] == len(stock) - n
        assert not set(stock[n:-1]) & shown_cards(view), f"step {step} shows the stock"
    # The trump drawn, by the last seat to draw: the note names it.
    last = lines[draws[-1]]
    assert last["card"] == trump
    at(page, html, f"step={draws[-1]}", draws[-1])
    drawer = f"{seats[last['seat']]} (seat {last['seat']})"
    assert page.text_content("#trump .note") == trump_note.replace(
        "drawn last:", f"drawn last (by {drawer}):"
    )
    # Mid-deal: the card points captured so far, whole points of 120.
    view = at(page, html, f"step={draws[0] - 1}", draws[0] - 1)
    assert view["cardPoints"] == expected(lines, draws[0] - 1)["thirds"]
    assert view["thirds"] == view["floored"] == view["declared"] == []
    # The score: card points of 120, who won the deal, deals won; no signal, no declaration.
    view = at(page, html, f"step={score}", score)
    line = lines[score]
    assert view["cardPoints"] == line["card_points"] and sum(line["card_points"]) == 120
    assert view["totals"] == line["totals"]
    won = line["points"].index(1) if 1 in line["points"] else None
    caption = page.text_content("#deal-winner") or ""
    if won is None:
        assert caption.startswith("Of 120: 60 each, a drawn deal that nobody wins;")
    else:
        two = f"{seats[won]} (seat {won})"
        side = two if len(seats) == 2 else f"side {won} ({seats[won]} & {seats[won + 2]})"
        assert caption.startswith(f"Of 120: {side} wins the deal with {line['card_points'][won]};")
    assert caption.endswith("2 deals won win the game.")
    assert f"card points {line['card_points'][0]} – {line['card_points'][1]}" in view["logText"]
    assert page.query_selector_all("#replay .signal, #replay .declaration") == []
    screenshot(page, tmp_path, f"{game}-score")
    # Every step of the game draws, with and without "show everything".
    page.goto(html.as_uri())
    page.wait_for_selector("#step-counter[data-step]")
    for show_all in (False, True):
        assert page.evaluate(SWEEP, show_all) == list(range(len(lines)))
        assert page.is_hidden("#replay-error")


def test_every_replay_page_has_the_suits_legend(pages: dict[str, Path]) -> None:
    for page in pages.values():
        assert "D denari, C coppe, S spade, B bastoni" in page.read_text(encoding="utf-8")
