/**
 * Card text helpers: ranks, suits, strength, points and who beats whom.
 *
 * A card is text, rank then suit: "3D", "QB", "AS". Ranks, strongest first in Tressette, are
 * `3 2 A K Q J 7 6 5 4` (Q the cavallo, J the fante); suits are `D C S B` (denari, coppe,
 * spade, bastoni). Tressette has no trumps: only a card of the suit led can win a trick.
 * Briscola has its own order (`A 3 K Q J 7 6 5 4 2`), its own points and a trump suit: the
 * `briscola` functions.
 */

/** Rank letters, strongest first. */
export const RANKS = "32AKQJ7654";

/** Suit letters: denari, coppe, spade, bastoni. */
export const SUITS = "DCSB";

/** The 40 cards, suit by suit, strongest first within a suit (the engine's card-id order). */
export const CARDS: readonly string[] = Object.freeze(
  [...SUITS].flatMap((suit) => [...RANKS].map((rank) => rank + suit)),
);

/** Signal names by `Signal` enum value, as action texts write them; "" for no signal. */
export const SIGNAL_NAMES: readonly string[] = Object.freeze([
  "",
  "busso",
  "volo",
  "striscio",
  "ribusso",
  "striscio-lungo",
  "striscio-corto",
]);

const POINTS_BY_RANK = [1, 1, 3, 1, 1, 1, 0, 0, 0, 0];
/** Briscola's strength and whole points of each rank, in RANKS order. */
const BRISCOLA_STRENGTH_BY_RANK = [8, 0, 9, 7, 6, 5, 4, 3, 2, 1];
const BRISCOLA_POINTS_BY_RANK = [10, 0, 11, 4, 3, 2, 0, 0, 0, 0];

/** The card as CARDS spells it; throws for text that is no card. */
function canonical(card: string): string {
  const text = typeof card === "string" ? card.trim().toUpperCase() : "";
  if (text.length !== 2 || !RANKS.includes(text[0]) || !SUITS.includes(text[1])) {
    throw new Error(`bad card ${JSON.stringify(card)}: write rank (${RANKS}) then suit (${SUITS}), e.g. 3D`);
  }
  return text;
}

/** Whether `text` names a card (case and surrounding spaces ignored). */
export function isCard(text: string): boolean {
  try {
    canonical(text);
    return true;
  } catch {
    return false;
  }
}

/** Rank index: 0 for the 3 (strongest) to 9 for the 4 (weakest). */
export function rankOf(card: string): number {
  return RANKS.indexOf(canonical(card)[0]);
}

/** Suit letter: `suitOf("QB") === "B"`. */
export function suitOf(card: string): string {
  return canonical(card)[1];
}

/** 9 for the 3 down to 0 for the 4: higher is stronger in Tressette. */
export function strength(card: string): number {
  return 9 - rankOf(card);
}

/** Tressette value in thirds of a point: the ace 3; 3, 2, K, Q, J 1; 7, 6, 5, 4 nothing. */
export function pointsInThirds(card: string): number {
  return POINTS_BY_RANK[rankOf(card)];
}

/** Whether card `a` beats card `b` in a Tressette trick led in `ledSuit`. */
export function beats(a: string, b: string, ledSuit: string): boolean {
  if (suitOf(a) !== ledSuit) return false;
  return suitOf(b) !== ledSuit || rankOf(a) < rankOf(b);
}

/**
 * The card that wins among `cards` in Tressette: the strongest of the led suit (the first card's suit
 * unless `ledSuit` is given). Undefined when there is none.
 */
export function winningCard(cards: Iterable<string>, ledSuit?: string): string | undefined {
  let best: string | undefined;
  let led = ledSuit;
  for (const card of cards) {
    if (led === undefined) led = suitOf(card);
    if (suitOf(card) === led && (best === undefined || rankOf(card) < rankOf(best))) best = card;
  }
  return best;
}

/** 9 for the ace down to 0 for the 2: higher is stronger in Briscola. */
export function briscolaStrength(card: string): number {
  return BRISCOLA_STRENGTH_BY_RANK[rankOf(card)];
}

/** Briscola value in whole points: the ace 11, the 3 10, K 4, Q 3, J 2, the rest nothing. */
export function briscolaPoints(card: string): number {
  return BRISCOLA_POINTS_BY_RANK[rankOf(card)];
}

/**
 * Whether card `a` beats card `b`, the best so far of a Briscola trick led in `ledSuit` with
 * trump suit `trump`: the higher trump wins, else the higher card of the suit led.
 */
export function briscolaBeats(a: string, b: string, ledSuit: string, trump: string): boolean {
  const stronger = briscolaStrength(a) > briscolaStrength(b);
  if (suitOf(a) === trump) return suitOf(b) !== trump || stronger;
  return suitOf(b) !== trump && suitOf(a) === ledSuit && (suitOf(b) !== ledSuit || stronger);
}

/**
 * The card that wins among `cards` in Briscola, the first card's suit being the suit led and
 * `trump` the trump suit. Undefined when there is none.
 */
export function briscolaWinningCard(cards: Iterable<string>, trump: string): string | undefined {
  let best: string | undefined;
  let led: string | undefined;
  for (const card of cards) {
    led ??= suitOf(card);
    if (best === undefined || briscolaBeats(card, best, led, trump)) best = card;
  }
  return best;
}

/** Cards in deck order: by suit (D C S B), strongest first within a suit. */
export function sortCards(cards: Iterable<string>): string[] {
  const key = (c: string) => SUITS.indexOf(suitOf(c)) * 10 + rankOf(c);
  return [...cards].sort((a, b) => key(a) - key(b));
}

/** Name of a `Signal` enum value, e.g. "volo"; "" for no signal or an unknown value. */
export function signalName(signal: number): string {
  return SIGNAL_NAMES[signal] ?? "";
}
