//! The bot's view of one decision: a read-only wrapper around a `DecisionRequest`.

use std::sync::LazyLock;

use crate::cards::{Card, Suit, winning_card};
use crate::pb::{Action, ActionKind, DecisionRequest, Observation};

static NO_OBSERVATION: LazyLock<Observation> = LazyLock::new(Observation::default);

/// The card a play action plays, or None for any other action.
///
/// Reads `card`, or the first word of `text` ("AS volo") when only the text is filled.
pub fn card_of(action: &Action) -> Option<Card> {
    if !action.card.is_empty() {
        return Card::parse(&action.card);
    }
    if action.kind == ActionKind::Play as i32 || action.kind == ActionKind::Unspecified as i32 {
        return action.text.split_whitespace().next().and_then(Card::parse);
    }
    None
}

/// Whether the action plays a card.
pub fn is_play(action: &Action) -> bool {
    action.kind == ActionKind::Play as i32
        || (action.kind == ActionKind::Unspecified as i32 && card_of(action).is_some())
}

/// One card of the current trick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrickCard {
    pub seat: u32,
    pub card: Card,
    /// The `Signal` enum value; 0 for none.
    pub signal: i32,
}

/// One decision to make: what the seat may know and the legal actions to choose from.
#[derive(Clone, Copy, Debug)]
pub struct Turn<'a> {
    request: &'a DecisionRequest,
}

impl<'a> Turn<'a> {
    pub fn new(request: &'a DecisionRequest) -> Turn<'a> {
        Turn { request }
    }

    /// The request as the referee sent it.
    pub fn request(&self) -> &'a DecisionRequest {
        self.request
    }

    /// Everything this seat may know of the deal (an empty one if the referee sent none).
    pub fn observation(&self) -> &'a Observation {
        self.request.observation.as_ref().unwrap_or(&NO_OBSERVATION)
    }

    /// The id this decision answers; the SDK echoes it for you.
    pub fn request_id(&self) -> u64 {
        self.request.request_id
    }

    /// Milliseconds for this decision, counted from when the referee sent it.
    pub fn deadline_ms(&self) -> u32 {
        self.request.deadline_ms
    }

    /// Time bank left beyond `deadline_ms` (0 without a time bank).
    pub fn time_bank_ms(&self) -> u32 {
        self.request.time_bank_ms
    }

    /// Attempts left for this decision, this one included.
    pub fn attempts_left(&self) -> u32 {
        self.request.attempts_left
    }

    /// Every legal action, in the referee's order; `choose` returns one of their ids.
    pub fn legal(&self) -> &'a [Action] {
        &self.request.legal_actions
    }

    /// The legal actions of one kind.
    pub fn of_kind(&self, kind: ActionKind) -> Vec<&'a Action> {
        self.legal()
            .iter()
            .filter(|a| a.kind == kind as i32)
            .collect()
    }

    /// The legal plays with their cards (a card appears once per signal it may carry).
    pub fn plays(&self) -> Vec<(&'a Action, Card)> {
        self.legal()
            .iter()
            .filter(|a| is_play(a))
            .filter_map(|a| Some((a, card_of(a)?)))
            .collect()
    }

    /// The legal declarations.
    pub fn declarations(&self) -> Vec<&'a Action> {
        self.of_kind(ActionKind::Declare)
    }

    /// The legal action whose text is exactly `text` ("AS volo", "end-declarations").
    pub fn find(&self, text: &str) -> Option<&'a Action> {
        self.legal().iter().find(|a| a.text == text)
    }

    /// This game's seat (seats rotate between games).
    pub fn seat(&self) -> u32 {
        self.observation().seat
    }

    /// 4 or 3.
    pub fn players(&self) -> u32 {
        self.observation().players
    }

    /// The partner's seat; None when each seat plays alone (a tre, a due, ciapanò,
    /// calabresella). A referee older than the `sides` field sends 0: four seats are partners.
    pub fn partner(&self) -> Option<u32> {
        let sides = self.observation().sides;
        (self.players() == 4 && (sides == 0 || sides == 2)).then(|| (self.seat() + 2) % 4)
    }

    /// The seat's unplayed cards.
    pub fn hand(&self) -> Vec<Card> {
        self.observation()
            .hand
            .iter()
            .filter_map(|c| Card::parse(c))
            .collect()
    }

    /// The card whose suit is trump (Briscola, Tressette con la briscola); None without one.
    pub fn trump(&self) -> Option<Card> {
        Card::parse(&self.observation().trump)
    }

    /// The current trick so far, in playing order.
    pub fn trick(&self) -> Vec<TrickCard> {
        self.observation()
            .trick
            .iter()
            .filter_map(|p| {
                let action = p.action.as_ref()?;
                Some(TrickCard {
                    seat: p.seat,
                    card: card_of(action)?,
                    signal: action.signal,
                })
            })
            .collect()
    }

    /// Whether this seat leads the trick.
    pub fn is_leading(&self) -> bool {
        self.trick().is_empty()
    }

    /// The suit led in the current trick; None when leading.
    pub fn led_suit(&self) -> Option<Suit> {
        self.trick().first().map(|t| t.card.suit())
    }

    /// The card winning the current trick so far in Tressette (no trumps); None when leading.
    pub fn winning_card(&self) -> Option<Card> {
        winning_card(self.trick().iter().map(|t| t.card))
    }
}
