//! The example bot: always legal, a little better than random, and deterministic.
//!
//! 1. Declare whatever it may declare, then end the declarations.
//! 2. Never call out, unless that is the only legal action.
//! 3. Play without signals when it can. Leading: the cheapest card (fewest points, then
//!    weakest) of its longest suit. Following: the cheapest card that takes the trick,
//!    else the cheapest card.
//! 4. Otherwise (action kinds it does not know) the first legal action.
//!
//! In Briscola (`MatchStarted.game`) it plays by Briscola's order, points and trumps: it
//! leads its cheapest card, and follows with the cheapest card that takes the trick, else
//! its cheapest card; a trump costs more than any other card.

use std::process::ExitCode;

use tavolo_bot::{Action, ActionKind, Bot, Card, Event, Suit, Turn, briscola_winning_card};

/// The match's game family, from `MatchStarted` (the Briscola families are `briscola` and
/// `briscola-a-quattro`): it decides the cards' order.
#[derive(Default)]
struct ExampleBot {
    game: String,
}

/// Cheapest first: fewest points, then weakest.
fn cost(card: &Card) -> (u8, u8) {
    (card.points_in_thirds(), card.strength())
}

/// Cheapest first in Briscola: any card before a trump, then fewest points, then weakest.
fn briscola_cost(card: &Card, trump: Option<Suit>) -> (bool, u8, u8) {
    (
        Some(card.suit()) == trump,
        card.briscola_points(),
        card.briscola_strength(),
    )
}

/// The Briscola play from `pool`; None if `pool` is empty.
fn choose_briscola(turn: &Turn<'_>, pool: &[(&Action, Card)]) -> Option<u32> {
    let trump = turn.trump().map(|c| c.suit());
    let cost = |(_, card): &&(&Action, Card)| briscola_cost(card, trump);
    let trick: Vec<Card> = turn.trick().iter().map(|t| t.card).collect();
    let winner = match (trick.first(), trump) {
        (Some(led), Some(trump)) => {
            let best = briscola_winning_card(trick.iter().copied(), trump)?;
            pool.iter()
                .filter(|(_, card)| card.briscola_beats(best, led.suit(), trump))
                .min_by_key(cost)
        }
        _ => None,
    };
    winner
        .or_else(|| pool.iter().min_by_key(cost))
        .map(|(action, _)| action.id)
}

impl Bot for ExampleBot {
    fn on_event(&mut self, event: &Event) {
        if let Event::MatchStarted(started) = event {
            self.game = started.game.clone();
        }
    }

    fn choose(&mut self, turn: &Turn<'_>) -> u32 {
        if let Some(declare) = turn.declarations().first() {
            return declare.id;
        }
        if let Some(end) = turn.of_kind(ActionKind::EndDeclarations).first() {
            return end.id;
        }
        let plays = turn.plays();
        let quiet: Vec<(&Action, Card)> = plays
            .iter()
            .copied()
            .filter(|(a, _)| a.signal == 0)
            .collect();
        let pool = if quiet.is_empty() { plays } else { quiet };
        if self.game == "briscola" || self.game == "briscola-a-quattro" {
            if let Some(id) = choose_briscola(turn, &pool) {
                return id;
            }
        }
        if !pool.is_empty() {
            let chosen = match (turn.led_suit(), turn.winning_card()) {
                (Some(led), Some(best)) => pool
                    .iter()
                    .filter(|(_, card)| card.beats(best, led))
                    .min_by_key(|(_, card)| cost(card))
                    .or_else(|| pool.iter().min_by_key(|(_, card)| cost(card))),
                _ => {
                    let hand = turn.hand();
                    let length =
                        |card: &Card| hand.iter().filter(|c| c.suit() == card.suit()).count();
                    // Longest suit first, then the cheapest card in it.
                    pool.iter()
                        .min_by_key(|(_, card)| (usize::MAX - length(card), cost(card)))
                }
            };
            if let Some((action, _)) = chosen {
                return action.id;
            }
        }
        let legal = turn.legal();
        legal
            .iter()
            .find(|a| a.kind != ActionKind::CallOut as i32)
            .or(legal.first())
            .map_or(0, |a| a.id)
    }
}

fn main() -> ExitCode {
    tavolo_bot::run(|_stream| ExampleBot::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tavolo_bot::pb::{DecisionRequest, Observation, Play};

    fn play(id: u32, card: &str, signal: i32) -> Action {
        Action {
            id,
            kind: ActionKind::Play as i32,
            card: card.into(),
            signal,
            text: card.into(),
            ..Default::default()
        }
    }

    fn other(id: u32, kind: ActionKind, text: &str) -> Action {
        Action {
            id,
            kind: kind as i32,
            text: text.into(),
            ..Default::default()
        }
    }

    fn request(hand: &[&str], trick: &[&str], legal: Vec<Action>) -> DecisionRequest {
        let trick = trick
            .iter()
            .enumerate()
            .map(|(i, c)| Play {
                seat: i as u32,
                action: Some(play(0, c, 0)),
            })
            .collect();
        let observation = Observation {
            seat: 3,
            hand: hand.iter().map(|c| c.to_string()).collect(),
            trick,
            players: 4,
            ..Default::default()
        };
        DecisionRequest {
            request_id: 1,
            observation: Some(observation),
            legal_actions: legal,
            ..Default::default()
        }
    }

    fn choose(req: &DecisionRequest) -> u32 {
        ExampleBot::default().choose(&Turn::new(req))
    }

    #[test]
    fn declares_then_ends_declarations() {
        let legal = vec![
            other(300, ActionKind::Declare, "declare napoli-D"),
            other(320, ActionKind::EndDeclarations, "end-declarations"),
        ];
        assert_eq!(choose(&request(&[], &[], legal)), 300);
        let legal = vec![other(320, ActionKind::EndDeclarations, "end-declarations")];
        assert_eq!(choose(&request(&[], &[], legal)), 320);
    }

    #[test]
    fn following_takes_cheaply_or_throws_cheap() {
        // Led 5D, best so far KD: 2D and 3D beat it; 2D is weaker, both 1 third.
        let legal = vec![
            play(0, "3D", 0),
            play(1, "2D", 0),
            play(2, "AD", 0),
            play(9, "4D", 0),
            play(89, "4D", 2),
        ];
        assert_eq!(
            choose(&request(&["3D", "2D", "AD", "4D"], &["5D", "KD"], legal)),
            1
        );
        // Nothing beats 3D: throw the 4D (no points, weakest), not its volo form.
        let legal = vec![play(1, "2D", 0), play(9, "4D", 0), play(89, "4D", 2)];
        assert_eq!(choose(&request(&["2D", "4D"], &["3D"], legal)), 9);
    }

    #[test]
    fn leading_plays_low_from_the_longest_suit() {
        let legal = vec![
            play(0, "3D", 0),
            play(40, "3D", 1),
            play(17, "6C", 0),
            play(14, "QC", 0),
            play(12, "AC", 0),
            play(29, "4S", 0),
        ];
        assert_eq!(
            choose(&request(&["3D", "AC", "QC", "6C", "4S"], &[], legal)),
            17
        );
    }

    #[test]
    fn unknown_kinds_and_call_out() {
        let legal = vec![
            other(321, ActionKind::CallOut, "call-out"),
            other(999, ActionKind::Unspecified, "bid 70"),
        ];
        assert_eq!(choose(&request(&[], &[], legal)), 999);
        let legal = vec![other(321, ActionKind::CallOut, "call-out")];
        assert_eq!(choose(&request(&[], &[], legal)), 321);
    }

    #[test]
    fn briscola_by_its_own_order_and_trumps() {
        let mut bot = ExampleBot {
            game: "briscola-a-quattro".into(),
        };
        let mut briscola = |hand: &[&str], trick: &[&str], legal: Vec<Action>| {
            let mut req = request(hand, trick, legal);
            // Bastoni are trumps.
            req.observation.as_mut().unwrap().trump = "5B".into();
            bot.choose(&Turn::new(&req))
        };
        // Leading: the cheapest card that is not a trump.
        let legal = vec![play(39, "2B", 0), play(5, "JD", 0), play(29, "4S", 0)];
        assert_eq!(briscola(&["2B", "JD", "4S"], &[], legal), 29);
        // Following KD: the 3D takes it more cheaply than the AD, and without a trump.
        let legal = vec![play(0, "3D", 0), play(2, "AD", 0), play(39, "4B", 0)];
        assert_eq!(briscola(&["3D", "AD", "4B"], &["KD"], legal), 0);
        // Following AD: only a trump takes it, the cheapest one.
        let legal = vec![play(0, "3D", 0), play(39, "4B", 0), play(33, "KB", 0)];
        assert_eq!(briscola(&["3D", "4B", "KB"], &["AD"], legal), 39);
        // AD then 3B: nothing takes it; throw the cheapest.
        let legal = vec![play(3, "KD", 0), play(21, "2S", 0), play(39, "4B", 0)];
        assert_eq!(briscola(&["KD", "2S", "4B"], &["AD", "3B"], legal), 21);
    }
}
