// Key mode (TAVOLO_KEY) against a scripted referee over real gRPC on loopback: each stream is
// seated in match after match with a fresh bot, reconnects with the same key, and ends with
// the referee's OK.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { Server, ServerCredentials, type ServerDuplexStream, status as Code } from "@grpc/grpc-js";
import {
  Action,
  ActionKind,
  type Bot,
  EXIT_FAILED,
  EXIT_OK,
  EXIT_USAGE,
  type Event,
  type Hello,
  type PlayRequest,
  PlayResponse,
  type StreamInfo,
  eventKind,
  loadSettings,
  matchSeed,
  play,
} from "../index";
import { RefereeServiceService } from "../gen/tavolo/v1/referee";

const KEY = "key-1";
const UNKNOWN_KEY = "unknown_key: no entrant has this key";
const KEY_REVOKED = "key_revoked: the organiser revoked this key";

interface Script {
  /** The matches to seat, in order, shared by every stream of the key. */
  matches: string[];
  /** KeyAccepted.streams_per_table. */
  streamsPerTable?: number;
  /** Break the stream (UNAVAILABLE) when the first answer to request 2 of this match arrives. */
  breakIn?: string;
  /** With breakIn: the reconnection is seated in the match's other slot (the partner's). */
  otherSlot?: boolean;
  /** Break the stream (UNAVAILABLE) right after this match's MatchOver, before the next Welcome. */
  breakAfter?: string;
  /** End the stream with this status right after this match's MatchOver. */
  endAfter?: { match: string; code: number; details: string };
  /** End the stream with OK in the middle of this match (after its first request is answered). */
  okIn?: string;
  /** Refuse the Hello of the key with this status. */
  refuse?: { code: number; details: string };
}

/** One match in play on a stream: its slot and the last response that carried a request. */
interface Seat {
  matchId: string;
  slot: number;
  pending?: PlayResponse;
}

/**
 * A referee for one entrant key. Each match has two requests, ids 1 and 2 (request ids are
 * unique only within a match, so every match reuses them); an answer to request 2 ends it.
 */
class KeyReferee {
  readonly server = new Server();
  readonly hellos: Hello[] = [];
  /** Every Decision received, as "<match>:<request id>=<action id>". */
  readonly decisions: string[] = [];
  private next = 0;
  /** Matches whose stream broke before they ended: the next stream of the key resumes them. */
  private readonly interrupted: Seat[] = [];
  private broken = new Set<string>();

  constructor(readonly script: Script) {
    this.server.addService(RefereeServiceService, {
      play: (call: ServerDuplexStream<PlayRequest, PlayResponse>) => this.play(call),
    });
  }

  private play(call: ServerDuplexStream<PlayRequest, PlayResponse>): void {
    let seat: Seat | undefined;
    call.on("error", () => {});
    const send = (response: PlayResponse) => {
      if (seat !== undefined && response.request !== undefined) seat.pending = response;
      call.write(response);
    };
    const fail = (code: number, details: string, keep: boolean) => {
      if (keep && seat !== undefined) this.interrupted.push(seat);
      seat = undefined;
      call.emit("error", { code, details });
    };
    const seatNext = () => {
      const resumed = this.interrupted.shift();
      if (resumed !== undefined) {
        seat = this.script.otherSlot ? { ...resumed, slot: 1 - resumed.slot } : resumed;
        call.write(PlayResponse.fromPartial({ events: [{ welcome: { matchId: seat.matchId, slot: seat.slot } }] }));
        if (seat.pending !== undefined) call.write(seat.pending);
        return;
      }
      if (this.next >= this.script.matches.length) {
        call.end(); // the entrant has no match left: status OK
        return;
      }
      const matchId = this.script.matches[this.next];
      seat = { matchId, slot: this.next++ % 2 };
      send(
        PlayResponse.fromPartial({
          events: [
            { welcome: { matchId, slot: seat.slot } },
            { matchStarted: { matchId, game: "tressette", games: 1 } },
            { gameStarted: { game: 1, seat: seat.slot } },
          ] as Event[],
          request: request(1n),
        }),
      );
    };
    call.on("data", (message: PlayRequest) => {
      if (message.hello) {
        this.hellos.push(message.hello);
        if (message.hello.key !== KEY) return fail(Code.UNAUTHENTICATED, UNKNOWN_KEY, false);
        if (this.script.refuse) return fail(this.script.refuse.code, this.script.refuse.details, false);
        const left = this.script.matches.length - this.next + this.interrupted.length;
        call.write(
          PlayResponse.fromPartial({
            events: [
              { keyAccepted: { entrant: "ent", streamsPerTable: this.script.streamsPerTable ?? 1, matchesLeft: left } },
            ],
          }),
        );
        seatNext();
        return;
      }
      const decision = message.decision;
      if (decision === undefined || seat === undefined) return;
      const matchId = seat.matchId;
      this.decisions.push(`${matchId}:${decision.requestId}=${decision.actionId}`);
      if (decision.requestId === 2n && this.script.breakIn === matchId && !this.broken.has(matchId)) {
        this.broken.add(matchId);
        return fail(Code.UNAVAILABLE, "referee restarting", true);
      }
      if (decision.requestId === 1n) {
        if (this.script.okIn === matchId) {
          seat = undefined;
          call.end();
          return;
        }
        const events = [{ cardPlayed: { seat: 1, card: "4B" } }] as Event[];
        send(PlayResponse.fromPartial({ events, request: request(2n) }));
        return;
      }
      seat = undefined;
      call.write(PlayResponse.fromPartial({ events: [{ matchOver: { matchId } }] }));
      if (this.script.breakAfter === matchId) return fail(Code.UNAVAILABLE, "referee restarting", false);
      const end = this.script.endAfter;
      if (end?.match === matchId) return fail(end.code, end.details, false);
      seatNext();
    });
  }

  listen(): Promise<string> {
    return new Promise((resolve, reject) =>
      this.server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, port) =>
        err ? reject(err) : resolve(`127.0.0.1:${port}`),
      ),
    );
  }
}

function request(requestId: bigint) {
  return {
    requestId,
    deadlineMs: 1000,
    legalActions: [
      Action.fromPartial({ id: 17, kind: ActionKind.ACTION_KIND_PLAY, card: "6C", text: "6C" }),
      Action.fromPartial({ id: 23, kind: ActionKind.ACTION_KIND_PLAY, card: "QD", text: "QD" }),
    ],
  };
}

const referees: KeyReferee[] = [];
after(() => {
  for (const referee of referees) referee.server.forceShutdown();
});

async function serve(script: Script): Promise<{ referee: KeyReferee; address: string }> {
  const referee = new KeyReferee(script);
  referees.push(referee);
  return { referee, address: await referee.listen() };
}

/** `play` with stderr captured: the exit code and stderr's lines. */
async function playCaptured(
  bot: Bot | ((info: StreamInfo) => Bot),
  env: Record<string, string>,
): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split("\n").filter((line) => line));
    return true;
  }) as typeof process.stderr.write;
  try {
    const code = await play(bot, { env: { TAVOLO_RECONNECT_SECONDS: "5", ...env } });
    return { code, lines };
  } finally {
    process.stderr.write = write;
  }
}

/** What each bot the factory made saw. */
interface Made {
  info: StreamInfo;
  events: string[];
  chosen: number;
  over: number;
}

/** A factory whose bots alternate between the two legal actions and record what they see. */
function recordingFactory(made: Made[]): (info: StreamInfo) => Bot {
  return (info) => {
    const record: Made = { info, events: [], chosen: 0, over: 0 };
    made.push(record);
    return {
      choose: (turn) => turn.legal[record.chosen++ % 2].id,
      onEvent: (event) => record.events.push(String(eventKind(event))),
      onMatchOver: () => record.over++,
    };
  };
}

/** The environment of one key stream to `address`. */
const oneStream = (address: string) => ({ TAVOLO_REFEREE: address, TAVOLO_KEY: KEY, TAVOLO_STREAMS: "1" });

const MATCH_EVENTS = ["welcome", "matchStarted", "gameStarted", "cardPlayed", "matchOver"];

for (const seed of [undefined, "s"]) {
  test(`two matches on one key stream: a fresh bot each, then exit 0 (TAVOLO_SEED ${seed ?? "unset"})`, async () => {
    const { referee, address } = await serve({ matches: ["m1", "m2"] });
    const made: Made[] = [];
    const env: Record<string, string> = oneStream(address);
    if (seed !== undefined) env.TAVOLO_SEED = seed;
    const out = await playCaptured(recordingFactory(made), env);
    assert.equal(out.code, EXIT_OK, out.lines.join("\n"));
    assert.deepEqual(out.lines, []);
    assert.deepEqual(referee.hellos, [{ ticket: "", key: KEY, protocolVersion: 1, compactObservations: true }]);
    assert.equal(made.length, 2);
    for (const [i, { info, events, chosen, over }] of made.entries()) {
      const expected = `${seed ?? KEY}/match/${i + 1}`;
      assert.deepEqual(
        [info.key, info.ticket, info.index, info.count, info.match, info.matchId, info.seed],
        [KEY, "", 0, 1, i + 1, `m${i + 1}`, expected],
      );
      assert.equal(info.gameSeed(2), `${expected}/game/2`);
      assert.deepEqual(events, MATCH_EVENTS, "KeyAccepted goes to no bot");
      assert.equal(chosen, 2);
      assert.equal(over, 1);
    }
    // Request ids repeat across matches: the second match's bot is asked afresh.
    assert.deepEqual(referee.decisions, ["m1:1=17", "m1:2=23", "m2:1=17", "m2:2=23"]);
  });
}

test("a reconnection mid-match keeps the bot and answers the re-sent request without asking it", async () => {
  const { referee, address } = await serve({ matches: ["m1", "m2"], breakIn: "m1" });
  const made: Made[] = [];
  const out = await playCaptured(recordingFactory(made), oneStream(address));
  assert.equal(out.code, EXIT_OK, out.lines.join("\n"));
  assert.equal(referee.hellos.length, 2);
  assert.ok(referee.hellos.every((h) => h.key === KEY && h.ticket === ""));
  assert.deepEqual(
    made.map((m) => [m.info.matchId, m.info.match, m.chosen, m.over]),
    [
      ["m1", 1, 2, 1],
      ["m2", 2, 2, 1],
    ],
  );
  // The first bot heard the Welcome again (as with a ticket), not the re-sent events.
  assert.deepEqual(made[0].events, ["welcome", "matchStarted", "gameStarted", "cardPlayed", "welcome", "matchOver"]);
  assert.deepEqual(referee.decisions, ["m1:1=17", "m1:2=23", "m1:2=23", "m2:1=17", "m2:2=23"]);
});

test("a reconnection seated in another slot of the match gets a fresh bot", async () => {
  const { referee, address } = await serve({ matches: ["m1", "m2"], breakIn: "m1", otherSlot: true });
  const made: Made[] = [];
  const out = await playCaptured(recordingFactory(made), oneStream(address));
  assert.equal(out.code, EXIT_OK, out.lines.join("\n"));
  assert.deepEqual(
    made.map((m) => [m.info.matchId, m.info.match, m.chosen, m.over]),
    [
      ["m1", 1, 2, 0],
      ["m1", 2, 1, 1],
      ["m2", 3, 2, 1],
    ],
  );
  assert.deepEqual(made[1].events, ["welcome", "cardPlayed", "matchOver"]);
  assert.deepEqual(referee.decisions, ["m1:1=17", "m1:2=23", "m1:2=17", "m2:1=17", "m2:2=23"]);
});

test("a break between matches reconnects with the key, and the next match gets a fresh bot", async () => {
  const { referee, address } = await serve({ matches: ["m1", "m2"], breakAfter: "m1" });
  const made: Made[] = [];
  const out = await playCaptured(recordingFactory(made), oneStream(address));
  assert.equal(out.code, EXIT_OK, out.lines.join("\n"));
  assert.equal(referee.hellos.length, 2);
  assert.deepEqual(
    made.map((m) => [m.info.matchId, m.info.match, m.events.length, m.over]),
    [
      ["m1", 1, MATCH_EVENTS.length, 1],
      ["m2", 2, MATCH_EVENTS.length, 1],
    ],
  );
});

test("TAVOLO_STREAMS streams (2 by default) each play matches, with a seed per stream and match", async () => {
  const { referee, address } = await serve({ matches: ["m1", "m2", "m3", "m4", "m5"] });
  const made: Made[] = [];
  const out = await playCaptured(recordingFactory(made), { TAVOLO_REFEREE: address, TAVOLO_KEY: KEY });
  assert.equal(out.code, EXIT_OK, out.lines.join("\n"));
  assert.equal(referee.hellos.length, 2);
  assert.deepEqual(made.map((m) => m.info.matchId).sort(), ["m1", "m2", "m3", "m4", "m5"]);
  for (const index of [0, 1]) {
    const mine = made.filter((m) => m.info.index === index);
    assert.ok(mine.length >= 1, `stream ${index} played no match`);
    assert.deepEqual(
      mine.map((m) => [m.info.count, m.info.match, m.info.seed]),
      mine.map((_, i) => [2, i + 1, matchSeed(`${KEY}/${index}`, i + 1)]),
    );
  }
  assert.ok(made.every((m) => m.chosen === 2 && m.over === 1));
});

for (const [code, details, hint] of [
  [Code.UNAUTHENTICATED, UNKNOWN_KEY, "the referee knows no entrant with this key"],
  [Code.PERMISSION_DENIED, KEY_REVOKED, "the organiser revoked this key"],
] as const) {
  const reason = details.split(":")[0];
  test(`${Code[code]} ${reason} ends the key's stream at once: one line, exit 1`, async () => {
    const script: Script = { matches: ["m1"], refuse: code === Code.UNAUTHENTICATED ? undefined : { code, details } };
    const { referee, address } = await serve(script);
    const made: Made[] = [];
    const key = code === Code.UNAUTHENTICATED ? "not-a-key" : KEY;
    // Both streams (the default 2) are refused: the line is said once.
    const out = await playCaptured(recordingFactory(made), { TAVOLO_REFEREE: address, TAVOLO_KEY: key });
    assert.equal(out.code, EXIT_FAILED);
    assert.equal(referee.hellos.length, 2, "one Hello per stream, no retry");
    assert.equal(made.length, 0);
    assert.deepEqual(out.lines, [
      `tavolo-bot: the referee at ${address} ended the stream: ${Code[code]}: ${details} (${hint})`,
    ]);
  });
}

test("a key revoked between matches ends the stream after the match: exit 1", async () => {
  const endAfter = { match: "m1", code: Code.PERMISSION_DENIED, details: KEY_REVOKED };
  const { referee, address } = await serve({ matches: ["m1", "m2"], endAfter });
  const made: Made[] = [];
  const out = await playCaptured(recordingFactory(made), oneStream(address));
  assert.equal(out.code, EXIT_FAILED);
  assert.equal(referee.hellos.length, 1);
  assert.deepEqual(
    made.map((m) => [m.info.matchId, m.over]),
    [["m1", 1]],
  );
  assert.equal(out.lines.length, 1, out.lines.join("\n"));
  assert.ok(out.lines[0].endsWith(`PERMISSION_DENIED: ${KEY_REVOKED} (the organiser revoked this key)`), out.lines[0]);
});

test("an OK end in the middle of a match fails the stream: one line, exit 1", async () => {
  // The referee ends a key's stream between matches: OK before this match's MatchOver is no
  // "no match left".
  const { address } = await serve({ matches: ["m1"], okIn: "m1" });
  const made: Made[] = [];
  const out = await playCaptured(recordingFactory(made), oneStream(address));
  assert.equal(out.code, EXIT_FAILED, out.lines.join("\n"));
  assert.deepEqual(out.lines, ["tavolo-bot: the referee ended the stream before match m1 was over"]);
  assert.deepEqual(
    made.map((m) => [m.info.matchId, m.chosen, m.over]),
    [["m1", 1, 0]],
  );
});

test("a key that seats more streams per table than this process opens gets one note", async () => {
  const { address } = await serve({ matches: ["m1"], streamsPerTable: 2 });
  const out = await playCaptured(recordingFactory([]), oneStream(address));
  assert.equal(out.code, EXIT_OK, out.lines.join("\n"));
  assert.equal(out.lines.length, 1, out.lines.join("\n"));
  assert.match(out.lines[0], /seats 2 streams of entrant "ent" per table and this process opens 1 \(TAVOLO_STREAMS\)/);
});

test("a factory that throws at a match stops the stream: exit 1", async () => {
  const { address } = await serve({ matches: ["m1", "m2"] });
  let calls = 0;
  const factory = (): Bot => {
    if (++calls === 2) throw new Error("out of bots");
    return { choose: (turn) => turn.legal[0].id };
  };
  const errors: unknown[] = [];
  const consoleError = console.error;
  console.error = (...args: unknown[]) => errors.push(...args);
  try {
    const out = await playCaptured(factory, oneStream(address));
    assert.equal(out.code, EXIT_FAILED);
    assert.deepEqual(out.lines, ["tavolo-bot: making the bot of match m2 threw an exception; this stream stops:"]);
    assert.match(String(errors[0]), /out of bots/);
  } finally {
    console.error = consoleError;
  }
});

test("TAVOLO_KEY with TAVOLO_TICKET, or neither, is a usage error: one line, exit 2, no connection", async () => {
  const { referee, address } = await serve({ matches: ["m1"] });
  const neither =
    "no ticket or key: set TAVOLO_TICKET (several tickets: comma-separated) or TAVOLO_KEY (an entrant key)";
  for (const [extra, message] of [
    [{ TAVOLO_KEY: KEY, TAVOLO_TICKET: "tk" }, "both TAVOLO_TICKET and TAVOLO_KEY are set: set one of them, not both"],
    [{}, neither],
    [{ TAVOLO_KEY: " ", TAVOLO_TICKET: "," }, neither],
  ] as [Record<string, string>, string][]) {
    const out = await playCaptured(recordingFactory([]), { TAVOLO_REFEREE: address, ...extra });
    assert.equal(out.code, EXIT_USAGE);
    assert.deepEqual(out.lines, [`tavolo-bot: ${message}`]);
  }
  assert.equal(referee.hellos.length, 0);
});

test("TAVOLO_STREAMS must be a whole number >= 1", async () => {
  const env = { TAVOLO_REFEREE: "h:1", TAVOLO_KEY: KEY };
  assert.equal(loadSettings({ env }).streams, 2);
  assert.equal(loadSettings({ env: { ...env, TAVOLO_STREAMS: " 3 " } }).streams, 3);
  assert.equal(loadSettings({ env: { ...env, TAVOLO_STREAMS: "" } }).streams, 2);
  const settings = loadSettings({ env: { ...env, TAVOLO_SEED: "x" } });
  assert.deepEqual([settings.key, settings.tickets, settings.seed], [KEY, [], "x"]);
  // With tickets, TAVOLO_STREAMS is not read: one stream per ticket.
  assert.equal(loadSettings({ env: { TAVOLO_REFEREE: "h:1", TAVOLO_TICKET: "a,b", TAVOLO_STREAMS: "x" } }).streams, 2);
  for (const bad of ["0", "-1", "1.5", "two", "2e1", "0x2", "+2"]) {
    const out = await playCaptured(recordingFactory([]), { ...env, TAVOLO_STREAMS: bad });
    assert.equal(out.code, EXIT_USAGE, bad);
    assert.deepEqual(out.lines, [`tavolo-bot: TAVOLO_STREAMS must be a whole number >= 1, not ${JSON.stringify(bad)}`]);
  }
  const commas = await playCaptured(recordingFactory([]), { ...env, TAVOLO_KEY: "k1,k2" });
  assert.equal(commas.code, EXIT_USAGE);
  const why = "TAVOLO_KEY holds one entrant key, without commas: run one process per key";
  assert.deepEqual(commas.lines, [`tavolo-bot: ${why}`]);
});

test("a key needs a factory: one bot object cannot be a fresh bot for each match", async () => {
  const { referee, address } = await serve({ matches: ["m1"] });
  const out = await playCaptured({ choose: (turn) => turn.legal[0].id }, { TAVOLO_REFEREE: address, TAVOLO_KEY: KEY });
  assert.equal(out.code, EXIT_USAGE);
  assert.deepEqual(out.lines, [
    "tavolo-bot: a key plays a fresh bot for each match: pass a factory, e.g. run(() => new MyBot())",
  ]);
  assert.equal(referee.hellos.length, 0);
});
