/** What a bot author implements. */

import type { Event } from "./gen/tavolo/v1/referee";
import type { Turn } from "./turn";

/**
 * A bot: `choose` gets each decision and returns the `id` of one of `turn.legal`.
 * The hooks are optional.
 */
export interface Bot {
  /** The id of one of `turn.legal`. May return a promise; answer well within `turn.deadlineMs`. */
  choose(turn: Turn): number | Promise<number>;
  /** Every event of the match, in order (Welcome, GameStarted, CardPlayed, ...). */
  onEvent?(event: Event): void;
  /** Called once, after MatchOver. */
  onMatchOver?(): void;
}

/** What a bot factory learns about the stream it plays. */
export interface StreamInfo {
  /** The ticket this bot plays. */
  ticket: string;
  /** 0 for the first ticket of TAVOLO_TICKET, 1 for the second, ... */
  index: number;
  /** How many tickets this process plays. */
  count: number;
  /**
   * A seed for the bot's randomness: TAVOLO_SEED (default: the ticket), with "/<index>"
   * appended when the process plays several tickets. See `seededRandom`.
   */
  seed: string;
}

/** Makes a fresh bot for each ticket the process plays. */
export type BotFactory = (info: StreamInfo) => Bot;

/** The name of the event's kind ("cardPlayed", "gameOver", ...); undefined for a kind this SDK does not know. */
export function eventKind(event: Event): keyof Event | undefined {
  for (const key of Object.keys(event) as (keyof Event)[]) {
    if (event[key] !== undefined) return key;
  }
  return undefined;
}
