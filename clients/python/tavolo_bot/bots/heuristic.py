"""A deterministic bot that plays sensibly, from the observation alone.

    TAVOLO_REFEREE=localhost:50051 TAVOLO_TICKET=... python -m tavolo_bot.bots.heuristic

In order of priority:

1. Declare every combination held, the most valuable first; then end the declarations.
2. Call out (where the rules allow it) only when the claim is sure to be right.
3. Leading: lead a card known to be the highest left of its suit (it cannot lose);
   otherwise the lowest card of the longest suit.
4. Following: answer the partner's busso with the highest card of the suit; load a trick the
   partner surely wins with points (keeping masters); take a trick with the cheapest card sure
   to win it, or try with a card worth nothing; otherwise play the lowest-value card (the
   lowest-value discard when void).
5. With two cards left and the trick not to be won, keep the better card for the last trick.
6. Signal truthfully, when the legal list offers it: busso when leading a suit holding its 3
   or 2; volo with the last card of a suit; striscio when holding more of it.
7. Ciapanò (four seats, each alone; points count against): lead the weakest card; duck the
   trick when a card can, unloading the costliest; else play the cheapest, weakest card.
8. Calabresella: bid from the hand's strength (its card points, its 3s and 2s): chiamo from
   about 6, solo from 7.5, solissimo from 9; call the missing 3 (else 2) of the longest
   suit; give and discard the cheapest cards of the shortest suits; as first defender in
   scegliete take the monte cards worth points. Then play as above.
9. Briscola (``MatchStarted.game`` says so; nothing in the observation does): lead the
   cheapest non-trump card; as the last to play take a trick with the card that banks the
   most points, trumping only a trick worth 10 or more with the throw it saves (or worth
   something, with a trump worth nothing); load a trick the partner surely wins; otherwise
   throw the cheapest non-trump card. Points are Briscola's own (A 11, 3 10, K 4, Q 3,
   J 2) whatever the match's ``card_values``.

Every action returned is one of the legal actions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import NoReturn

from tavolo_bot.bot import Bot
from tavolo_bot.cards import CARDS, RANKS, points_in_thirds, rank_of, strength, suit_of
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.runner import main as run_main
from tavolo_bot.turn import Turn, card_of


def _value(card: str) -> tuple[int, int]:
    """Sort key of the card cheapest to give away: fewest points, then weakest."""
    return points_in_thirds(card), strength(card)


def _load_value(card: str) -> tuple[int, int]:
    """Sort key of the card best given to a partner's trick: most points, then weakest."""
    return points_in_thirds(card), -strength(card)


def _declaration_points(action: pb.Action) -> int:
    name = action.declaration or action.text.removeprefix("declare ")
    return 4 if name.startswith("quattro") else 3


class _Table:
    """What the decision needs of the turn, computed once."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.hand = turn.hand
        self.trick = turn.trick
        self.led_suit = turn.led_suit
        self.partner = turn.partner
        trump = turn.trump
        self.trump = suit_of(trump) if trump else None
        """Tressette con la briscola: the trump suit; None without one."""
        seen = set(self.hand).union(turn.played_cards)
        self.unseen = [c for c in CARDS if c not in seen]
        # Only a trump makes it matter (is_master): not worked out on every Tressette turn.
        self.void = _voids(turn) if self.trump is not None else {}
        """Seat -> the suits it has shown it lacks (it played another suit to their lead)."""

    def is_master(self, card: str) -> bool:
        """Whether no card left in other hands can beat ``card``.

        With a trump suit, a card of another suit can be trumped while any trump is out.
        """
        suit, rank = suit_of(card), rank_of(card)
        if any(suit_of(c) == suit and rank_of(c) < rank for c in self.unseen):
            return False
        trump = self.trump
        if trump is None or suit == trump or all(suit_of(c) != trump for c in self.unseen):
            return True
        # Only a seat without the suit may trump it: an opponent known to lack it might.
        me, partner = self.turn.seat, self.partner
        return not any(
            suit in suits for seat, suits in self.void.items() if seat not in (me, partner)
        )

    def beats(self, card: str, best: str) -> bool:
        """Whether ``card`` played now takes the trick from ``best``, the card winning it."""
        if self.trump is not None and suit_of(card) == self.trump != suit_of(best):
            return True
        return suit_of(card) == suit_of(best) and rank_of(card) < rank_of(best)

    def is_trump(self, card: str) -> bool:
        return self.trump is not None and suit_of(card) == self.trump

    def keep_for_last(self, cards: list[str]) -> str | None:
        """With two cards left, the one to play so the better one wins the last trick."""
        if len(self.hand) != 2 or len(cards) != 2:
            return None
        return min(cards, key=lambda c: (self.is_master(c), strength(c)))


def _voids(turn: Turn) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    tricks = [[(p.seat, card_of(p.action)) for p in t.plays] for t in turn.observation.tricks]
    tricks.append([(seat, card) for seat, card, _ in turn.trick])
    for plays in tricks:
        cards = [(seat, card) for seat, card in plays if card is not None]
        if not cards:
            continue
        led = suit_of(cards[0][1])
        for seat, card in cards[1:]:
            if suit_of(card) != led:
                out.setdefault(seat, set()).add(led)
    return out


def choose_action(turn: Turn, target: int | None = None, game: str = "") -> pb.Action:
    """The heuristic's action; ``target`` (the game's target) enables sure call-outs, and
    ``game`` (``MatchStarted.game``, the family) tells Briscola from Tressette."""
    legal = turn.legal
    if not legal:
        raise ValueError("a decision request without legal actions")
    if game in BRISCOLA_GAMES:
        return _briscola_play(turn)
    calabresella = _calabresella_step(turn)
    if calabresella is not None:
        return calabresella
    declarations = turn.declarations()
    if declarations:
        # max keeps the first of equals: the referee lists napoli before tre.
        return max(declarations, key=_declaration_points)
    plays = turn.plays()
    if not plays:
        for action in legal:
            if action.kind == pb.ACTION_KIND_END_DECLARATIONS:
                return action
        return legal[0]
    if target is not None:
        call_out = next((a for a in legal if a.kind == pb.ACTION_KIND_CALL_OUT), None)
        if call_out is not None and _claim(turn) >= target:
            return call_out
    table = _Table(turn)
    cards = list(dict.fromkeys(c for c in map(card_of, plays) if c is not None))
    if len(cards) == 1:
        card = cards[0]
    elif turn.players == 4 and turn.sides == 4:
        card = _avoid_points(table, cards)
    elif table.trick:
        card = _follow(table, cards)
    else:
        card = _lead(table, cards)
    return with_signal(turn, card, plays)


_BID_ORDER = ("pass", "chiamo", "solo", "solissimo", "dividete", "scegliete")
_BID_FROM = (("solissimo", 9.0), ("solo", 7.5), ("chiamo", 6.0))
"""Hand strength from which each contract is bid: about the points it should take."""


def hand_strength(hand: list[str]) -> float:
    """Points a hand may take playing alone: its card points, and its 3s and 2s as tricks."""
    thirds = sum(points_in_thirds(c) for c in hand)
    threes = sum(rank_of(c) == 0 for c in hand)
    twos = sum(rank_of(c) == 1 for c in hand)
    return thirds / 3 + 0.7 * threes + 0.3 * twos


def _calabresella_step(turn: Turn) -> pb.Action | None:
    """The auction, the call, the give, the discards and the split; None when playing."""
    by_kind: dict[int, list[pb.Action]] = {}
    for action in turn.legal:
        by_kind.setdefault(action.kind, []).append(action)
    hand = turn.hand
    if pb.ACTION_KIND_BID in by_kind:
        bids = {a.bid: a for a in by_kind[pb.ACTION_KIND_BID]}
        value = hand_strength(hand)
        wanted = next((name for name, level in _BID_FROM if value >= level), "pass")
        # The highest legal bid up to the one the hand is worth; else pass.
        for name in reversed(_BID_ORDER[: _BID_ORDER.index(wanted) + 1]):
            if name in bids:
                return bids[name]
        return bids.get("pass", by_kind[pb.ACTION_KIND_BID][0])
    if pb.ACTION_KIND_CALL in by_kind:
        calls = {a.card: a for a in by_kind[pb.ACTION_KIND_CALL]}
        length = {s: sum(suit_of(c) == s for c in hand) for s in "DCSB"}
        for rank in "32":
            for suit in sorted(length, key=lambda s: -length[s]):
                if rank + suit in calls:
                    return calls[rank + suit]
        return by_kind[pb.ACTION_KIND_CALL][0]
    for kind in (pb.ACTION_KIND_GIVE, pb.ACTION_KIND_DISCARD):
        if kind in by_kind:
            length = {s: sum(suit_of(c) == s for c in hand) for s in "DCSB"}
            return min(
                by_kind[kind],
                key=lambda a: (points_in_thirds(a.card), length[suit_of(a.card)], strength(a.card)),
            )
    if pb.ACTION_KIND_SPLIT in by_kind:
        splits = by_kind[pb.ACTION_KIND_SPLIT]
        worth = {a.id: tuple(sorted(c for c in a.cards if points_in_thirds(c))) for a in splits}
        best = max(worth.values(), key=len)
        return next(a for a in splits if tuple(sorted(a.cards)) == best)
    return None


def _claim(turn: Turn) -> int:
    """What a call-out would claim: game total + floored captured points + declarations."""
    obs = turn.observation

    def side(seat: int) -> int:
        return seat % 2 if turn.sides == 2 else seat

    mine = side(turn.seat)
    if mine >= len(obs.totals) or mine >= len(obs.captured):
        return -1  # the observation lacks the scores; never call out blind
    declared = sum(d.points for d in obs.declarations if side(d.seat) == mine)
    return obs.totals[mine] + obs.captured[mine] // 3 + declared


def _avoid_points(table: _Table, cards: list[str]) -> str:
    """Ciapanò, where points count against: duck the trick, unloading the costliest card."""
    if not table.trick:
        return min(cards, key=lambda c: (strength(c), points_in_thirds(c)))  # the weakest lead
    led = table.led_suit
    best = min((c for _, c, _ in table.trick if suit_of(c) == led), key=rank_of)
    ducks = [c for c in cards if suit_of(c) != led or rank_of(c) > rank_of(best)]
    if ducks:
        return max(ducks, key=lambda c: (points_in_thirds(c), strength(c)))
    # Every card takes the trick for now: the cheapest, and the weakest, so another may beat it.
    return min(cards, key=_value)


def _lead(table: _Table, cards: list[str]) -> str:
    masters = [c for c in cards if table.is_master(c)]
    if masters:
        # A master cannot lose the trick; cash the one worth most first.
        return max(masters, key=lambda c: (points_in_thirds(c), strength(c)))
    keep = table.keep_for_last(cards)
    if keep is not None:
        return keep
    by_suit: dict[str, list[str]] = {}
    for card in cards:
        by_suit.setdefault(suit_of(card), []).append(card)
    longest = max(by_suit.values(), key=len)  # the first of equals: deterministic
    return min(longest, key=_value)


def _follow(table: _Table, cards: list[str]) -> str:
    led = table.led_suit
    trick = table.trick
    last = len(trick) == table.turn.players - 1
    best_seat, best = trick[0][0], trick[0][1]
    for seat, card, _ in trick[1:]:
        if table.beats(card, best):
            best_seat, best = seat, card
    partner_wins = table.partner is not None and best_seat == table.partner
    # Nobody after this seat can beat the partner's card: the trick is ours already.
    partner_sure = partner_wins and (last or table.is_master(best))
    follow = [c for c in cards if suit_of(c) == led]
    if not follow:
        # Void in the led suit: only a trump can win the trick; keep trumps otherwise.
        plain = [c for c in cards if not table.is_trump(c)] or cards
        if partner_sure:
            return _load(table, plain)
        trumping = [] if partner_wins else [c for c in cards if table.beats(c, best)]
        sure = trumping if last else [c for c in trumping if table.is_master(c)]
        points = sum(points_in_thirds(c) for _, c, _ in trick)
        if sure or (trumping and points >= 3):
            return min(sure or trumping, key=strength)
        return table.keep_for_last(plain) or min(plain, key=_value)
    lead_seat, _, lead_signal = trick[0]
    if lead_seat == table.partner and lead_signal in ("busso", "ribusso"):
        return max(follow, key=strength)
    if partner_sure:
        return _load(table, follow)
    beaters = [c for c in follow if table.beats(c, best)]
    sure = beaters if last else [c for c in beaters if table.is_master(c)]
    if sure:
        return min(sure, key=strength)
    if beaters and not partner_wins:
        low = min(beaters, key=strength)
        if not points_in_thirds(low):
            return low  # worth nothing, and it might still take the trick
    return table.keep_for_last(follow) or min(follow, key=_value)


def _load(table: _Table, cards: list[str]) -> str:
    """The card to give to a trick the partner surely wins: most points, masters kept."""
    loads = [c for c in cards if not table.is_master(c)] or cards
    return max(loads, key=_load_value)


BRISCOLA_GAMES = ("briscola", "briscola-a-quattro")
"""The families ``MatchStarted.game`` names for Briscola, for two seats and for four."""
_BRISCOLA_POINTS = dict(zip(RANKS, (10, 0, 11, 4, 3, 2, 0, 0, 0, 0), strict=True))
_BRISCOLA_ORDER = "A3KQJ76542"
"""Briscola's ranks, strongest first: not Tressette's."""
_BRISCOLA_TAKE = 10
"""The least a trick must hold, with the card that would be thrown on it, for a trump of
any worth to be spent on it."""


def _briscola_points(card: str) -> int:
    return _BRISCOLA_POINTS[card[0]]


def _briscola_strength(card: str) -> int:
    """9 for the ace down to 0 for the 2: higher is stronger."""
    return 9 - _BRISCOLA_ORDER.index(card[0])


def _briscola_play(turn: Turn) -> pb.Action:
    """Briscola's card: no suit to follow, the highest trump or else the highest card of
    the suit led takes the trick."""
    plays = turn.plays()
    cards = list(dict.fromkeys(c for c in map(card_of, plays) if c is not None))
    trump = suit_of(turn.trump) if turn.trump else None

    def cheap(card: str) -> tuple[bool, int, int]:
        return suit_of(card) == trump, _briscola_points(card), _briscola_strength(card)

    def beats(card: str, best: str) -> bool:
        if suit_of(card) == suit_of(best):
            return _briscola_strength(card) > _briscola_strength(best)
        return suit_of(card) == trump

    trick = turn.trick
    card = min(cards, key=cheap)  # the lead, and the throw of a trick not worth taking
    if trick:
        best_seat, best = trick[0][0], trick[0][1]
        for seat, played, _ in trick[1:]:
            if beats(played, best):
                best_seat, best = seat, played
        last = len(trick) == turn.players - 1
        worth = sum(_briscola_points(c) for _, c, _ in trick)
        if best_seat == turn.partner:
            if last:  # the trick is the side's: give it points, a trump only if nothing else
                card = max(cards, key=lambda c: (suit_of(c) != trump, _briscola_points(c)))
        elif last:
            plain = [c for c in cards if beats(c, best) and suit_of(c) != trump]
            trumps = [c for c in cards if beats(c, best) and suit_of(c) == trump]
            if plain:
                card = max(plain, key=_briscola_points)
            elif trumps:
                low = min(trumps, key=lambda c: (_briscola_points(c), _briscola_strength(c)))
                # What the trick would hold after the throw: a 3 thrown is worth a trump.
                lost = worth + _briscola_points(card)
                if lost >= _BRISCOLA_TAKE or (worth and not _briscola_points(low)):
                    card = low
    return next(a for a in plays if card_of(a) == card)


def with_signal(turn: Turn, card: str, plays: Iterable[pb.Action]) -> pb.Action:
    """The play of ``card`` with the most telling truthful signal the legal list offers."""
    options = {a.signal: a for a in plays if card_of(a) == card}
    suit = suit_of(card)
    held = [c for c in turn.hand if suit_of(c) == suit]
    rest = len(held) - (card in held)
    if turn.is_leading and pb.SIGNAL_BUSSO in options and any(rank_of(c) < 2 for c in held):
        return options[pb.SIGNAL_BUSSO]
    if rest == 0 and pb.SIGNAL_VOLO in options:
        return options[pb.SIGNAL_VOLO]
    if rest > 0:
        if pb.SIGNAL_STRISCIO in options:
            return options[pb.SIGNAL_STRISCIO]
        lengths = pb.SIGNAL_STRISCIO_LUNGO if rest >= 4 else pb.SIGNAL_STRISCIO_CORTO
        if lengths in options:
            return options[lengths]
    if pb.SIGNAL_UNSPECIFIED in options:
        return options[pb.SIGNAL_UNSPECIFIED]
    return next(iter(options.values()))


class HeuristicBot(Bot):
    """:func:`choose_action`, with the game's target and family read from ``MatchStarted``."""

    def __init__(self) -> None:
        self.target: int | None = None
        self.game = ""

    def on_event(self, event: pb.Event) -> None:
        """Learn the family, and the target (for call-outs) from the rules of ``MatchStarted``."""
        if event.WhichOneof("event") == "match_started":
            self.game = event.match_started.game
            try:
                target = json.loads(event.match_started.rules_json).get("target")
            except (ValueError, AttributeError):
                target = None
            self.target = target if isinstance(target, int) else None

    def choose(self, turn: Turn) -> int:
        """The id of :func:`choose_action`'s action."""
        return choose_action(turn, self.target, self.game).id


def main() -> NoReturn:
    """Play the tickets of the environment."""
    run_main(HeuristicBot)


if __name__ == "__main__":
    main()
