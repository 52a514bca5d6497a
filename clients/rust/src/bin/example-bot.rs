//! The example bot: always legal, a little better than random, and deterministic.
//!
//! 1. Declare whatever it may declare, then end the declarations.
//! 2. Never call out, unless that is the only legal action.
//! 3. Play without signals when it can. Leading: the cheapest card (fewest points, then
//!    weakest) of its longest suit. Following: the cheapest card that takes the trick,
//!    else the cheapest card.
//! 4. Otherwise (action kinds it does not know) the first legal action.

use std::process::ExitCode;

use tavolo_bot::{Action, ActionKind, Bot, Card, Turn};

struct ExampleBot;

/// Cheapest first: fewest points, then weakest.
fn cost(card: &Card) -> (u8, u8) {
    (card.points_in_thirds(), card.strength())
}

impl Bot for ExampleBot {
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
    tavolo_bot::run(|_stream| ExampleBot)
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
        ExampleBot.choose(&Turn::new(req))
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
}
