// The contract every SDK keeps: which refusals end a stream at once and which are retried,
// one bot per ticket, and the seed texts.
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
  type PlayRequest,
  PlayResponse,
  type StreamInfo,
  eventKind,
  gameSeed,
  loadSettings,
  play,
  seededRandom,
  streamSeed,
} from "../index";
import { RefereeServiceService } from "../gen/tavolo/v1/referee";
import { retryable } from "../runner";
import { playCaptured } from "./capture";

// The referee's details texts (docs/protocol.md §4.6): a reason word, then the explanation.
const UNKNOWN_TICKET = "unknown_ticket: unknown ticket";
const TICKET_USED = "ticket_used: this ticket has been used and its seat is closed";
const SEAT_TAKEN = "seat_taken: a connection for this seat is already open";
const WRONG_SOCKET = "wrong_socket: this ticket works only on its own slot's socket";
const PROCESS_GONE = "process_gone: the bot process this ticket was made for has ended";

interface Refusal {
  code: number;
  details: string;
}

/**
 * A referee that plays a one-decision match on each stream of a known ticket. `refusal` maps
 * the number of a ticket's stream (from 1) to the status that refuses it; with `breakFirst`,
 * the first stream it lets through breaks (UNAVAILABLE) when its request is answered.
 */
class FakeReferee {
  readonly server = new Server();
  /** Streams opened with a Hello, per ticket, refused ones included. */
  readonly attempts = new Map<string, number>();
  /** Streams let through, per ticket. */
  readonly played = new Map<string, number>();

  constructor(
    readonly tickets: string[],
    readonly refusal: (attempt: number) => Refusal | undefined = () => undefined,
    readonly breakFirst = false,
  ) {
    this.server.addService(RefereeServiceService, {
      play: (call: ServerDuplexStream<PlayRequest, PlayResponse>) => this.play(call),
    });
  }

  attemptsOf(ticket: string): number {
    return this.attempts.get(ticket) ?? 0;
  }

  private play(call: ServerDuplexStream<PlayRequest, PlayResponse>): void {
    let stream = 0;
    call.on("error", () => {});
    call.on("data", (message: PlayRequest) => {
      if (message.hello) {
        const ticket = message.hello.ticket;
        const attempt = this.attemptsOf(ticket) + 1;
        this.attempts.set(ticket, attempt);
        const refused = this.tickets.includes(ticket)
          ? this.refusal(attempt)
          : { code: Code.UNAUTHENTICATED, details: UNKNOWN_TICKET };
        if (refused) {
          call.emit("error", refused);
          return;
        }
        stream = (this.played.get(ticket) ?? 0) + 1;
        this.played.set(ticket, stream);
        const events: Event[] = [{ welcome: { matchId: "m", slot: 0 } } as Event];
        if (stream === 1) events.push({ gameStarted: { game: 1, seat: 0 } } as Event);
        call.write(
          PlayResponse.fromPartial({
            events,
            request: {
              requestId: 5n,
              deadlineMs: 1000,
              legalActions: [Action.fromPartial({ id: 17, kind: ActionKind.ACTION_KIND_PLAY, card: "6C", text: "6C" })],
            },
          }),
        );
      } else if (message.decision && this.breakFirst && stream === 1) {
        call.emit("error", { code: Code.UNAVAILABLE, details: "referee restarting" });
      } else if (message.decision) {
        call.write(PlayResponse.fromPartial({ events: [{ matchOver: { matchId: "m" } }] }));
        call.end();
      }
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

const referees: FakeReferee[] = [];
after(() => {
  for (const referee of referees) referee.server.forceShutdown();
});

async function serve(referee: FakeReferee): Promise<string> {
  referees.push(referee);
  return referee.listen();
}


const firstLegal = (): Bot => ({ choose: (turn) => turn.legal[0].id });

for (const [code, details] of [
  [Code.ALREADY_EXISTS, TICKET_USED],
  [Code.PERMISSION_DENIED, WRONG_SOCKET],
  [Code.PERMISSION_DENIED, PROCESS_GONE],
  [Code.UNAUTHENTICATED, UNKNOWN_TICKET],
] as const) {
  const reason = details.split(":")[0];
  test(`${Code[code]} ${reason} ends the stream at once, without a retry`, async () => {
    const referee = new FakeReferee(["tk"], (attempt) => (attempt === 1 ? { code, details } : undefined));
    const address = await serve(referee);
    const out = await playCaptured(firstLegal, { TAVOLO_REFEREE: address, TAVOLO_TICKET: "tk" });
    assert.equal(out.code, EXIT_FAILED);
    assert.equal(referee.attemptsOf("tk"), 1, "one connection attempt");
    assert.ok(out.ms < 3000, `${out.ms} ms`);
    assert.equal(out.lines.length, 1, out.lines.join("\n"));
    assert.match(out.lines[0], /^tavolo-bot: the referee at 127\.0\.0\.1:\d+ ended the stream: /);
    assert.ok(out.lines[0].includes(`${Code[code]}: ${details}`), out.lines[0]);
  });
}

test("ticket_used after a break is not retried", async () => {
  // The stream breaks, and the reconnection finds the match over: no more attempts.
  const used = { code: Code.ALREADY_EXISTS, details: TICKET_USED };
  const referee = new FakeReferee(["tk"], (attempt) => (attempt === 2 ? used : undefined), true);
  const address = await serve(referee);
  const out = await playCaptured(firstLegal, { TAVOLO_REFEREE: address, TAVOLO_TICKET: "tk" });
  assert.equal(out.code, EXIT_FAILED);
  assert.equal(referee.attemptsOf("tk"), 2);
  assert.equal(referee.played.get("tk"), 1);
  assert.ok(out.ms < 3000, `${out.ms} ms`);
  assert.equal(out.lines.length, 1, out.lines.join("\n"));
  assert.ok(out.lines[0].includes("ALREADY_EXISTS: ticket_used"), out.lines[0]);
  assert.ok(out.lines[0].includes("(the match of this ticket is over)"), out.lines[0]);
});

test("seat_taken is retried", async () => {
  const taken = { code: Code.ALREADY_EXISTS, details: SEAT_TAKEN };
  const referee = new FakeReferee(["tk"], (attempt) => (attempt <= 2 ? taken : undefined));
  const address = await serve(referee);
  const out = await playCaptured(firstLegal, { TAVOLO_REFEREE: address, TAVOLO_TICKET: "tk" });
  assert.equal(out.code, EXIT_OK, out.lines.join("\n"));
  assert.equal(referee.attemptsOf("tk"), 3);
  assert.equal(referee.played.get("tk"), 1);
});

test("seat_taken is retried only within TAVOLO_RECONNECT_SECONDS", async () => {
  const taken = { code: Code.ALREADY_EXISTS, details: SEAT_TAKEN };
  const referee = new FakeReferee(["tk"], () => taken);
  const address = await serve(referee);
  const out = await playCaptured(firstLegal, {
    TAVOLO_REFEREE: address,
    TAVOLO_TICKET: "tk",
    TAVOLO_RECONNECT_SECONDS: "0.5",
  });
  assert.equal(out.code, EXIT_FAILED);
  assert.ok(referee.attemptsOf("tk") > 2, `attempts: ${referee.attemptsOf("tk")}`);
  assert.ok(out.ms >= 250 && out.ms < 5000, `${out.ms} ms`);
  assert.equal(out.lines.length, 1, out.lines.join("\n"));
  assert.ok(out.lines[0].includes(`ALREADY_EXISTS: ${SEAT_TAKEN}`), out.lines[0]);
  assert.ok(out.lines[0].includes("gave up after retrying"), out.lines[0]);
});

test("which statuses are retried", () => {
  assert.equal(retryable(Code.UNAVAILABLE, "referee restarting"), true);
  assert.equal(retryable(Code.ALREADY_EXISTS, SEAT_TAKEN), true);
  assert.equal(retryable(Code.ALREADY_EXISTS, TICKET_USED), false);
  assert.equal(retryable(Code.ALREADY_EXISTS, "something else"), false);
  assert.equal(retryable(Code.PERMISSION_DENIED, WRONG_SOCKET), false);
  assert.equal(retryable(Code.PERMISSION_DENIED, PROCESS_GONE), false);
  assert.equal(retryable(Code.UNAUTHENTICATED, UNKNOWN_TICKET), false);
});

for (const seed of [undefined, "s"]) {
  test(`each ticket gets one bot of its own (TAVOLO_SEED ${seed ?? "unset"})`, async () => {
    // Each stream breaks once: a reconnection keeps its bot, it does not make another.
    const referee = new FakeReferee(["tk-a", "tk-b"], () => undefined, true);
    const address = await serve(referee);
    const made: { info: StreamInfo; bot: Bot; events: string[]; over: number }[] = [];
    const factory = (info: StreamInfo): Bot => {
      const record = { info, bot: undefined as unknown as Bot, events: [] as string[], over: 0 };
      record.bot = {
        choose: (turn) => turn.legal[0].id,
        onEvent: (event) => record.events.push(String(eventKind(event))),
        onMatchOver: () => record.over++,
      };
      made.push(record);
      return record.bot;
    };
    const env: Record<string, string> = { TAVOLO_REFEREE: address, TAVOLO_TICKET: "tk-a,tk-b" };
    if (seed !== undefined) env.TAVOLO_SEED = seed;
    const out = await playCaptured(factory, env);
    assert.equal(out.code, EXIT_OK, out.lines.join("\n"));
    assert.equal(referee.attemptsOf("tk-a"), 2);
    assert.equal(referee.attemptsOf("tk-b"), 2);
    assert.equal(made.length, 2);
    assert.notEqual(made[0].bot, made[1].bot);
    for (const [index, ticket] of ["tk-a", "tk-b"].entries()) {
      const { info, events, over } = made[index];
      const expected = `${seed ?? ticket}/${index}`;
      assert.deepEqual([info.ticket, info.index, info.count, info.seed], [ticket, index, 2, expected]);
      assert.equal(info.gameSeed(3), `${expected}/game/3`);
      assert.equal(over, 1);
      assert.equal(events.filter((e) => e === "gameStarted").length, 1, events.join(","));
      assert.equal(events.filter((e) => e === "matchOver").length, 1, events.join(","));
    }
  });
}

test("one bot object plays one ticket, not several", async () => {
  const referee = new FakeReferee(["tk-a", "tk-b"]);
  const address = await serve(referee);
  const out = await playCaptured(firstLegal(), { TAVOLO_REFEREE: address, TAVOLO_TICKET: "tk-a,tk-b" });
  assert.equal(out.code, EXIT_USAGE);
  assert.equal(referee.attemptsOf("tk-a") + referee.attemptsOf("tk-b"), 0);
  assert.equal(out.lines.length, 1, out.lines.join("\n"));
  assert.match(out.lines[0], /2 tickets need a bot each: pass a factory/);
  const single = await playCaptured(firstLegal(), { TAVOLO_REFEREE: address, TAVOLO_TICKET: "tk-a" });
  assert.equal(single.code, EXIT_OK, single.lines.join("\n"));
});

test("the seed of the settings, of each stream, and of each game", async () => {
  const env = { TAVOLO_REFEREE: "h:1", TAVOLO_TICKET: "t" };
  assert.equal(loadSettings({ env }).seed, "");
  assert.equal(loadSettings({ env: { ...env, TAVOLO_SEED: "s" } }).seed, "s");
  assert.equal(loadSettings({ env: { ...env, TAVOLO_SEED: " s " } }).seed, " s ");
  assert.equal(streamSeed("", "tk"), "tk");
  assert.equal(streamSeed(undefined, "tk"), "tk");
  assert.equal(streamSeed("s", "tk"), "s");
  assert.equal(streamSeed("", "tk", 1, 2), "tk/1");
  assert.equal(streamSeed("s", "tk", 0, 3), "s/0");
  assert.equal(gameSeed("s/1", 4), "s/1/game/4");
  assert.equal(seededRandom(gameSeed("s", 2))(), seededRandom("s/game/2")());
  // A single ticket: its seed is TAVOLO_SEED, or the ticket.
  const referee = new FakeReferee(["tk"]);
  const address = await serve(referee);
  const seeds: string[] = [];
  for (const extra of [{}, { TAVOLO_SEED: "x" }] as Record<string, string>[]) {
    const out = await playCaptured(
      (info) => {
        seeds.push(info.seed);
        return firstLegal();
      },
      { TAVOLO_REFEREE: address, TAVOLO_TICKET: "tk", ...extra },
    );
    assert.equal(out.code, EXIT_OK, out.lines.join("\n"));
  }
  assert.deepEqual(seeds, ["tk", "x"]);
});
