//! Compact observations: the SDK's Hello asks for them (`Hello.compact_observations`),
//! and this completes them. A compact observation (`Observation.compact`) holds in
//! `tricks`, `declarations`, `draws` and `calabresella.bids` only what is new since the
//! previous request on the stream; every other field is complete.

use std::mem::take;

use crate::pb::Observation;

/// One stream's last complete observation.
#[derive(Default)]
pub(crate) struct Merger {
    /// The previous request's, once handed back with `keep`.
    last: Option<Observation>,
}

impl Merger {
    /// Makes `obs` complete, in place, moving the lists of the kept observation into it
    /// (hand it back with `keep` once the bot has seen it). An error, naming the game and
    /// deal, if `obs` is compact but no observation of the same game and deal was kept.
    /// The complete observation has `compact` false, as bots saw before compact ones.
    pub(crate) fn complete(&mut self, obs: Option<&mut Observation>) -> Result<(), String> {
        let last = self.last.take();
        let Some(obs) = obs.filter(|obs| obs.compact) else {
            return Ok(());
        };
        let Some(mut last) = last else {
            return Err(format!(
                "the referee sent a compact observation (game {}, deal {}) as the first of \
                 this stream's deal",
                obs.game, obs.deal
            ));
        };
        if (last.game, last.deal) != (obs.game, obs.deal) {
            return Err(format!(
                "the referee sent a compact observation of game {}, deal {} after one of \
                 game {}, deal {}",
                obs.game, obs.deal, last.game, last.deal
            ));
        }
        obs.tricks = joined(take(&mut last.tricks), take(&mut obs.tricks));
        obs.declarations = joined(take(&mut last.declarations), take(&mut obs.declarations));
        obs.draws = joined(take(&mut last.draws), take(&mut obs.draws));
        if let Some(view) = obs.calabresella.as_mut() {
            let old = last.calabresella.map(|view| view.bids).unwrap_or_default();
            view.bids = joined(old, take(&mut view.bids));
        }
        obs.compact = false;
        Ok(())
    }

    /// Keeps the observation `complete` completed, for the next request's.
    pub(crate) fn keep(&mut self, obs: Option<Observation>) {
        self.last = obs;
    }
}

fn joined<T>(mut old: Vec<T>, new: Vec<T>) -> Vec<T> {
    old.extend(new);
    old
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb::{Action, ActionKind, Bid, CalabresellaView, Declared, Draw, Play, Trick};
    use prost::Message;
    use std::collections::HashMap;

    /// Standard base64 with padding (RFC 4648), as the fixture has it.
    fn base64(text: &str) -> Vec<u8> {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let (mut out, mut bits, mut count) = (Vec::new(), 0u32, 0);
        for byte in text.bytes().filter(|&b| b != b'=') {
            let value = ALPHABET
                .iter()
                .position(|&c| c == byte)
                .unwrap_or_else(|| panic!("not base64: {byte:#x} in {text:?}"));
            bits = (bits << 6) | value as u32;
            count += 6;
            if count >= 8 {
                count -= 8;
                out.push((bits >> count) as u8);
                bits &= (1 << count) - 1;
            }
        }
        out
    }

    /// The value of `"name": ...` in a fixture line (a number or a string without escapes).
    fn field<'a>(line: &'a str, name: &str) -> &'a str {
        let pattern = format!("\"{name}\":");
        let start = line
            .find(&pattern)
            .unwrap_or_else(|| panic!("no {name} in {line}"))
            + pattern.len();
        let rest = line[start..].trim_start();
        match rest.strip_prefix('"') {
            Some(text) => &text[..text.find('"').expect("an unterminated string")],
            None => rest[..rest.find([',', '}']).expect("a number")].trim(),
        }
    }

    fn observation(text: &str) -> Observation {
        Observation::decode(base64(text).as_slice()).expect("an Observation")
    }

    /// The fixture of tests/fixtures/compact (its README): merging each slot's compact
    /// observations in order gives exactly the complete ones a stream without them got.
    #[test]
    fn merging_the_fixtures_gives_the_full_observations() {
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/compact");
        let mut files: Vec<_> = std::fs::read_dir(folder)
            .unwrap_or_else(|e| panic!("{folder}: {e}"))
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no fixture files in {folder}");
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let mut slots: HashMap<String, Merger> = HashMap::new();
            let mut compacts = 0;
            for (n, line) in text.lines().enumerate() {
                let place = format!(
                    "{} line {} (slot {}, request {})",
                    file.display(),
                    n + 1,
                    field(line, "slot"),
                    field(line, "request_id")
                );
                let mut obs = observation(field(line, "compact"));
                compacts += usize::from(obs.compact);
                let seen = slots.entry(field(line, "slot").to_string()).or_default();
                seen.complete(Some(&mut obs))
                    .unwrap_or_else(|e| panic!("{place}: {e}"));
                assert_eq!(obs, observation(field(line, "full")), "{place}");
                seen.keep(Some(obs));
            }
            assert!(compacts > 0, "{}: no compact observation", file.display());
        }
    }

    fn trick(winner: u32, cards: &[&str]) -> Trick {
        let plays = cards.iter().enumerate().map(|(seat, card)| Play {
            seat: seat as u32,
            action: Some(Action {
                kind: ActionKind::Play as i32,
                card: card.to_string(),
                text: card.to_string(),
                ..Default::default()
            }),
        });
        Trick {
            plays: plays.collect(),
            winner,
        }
    }

    fn bid(seat: u32, bid: &str) -> Bid {
        Bid {
            seat,
            bid: bid.to_string(),
        }
    }

    fn declared(seat: u32, declaration: &str) -> Declared {
        Declared {
            seat,
            declaration: declaration.to_string(),
            ..Default::default()
        }
    }

    fn draw(seat: u32, card: &str) -> Draw {
        Draw {
            seat,
            card: card.to_string(),
        }
    }

    fn hand(cards: &[&str]) -> Vec<String> {
        cards.iter().map(|c| c.to_string()).collect()
    }

    /// A full observation, a compact one adding to each list, then the first request of
    /// the next deal (compact false), which replaces everything.
    #[test]
    fn compact_appends_and_a_new_deal_replaces_everything() {
        let first = Observation {
            game: 1,
            deal: 2,
            hand: hand(&["3D", "4C"]),
            tricks: vec![trick(0, &["AD", "5D", "6D"])],
            declarations: vec![declared(1, "napoli-D")],
            draws: vec![draw(0, "7S")],
            calabresella: Some(CalabresellaView {
                bids: vec![bid(0, "pass")],
                soloist: -1,
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut compact = Observation {
            game: 1,
            deal: 2,
            hand: hand(&["4C"]),
            compact: true,
            tricks: vec![trick(2, &["3D", "KD", "2D"])],
            declarations: vec![declared(2, "buongioco")],
            draws: vec![draw(1, "QS")],
            calabresella: Some(CalabresellaView {
                bids: vec![bid(1, "solo")],
                contract: "solo".into(),
                soloist: 1,
                ..Default::default()
            }),
            ..Default::default()
        };
        let want = Observation {
            game: 1,
            deal: 2,
            hand: hand(&["4C"]),
            tricks: vec![trick(0, &["AD", "5D", "6D"]), trick(2, &["3D", "KD", "2D"])],
            declarations: vec![declared(1, "napoli-D"), declared(2, "buongioco")],
            draws: vec![draw(0, "7S"), draw(1, "QS")],
            calabresella: Some(CalabresellaView {
                bids: vec![bid(0, "pass"), bid(1, "solo")],
                contract: "solo".into(),
                soloist: 1,
                ..Default::default()
            }),
            ..Default::default()
        };
        let new_deal = Observation {
            game: 1,
            deal: 3,
            hand: hand(&["2B"]),
            calabresella: Some(CalabresellaView {
                soloist: -1,
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut seen = Merger::default();
        let mut obs = first;
        seen.complete(Some(&mut obs)).unwrap();
        seen.keep(Some(obs));
        seen.complete(Some(&mut compact)).unwrap();
        assert_eq!(compact, want);
        seen.keep(Some(compact));
        let mut obs = new_deal.clone();
        seen.complete(Some(&mut obs)).unwrap();
        assert_eq!(obs, new_deal);
        seen.keep(Some(obs));
        // A compact one after it adds to the new deal only.
        let mut next = Observation {
            game: 1,
            deal: 3,
            compact: true,
            tricks: vec![trick(1, &["2B", "3B", "4B"])],
            ..Default::default()
        };
        seen.complete(Some(&mut next)).unwrap();
        assert_eq!(next.tricks, vec![trick(1, &["2B", "3B", "4B"])]);
        assert!(!next.compact);
    }

    #[test]
    fn compact_without_its_deal_is_refused() {
        let mut seen = Merger::default();
        let compact = |deal| Observation {
            game: 1,
            deal,
            compact: true,
            ..Default::default()
        };
        assert_eq!(
            seen.complete(Some(&mut compact(1))),
            Err(
                "the referee sent a compact observation (game 1, deal 1) as the first of \
                 this stream's deal"
                    .to_string()
            )
        );
        let mut full = Observation {
            game: 1,
            deal: 1,
            ..Default::default()
        };
        seen.complete(Some(&mut full)).unwrap();
        seen.keep(Some(full));
        assert_eq!(
            seen.complete(Some(&mut compact(2))),
            Err(
                "the referee sent a compact observation of game 1, deal 2 after one of \
                 game 1, deal 1"
                    .to_string()
            )
        );
    }
}
