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
  /**
   * Every event of the match, in order (Welcome, GameStarted, CardPlayed, ...). KeyAccepted
   * belongs to the key's stream, not to a match: no bot hears it.
   */
  onEvent?(event: Event): void;
  /** Called once, after MatchOver. */
  onMatchOver?(): void;
}

/** What a bot factory learns about the stream it plays. */
export interface StreamInfo {
  /** The ticket this bot plays; "" in key mode. */
  ticket: string;
  /** The entrant key of the stream (TAVOLO_KEY); "" in ticket mode. */
  key: string;
  /** 0 for the first ticket of TAVOLO_TICKET (or the first stream of a key), 1 for the second, ... */
  index: number;
  /** How many streams this process opens: one per ticket, or TAVOLO_STREAMS with a key. */
  count: number;
  /** Key mode: this bot's match is the stream's match number `match` (1, 2, ...); 0 in ticket mode. */
  match: number;
  /** Key mode: the match this bot plays (Welcome.match_id); "" in ticket mode. */
  matchId: string;
  /**
   * The seed text for the bot's randomness (see `seededRandom`). Ticket mode: TAVOLO_SEED
   * (default: the ticket), with "/<index>" appended when the process plays several tickets
   * (`streamSeed`). Key mode: the same with the key in place of the ticket and
   * TAVOLO_STREAMS as the count, then "/match/<match>" (`matchSeed`).
   */
  seed: string;
  /**
   * The seed text of game `game` (`GameStarted.game`) of this bot: `${seed}/game/${game}`
   * (`gameSeed`). Seed a fresh generator with it when GameStarted arrives, and a match
   * resumed at that game by a new process replays it exactly.
   */
  gameSeed(game: number): string;
}

/**
 * Makes a fresh bot for each ticket the process plays, or for each match in key mode.
 * Ticket mode: `play` and `run` call it once per ticket, before any stream opens, and the
 * bot keeps its ticket's stream (also across reconnections). Key mode: each stream calls it
 * at every Welcome that names a new match, and the bot keeps that match (also across
 * reconnections).
 */
export type BotFactory = (info: StreamInfo) => Bot;

/**
 * The seed text of stream `index` (from 0) of `count`: `seed` (TAVOLO_SEED; "" or undefined
 * means unset, and then the stream's own ticket, or key, is the seed), with "/<index>"
 * appended when the process opens several streams.
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

/**
 * The seed text of match `match` (from 1) of a key stream seeded `seed` (`streamSeed` of the
 * key): `${seed}/match/${match}`.
 */
export function matchSeed(seed: string, match: number): string {
  return `${seed}/match/${match}`;
}

function infoWith(seed: string, fields: Omit<StreamInfo, "seed" | "gameSeed">): StreamInfo {
  return { ...fields, seed, gameSeed: (game: number) => gameSeed(seed, game) };
}

/** What the runner gives a factory for ticket `index` of `count`. */
export function streamInfo(settingsSeed: string, ticket: string, index: number, count: number): StreamInfo {
  const seed = streamSeed(settingsSeed, ticket, index, count);
  return infoWith(seed, { ticket, key: "", index, count, match: 0, matchId: "" });
}

/** What the runner gives a factory for match `match` (from 1) of key stream `index` of `count`. */
export function keyMatchInfo(
  settingsSeed: string,
  key: string,
  index: number,
  count: number,
  match: number,
  matchId: string,
): StreamInfo {
  const seed = matchSeed(streamSeed(settingsSeed, key, index, count), match);
  return infoWith(seed, { ticket: "", key, index, count, match, matchId });
}

/** The name of the event's kind ("cardPlayed", "gameOver", ...); undefined for a kind this SDK does not know. */
export function eventKind(event: Event): keyof Event | undefined {
  for (const key of Object.keys(event) as (keyof Event)[]) {
    if (event[key] !== undefined) return key;
  }
  return undefined;
}
