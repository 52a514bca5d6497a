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
   * This stream's seed text for the bot's randomness: TAVOLO_SEED (default: the ticket),
   * with "/<index>" appended when the process plays several tickets (`streamSeed`). See
   * `seededRandom`.
   */
  seed: string;
  /**
   * The seed text of game `game` (`GameStarted.game`) of this stream: `${seed}/game/${game}`
   * (`gameSeed`). Seed a fresh generator with it when GameStarted arrives, and a match
   * resumed at that game by a new process replays it exactly.
   */
  gameSeed(game: number): string;
}

/**
 * Makes a fresh bot for each ticket the process plays: `play` and `run` call it once per
 * ticket, before any stream opens, and the bot keeps its ticket's stream (also across
 * reconnections).
 */
export type BotFactory = (info: StreamInfo) => Bot;

/**
 * The seed text of stream `index` (from 0) of `count`: `seed` (TAVOLO_SEED; "" or undefined
 * means unset, and then the stream's own ticket is the seed), with "/<index>" appended when
 * the process plays several tickets.
 */
export function streamSeed(seed: string | undefined, ticket: string, index = 0, count = 1): string {
  const text = seed || ticket;
  return count > 1 ? `${text}/${index}` : text;
}

/**
 * The seed text of game `game` (`GameStarted.game`) of a stream seeded `seed`:
 * `${seed}/game/${game}`. Seeding each game afresh from it makes a match resumed at a later
 * game (by a new process) play that game exactly as an uninterrupted run would.
 */
export function gameSeed(seed: string, game: number): string {
  return `${seed}/game/${game}`;
}

/** What the runner gives a factory for stream `index` of `count`. */
export function streamInfo(settingsSeed: string, ticket: string, index: number, count: number): StreamInfo {
  const seed = streamSeed(settingsSeed, ticket, index, count);
  return { ticket, index, count, seed, gameSeed: (game: number) => gameSeed(seed, game) };
}

/** The name of the event's kind ("cardPlayed", "gameOver", ...); undefined for a kind this SDK does not know. */
export function eventKind(event: Event): keyof Event | undefined {
  for (const key of Object.keys(event) as (keyof Event)[]) {
    if (event[key] !== undefined) return key;
  }
  return undefined;
}
