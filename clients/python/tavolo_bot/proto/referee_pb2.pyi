from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Signal(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SIGNAL_UNSPECIFIED: _ClassVar[Signal]
    SIGNAL_BUSSO: _ClassVar[Signal]
    SIGNAL_VOLO: _ClassVar[Signal]
    SIGNAL_STRISCIO: _ClassVar[Signal]
    SIGNAL_RIBUSSO: _ClassVar[Signal]
    SIGNAL_STRISCIO_LUNGO: _ClassVar[Signal]
    SIGNAL_STRISCIO_CORTO: _ClassVar[Signal]

class ActionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_KIND_UNSPECIFIED: _ClassVar[ActionKind]
    ACTION_KIND_PLAY: _ClassVar[ActionKind]
    ACTION_KIND_DECLARE: _ClassVar[ActionKind]
    ACTION_KIND_END_DECLARATIONS: _ClassVar[ActionKind]
    ACTION_KIND_CALL_OUT: _ClassVar[ActionKind]
    ACTION_KIND_BID: _ClassVar[ActionKind]
    ACTION_KIND_CALL: _ClassVar[ActionKind]
    ACTION_KIND_GIVE: _ClassVar[ActionKind]
    ACTION_KIND_DISCARD: _ClassVar[ActionKind]
    ACTION_KIND_SPLIT: _ClassVar[ActionKind]

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_DECLARE: _ClassVar[Phase]
    PHASE_PLAY: _ClassVar[Phase]
    PHASE_DONE: _ClassVar[Phase]
    PHASE_AUCTION: _ClassVar[Phase]
    PHASE_CALL: _ClassVar[Phase]
    PHASE_GIVE: _ClassVar[Phase]
    PHASE_DISCARD: _ClassVar[Phase]
    PHASE_SPLIT: _ClassVar[Phase]
SIGNAL_UNSPECIFIED: Signal
SIGNAL_BUSSO: Signal
SIGNAL_VOLO: Signal
SIGNAL_STRISCIO: Signal
SIGNAL_RIBUSSO: Signal
SIGNAL_STRISCIO_LUNGO: Signal
SIGNAL_STRISCIO_CORTO: Signal
ACTION_KIND_UNSPECIFIED: ActionKind
ACTION_KIND_PLAY: ActionKind
ACTION_KIND_DECLARE: ActionKind
ACTION_KIND_END_DECLARATIONS: ActionKind
ACTION_KIND_CALL_OUT: ActionKind
ACTION_KIND_BID: ActionKind
ACTION_KIND_CALL: ActionKind
ACTION_KIND_GIVE: ActionKind
ACTION_KIND_DISCARD: ActionKind
ACTION_KIND_SPLIT: ActionKind
PHASE_UNSPECIFIED: Phase
PHASE_DECLARE: Phase
PHASE_PLAY: Phase
PHASE_DONE: Phase
PHASE_AUCTION: Phase
PHASE_CALL: Phase
PHASE_GIVE: Phase
PHASE_DISCARD: Phase
PHASE_SPLIT: Phase

class PlayRequest(_message.Message):
    __slots__ = ("hello", "decision")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    decision: Decision
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., decision: _Optional[_Union[Decision, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("ticket", "protocol_version", "key", "compact_observations")
    TICKET_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    COMPACT_OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    ticket: str
    protocol_version: int
    key: str
    compact_observations: bool
    def __init__(self, ticket: _Optional[str] = ..., protocol_version: _Optional[int] = ..., key: _Optional[str] = ..., compact_observations: _Optional[bool] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("request_id", "action_id")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action_id: int
    def __init__(self, request_id: _Optional[int] = ..., action_id: _Optional[int] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("events", "request")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    request: DecisionRequest
    def __init__(self, events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., request: _Optional[_Union[DecisionRequest, _Mapping]] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "deadline_ms", "time_bank_ms", "observation", "legal_actions", "attempts_left")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_LEFT_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    deadline_ms: int
    time_bank_ms: int
    observation: Observation
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    attempts_left: int
    def __init__(self, request_id: _Optional[int] = ..., deadline_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., observation: _Optional[_Union[Observation, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., attempts_left: _Optional[int] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("welcome", "match_started", "game_started", "hand_dealt", "declared", "card_played", "trick_won", "deal_scored", "game_over", "match_over", "action_rejected", "called_out", "declarations_ended", "error", "bid_made", "card_called", "monte_split", "card_drawn", "key_accepted")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    MATCH_STARTED_FIELD_NUMBER: _ClassVar[int]
    GAME_STARTED_FIELD_NUMBER: _ClassVar[int]
    HAND_DEALT_FIELD_NUMBER: _ClassVar[int]
    DECLARED_FIELD_NUMBER: _ClassVar[int]
    CARD_PLAYED_FIELD_NUMBER: _ClassVar[int]
    TRICK_WON_FIELD_NUMBER: _ClassVar[int]
    DEAL_SCORED_FIELD_NUMBER: _ClassVar[int]
    GAME_OVER_FIELD_NUMBER: _ClassVar[int]
    MATCH_OVER_FIELD_NUMBER: _ClassVar[int]
    ACTION_REJECTED_FIELD_NUMBER: _ClassVar[int]
    CALLED_OUT_FIELD_NUMBER: _ClassVar[int]
    DECLARATIONS_ENDED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    BID_MADE_FIELD_NUMBER: _ClassVar[int]
    CARD_CALLED_FIELD_NUMBER: _ClassVar[int]
    MONTE_SPLIT_FIELD_NUMBER: _ClassVar[int]
    CARD_DRAWN_FIELD_NUMBER: _ClassVar[int]
    KEY_ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    match_started: MatchStarted
    game_started: GameStarted
    hand_dealt: HandDealt
    declared: Declared
    card_played: CardPlayed
    trick_won: TrickWon
    deal_scored: DealScored
    game_over: GameOver
    match_over: MatchOver
    action_rejected: ActionRejected
    called_out: CalledOut
    declarations_ended: DeclarationsEnded
    error: ErrorEvent
    bid_made: BidMade
    card_called: CardCalled
    monte_split: MonteSplit
    card_drawn: Draw
    key_accepted: KeyAccepted
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., match_started: _Optional[_Union[MatchStarted, _Mapping]] = ..., game_started: _Optional[_Union[GameStarted, _Mapping]] = ..., hand_dealt: _Optional[_Union[HandDealt, _Mapping]] = ..., declared: _Optional[_Union[Declared, _Mapping]] = ..., card_played: _Optional[_Union[CardPlayed, _Mapping]] = ..., trick_won: _Optional[_Union[TrickWon, _Mapping]] = ..., deal_scored: _Optional[_Union[DealScored, _Mapping]] = ..., game_over: _Optional[_Union[GameOver, _Mapping]] = ..., match_over: _Optional[_Union[MatchOver, _Mapping]] = ..., action_rejected: _Optional[_Union[ActionRejected, _Mapping]] = ..., called_out: _Optional[_Union[CalledOut, _Mapping]] = ..., declarations_ended: _Optional[_Union[DeclarationsEnded, _Mapping]] = ..., error: _Optional[_Union[ErrorEvent, _Mapping]] = ..., bid_made: _Optional[_Union[BidMade, _Mapping]] = ..., card_called: _Optional[_Union[CardCalled, _Mapping]] = ..., monte_split: _Optional[_Union[MonteSplit, _Mapping]] = ..., card_drawn: _Optional[_Union[Draw, _Mapping]] = ..., key_accepted: _Optional[_Union[KeyAccepted, _Mapping]] = ...) -> None: ...

class KeyAccepted(_message.Message):
    __slots__ = ("entrant", "streams_per_table", "matches_left")
    ENTRANT_FIELD_NUMBER: _ClassVar[int]
    STREAMS_PER_TABLE_FIELD_NUMBER: _ClassVar[int]
    MATCHES_LEFT_FIELD_NUMBER: _ClassVar[int]
    entrant: str
    streams_per_table: int
    matches_left: int
    def __init__(self, entrant: _Optional[str] = ..., streams_per_table: _Optional[int] = ..., matches_left: _Optional[int] = ...) -> None: ...

class BidMade(_message.Message):
    __slots__ = ("seat", "bid")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bid: str
    def __init__(self, seat: _Optional[int] = ..., bid: _Optional[str] = ...) -> None: ...

class CardCalled(_message.Message):
    __slots__ = ("seat", "card", "holder")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    holder: int
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ..., holder: _Optional[int] = ...) -> None: ...

class MonteSplit(_message.Message):
    __slots__ = ("seat", "take")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TAKE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    take: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, seat: _Optional[int] = ..., take: _Optional[_Iterable[str]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("match_id", "slot")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    slot: int
    def __init__(self, match_id: _Optional[str] = ..., slot: _Optional[int] = ...) -> None: ...

class MatchStarted(_message.Message):
    __slots__ = ("match_id", "game", "rules_json", "games", "deals_per_game")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    RULES_JSON_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    DEALS_PER_GAME_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    game: str
    rules_json: str
    games: int
    deals_per_game: int
    def __init__(self, match_id: _Optional[str] = ..., game: _Optional[str] = ..., rules_json: _Optional[str] = ..., games: _Optional[int] = ..., deals_per_game: _Optional[int] = ...) -> None: ...

class GameStarted(_message.Message):
    __slots__ = ("game", "seat")
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    game: int
    seat: int
    def __init__(self, game: _Optional[int] = ..., seat: _Optional[int] = ...) -> None: ...

class HandDealt(_message.Message):
    __slots__ = ("deal", "dealer", "cards", "trump")
    DEAL_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    deal: int
    dealer: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    trump: str
    def __init__(self, deal: _Optional[int] = ..., dealer: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ..., trump: _Optional[str] = ...) -> None: ...

class Declared(_message.Message):
    __slots__ = ("seat", "declaration", "cards", "points")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DECLARATION_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    declaration: str
    cards: _containers.RepeatedScalarFieldContainer[str]
    points: int
    def __init__(self, seat: _Optional[int] = ..., declaration: _Optional[str] = ..., cards: _Optional[_Iterable[str]] = ..., points: _Optional[int] = ...) -> None: ...

class DeclarationsEnded(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class CardPlayed(_message.Message):
    __slots__ = ("seat", "card", "signal")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    signal: Signal
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ..., signal: _Optional[_Union[Signal, str]] = ...) -> None: ...

class TrickWon(_message.Message):
    __slots__ = ("trick", "winner")
    TRICK_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    trick: int
    winner: int
    def __init__(self, trick: _Optional[int] = ..., winner: _Optional[int] = ...) -> None: ...

class CalledOut(_message.Message):
    __slots__ = ("seat", "claimed", "correct")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CLAIMED_FIELD_NUMBER: _ClassVar[int]
    CORRECT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    claimed: int
    correct: bool
    def __init__(self, seat: _Optional[int] = ..., claimed: _Optional[int] = ..., correct: _Optional[bool] = ...) -> None: ...

class DealScored(_message.Message):
    __slots__ = ("deal", "last_trick", "thirds", "card_points", "declarations", "points", "totals", "cappotto", "hands", "contract", "soloist", "success", "set_aside")
    DEAL_FIELD_NUMBER: _ClassVar[int]
    LAST_TRICK_FIELD_NUMBER: _ClassVar[int]
    THIRDS_FIELD_NUMBER: _ClassVar[int]
    CARD_POINTS_FIELD_NUMBER: _ClassVar[int]
    DECLARATIONS_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    CAPPOTTO_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_FIELD_NUMBER: _ClassVar[int]
    SOLOIST_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    SET_ASIDE_FIELD_NUMBER: _ClassVar[int]
    deal: int
    last_trick: int
    thirds: _containers.RepeatedScalarFieldContainer[int]
    card_points: _containers.RepeatedScalarFieldContainer[int]
    declarations: _containers.RepeatedScalarFieldContainer[int]
    points: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    cappotto: int
    hands: _containers.RepeatedCompositeFieldContainer[Hand]
    contract: str
    soloist: int
    success: bool
    set_aside: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, deal: _Optional[int] = ..., last_trick: _Optional[int] = ..., thirds: _Optional[_Iterable[int]] = ..., card_points: _Optional[_Iterable[int]] = ..., declarations: _Optional[_Iterable[int]] = ..., points: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ..., cappotto: _Optional[int] = ..., hands: _Optional[_Iterable[_Union[Hand, _Mapping]]] = ..., contract: _Optional[str] = ..., soloist: _Optional[int] = ..., success: _Optional[bool] = ..., set_aside: _Optional[_Iterable[str]] = ...) -> None: ...

class Hand(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, cards: _Optional[_Iterable[str]] = ...) -> None: ...

class GameOver(_message.Message):
    __slots__ = ("game", "termination", "winner", "totals", "forfeit_seat")
    GAME_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_SEAT_FIELD_NUMBER: _ClassVar[int]
    game: int
    termination: str
    winner: int
    totals: _containers.RepeatedScalarFieldContainer[int]
    forfeit_seat: int
    def __init__(self, game: _Optional[int] = ..., termination: _Optional[str] = ..., winner: _Optional[int] = ..., totals: _Optional[_Iterable[int]] = ..., forfeit_seat: _Optional[int] = ...) -> None: ...

class MatchOver(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class ActionRejected(_message.Message):
    __slots__ = ("request_id", "action_id", "reason", "message", "attempts_left")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_LEFT_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action_id: int
    reason: str
    message: str
    attempts_left: int
    def __init__(self, request_id: _Optional[int] = ..., action_id: _Optional[int] = ..., reason: _Optional[str] = ..., message: _Optional[str] = ..., attempts_left: _Optional[int] = ...) -> None: ...

class ErrorEvent(_message.Message):
    __slots__ = ("reason", "message")
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    reason: str
    message: str
    def __init__(self, reason: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("id", "kind", "card", "signal", "declaration", "text", "bid", "cards")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    DECLARATION_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    id: int
    kind: ActionKind
    card: str
    signal: Signal
    declaration: str
    text: str
    bid: str
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[int] = ..., kind: _Optional[_Union[ActionKind, str]] = ..., card: _Optional[str] = ..., signal: _Optional[_Union[Signal, str]] = ..., declaration: _Optional[str] = ..., text: _Optional[str] = ..., bid: _Optional[str] = ..., cards: _Optional[_Iterable[str]] = ...) -> None: ...

class Play(_message.Message):
    __slots__ = ("seat", "action")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    seat: int
    action: Action
    def __init__(self, seat: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("plays", "winner")
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    plays: _containers.RepeatedCompositeFieldContainer[Play]
    winner: int
    def __init__(self, plays: _Optional[_Iterable[_Union[Play, _Mapping]]] = ..., winner: _Optional[int] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("seat", "game", "deal", "dealer", "phase", "hand", "trick", "tricks", "declarations", "captured", "totals", "players", "trump", "sides", "calabresella", "draws", "stock_left", "compact")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    DECLARATIONS_FIELD_NUMBER: _ClassVar[int]
    CAPTURED_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    SIDES_FIELD_NUMBER: _ClassVar[int]
    CALABRESELLA_FIELD_NUMBER: _ClassVar[int]
    DRAWS_FIELD_NUMBER: _ClassVar[int]
    STOCK_LEFT_FIELD_NUMBER: _ClassVar[int]
    COMPACT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    game: int
    deal: int
    dealer: int
    phase: Phase
    hand: _containers.RepeatedScalarFieldContainer[str]
    trick: _containers.RepeatedCompositeFieldContainer[Play]
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    declarations: _containers.RepeatedCompositeFieldContainer[Declared]
    captured: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    players: int
    trump: str
    sides: int
    calabresella: CalabresellaView
    draws: _containers.RepeatedCompositeFieldContainer[Draw]
    stock_left: int
    compact: bool
    def __init__(self, seat: _Optional[int] = ..., game: _Optional[int] = ..., deal: _Optional[int] = ..., dealer: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., hand: _Optional[_Iterable[str]] = ..., trick: _Optional[_Iterable[_Union[Play, _Mapping]]] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., declarations: _Optional[_Iterable[_Union[Declared, _Mapping]]] = ..., captured: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ..., players: _Optional[int] = ..., trump: _Optional[str] = ..., sides: _Optional[int] = ..., calabresella: _Optional[_Union[CalabresellaView, _Mapping]] = ..., draws: _Optional[_Iterable[_Union[Draw, _Mapping]]] = ..., stock_left: _Optional[int] = ..., compact: _Optional[bool] = ...) -> None: ...

class Draw(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

class CalabresellaView(_message.Message):
    __slots__ = ("bids", "contract", "soloist", "called", "called_holder", "called_in_monte", "received", "given", "monte", "split", "split_made", "discards", "seats")
    BIDS_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_FIELD_NUMBER: _ClassVar[int]
    SOLOIST_FIELD_NUMBER: _ClassVar[int]
    CALLED_FIELD_NUMBER: _ClassVar[int]
    CALLED_HOLDER_FIELD_NUMBER: _ClassVar[int]
    CALLED_IN_MONTE_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_FIELD_NUMBER: _ClassVar[int]
    GIVEN_FIELD_NUMBER: _ClassVar[int]
    MONTE_FIELD_NUMBER: _ClassVar[int]
    SPLIT_FIELD_NUMBER: _ClassVar[int]
    SPLIT_MADE_FIELD_NUMBER: _ClassVar[int]
    DISCARDS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    bids: _containers.RepeatedCompositeFieldContainer[Bid]
    contract: str
    soloist: int
    called: str
    called_holder: int
    called_in_monte: bool
    received: _containers.RepeatedScalarFieldContainer[str]
    given: _containers.RepeatedScalarFieldContainer[str]
    monte: _containers.RepeatedScalarFieldContainer[str]
    split: _containers.RepeatedScalarFieldContainer[str]
    split_made: bool
    discards: _containers.RepeatedScalarFieldContainer[str]
    seats: int
    def __init__(self, bids: _Optional[_Iterable[_Union[Bid, _Mapping]]] = ..., contract: _Optional[str] = ..., soloist: _Optional[int] = ..., called: _Optional[str] = ..., called_holder: _Optional[int] = ..., called_in_monte: _Optional[bool] = ..., received: _Optional[_Iterable[str]] = ..., given: _Optional[_Iterable[str]] = ..., monte: _Optional[_Iterable[str]] = ..., split: _Optional[_Iterable[str]] = ..., split_made: _Optional[bool] = ..., discards: _Optional[_Iterable[str]] = ..., seats: _Optional[int] = ...) -> None: ...

class Bid(_message.Message):
    __slots__ = ("seat", "bid")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bid: str
    def __init__(self, seat: _Optional[int] = ..., bid: _Optional[str] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("table_id",)
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    def __init__(self, table_id: _Optional[str] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("table_id", "event")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    event: Event
    def __init__(self, table_id: _Optional[str] = ..., event: _Optional[_Union[Event, _Mapping]] = ...) -> None: ...

class ListTablesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListTablesResponse(_message.Message):
    __slots__ = ("tables",)
    TABLES_FIELD_NUMBER: _ClassVar[int]
    tables: _containers.RepeatedCompositeFieldContainer[TableInfo]
    def __init__(self, tables: _Optional[_Iterable[_Union[TableInfo, _Mapping]]] = ...) -> None: ...

class TableInfo(_message.Message):
    __slots__ = ("table_id", "match_id", "game", "entries")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    match_id: str
    game: int
    entries: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, table_id: _Optional[str] = ..., match_id: _Optional[str] = ..., game: _Optional[int] = ..., entries: _Optional[_Iterable[str]] = ...) -> None: ...

class CreateMatchRequest(_message.Message):
    __slots__ = ("admin_token", "entries", "game", "rules", "seed", "deals", "sets", "deadline_ms", "connect_timeout_ms")
    ADMIN_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    SETS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    CONNECT_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    admin_token: str
    entries: _containers.RepeatedScalarFieldContainer[str]
    game: str
    rules: _containers.RepeatedScalarFieldContainer[str]
    seed: str
    deals: int
    sets: int
    deadline_ms: int
    connect_timeout_ms: int
    def __init__(self, admin_token: _Optional[str] = ..., entries: _Optional[_Iterable[str]] = ..., game: _Optional[str] = ..., rules: _Optional[_Iterable[str]] = ..., seed: _Optional[str] = ..., deals: _Optional[int] = ..., sets: _Optional[int] = ..., deadline_ms: _Optional[int] = ..., connect_timeout_ms: _Optional[int] = ...) -> None: ...

class SeatTicket(_message.Message):
    __slots__ = ("label", "ticket")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    TICKET_FIELD_NUMBER: _ClassVar[int]
    label: str
    ticket: str
    def __init__(self, label: _Optional[str] = ..., ticket: _Optional[str] = ...) -> None: ...

class CreateMatchResponse(_message.Message):
    __slots__ = ("match_id", "tickets", "referee")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TICKETS_FIELD_NUMBER: _ClassVar[int]
    REFEREE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    tickets: _containers.RepeatedCompositeFieldContainer[SeatTicket]
    referee: str
    def __init__(self, match_id: _Optional[str] = ..., tickets: _Optional[_Iterable[_Union[SeatTicket, _Mapping]]] = ..., referee: _Optional[str] = ...) -> None: ...

class GetMatchRequest(_message.Message):
    __slots__ = ("admin_token", "match_id")
    ADMIN_TOKEN_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    admin_token: str
    match_id: str
    def __init__(self, admin_token: _Optional[str] = ..., match_id: _Optional[str] = ...) -> None: ...

class GetMatchResponse(_message.Message):
    __slots__ = ("match_id", "status", "result_json", "error", "sandbox_json", "note")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    SANDBOX_JSON_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    status: str
    result_json: str
    error: str
    sandbox_json: str
    note: str
    def __init__(self, match_id: _Optional[str] = ..., status: _Optional[str] = ..., result_json: _Optional[str] = ..., error: _Optional[str] = ..., sandbox_json: _Optional[str] = ..., note: _Optional[str] = ...) -> None: ...
