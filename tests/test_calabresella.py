"""Calabresella: the auction, each contract's monte handling, play, scoring, hidden information.

The hand-worked deals share one layout (dealer 2, so seats 0, 1, 2 act in that order):
seat 0 holds every denaro plus 5C 4C, seat 1 the high clubs and 3S 2S AS KS, seat 2 the
low spades and the high bastoni, and the monte is 7B 6B 5B 4B (no points). Card thirds:
A = 3, 3 2 K Q J = 1, the rest 0; the denari hold 8 thirds, the deck 32.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.cards import CARD_NAMES, FULL_DECK, CardSet, cards_of, parse_card
from referee.engine.errors import IllegalActionError, Reason
from referee.engine.registry import preset
from referee.engine.rules import Rules
from referee.families.calabresella.auction import (
    BID_CHIAMO,
    BID_DIVIDETE,
    BID_PASS,
    BID_SCEGLIETE,
    BID_SOLISSIMO,
    BID_SOLO,
    Auction,
    CalabresellaError,
    CalabresellaReason,
    Contract,
    bid_action,
)
from referee.families.calabresella.deal import (
    CALL_BASE,
    DISCARD_BASE,
    GIVE_BASE,
    SPLIT_BASE,
    CalabresellaDeal,
    Phase,
    action_name,
    call_action,
    discard_action,
    give_action,
    split_action,
)
from tests.helpers import hand

CALABRESELLA = preset("calabresella")


def table(
    seats: int = 3, *, stramazzo: bool = False, cappotto_multiplier: int = 2, auction: str = "once"
) -> Rules:
    """Calabresella's rules for a table of ``seats``, as the knobs say."""
    return dataclasses.replace(
        CALABRESELLA,
        table_seats=seats,
        stramazzo=stramazzo,
        auction=auction,
        cappotto={1: "none", 2: "double"}[cappotto_multiplier],
    )


H0 = "3D 2D AD KD QD JD 7D 6D 5D 4D 5C 4C"
H1 = "3C 2C AC KC QC JC 7C 6C 3S 2S AS KS"
H2 = "QS JS 7S 6S 5S 4S 3B 2B AB KB QB JB"
MONTE = "7B 6B 5B 4B"
DENARI = ["3D", "2D", "AD", "KD", "QD", "JD", "7D", "6D", "5D", "4D"]


def layout(
    seats: int = 3,
    dealer: int = 2,
    *,
    stramazzo: bool = False,
    cappotto_multiplier: int = 2,
    auction: str = "once",
) -> CalabresellaDeal:
    """The shared layout, H0 to the eldest, H1 and H2 to the next active seats."""
    hands = [0] * seats
    for i, text in enumerate((H0, H1, H2)):
        hands[(dealer + 1 + i) % seats] = hand(text)
    rules = table(
        seats, stramazzo=stramazzo, cappotto_multiplier=cappotto_multiplier, auction=auction
    )
    return CalabresellaDeal(rules, hands, dealer, hand(MONTE))


def action(text: str) -> int:
    """An action from text: ``pass``, ``bid solo``, ``call AD``, ``split 0111`` or a card."""
    words = text.split()
    if words == ["pass"]:
        return BID_PASS
    if words[0] == "bid":
        return bid_action(Contract[words[1].upper()])
    if words[0] == "split":
        return split_action(int(words[1], 2))
    bases = {"call": CALL_BASE, "give": GIVE_BASE, "discard": DISCARD_BASE}
    if words[0] in bases:
        return bases[words[0]] + parse_card(words[1])
    return parse_card(text)


def do(deal: CalabresellaDeal, *texts: str) -> None:
    """Apply actions written as text, each also checked to be listed as legal."""
    for text in texts:
        a = action(text)
        assert a in deal.legal_actions(), f"{text} is not legal here"
        deal.apply_action(a)


def tricks(deal: CalabresellaDeal, *plays: str) -> None:
    """Play tricks written as cards in playing order, e.g. ``"3D 7C QS"``."""
    for trick in plays:
        do(deal, *trick.split())


def denari_run(first: str, second: str) -> list[str]:
    """Ten tricks: the eldest leads the denari from the top, the others throw these cards."""
    return [f"{d} {a} {b}" for d, a, b in zip(DENARI, first.split(), second.split(), strict=True)]


# -- one hand-worked deal per contract -------------------------------------------------------


def test_solo():
    deal = layout()
    do(deal, "bid solo", "pass", "pass")
    assert (deal.phase, deal.current_player()) == (Phase.DISCARD, 0)
    assert deal.hand(0) == hand(H0 + " " + MONTE)
    do(deal, "discard 7B", "discard 6B", "discard 5B", "discard 4B")
    # Seat 0 wins the 10 denari tricks: 8 thirds, plus seat 1's throws (AC 3, KC QC JC 3S 2S
    # KS 1 each, AS 3: 12) and seat 2's (QS JS 3B 2B KB QB JB 1 each, AB 3: 10) = 30.
    tricks(deal, *denari_run("AC KC QC JC 7C 6C 3S 2S AS KS", "QS JS 7S 6S 3B 2B AB KB QB JB"))
    # 5C: seat 1's 3C wins (1 third); seat 1 leads 2C and wins the last: 1 + 3 thirds.
    tricks(deal, "5C 3C 5S", "2C 4S 4C")
    score = deal.score
    assert score is not None and deal.is_terminal()
    # Soloist 30 thirds = 10 points >= 6: solo is worth 2, so +4 / -2 / -2.
    assert score.thirds == (30, 5)
    assert (score.contract, score.soloist, score.soloist_points) == (Contract.SOLO, 0, 10)
    assert score.success and not score.cappotto and not score.stramazzo
    assert (score.value, score.payouts, score.last_trick) == (2, (4, -2, -2), 1)


def test_chiamo_with_a_swap():
    deal = layout()
    do(deal, "bid chiamo", "pass", "pass")
    assert deal.phase == Phase.CALL
    do(deal, "call 3C")
    # Seat 1 hands 3C over at once; seat 0 gives 4C back, then takes the monte.
    assert (deal.phase, deal.called_holder, deal.called_in_monte) == (Phase.GIVE, 1, False)
    do(deal, "give 4C")
    assert deal.hand(1) == hand("2C AC KC QC JC 7C 6C 4C 3S 2S AS KS")
    do(deal, "discard 7B", "discard 6B", "discard 5B", "discard 4B")
    assert deal.hand(0) == hand(" ".join(DENARI) + " 3C 5C")
    tricks(deal, *denari_run("AC KC QC JC 7C 6C 3S 2S AS KS", "QS JS 7S 6S 3B 2B AB KB QB JB"))
    # Tricks 1-10 give seat 0 30 thirds; 3C wins trick 11 (1 more); seat 1's 2C wins the
    # last (1 + 3). Soloist 31 thirds = 10 points: chiamo is worth 1, so +2 / -1 / -1.
    tricks(deal, "3C 4C 5S", "5C 2C 4S")
    score = deal.score
    assert score is not None
    assert (score.thirds, score.soloist_points, score.success) == ((31, 4), 10, True)
    assert score.payouts == (2, -1, -1)


def test_chiamo_with_the_called_card_in_the_monte_fails():
    deal = layout()
    do(deal, "pass", "bid chiamo", "pass")
    assert deal.current_player() == 1
    do(deal, "call 7B")
    # No swap: straight to the discards, with the monte in the soloist's hand.
    assert (deal.phase, deal.called_in_monte, deal.called_holder) == (Phase.DISCARD, True, None)
    assert deal.defenders == (2, 0)
    do(deal, "discard 7B", "discard 6B", "discard 5B", "discard 4B")
    # Seat 0 (a defender) wins the 10 denari tricks; the soloist throws all but 3C AS.
    tricks(deal, *denari_run("2C AC KC QC JC 7C 6C 3S 2S KS", "QS JS 7S 6S 3B 2B AB KB QB JB"))
    # The soloist wins 5C with 3C (1 third) and the last with AS (3 + 3 for the last trick).
    tricks(deal, "5C 3C 5S", "AS 4S 4C")
    score = deal.score
    assert score is not None
    # Soloist 7 thirds = 2 points < 6: he pays chiamo's 1 to each defender.
    assert (score.thirds, score.soloist_points, score.success) == ((7, 28), 2, False)
    assert score.payouts == (1, -2, 1)
    assert not score.cappotto


def test_solissimo():
    deal = layout()
    do(deal, "bid solissimo", "pass", "pass")
    assert deal.phase == Phase.PLAY and deal.set_aside == hand(MONTE)
    # Seat 1 throws 2C AC KC QC JC 3S 2S KS (10 thirds), seat 2 QS JS 3B 2B QB JB (6).
    tricks(deal, *denari_run("2C AC KC QC JC 7C 6C 3S 2S KS", "QS JS 7S 6S 5S 4S 3B 2B QB JB"))
    # Seat 1 wins 5C with 3C (+AB: 4 thirds) and the last with AS (+KB: 4, +3), + the monte (0).
    tricks(deal, "5C 3C AB", "AS KB 4C")
    score = deal.score
    assert score is not None
    # Soloist 8 + 10 + 6 = 24 thirds = 8 points: solissimo is worth 4, so +8 / -4 / -4.
    assert (score.thirds, score.soloist_points) == ((24, 11), 8)
    assert score.payouts == (8, -4, -4)


def test_dividete():
    deal = layout()
    do(deal, "bid dividete", "pass", "pass")
    # The first defender (seat 1) gets the two lowest-id monte cards, 7B 6B; seat 2 5B 4B.
    assert deal.hand(1) == hand(H1 + " 7B 6B") and deal.hand(2) == hand(H2 + " 5B 4B")
    assert deal.hand(0) == hand(H0)
    assert deal.current_player() == 1
    do(deal, "discard AC", "discard AS")
    assert deal.current_player() == 2
    do(deal, "discard 5B", "discard 4B")
    assert deal.set_aside == hand("AC AS 5B 4B")
    # Seat 0 takes 8 thirds of denari + seat 1's throws (KC QC JC 3S 2S KS: 6) + seat 2's
    # (QS JS 3B 2B KB QB JB 1 each, AB 3: 10) = 24.
    tricks(deal, *denari_run("KC QC JC 7C 6C 3S 2S KS 7B 6B", "QS JS 7S 6S 3B 2B AB KB QB JB"))
    # Seat 1 wins both last tricks (2 thirds), the last-trick 3 and the set-aside AC AS (6).
    tricks(deal, "5C 3C 5S", "2C 4S 4C")
    score = deal.score
    assert score is not None
    # Soloist 24 thirds = 8 points: dividete is worth 8, so +16 / -8 / -8.
    assert (score.thirds, score.soloist_points, score.payouts) == ((24, 11), 8, (16, -8, -8))


def test_scegliete_with_a_three_one_split():
    deal = layout()
    do(deal, "bid scegliete")
    # Nothing overbids scegliete: the auction ends at once and the monte is shown to all.
    assert (deal.phase, deal.current_player(), deal.soloist) == (Phase.SPLIT, 1, 0)
    assert all(deal.observation(s).monte == tuple(cards_of(hand(MONTE))) for s in range(3))
    # Bits 0..2 are the three lowest-id monte cards 7B 6B 5B: seat 1 takes them, seat 2 4B.
    do(deal, "split 0111")
    assert deal.hand(1) == hand(H1 + " 7B 6B 5B") and deal.hand(2) == hand(H2 + " 4B")
    assert [deal.observation(s).split for s in range(3)] == [0b0111] * 3
    do(deal, "discard 7B", "discard 6B", "discard 5B")
    assert deal.current_player() == 2
    do(deal, "discard 4B")
    tricks(deal, *denari_run("AC KC QC JC 7C 6C 3S 2S AS KS", "QS JS 7S 6S 3B 2B AB KB QB JB"))
    tricks(deal, "5C 3C 5S", "2C 4S 4C")
    score = deal.score
    assert score is not None
    # As in solo, 30 thirds = 10 points: scegliete is worth 16, so +32 / -16 / -16.
    assert (score.soloist_points, score.payouts) == (10, (32, -16, -16))


def test_scegliete_split_four_nothing_skips_the_second_defenders_discards():
    deal = layout()
    do(deal, "pass", "pass", "bid scegliete")
    assert deal.defenders == (0, 1)
    do(deal, "split 1111", "discard 7B", "discard 6B", "discard 5B", "discard 4B")
    assert deal.phase == Phase.PLAY and deal.current_player() == 0


# -- cappotto and stramazzo ------------------------------------------------------------------


def _defenders_sweep(deal: CalabresellaDeal) -> None:
    """Seat 2 plays solissimo and the defenders take every trick."""
    do(deal, "pass", "pass", "bid solissimo")
    tricks(deal, *denari_run("3C 2C AC KC QC JC 7C 6C 3S 2S", "QS JS 7S 6S 3B 2B AB QB JB 5S"))
    tricks(deal, "5C AS KB", "4C KS 4S")


@pytest.mark.parametrize(("multiplier", "payouts"), [(2, (8, 8, -16)), (1, (4, 4, -8))])
def test_cappotto_multiplies(multiplier: int, payouts: tuple[int, ...]):
    deal = layout(cappotto_multiplier=multiplier)
    _defenders_sweep(deal)
    score = deal.score
    assert score is not None
    # The soloist wins no trick: 0 points, solissimo's 4 × cappotto.
    assert score.cappotto and not score.success and score.soloist_points == 0
    assert score.value == 4 * multiplier and score.payouts == payouts


@pytest.mark.parametrize(("on", "payouts"), [(True, (24, -12, -12)), (False, (8, -4, -4))])
def test_stramazzo(on: bool, payouts: tuple[int, ...]):
    deal = layout(stramazzo=on)
    do(deal, "bid solissimo", "pass", "pass")
    # The defenders throw every card worth something on the soloist's denari ...
    tricks(deal, *denari_run("3C 2C AC KC QC JC 3S 2S AS KS", "QS JS 7S 6S 3B 2B AB KB QB JB"))
    # ... then win the last two tricks with 7C and 6C: no card point, but not every trick.
    tricks(deal, "5C 7C 4S", "6C 5S 4C")
    score = deal.score
    assert score is not None
    assert score.thirds == (32, 3) and not score.cappotto
    assert score.stramazzo is on and score.payouts == payouts


# -- the auction -----------------------------------------------------------------------------


def test_open_auction_overbids_until_two_pass():
    auction = Auction((0, 1, 2), once=False)
    for bid in (BID_CHIAMO, BID_SOLO, BID_PASS):
        auction.apply(bid)
    # Seat 0 was overbid and speaks again; seat 2 is out.
    assert auction.current_player() == 0
    assert auction.legal_bids() == (BID_PASS, BID_SOLISSIMO, BID_DIVIDETE, BID_SCEGLIETE)
    auction.apply(BID_SOLISSIMO)
    assert auction.current_player() == 1 and not auction.is_over
    auction.apply(BID_PASS)
    assert auction.is_over and auction.winner == (0, Contract.SOLISSIMO)
    assert auction.bids == [(0, 401), (1, 402), (2, 400), (0, 403), (1, 400)]


def test_open_auction_a_passed_player_cannot_come_back():
    auction = Auction((1, 2, 0), once=False)
    auction.apply(BID_PASS)
    auction.apply(BID_CHIAMO)
    auction.apply(BID_SOLO)
    # Seat 1 passed first: the turn skips it.
    assert auction.current_player() == 2
    auction.apply(BID_DIVIDETE)
    assert auction.current_player() == 0
    auction.apply(BID_PASS)
    assert auction.winner == (2, Contract.DIVIDETE)


@pytest.mark.parametrize("once", [True, False])
def test_the_last_player_may_bid_after_two_passes(once: bool):
    auction = Auction((0, 1, 2), once=once)
    auction.apply(BID_PASS)
    auction.apply(BID_PASS)
    assert auction.current_player() == 2 and not auction.is_over
    auction.apply(BID_CHIAMO)
    assert auction.winner == (2, Contract.CHIAMO)


def test_auction_once_each_player_speaks_once_and_the_highest_wins():
    # Seed 004: "each player has one opportunity to overbid". Chiamo, solo, pass: seat 0
    # was overbid by seat 1, but has had its turn; the auction is over and solo wins.
    auction = Auction((0, 1, 2))
    assert auction.once
    auction.apply(BID_CHIAMO)
    auction.apply(BID_SOLO)
    assert auction.current_player() == 2 and not auction.is_over
    auction.apply(BID_PASS)
    assert auction.is_over and auction.current_player() is None
    assert auction.winner == (1, Contract.SOLO) and auction.legal_bids() == ()


def test_auction_once_refuses_the_old_sequence_of_three_bids_by_one_seat():
    """The issue's sequence chiamo, solo, pass, solissimo, dividete, scegliete: under
    ``open`` seat 0 bids three times; under ``once`` the fourth bid is refused."""
    sequence = ("bid chiamo", "bid solo", "pass", "bid solissimo", "bid dividete", "bid scegliete")
    deal = layout(auction="open")
    do(deal, *sequence)
    assert deal.soloist == 0 and deal.contract is Contract.SCEGLIETE
    assert [seat for seat, _ in deal.auction.bids] == [0, 1, 2, 0, 1, 0]
    deal = layout()
    do(deal, *sequence[:3])
    assert deal.auction.is_over and deal.soloist == 1 and deal.contract is Contract.SOLO
    error = deal.explain_refusal(BID_SOLISSIMO)
    assert error is not None and error.detail is CalabresellaReason.WRONG_PHASE


def test_auction_once_last_speaker_may_overbid():
    auction = Auction((2, 0, 1))
    auction.apply(BID_SOLO)
    auction.apply(BID_PASS)
    auction.apply(BID_SOLISSIMO)
    assert auction.winner == (1, Contract.SOLISSIMO)


def test_auction_once_scegliete_ends_it_at_once():
    auction = Auction((0, 1, 2))
    auction.apply(BID_SCEGLIETE)
    assert auction.is_over and auction.winner == (0, Contract.SCEGLIETE)


def test_all_pass_is_a_redeal():
    deal = layout()
    do(deal, "pass", "pass", "pass")
    score = deal.score
    assert deal.is_terminal() and deal.current_player() is None and score is not None
    assert score.redeal and score.contract is None and score.payouts == (0, 0, 0)
    assert deal.legal_actions() == ()
    assert deal.explain_refusal(0).reason == Reason.GAME_OVER


def test_illegal_bids_are_refused_with_reasons():
    deal = layout()
    do(deal, "bid solo")
    for low in (BID_CHIAMO, BID_SOLO):
        error = deal.explain_refusal(low)
        assert error.detail == CalabresellaReason.BID_TOO_LOW
        assert "higher than solo" in str(error) and "seat 1" in str(error)
        with pytest.raises(IllegalActionError):
            deal.apply_action(low)
    play = deal.explain_refusal(parse_card("3C"))
    assert play.detail == CalabresellaReason.WRONG_PHASE and "3C" in str(play)
    assert deal.explain_refusal(406).detail == CalabresellaReason.UNKNOWN_ACTION
    assert deal.explain_refusal(-1).reason == Reason.UNKNOWN_ACTION
    with pytest.raises(ValueError, match="legal"):
        deal.explain_refusal(BID_PASS)
    assert deal.current_player() == 1 and deal.auction.bids == [(0, BID_SOLO)]


# -- other refusals --------------------------------------------------------------------------


def test_call_give_and_play_refusals():
    deal = layout()
    do(deal, "bid chiamo", "pass", "pass")
    held = deal.explain_refusal(call_action(parse_card("3D")))
    assert held.detail == CalabresellaReason.CALLED_CARD_HELD and "3D" in str(held)
    do(deal, "call AC")
    back = deal.explain_refusal(give_action(parse_card("AC")))
    assert back.detail == CalabresellaReason.GIVE_CALLED_CARD
    missing = deal.explain_refusal(give_action(parse_card("AS")))
    assert missing.reason == Reason.CARD_NOT_IN_HAND and "AS" in str(missing)
    do(deal, "give 4C")
    assert deal.explain_refusal(discard_action(parse_card("3S"))).reason == (
        Reason.CARD_NOT_IN_HAND
    )
    do(deal, "discard 7B", "discard 6B", "discard 5B", "discard 4B")
    do(deal, "3D")
    missing = deal.explain_refusal(parse_card("3B"))
    assert missing.reason == Reason.CARD_NOT_IN_HAND and "3B is not in seat 1's hand" in str(
        missing
    )
    do(deal, "3S")
    assert deal.explain_refusal(parse_card("AD")).reason == Reason.CARD_NOT_IN_HAND
    # Seat 2 is void in denari, so anything goes; then seat 0 leads 5C and seat 1 must follow.
    do(deal, "4S")
    do(deal, "5C")
    error = deal.explain_refusal(parse_card("AS"))
    assert isinstance(error, CalabresellaError)
    assert error.reason == Reason.MUST_FOLLOW_SUIT and "coppe" in str(error)


def test_action_names():
    assert action_name(BID_PASS) == "pass"
    assert action_name(BID_SCEGLIETE) == "bid scegliete"
    assert action_name(call_action(2)) == "call AD"
    assert action_name(split_action(0b0101)) == "split 0101"
    with pytest.raises(ValueError):
        action_name(600)


# -- four at the table -----------------------------------------------------------------------


def test_four_at_the_table_the_dealer_sits_out():
    deal = layout(seats=4, dealer=1)
    assert deal.order == (2, 3, 0) and deal.hand(1) == 0
    do(deal, "bid solo", "pass", "pass")
    do(deal, "discard 7B", "discard 6B", "discard 5B", "discard 4B")
    seen = set()
    plays = denari_run("AC KC QC JC 7C 6C 3S 2S AS KS", "QS JS 7S 6S 3B 2B AB KB QB JB")
    for text in " ".join([*plays, "5C 3C 5S", "2C 4S 4C"]).split():
        seen.add(deal.current_player())
        do(deal, text)
    assert seen == {2, 3, 0}
    score = deal.score
    assert score is not None
    assert score.payouts == (-2, 0, 4, -2)
    assert deal.observation(1).hand == () and deal.observation(1).monte == ()


def test_four_at_the_table_from_a_seed():
    deal = CalabresellaDeal.from_seed(table(4), "four", 3, 0)
    assert deal.hand(0) == 0 and deal.order == (1, 2, 3)
    three = CalabresellaDeal.from_seed(table(), "four", 3, 2)
    assert [deal.hand(s) for s in (1, 2, 3)] == [three.hand(s) for s in (0, 1, 2)]


def test_bad_deals_are_rejected():
    with pytest.raises(ValueError, match="4 cards"):
        CalabresellaDeal(table(), [hand(H0), hand(H1), hand(H2)], 2, hand("7B 6B 5B"))
    with pytest.raises(ValueError, match="seat 1"):
        CalabresellaDeal(table(), [hand(H0), hand(H0), hand(H2)], 2, hand(MONTE))
    with pytest.raises(ValueError, match="hands"):
        CalabresellaDeal(table(4), [hand(H0), hand(H1), hand(H2)], 0, hand(MONTE))


# -- properties over random playouts ---------------------------------------------------------

ALL_IDS = range(-1, 600)


def _drive_auction(deal: CalabresellaDeal, contract: Contract, bidder: int) -> None:
    """The active seat at ``bidder`` (0 = eldest) bids ``contract``; everyone else passes."""
    for i in range(3):
        if deal.auction.is_over:
            return
        deal.apply_action(bid_action(contract) if i == bidder else BID_PASS)


def _known(deal: CalabresellaDeal, seat: int, log: list[int]) -> CardSet:
    """The cards ``seat`` is entitled to know, from the dealt hands and the actions taken."""
    known = deal.dealt_hand(seat)
    contract = deal.contract
    if deal.called is not None:
        known |= 1 << deal.called
    for a in log:
        if GIVE_BASE <= a < GIVE_BASE + 40 and seat == deal.called_holder:
            known |= 1 << (a - GIVE_BASE)
        if 0 <= a < 40:
            known |= 1 << a
    monte = cards_of(deal.monte)
    if contract is Contract.SCEGLIETE:
        known |= deal.monte
    elif contract is Contract.DIVIDETE and deal.defenders is not None:
        first, second = deal.defenders
        part = monte[:2] if seat == first else monte[2:] if seat == second else []
        for c in part:
            known |= 1 << c
    elif (
        seat == deal.soloist
        and contract in (Contract.CHIAMO, Contract.SOLO)
        and deal.phase in (Phase.DISCARD, Phase.PLAY, Phase.OVER)
    ):
        known |= deal.monte
    return known


def _observed(deal: CalabresellaDeal, seat: int) -> CardSet:
    """Every card an observation names outside the public tricks."""
    obs = deal.observation(seat)
    named = [*obs.hand, *obs.received, *obs.given, *obs.monte, *obs.discards]
    # Plays, gives and discards name the seat's own cards; calls name cards it lacks.
    named += [a % 40 for a in obs.legal_actions if a < 40 or GIVE_BASE <= a < SPLIT_BASE]
    return sum(1 << c for c in set(named))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    contract=st.sampled_from(Contract),
    bidder=st.integers(0, 2),
    seats=st.sampled_from([3, 4]),
    choices=st.randoms(use_true_random=False),
)
def test_no_observation_leaks_hidden_cards(
    seed: int, contract: Contract, bidder: int, seats: int, choices: random.Random
):
    deal = CalabresellaDeal.from_seed(table(seats), str(seed), 1, seed % seats)
    log: list[int] = []
    _drive_auction(deal, contract, bidder)
    assert deal.contract is contract
    while True:
        for seat in range(seats):
            leaked = _observed(deal, seat) & ~_known(deal, seat, log)
            assert not leaked, f"seat {seat} sees {[CARD_NAMES[c] for c in cards_of(leaked)]}"
        if deal.is_terminal():
            break
        a = choices.choice(deal.legal_actions())
        deal.apply_action(a)
        log.append(a)


def _cards_in_play(deal: CalabresellaDeal) -> int:
    """Hands, discards, played cards and a monte not yet handed out, checked to be disjoint."""
    parts = [deal.hand(s) for s in range(deal.seats)]
    parts += [deal.discards(s) for s in range(deal.seats)]
    parts += [1 << c for trick, _ in deal.tricks for _, c in trick]
    parts += [1 << c for _, c in deal.observation(0).trick]
    contract = deal.contract
    monte_out = contract is not None and (
        contract is not Contract.SOLISSIMO
        and not (contract is Contract.CHIAMO and deal.phase in (Phase.CALL, Phase.GIVE))
        and not (contract is Contract.SCEGLIETE and deal.phase is Phase.SPLIT)
    )
    if not monte_out:
        parts.append(deal.monte)
    union = 0
    for p in parts:
        assert not union & p
        union |= p
    return union


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10**6), number=st.integers(1, 50), choices=st.randoms(use_true_random=False)
)
def test_random_playouts_keep_the_invariants(seed: int, number: int, choices: random.Random):
    deal = CalabresellaDeal.from_seed(table(stramazzo=True), str(seed), number, number % 3)
    steps = 0
    while not deal.is_terminal():
        assert _cards_in_play(deal) == FULL_DECK
        legal = deal.legal_actions()
        assert legal and list(legal) == sorted(set(legal))
        # Every other action is refused, and refusing changes nothing.
        if steps % 4 == 0:
            before = deal.observation(deal.current_player() or 0)
            for a in ALL_IDS:
                if a not in legal:
                    assert isinstance(deal.explain_refusal(a), CalabresellaError)
            assert deal.observation(deal.current_player() or 0) == before
        illegal = choices.choice([a for a in ALL_IDS if a not in legal])
        with pytest.raises(IllegalActionError):
            deal.apply_action(illegal)
        deal.apply_action(choices.choice(legal))
        steps += 1
    score = deal.score
    assert score is not None
    assert sum(score.payouts) == 0
    if score.redeal:
        assert score.payouts == (0, 0, 0) and len(deal.auction.bids) == 3
        return
    assert len(deal.tricks) == 12
    played = [c for trick, _ in deal.tricks for _, c in trick]
    assert len(played) == 36 and deal.set_aside.bit_count() == 4
    assert sum(1 << c for c in played) | deal.set_aside == FULL_DECK
    assert sum(score.thirds) == 35
    assert score.soloist_points + score.thirds[1] // 3 == 11
    stake = 2 * score.value if score.success else -2 * score.value
    assert score.payouts[score.soloist or 0] == stake


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    choices=st.randoms(use_true_random=False),
    mode=st.sampled_from(["once", "open"]),
)
def test_random_auctions_end_as_the_rules_say(seed: int, choices: random.Random, mode: str):
    deal = CalabresellaDeal.from_seed(table(auction=mode), str(seed), 1, seed % 3)
    while deal.phase is Phase.AUCTION:
        deal.apply_action(choices.choice(deal.legal_actions()))
    bids = deal.auction.bids
    passed = [s for s, b in bids if b == BID_PASS]
    assert len(passed) == len(set(passed))
    for i, (seat, _) in enumerate(bids):
        assert seat not in [s for s, b in bids[:i] if b == BID_PASS]
    raised = [b for _, b in bids if b != BID_PASS]
    assert raised == sorted(set(raised))
    if mode == "once":
        # Each seat speaks once, in order from the eldest, unless scegliete cut it short.
        assert [s for s, _ in bids] == list(deal.order[: len(bids)])
        assert len(bids) == 3 or bids[-1][1] == BID_SCEGLIETE
    if deal.contract is None:
        assert len(passed) == 3
    else:
        assert deal.contract is Contract.SCEGLIETE or len(passed) == 2 or mode == "once"
        assert (deal.soloist, bid_action(deal.contract)) == next(
            (s, b) for s, b in reversed(bids) if b != BID_PASS
        )
