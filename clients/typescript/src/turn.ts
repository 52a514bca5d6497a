/** The bot's view of one decision: a thin read-only wrapper around a `DecisionRequest`. */

import { isCard, signalName, suitOf } from "./cards";
import { type Action, ActionKind, type DecisionRequest, Observation } from "./gen/tavolo/v1/referee";

/** One play of the current trick. */
export interface TrickPlay {
  seat: number;
  card: string;
  /** The signal's name ("busso", "volo", ...), "" for none. */
  signal: string;
}

/** The card a play action plays, or undefined for any other action. */
export function cardOf(action: Action | undefined): string | undefined {
  if (!action) return undefined;
  if (action.card) return action.card;
  // A referee may fill only `text` ("AS volo"): the card is its first word then.
  if (action.kind === ActionKind.ACTION_KIND_PLAY || action.kind === ActionKind.ACTION_KIND_UNSPECIFIED) {
    const word = action.text.trim().split(/\s+/)[0] ?? "";
    if (isCard(word)) return word.toUpperCase();
  }
  return undefined;
}

/** Whether the action plays a card. */
export function isPlay(action: Action): boolean {
  if (action.kind === ActionKind.ACTION_KIND_PLAY) return true;
  return action.kind === ActionKind.ACTION_KIND_UNSPECIFIED && cardOf(action) !== undefined;
}

/** Whether the action declares a combination. */
export function isDeclaration(action: Action): boolean {
  return (
    action.kind === ActionKind.ACTION_KIND_DECLARE ||
    (action.kind === ActionKind.ACTION_KIND_UNSPECIFIED && action.text.startsWith("declare "))
  );
}

// Built by the generated code, so a field added to the protocol needs no change here.
const EMPTY_OBSERVATION: Observation = Observation.create();

/** One decision to make: what the seat may know and the legal actions to choose from. */
export class Turn {
  /** The `DecisionRequest` as received (do not modify it). */
  readonly request: DecisionRequest;

  constructor(request: DecisionRequest) {
    this.request = request;
  }

  // -- the request as sent ----------------------------------------------------------------

  /** The id the decision answers; the SDK echoes it for you. */
  get requestId(): bigint {
    return this.request.requestId;
  }

  /** Everything this seat may know of the deal (do not modify it). */
  get observation(): Observation {
    return this.request.observation ?? EMPTY_OBSERVATION;
  }

  /** Every legal action, in the referee's order; `choose` returns one of their ids. */
  get legal(): readonly Action[] {
    return this.request.legalActions;
  }

  /** Milliseconds for this decision, counted from when the referee sent it. */
  get deadlineMs(): number {
    return this.request.deadlineMs;
  }

  /** Time bank left beyond `deadlineMs`, in milliseconds (0 without a time bank). */
  get timeBankMs(): number {
    return this.request.timeBankMs;
  }

  /** Attempts left for this decision, this one included. */
  get attemptsLeft(): number {
    return this.request.attemptsLeft;
  }

  // -- conveniences -----------------------------------------------------------------------

  /** This bot's seat in the current game (seats rotate between games). */
  get seat(): number {
    return this.observation.seat;
  }

  /** Seats at the table: 4, or 3 in tressette a tre. */
  get players(): number {
    return this.observation.players || 4;
  }

  /**
   * The partner's seat, opposite this one; undefined when each seat plays alone (a tre, a due,
   * ciapanò, calabresella). A referee older than the `sides` field sends 0: four are partners.
   */
  get partner(): number | undefined {
    const sides = this.observation.sides;
    return this.players === 4 && (sides === 0 || sides === 2) ? (this.seat + 2) % 4 : undefined;
  }

  /** This seat's unplayed cards, e.g. ["3D", "KS"]. */
  get hand(): string[] {
    return [...this.observation.hand];
  }

  /** The card whose suit is trump (Briscola, Tressette con la briscola); undefined without one. */
  get trump(): string | undefined {
    const trump = this.observation.trump;
    return isCard(trump) ? trump.trim().toUpperCase() : undefined;
  }

  /** The current trick so far, in playing order. */
  get trick(): TrickPlay[] {
    const out: TrickPlay[] = [];
    for (const play of this.observation.trick) {
      const card = cardOf(play.action);
      if (card !== undefined) out.push({ seat: play.seat, card, signal: signalName(play.action?.signal ?? 0) });
    }
    return out;
  }

  /** Suit of the current trick's first card; undefined when nobody has played to it yet. */
  get ledSuit(): string | undefined {
    const first = this.trick[0];
    return first ? suitOf(first.card) : undefined;
  }

  /** Whether this seat plays the first card of the trick now. */
  get isLeading(): boolean {
    return this.observation.trick.length === 0 && this.legal.some(isPlay);
  }

  /** Every card played in this deal so far, completed tricks first, in order. */
  get playedCards(): string[] {
    const plays = [...this.observation.tricks.flatMap((t) => t.plays), ...this.observation.trick];
    return plays.map((p) => cardOf(p.action)).filter((c): c is string => c !== undefined);
  }

  /** The legal actions that play a card (each card once per signal it may carry). */
  plays(): Action[] {
    return this.legal.filter(isPlay);
  }

  /** The legal actions that declare a combination. */
  declarations(): Action[] {
    return this.legal.filter(isDeclaration);
  }

  /** The legal action of this kind, the first one if several; undefined if none. */
  ofKind(kind: ActionKind): Action | undefined {
    return this.legal.find((a) => a.kind === kind);
  }

  /** The legal action whose text is exactly `text` (e.g. "AS volo"); undefined if none. */
  find(text: string): Action | undefined {
    return this.legal.find((a) => a.text === text);
  }

  toString(): string {
    const trick = this.trick.map((p) => `${p.seat}:${p.card}`).join(" ");
    return (
      `Turn(request ${this.requestId}, seat ${this.seat}, hand [${this.hand.join(" ")}], ` +
      `trick [${trick}], legal [${this.legal.map((a) => a.text).join(", ")}])`
    );
  }
}
