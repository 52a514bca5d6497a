"""The bot's view of one decision: a thin read-only wrapper around a ``DecisionRequest``."""

from __future__ import annotations

from tavolo_bot.cards import is_card, signal_name, suit_of
from tavolo_bot.proto import referee_pb2 as pb


def card_of(action: pb.Action) -> str | None:
    """The card a play action plays, or None for any other action."""
    if action.card:
        return action.card
    # A referee may fill only ``text`` ("AS volo"); the card is its first word then.
    if action.kind in (pb.ACTION_KIND_PLAY, pb.ACTION_KIND_UNSPECIFIED):
        words = action.text.split()
        if words and is_card(words[0]):
            return words[0].upper()
    return None


def is_play(action: pb.Action) -> bool:
    """Whether the action plays a card."""
    if action.kind == pb.ACTION_KIND_PLAY:
        return True
    return action.kind == pb.ACTION_KIND_UNSPECIFIED and card_of(action) is not None


def is_declaration(action: pb.Action) -> bool:
    """Whether the action declares a combination."""
    return action.kind == pb.ACTION_KIND_DECLARE or (
        action.kind == pb.ACTION_KIND_UNSPECIFIED and action.text.startswith("declare ")
    )


class Turn:
    """One decision to make: what the seat may know and the legal actions to choose from."""

    __slots__ = ("_legal", "_request")

    def __init__(self, request: pb.DecisionRequest) -> None:
        self._request = request
        self._legal = tuple(request.legal_actions)

    def __repr__(self) -> str:
        return (
            f"Turn(request_id={self.request_id}, seat={self.seat}, hand={self.hand}, "
            f"trick={self.trick}, legal={[a.text for a in self._legal]})"
        )

    # -- the request as sent -------------------------------------------------------------

    @property
    def request(self) -> pb.DecisionRequest:
        """The ``DecisionRequest`` itself (do not modify it)."""
        return self._request

    @property
    def request_id(self) -> int:
        """The id the decision answers; the SDK echoes it for you."""
        return self._request.request_id

    @property
    def observation(self) -> pb.Observation:
        """Everything this seat may know of the deal (do not modify it)."""
        return self._request.observation

    @property
    def legal(self) -> list[pb.Action]:
        """Every legal action, in the referee's order; ``choose`` returns one of their ids."""
        return list(self._legal)

    @property
    def deadline_ms(self) -> int:
        """Milliseconds for this decision, counted from when the referee sent it."""
        return self._request.deadline_ms

    @property
    def time_bank_ms(self) -> int:
        """Time bank left beyond ``deadline_ms``, in milliseconds (0 without a time bank)."""
        return self._request.time_bank_ms

    @property
    def attempts_left(self) -> int:
        """Attempts left for this decision, this one included."""
        return self._request.attempts_left

    # -- conveniences --------------------------------------------------------------------

    @property
    def seat(self) -> int:
        """This bot's seat in the current game (seats rotate between games)."""
        return self.observation.seat

    @property
    def players(self) -> int:
        """Seats at the table: 4, or 3 in tressette a tre."""
        return self.observation.players or 4

    @property
    def partner(self) -> int | None:
        """The partner's seat, opposite this one; None when each seat plays alone."""
        return (self.seat + 2) % 4 if self.players == 4 and self.sides == 2 else None

    @property
    def sides(self) -> int:
        """Scoring sides: 2 with partners, else one per seat (tressette a tre, ciapanò)."""
        sides = self.observation.sides
        # A referee older than the field sends 0; then partners play exactly when 4 sit.
        return sides or (2 if self.players == 4 else self.players)

    @property
    def hand(self) -> list[str]:
        """This seat's unplayed cards, e.g. ``["3D", "KS"]``."""
        return list(self.observation.hand)

    @property
    def trump(self) -> str | None:
        """The shown card whose suit is trump (Briscola, Tressette con la briscola), or None."""
        return self.observation.trump or None

    @property
    def trick(self) -> list[tuple[int, str, str]]:
        """The current trick so far: ``(seat, card, signal name)``, signal ``""`` if none."""
        out = []
        for play in self.observation.trick:
            card = card_of(play.action)
            if card is not None:
                out.append((play.seat, card, signal_name(play.action.signal)))
        return out

    @property
    def led_suit(self) -> str | None:
        """Suit of the current trick's first card, or None when nobody has played to it."""
        for play in self.observation.trick:
            card = card_of(play.action)
            if card is not None:
                return suit_of(card)
        return None

    @property
    def is_leading(self) -> bool:
        """Whether this seat plays the first card of the trick now."""
        return not self.observation.trick and any(is_play(a) for a in self._legal)

    @property
    def played_cards(self) -> list[str]:
        """Every card played in this deal so far, completed tricks first, in order."""
        out: list[str] = []
        for trick in self.observation.tricks:
            out.extend(c for c in (card_of(p.action) for p in trick.plays) if c is not None)
        out.extend(c for c in (card_of(p.action) for p in self.observation.trick) if c is not None)
        return out

    def plays(self) -> list[pb.Action]:
        """The legal actions that play a card (each card once per signal it may carry)."""
        return [a for a in self._legal if is_play(a)]

    def declarations(self) -> list[pb.Action]:
        """The legal actions that declare a combination."""
        return [a for a in self._legal if is_declaration(a)]

    def find(self, text: str) -> pb.Action | None:
        """The legal action whose text is exactly ``text`` (e.g. ``"AS volo"``), or None."""
        for action in self._legal:
            if action.text == text:
                return action
        return None
