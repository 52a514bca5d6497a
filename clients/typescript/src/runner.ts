/**
 * Playing tickets or an entrant key: one gRPC stream per ticket (or TAVOLO_STREAMS streams
 * with a key), reconnection, and the process exit code.
 *
 * Environment (read unless `RunOptions` says otherwise):
 * - TAVOLO_REFEREE: the referee's host:port, or unix:/path of a Unix-domain socket (also
 *   unix:///path), as the referee gives every bot it starts.
 * - TAVOLO_TICKET: one ticket, or several separated by commas (one stream each, concurrently).
 * - TAVOLO_KEY: an entrant key instead of tickets: each stream is seated in the entrant's
 *   matches one after the other, with a fresh bot for each match, until the referee ends it.
 * - TAVOLO_STREAMS: how many streams to open with the key (2).
 * - TAVOLO_TLS_CA: a PEM file of the root certificate; unset means plaintext.
 * - TAVOLO_RECONNECT_SECONDS: how long to keep reconnecting after the stream breaks (10).
 * - TAVOLO_SEED: seed text for the bot's randomness (default: the ticket, or the key).
 *
 * A refusal that trying again cannot change ends the stream at once: ticket_used (the match
 * of the ticket is over), unknown_ticket, wrong_socket, process_gone, and every other status
 * that is the referee's answer. ALREADY_EXISTS seat_taken (another connection still holds
 * the seat, as right after a drop) is retried within TAVOLO_RECONNECT_SECONDS, like a broken
 * connection. With a key, unknown_key and key_revoked are final too. Without TAVOLO_TLS_CA, a
 * host:port referee that closes the connection before a word was said TLS_EXPECTED_AFTER (3)
 * attempts in a row serves TLS: that ends the stream too, with a line naming TAVOLO_TLS_CA.
 */

import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { credentials, status as Code, type ClientDuplexStream, type StatusObject } from "@grpc/grpc-js";
import { type Bot, type BotFactory, keyMatchInfo, streamInfo } from "./bot";
import { CompactError, Merger } from "./compact";
import {
  type Decision,
  type Event,
  type KeyAccepted,
  type PlayRequest,
  type PlayResponse,
  RefereeServiceClient,
} from "./gen/tavolo/v1/referee";
import { Turn } from "./turn";

/** The protocol version this SDK speaks (Hello.protocolVersion). */
export const PROTOCOL_VERSION = 1;

/** Every stream ended after MatchOver (with a key: every stream ended with status OK). */
export const EXIT_OK = 0;
/** A stream failed: refused by the referee, connection lost, or the bot threw. */
export const EXIT_FAILED = 1;
/** The settings are missing or wrong; nothing was played. */
export const EXIT_USAGE = 2;

const DEFAULT_RECONNECT_SECONDS = 10;
const DEFAULT_KEY_STREAMS = 2;
const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 1000;
// Attempts in a row closed at once before a bot without TLS is told the referee serves TLS:
// one such close also happens when a referee goes down in the middle of a connection, as a
// restarting tournament runner does. Three in a row take about 0.3 s with the usual backoff.
export const TLS_EXPECTED_AFTER = 3;

// A broken connection or a restarting referee: worth reconnecting. Any other status is the
// referee's answer, and reconnecting would get the same one.
const TRANSIENT = new Set<number>([Code.UNAVAILABLE, Code.CANCELLED, Code.INTERNAL, Code.ABORTED]);

// ALREADY_EXISTS with this reason word: another connection holds the seat now, which a drop
// the referee has not noticed yet explains; retried like a transient status. ticket_used
// (the match is over) and every other reason are final.
const SEAT_TAKEN = "seat_taken";

// What the reason word that starts a status's details means.
const REASON_HINTS: Partial<Record<string, string>> = {
  ticket_used: "the match of this ticket is over",
  [SEAT_TAKEN]: "another connection is playing this ticket",
  unknown_ticket: "the referee does not know this ticket",
  wrong_socket: "this ticket works only on the socket the referee gave its bot",
  process_gone: "the bot process this ticket was made for has ended",
  protocol_version: `this SDK speaks protocol version ${PROTOCOL_VERSION}`,
  unknown_key: "the referee knows no entrant with this key",
  key_revoked: "the organiser revoked this key",
};

const TICKET_HINTS: Partial<Record<number, string>> = {
  [Code.UNAUTHENTICATED]: "the referee does not know this ticket",
  [Code.ALREADY_EXISTS]: "another connection plays this ticket, or its match is over",
  [Code.PERMISSION_DENIED]: "the referee does not accept this ticket here",
  [Code.INVALID_ARGUMENT]: "the referee refused a message of this bot",
  [Code.FAILED_PRECONDITION]: "the referee cannot play this ticket now",
  [Code.RESOURCE_EXHAUSTED]: "the referee is over a limit",
};

const KEY_HINTS: Partial<Record<number, string>> = {
  [Code.UNAUTHENTICATED]: "the referee knows no entrant with this key",
  [Code.ALREADY_EXISTS]: "another connection holds a seat of this key",
  [Code.PERMISSION_DENIED]: "the referee does not accept this key here",
  [Code.INVALID_ARGUMENT]: "the referee refused a message of this bot",
  [Code.FAILED_PRECONDITION]: "the referee cannot play this key now",
  [Code.RESOURCE_EXHAUSTED]: "the referee is over a limit",
};

// The channel's own reconnection backoff must not be slower than ours: a channel in backoff
// fails every call at once.
const CHANNEL_OPTIONS = {
  "grpc.initial_reconnect_backoff_ms": FIRST_DELAY_MS,
  "grpc.max_reconnect_backoff_ms": MAX_DELAY_MS,
};

/** Missing or malformed settings. */
export class ConfigError extends Error {}

/** Where to connect and what to play. */
export interface Settings {
  /** host:port, or unix:/path (a Unix-domain socket) */
  referee: string;
  /** The tickets to play, one stream each; [] with a key. */
  tickets: string[];
  /** The entrant key (TAVOLO_KEY); "" with tickets. */
  key: string;
  /** How many streams to open: one per ticket, or TAVOLO_STREAMS (default 2) with a key. */
  streams: number;
  /** PEM root certificate; undefined for plaintext. */
  tlsCa?: Buffer;
  reconnectSeconds: number;
  /** TAVOLO_SEED as given; "" when unset (each stream then uses its ticket or key: `streamSeed`). */
  seed: string;
}

/** Overrides for the environment. */
export interface RunOptions {
  /** host:port or unix:/path; default TAVOLO_REFEREE. */
  referee?: string;
  /** A list, or comma-separated text; default TAVOLO_TICKET. */
  tickets?: string | string[];
  /** An entrant key; default TAVOLO_KEY. Giving `tickets` or `key` here ignores both variables. */
  key?: string;
  /** Streams to open with the key; default TAVOLO_STREAMS, else 2. */
  streams?: number;
  /** The environment to read; default process.env. */
  env?: Record<string, string | undefined>;
}

const ADDRESS_FORMAT = "host:port or unix:/path";

/**
 * The socket's path of a unix:/path or unix:///path address (gRPC's own unix: scheme, which
 * grpc-js connects to without any DNS or proxy); undefined for a host:port address.
 * Throws a ConfigError for a unix: address without an absolute path.
 */
export function unixSocketPath(referee: string): string | undefined {
  if (!referee.startsWith("unix:")) return undefined; // grpc-js matches the scheme case-sensitively
  let path = referee.slice("unix:".length);
  if (path.startsWith("//")) path = path.slice(2); // unix:///path: an empty authority, then the path
  if (!path.startsWith("/") || path === "/") {
    throw new ConfigError(
      `bad referee address ${JSON.stringify(referee)}: set TAVOLO_REFEREE to ${ADDRESS_FORMAT} (an absolute path)`,
    );
  }
  return path;
}

/** Settings from the options, the environment filling in what they leave out. */
export function loadSettings(options: RunOptions = {}): Settings {
  const env = options.env ?? process.env;
  const referee = (options.referee ?? env.TAVOLO_REFEREE ?? "").trim();
  if (!referee) throw new ConfigError(`no referee address: set TAVOLO_REFEREE to ${ADDRESS_FORMAT}`);
  unixSocketPath(referee);
  // The options choose the mode when they name a ticket or a key; else the environment does.
  const fromOptions = options.tickets !== undefined || options.key !== undefined;
  const raw = (fromOptions ? options.tickets : env.TAVOLO_TICKET) ?? "";
  const tickets = (typeof raw === "string" ? raw.split(",") : raw).map((t) => t.trim()).filter((t) => t);
  const key = ((fromOptions ? options.key : env.TAVOLO_KEY) ?? "").trim();
  if (tickets.length > 0 && key) {
    throw new ConfigError("both TAVOLO_TICKET and TAVOLO_KEY are set: set one of them, not both");
  }
  if (tickets.length === 0 && !key) {
    throw new ConfigError(
      "no ticket or key: set TAVOLO_TICKET (several tickets: comma-separated) or TAVOLO_KEY (an entrant key)",
    );
  }
  if (key.includes(",")) {
    // Several keys would be several entrants: one process plays one.
    throw new ConfigError("TAVOLO_KEY holds one entrant key, without commas: run one process per key");
  }
  let streams = tickets.length;
  if (key) streams = options.streams ?? keyStreams(env.TAVOLO_STREAMS);
  if (!Number.isSafeInteger(streams) || streams < 1) {
    throw new ConfigError(`the streams of a key must be a whole number >= 1, not ${streams}`);
  }
  let tlsCa: Buffer | undefined;
  const caPath = (env.TAVOLO_TLS_CA ?? "").trim();
  if (caPath) {
    try {
      tlsCa = readFileSync(caPath);
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? String(err);
      throw new ConfigError(`cannot read TAVOLO_TLS_CA ${JSON.stringify(caPath)}: ${why}`);
    }
  }
  let reconnectSeconds = DEFAULT_RECONNECT_SECONDS;
  const text = (env.TAVOLO_RECONNECT_SECONDS ?? "").trim();
  if (text) {
    reconnectSeconds = Number(text);
    if (!(reconnectSeconds >= 0)) {
      throw new ConfigError(`TAVOLO_RECONNECT_SECONDS must be seconds >= 0, not ${JSON.stringify(text)}`);
    }
  }
  const seed = env.TAVOLO_SEED ?? "";
  return { referee, tickets, key, streams, tlsCa, reconnectSeconds, seed };
}

/** TAVOLO_STREAMS: a whole number >= 1, DEFAULT_KEY_STREAMS when unset or empty. */
function keyStreams(value: string | undefined): number {
  const text = (value ?? "").trim();
  if (!text) return DEFAULT_KEY_STREAMS;
  const streams = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!(Number.isSafeInteger(streams) && streams >= 1)) {
    throw new ConfigError(`TAVOLO_STREAMS must be a whole number >= 1, not ${JSON.stringify(text)}`);
  }
  return streams;
}

/** The reason word that starts the referee's details ("ticket_used: ..."), or "". */
function reasonOf(details: string): string {
  const colon = details.indexOf(":");
  return colon < 0 ? "" : details.slice(0, colon).trim();
}

/**
 * Whether a stream that ended with this status is worth opening again: a broken connection
 * or a restarting referee (UNAVAILABLE, ...) is, and so is ALREADY_EXISTS seat_taken; any
 * other status is the referee's answer for good.
 */
export function retryable(code: number, details: string): boolean {
  if (TRANSIENT.has(code)) return true;
  return code === Code.ALREADY_EXISTS && reasonOf(details) === SEAT_TAKEN;
}

// grpc-js's last error when the connection closed before the referee's first HTTP/2 frame:
// "Failed to connect" (closed), "read ECONNRESET" (reset), or the handshake's own text when
// the socket was closed already. A restarting referee refuses the connection instead
// ("connect ECONNREFUSED").
const CLOSED_AT_ONCE =
  /Last error: (Failed to connect|read ECONNRESET|Connection closed before starting HTTP\/2 handshake)\b/;

/**
 * Whether a TCP connection made without TLS was closed at once, as a referee that serves TLS
 * closes a plain-text one (a slot's own Unix socket never serves TLS: there a closed
 * connection means something else, and is retried).
 */
export function tlsExpected(settings: Pick<Settings, "referee" | "tlsCa">, code: number, details: string): boolean {
  const tcp = !settings.referee.startsWith("unix:");
  return !settings.tlsCa && tcp && code === Code.UNAVAILABLE && CLOSED_AT_ONCE.test(details);
}

/** One line on stderr: newlines in gRPC details would break the one-line promise. */
function say(line: string): void {
  process.stderr.write("tavolo-bot: " + line.split(/\s+/).join(" ").trim() + "\n");
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How one stream ended. */
interface Outcome {
  status: StatusObject;
  /** What the bot threw, if it did (the stream was cancelled then). */
  botError?: unknown;
}

/** Stops the stream with its message; the exit code is EXIT_FAILED. */
class BotError extends Error {}

/** The factory threw while making the bot of a match (key mode). */
class FactoryError extends Error {
  constructor(
    readonly matchId: string,
    readonly thrown: unknown,
  ) {
    super(`making the bot of match ${matchId} threw an exception`);
  }
}

/** What a stream plays with: its ticket, or the entrant key and a factory for each match. */
type Credential = { ticket: string } | { key: string; factory: BotFactory; index: number };

/** The match a stream is playing, with its bot. */
interface MatchState {
  bot: Bot;
  /** Welcome.match_id; "" in ticket mode. */
  matchId: string;
  /** Welcome.slot (key mode). */
  slot: number;
  over: boolean;
  // The last (request id, action id) sent: a request re-sent after a reconnection gets the
  // same answer without asking the bot twice. Request ids are unique within a match only.
  answered?: { requestId: bigint; actionId: number };
  seenRequest?: bigint;
}

/** What every stream of one process shares. */
interface Shared {
  /** The streams_per_table note has been printed. */
  saidStreams: boolean;
  /** The lines that end key streams, printed once for all of them. */
  endings: Set<string>;
}

/**
 * One stream, reconnected while it has play left. With a ticket: one match, with one bot.
 * With a key: the entrant's matches one after the other, a fresh bot for each, until the
 * referee ends the stream with status OK.
 */
class PlayStream {
  private match?: MatchState;
  /** Matches begun on this stream (key mode): the last one's number. */
  private matches = 0;
  private established = false;
  /** The current session's, to complete its compact observations. */
  private seen = new Merger();

  constructor(
    private readonly client: RefereeServiceClient,
    private readonly credential: Credential,
    private readonly label: string,
    private readonly settings: Settings,
    private readonly shared: Shared,
    bot?: Bot,
  ) {
    if (bot !== undefined) this.match = { bot, matchId: "", slot: 0, over: false };
  }

  private get keyMode(): boolean {
    return "key" in this.credential;
  }

  private say(line: string): void {
    say(this.label + line);
  }

  /**
   * The line that ends this stream. A key's streams are alike, and a refusal of the key (an
   * unknown or revoked key, a lost referee) ends each of them: the line is said once, unlabelled.
   */
  private sayEnd(line: string): void {
    if (!this.keyMode) return this.say(line);
    if (this.shared.endings.has(line)) return;
    this.shared.endings.add(line);
    say(line);
  }

  /** Play the ticket to the end of its match, or the key until the referee ends it; the exit code. */
  async play(): Promise<number> {
    const windowMs = this.settings.reconnectSeconds * 1000;
    let giveUpAt: number | undefined;
    let delay = FIRST_DELAY_MS;
    let everEstablished = false;
    let closedAtOnce = 0; // attempts in a row closed at once, as TLS closes plain text
    const what = this.keyMode ? "key" : "ticket";
    for (;;) {
      this.established = false;
      const { status, botError } = await this.session();
      if (botError !== undefined) {
        if (botError instanceof BotError || botError instanceof CompactError) {
          this.say(botError.message + "; this stream stops");
        } else if (botError instanceof FactoryError) {
          this.say(botError.message + "; this stream stops:");
          console.error(botError.thrown);
        } else {
          this.say("the bot threw an exception; this stream stops:");
          console.error(botError);
        }
        return EXIT_FAILED;
      }
      // A ticket's match is over: how the stream ended no longer matters.
      if (!this.keyMode && this.match?.over) return EXIT_OK;
      const name = Code[status.code] ?? String(status.code);
      if (status.code === Code.OK) {
        // With a key, OK after KeyAccepted is the referee's "no match left": it comes between
        // matches, never in the middle of one.
        if (this.keyMode && this.established) {
          const match = this.match;
          if (match === undefined || match.over) return EXIT_OK;
          this.say(`the referee ended the stream before match ${match.matchId} was over`);
          return EXIT_FAILED;
        }
        this.say(
          this.keyMode
            ? "the referee ended the stream before accepting the key"
            : "the referee ended the stream before the match was over",
        );
        return EXIT_FAILED;
      }
      if (!retryable(status.code, status.details)) {
        const hints = this.keyMode ? KEY_HINTS : TICKET_HINTS;
        const hint = REASON_HINTS[reasonOf(status.details)] ?? hints[status.code];
        this.sayEnd(
          `the referee at ${this.settings.referee} ended the stream: ${name}: ${status.details}` +
            (hint ? ` (${hint})` : ""),
        );
        return EXIT_FAILED;
      }
      everEstablished ||= this.established;
      closedAtOnce = !everEstablished && tlsExpected(this.settings, status.code, status.details) ? closedAtOnce + 1 : 0;
      // Retrying cannot help: the referee wants TLS, which only TAVOLO_TLS_CA gives.
      if (closedAtOnce >= TLS_EXPECTED_AFTER) {
        this.sayEnd(
          `the referee at ${this.settings.referee} closed the connection before a word was said ` +
            `(${name}: ${status.details}): it serves TLS, and this bot spoke plain text; ` +
            "give it the referee's certificate in TAVOLO_TLS_CA",
        );
        return EXIT_FAILED;
      }
      const now = Date.now();
      if (this.established || giveUpAt === undefined) {
        giveUpAt = now + windowMs;
        delay = FIRST_DELAY_MS;
      }
      if (now + delay > giveUpAt) {
        const why =
          status.code === Code.ALREADY_EXISTS
            ? `another connection still holds the seat of this ${what}`
            : everEstablished
              ? "lost the referee"
              : "cannot reach the referee";
        this.sayEnd(
          `${why} at ${this.settings.referee} (${name}: ${status.details}); ` +
            `gave up after retrying for ${this.settings.reconnectSeconds} s (TAVOLO_RECONNECT_SECONDS)`,
        );
        return EXIT_FAILED;
      }
      await sleep(delay);
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  }

  /** One stream, from Hello to its status, with every message handled in order. */
  private session(): Promise<Outcome> {
    this.seen = new Merger(); // a compact observation completes one of the same call only
    return new Promise<Outcome>((resolve) => {
      const call: ClientDuplexStream<PlayRequest, PlayResponse> = this.client.play();
      let status: StatusObject | undefined;
      let ended = false;
      let done = false;
      let botError: unknown;
      let queue: Promise<void> = Promise.resolve();

      const finish = () => {
        if (done || status === undefined) return;
        done = true;
        const final = status;
        void queue.then(() => resolve({ status: final, botError }));
      };
      const send = (message: PlayRequest) => {
        if (status === undefined) call.write(message);
      };

      call.on("data", (response: PlayResponse) => {
        this.established = true;
        queue = queue.then(async () => {
          if (botError !== undefined) return;
          try {
            const decision = await this.handle(response);
            if (decision) send({ decision });
          } catch (err) {
            botError = err ?? new Error("the bot threw " + String(err));
            call.cancel(); // tells the referee we left; the status follows
          }
        });
      });
      call.on("error", () => {}); // the "status" event says how the call ended
      call.on("end", () => {
        ended = true;
        finish();
      });
      call.on("status", (s: StatusObject) => {
        status = s;
        if (ended) finish();
        else setTimeout(finish, 500).unref(); // the last messages are read before "end"
      });
      const credential = this.credential;
      const ticket = "key" in credential ? "" : credential.ticket;
      const key = "key" in credential ? credential.key : "";
      const hello = { ticket, key, protocolVersion: PROTOCOL_VERSION, compactObservations: true };
      send({ hello });
    });
  }

  /** Key mode: a fresh bot for slot `slot` of match `matchId`, the stream's next match. */
  private begin(matchId: string, slot: number): MatchState {
    const credential = this.credential;
    if (!("key" in credential)) throw new Error("begin() is for key mode");
    this.matches++;
    const info = keyMatchInfo(
      this.settings.seed,
      credential.key,
      credential.index,
      this.settings.streams,
      this.matches,
      matchId,
    );
    let made: Bot;
    try {
      made = credential.factory(info);
    } catch (err) {
      throw new FactoryError(matchId, err);
    }
    if (typeof made !== "object" || made === null || typeof made.choose !== "function") {
      throw new BotError(`the bot factory returned no bot (an object with a choose method) for match ${matchId}`);
    }
    this.match = { bot: made, matchId, slot, over: false };
    return this.match;
  }

  /** KeyAccepted: a note when this process alone cannot fill one of the entrant's tables. */
  private accepted(k: KeyAccepted): void {
    if (this.shared.saidStreams || k.streamsPerTable <= this.settings.streams) return;
    this.shared.saidStreams = true;
    // Not an error: other processes may open the other streams with the same key.
    say(
      `the referee seats ${k.streamsPerTable} streams of entrant ${JSON.stringify(k.entrant)} per table and ` +
        `this process opens ${this.settings.streams} (TAVOLO_STREAMS): a table starts only when ` +
        `other streams with this key join`,
    );
  }

  /**
   * Key mode: whether `event` is a Welcome to another seat (match and slot) than the one being
   * played, which begins a new match; a Welcome to it is a reconnection, which keeps the bot.
   */
  private begins(event: Event): boolean {
    const welcome = event.welcome;
    if (!this.keyMode || welcome === undefined) return false;
    return welcome.matchId !== this.match?.matchId || welcome.slot !== this.match.slot;
  }

  /** Pass the events to the bot; the decision to send if the response asks for one. */
  private async handle(response: PlayResponse): Promise<Decision | undefined> {
    const request = response.request;
    const begins = response.events.some((e) => this.begins(e));
    // After a reconnection the referee re-sends the open request with its events: the bot
    // has heard those events already if it saw this request.
    const repeated = request !== undefined && !begins && request.requestId === this.match?.seenRequest;
    for (const event of repeated ? [] : response.events) {
      if (event.keyAccepted) {
        this.accepted(event.keyAccepted);
        continue; // the stream's event, not a match's: no bot hears it
      }
      if (event.welcome && this.begins(event)) this.begin(event.welcome.matchId, event.welcome.slot);
      if (event.actionRejected) {
        const r = event.actionRejected;
        // A stale answer (re-sent, or too late) closes no attempt: no count to show.
        const left = r.reason === "stale_request" ? "" : `; ${r.attemptsLeft} attempts left`;
        this.say(`action ${r.actionId} was rejected (${r.reason}: ${r.message})${left}`);
      } else if (event.error) {
        this.say(`referee reports ${event.error.reason}: ${event.error.message}`);
      }
      const match = this.match;
      // Key mode before the first Welcome: no match, so no bot to hear the event (an
      // ErrorEvent is printed above; kinds newer than this SDK are skipped, as a bot would).
      if (match === undefined) continue;
      match.bot.onEvent?.(event);
      if (event.matchOver && !match.over) {
        match.over = true;
        match.bot.onMatchOver?.();
      }
    }
    if (request === undefined) return undefined;
    const match = this.match;
    if (match === undefined) throw new BotError("the referee sent a request before a Welcome");
    this.seen.complete(request.observation);
    match.seenRequest = request.requestId;
    let actionId: number;
    if (match.answered !== undefined && match.answered.requestId === request.requestId) {
      actionId = match.answered.actionId;
    } else {
      const choice: unknown = await match.bot.choose(new Turn(request));
      if (typeof choice !== "number" || !Number.isInteger(choice) || choice < 0 || choice > 0xffffffff) {
        throw new BotError(`choose() returned ${String(choice)}, which is no action id`);
      }
      actionId = choice;
      if (!request.legalActions.some((a) => a.id === actionId)) {
        this.say(`choose() returned ${actionId}, not a legal action id; sending it anyway`);
      }
      match.answered = { requestId: request.requestId, actionId };
    }
    return { requestId: request.requestId, actionId };
  }
}

/**
 * Play every ticket, each with its own bot, or the key's streams, with a fresh bot for each
 * match, and return the process exit code: 0 when every stream ended after MatchOver (with a
 * key: with status OK, the entrant having no match left), 1 when one failed, 2 when the
 * settings are missing or wrong. `bot` is a factory, called once per ticket before any stream
 * opens (with a key: at each new match), or a bot object, which plays a single ticket: with
 * several tickets, or a key, it plays nothing (one line on stderr, exit 2).
 */
export async function play(bot: Bot | BotFactory, options: RunOptions = {}): Promise<number> {
  let settings: Settings;
  try {
    settings = loadSettings(options);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    say(err.message);
    return EXIT_USAGE;
  }
  const count = settings.streams;
  if (typeof bot !== "function" && settings.key) {
    // A key plays many matches, each with a fresh bot: one object cannot be all of them.
    say("a key plays a fresh bot for each match: pass a factory, e.g. run(() => new MyBot())");
    return EXIT_USAGE;
  }
  if (typeof bot !== "function" && count > 1) {
    // One bot object cannot be the bot of several streams: each ticket gets its own.
    say(`${count} tickets need a bot each: pass a factory, e.g. run(() => new MyBot())`);
    return EXIT_USAGE;
  }
  const bots: Bot[] = [];
  for (const [index, ticket] of settings.tickets.entries()) {
    let made: Bot;
    try {
      made = typeof bot === "function" ? bot(streamInfo(settings.seed, ticket, index, count)) : bot;
    } catch (err) {
      say("making the bot threw an exception:");
      console.error(err);
      return EXIT_FAILED;
    }
    if (typeof made !== "object" || made === null || typeof made.choose !== "function") {
      say("the bot factory returned no bot (an object with a choose method)");
      return EXIT_FAILED;
    }
    bots.push(made);
  }
  const creds = settings.tlsCa ? credentials.createSsl(settings.tlsCa) : credentials.createInsecure();
  if (settings.tlsCa && isIP(settings.referee.replace(/:\d+$/, "").replace(/^\[(.*)\]$/, "$1"))) {
    // grpc-js sends an IP address as the TLS server name, and Node warns about it (DEP0123)
    // on stderr. The certificate is still checked against the address.
    process.noDeprecation = true;
  }
  const client = new RefereeServiceClient(settings.referee, creds, CHANNEL_OPTIONS);
  const shared: Shared = { saidStreams: false, endings: new Set() };
  const streams: PlayStream[] = [];
  if (settings.key && typeof bot === "function") {
    for (let index = 0; index < count; index++) {
      const label = count > 1 ? `stream ${index + 1}/${count}: ` : "";
      const credential = { key: settings.key, factory: bot, index };
      streams.push(new PlayStream(client, credential, label, settings, shared));
    }
  } else {
    for (const [index, ticket] of settings.tickets.entries()) {
      const label = count > 1 ? `ticket ${index + 1}/${count}: ` : "";
      streams.push(new PlayStream(client, { ticket }, label, settings, shared, bots[index]));
    }
  }
  try {
    const codes = await Promise.all(streams.map((stream) => stream.play()));
    return Math.max(EXIT_OK, ...codes);
  } finally {
    client.close();
  }
}

/** `play`, then exit the process with its code. The usual last line of a bot's file. */
export function run(bot: Bot | BotFactory, options: RunOptions = {}): void {
  play(bot, options).then(
    (code) => process.exit(code),
    (err) => {
      say("unexpected error:");
      console.error(err);
      process.exit(EXIT_FAILED);
    },
  );
}
