//! Cards as the protocol writes them: rank then suit, e.g. `"3D"`, `"QB"`, `"AS"`.
//!
//! Ranks, strongest first in Tressette: `3 2 A K Q J 7 6 5 4` (Q the cavallo, J the fante).
//! Suits: `D C S B` (denari, coppe, spade, bastoni). Tressette has no trumps: only a card of
//! the suit led can win a trick. Briscola has its own order, `A 3 K Q J 7 6 5 4 2`, its own
//! points, and a trump suit (the `briscola_` methods).

use std::fmt;
use std::str::FromStr;

/// Rank letters, strongest first.
pub const RANKS: &str = "32AKQJ7654";
/// Suit letters, in deck order.
pub const SUITS: &str = "DCSB";

const POINTS_BY_RANK: [u8; 10] = [1, 1, 3, 1, 1, 1, 0, 0, 0, 0];
/// Briscola's strength and whole points of each rank, in `RANKS` order.
const BRISCOLA_STRENGTH_BY_RANK: [u8; 10] = [8, 0, 9, 7, 6, 5, 4, 3, 2, 1];
const BRISCOLA_POINTS_BY_RANK: [u8; 10] = [10, 0, 11, 4, 3, 2, 0, 0, 0, 0];

/// One of the four suits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suit {
    /// `D`
    Denari,
    /// `C`
    Coppe,
    /// `S`
    Spade,
    /// `B`
    Bastoni,
}

impl Suit {
    /// All suits in deck order.
    pub const ALL: [Suit; 4] = [Suit::Denari, Suit::Coppe, Suit::Spade, Suit::Bastoni];

    /// The suit's letter: `D`, `C`, `S` or `B`.
    pub fn letter(self) -> char {
        SUITS.as_bytes()[self as usize] as char
    }

    /// The suit for a letter (either case).
    pub fn from_letter(letter: char) -> Option<Suit> {
        let index = SUITS.find(letter.to_ascii_uppercase())?;
        Some(Suit::ALL[index])
    }
}

impl fmt::Display for Suit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// A card of the 40-card Italian deck.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Card {
    rank: u8,
    suit: Suit,
}

impl Card {
    /// Parses `"3D"`, `"qb"`, ` "AS" ` (case and surrounding spaces ignored).
    pub fn parse(text: &str) -> Option<Card> {
        let mut chars = text.trim().chars();
        let (r, s) = (chars.next()?, chars.next()?);
        if chars.next().is_some() {
            return None;
        }
        let rank = RANKS.find(r.to_ascii_uppercase())? as u8;
        Some(Card {
            rank,
            suit: Suit::from_letter(s)?,
        })
    }

    /// The card with rank index `rank` (0 for the 3 .. 9 for the 4) of `suit`.
    pub fn new(rank: u8, suit: Suit) -> Option<Card> {
        (rank < 10).then_some(Card { rank, suit })
    }

    /// Rank index: 0 for the 3 (strongest) to 9 for the 4 (weakest).
    pub fn rank_index(self) -> u8 {
        self.rank
    }

    /// The rank letter: one of `3 2 A K Q J 7 6 5 4`.
    pub fn rank_letter(self) -> char {
        RANKS.as_bytes()[self.rank as usize] as char
    }

    pub fn suit(self) -> Suit {
        self.suit
    }

    /// 9 for the 3 down to 0 for the 4: higher is stronger in Tressette.
    pub fn strength(self) -> u8 {
        9 - self.rank
    }

    /// Tressette value in thirds of a point: the ace 3; 3, 2, K, Q, J 1; 7, 6, 5, 4 nothing.
    pub fn points_in_thirds(self) -> u8 {
        POINTS_BY_RANK[self.rank as usize]
    }

    /// The engine's card id, `suit * 10 + rank index` (`3D` = 0, `4B` = 39).
    pub fn id(self) -> u8 {
        self.suit as u8 * 10 + self.rank
    }

    /// Whether this card beats `other` in a Tressette trick led in `led`.
    pub fn beats(self, other: Card, led: Suit) -> bool {
        self.suit == led && (other.suit != led || self.rank < other.rank)
    }

    /// 9 for the ace down to 0 for the 2: higher is stronger in Briscola.
    pub fn briscola_strength(self) -> u8 {
        BRISCOLA_STRENGTH_BY_RANK[self.rank as usize]
    }

    /// Briscola value in whole points: the ace 11, the 3 10, K 4, Q 3, J 2, the rest nothing.
    pub fn briscola_points(self) -> u8 {
        BRISCOLA_POINTS_BY_RANK[self.rank as usize]
    }

    /// Whether this card beats `other`, the best so far of a Briscola trick led in `led`
    /// with trump suit `trump`: the higher trump wins, else the higher card of the suit led.
    pub fn briscola_beats(self, other: Card, led: Suit, trump: Suit) -> bool {
        let stronger = self.briscola_strength() > other.briscola_strength();
        if self.suit == trump {
            other.suit != trump || stronger
        } else {
            other.suit != trump && self.suit == led && (other.suit != led || stronger)
        }
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.rank_letter(), self.suit.letter())
    }
}

/// The error of `"xx".parse::<Card>()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadCard(pub String);

impl fmt::Display for BadCard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad card {:?}: write rank ({RANKS}) then suit ({SUITS}), e.g. 3D",
            self.0
        )
    }
}

impl std::error::Error for BadCard {}

impl FromStr for Card {
    type Err = BadCard;
    fn from_str(s: &str) -> Result<Card, BadCard> {
        Card::parse(s).ok_or_else(|| BadCard(s.to_string()))
    }
}

/// The card that wins among `cards`, the first card's suit being the suit led; None if empty.
pub fn winning_card(cards: impl IntoIterator<Item = Card>) -> Option<Card> {
    let mut iter = cards.into_iter();
    let first = iter.next()?;
    Some(iter.fold(
        first,
        |best, c| if c.beats(best, first.suit) { c } else { best },
    ))
}

/// The card that wins among `cards` in Briscola, the first card's suit being the suit led
/// and `trump` the trump suit; None if empty.
pub fn briscola_winning_card(cards: impl IntoIterator<Item = Card>, trump: Suit) -> Option<Card> {
    let mut iter = cards.into_iter();
    let first = iter.next()?;
    Some(iter.fold(first, |best, c| {
        if c.briscola_beats(best, first.suit, trump) {
            c
        } else {
            best
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(text: &str) -> Card {
        text.parse().unwrap()
    }

    #[test]
    fn parse_and_show() {
        assert_eq!(c("qb").to_string(), "QB");
        assert_eq!(c(" 3D ").id(), 0);
        assert_eq!(c("4B").id(), 39);
        assert!(
            Card::parse("1D").is_none()
                && Card::parse("3X").is_none()
                && Card::parse("3DD").is_none()
        );
    }

    #[test]
    fn points_and_strength() {
        assert_eq!(c("AS").points_in_thirds(), 3);
        assert_eq!(c("KS").points_in_thirds(), 1);
        assert_eq!(c("7S").points_in_thirds(), 0);
        assert!(c("3C").strength() > c("2C").strength());
        assert!(c("2C").strength() > c("AC").strength());
    }

    #[test]
    fn tricks() {
        assert!(c("2D").beats(c("AD"), Suit::Denari));
        assert!(!c("3C").beats(c("4D"), Suit::Denari));
        assert_eq!(
            winning_card([c("5S"), c("3D"), c("KS"), c("4S")]),
            Some(c("KS"))
        );
        assert_eq!(winning_card([]), None);
    }

    #[test]
    fn briscola() {
        let strengths: Vec<u8> = ["AD", "3D", "KD", "QD", "JD", "7D", "6D", "5D", "4D", "2D"]
            .iter()
            .map(|t| c(t).briscola_strength())
            .collect();
        assert_eq!(strengths, [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
        let points: u32 = SUITS
            .chars()
            .flat_map(|s| RANKS.chars().map(move |r| format!("{r}{s}")))
            .map(|t| u32::from(c(&t).briscola_points()))
            .sum();
        assert_eq!(points, 120);
        let (d, b) = (Suit::Denari, Suit::Bastoni);
        assert!(c("AD").briscola_beats(c("3D"), d, b));
        assert!(c("2B").briscola_beats(c("AD"), d, b));
        assert!(!c("AD").briscola_beats(c("2B"), d, b));
        assert!(!c("AS").briscola_beats(c("4D"), d, b));
        assert_eq!(
            briscola_winning_card([c("KD"), c("2B"), c("AD"), c("4B")], b),
            Some(c("4B"))
        );
        assert_eq!(
            briscola_winning_card([c("KD"), c("AS"), c("AD")], b),
            Some(c("AD"))
        );
    }
}
