// Compact observations: the merge against the cross-language fixture and hand-made cases,
// and over gRPC, that the Hello asks for them and the bot is shown them complete.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";
import {
  Action,
  ActionKind,
  EXIT_FAILED,
  EXIT_OK,
  Observation,
  type PlayRequest,
  PlayResponse,
  Trick,
  play,
} from "../index";
import { RefereeServiceService } from "../gen/tavolo/v1/referee";
import { CompactError, Merger } from "../compact";

// dist/tests/ -> the repository's tests/fixtures/compact.
const FIXTURES = join(__dirname, "..", "..", "..", "..", "tests", "fixtures", "compact");

const decode = (text: string): Observation => Observation.decode(Buffer.from(text, "base64"));

test("merging the fixture's compact observations gives its full ones", () => {
  const files = readdirSync(FIXTURES).filter((name) => name.endsWith(".jsonl"));
  assert.ok(files.length > 0, `no fixture files in ${FIXTURES}`);
  for (const file of files.sort()) {
    const slots = new Map<number, Merger>();
    let compacts = 0;
    const lines = readFileSync(join(FIXTURES, file), "utf8").split("\n").filter((line) => line);
    for (const [n, line] of lines.entries()) {
      const row = JSON.parse(line) as { slot: number; request_id: number; compact: string; full: string };
      const where = `${file} line ${n + 1} (slot ${row.slot}, request ${row.request_id})`;
      const obs = decode(row.compact);
      if (obs.compact) compacts++;
      let seen = slots.get(row.slot);
      if (seen === undefined) slots.set(row.slot, (seen = new Merger()));
      seen.complete(obs);
      assert.deepStrictEqual(obs, decode(row.full), where);
    }
    assert.ok(compacts > 0, `${file}: no compact observation`);
  }
});

const trick = (winner: number, ...cards: string[]): Trick =>
  Trick.fromPartial({
    winner,
    plays: cards.map((card, seat) => ({ seat, action: { kind: ActionKind.ACTION_KIND_PLAY, card, text: card } })),
  });

test("a compact observation appends, and the next deal's full one replaces everything", () => {
  const first = Observation.fromPartial({
    game: 1,
    deal: 2,
    hand: ["3D", "4C"],
    tricks: [trick(0, "AD", "5D", "6D")],
    declarations: [{ seat: 1, declaration: "napoli-D" }],
    draws: [{ seat: 0, card: "7S" }],
    calabresella: { bids: [{ seat: 0, bid: "pass" }], soloist: -1 },
  });
  const compact = Observation.fromPartial({
    game: 1,
    deal: 2,
    hand: ["4C"],
    compact: true,
    tricks: [trick(2, "3D", "KD", "2D")],
    declarations: [{ seat: 2, declaration: "buongioco" }],
    draws: [{ seat: 1, card: "QS" }],
    calabresella: { bids: [{ seat: 1, bid: "solo" }], contract: "solo", soloist: 1 },
  });
  const want = Observation.fromPartial({
    game: 1,
    deal: 2,
    hand: ["4C"],
    tricks: [trick(0, "AD", "5D", "6D"), trick(2, "3D", "KD", "2D")],
    declarations: [
      { seat: 1, declaration: "napoli-D" },
      { seat: 2, declaration: "buongioco" },
    ],
    draws: [
      { seat: 0, card: "7S" },
      { seat: 1, card: "QS" },
    ],
    calabresella: {
      bids: [
        { seat: 0, bid: "pass" },
        { seat: 1, bid: "solo" },
      ],
      contract: "solo",
      soloist: 1,
    },
  });
  const newDeal = Observation.fromPartial({ game: 1, deal: 3, hand: ["2B"], calabresella: { soloist: -1 } });
  const seen = new Merger();
  seen.complete(first);
  const kept = Observation.fromPartial(first);
  seen.complete(compact);
  assert.deepStrictEqual(compact, want);
  assert.deepStrictEqual(first, kept, "merging changed the previous observation, which a bot may keep");
  const replaced = Observation.fromPartial(newDeal);
  seen.complete(newDeal);
  assert.deepStrictEqual(newDeal, replaced);
  // A compact one after it adds to the new deal only.
  const next = Observation.fromPartial({ game: 1, deal: 3, compact: true, tricks: [trick(1, "2B", "3B", "4B")] });
  seen.complete(next);
  assert.deepStrictEqual(next.tricks, [trick(1, "2B", "3B", "4B")]);
  assert.equal(next.compact, false);
});

test("a compact observation without its deal is refused", () => {
  const seen = new Merger();
  const compact = (deal: number) => Observation.fromPartial({ game: 1, deal, compact: true });
  assert.throws(
    () => seen.complete(compact(1)),
    new CompactError("the referee sent a compact observation (game 1, deal 1) as the first of this stream's deal"),
  );
  seen.complete(Observation.fromPartial({ game: 1, deal: 1 }));
  assert.throws(
    () => seen.complete(compact(2)),
    new CompactError("the referee sent a compact observation of game 1, deal 2 after one of game 1, deal 1"),
  );
});

/** A referee that checks the Hello asks for compact observations, then sends these observations. */
function fakeReferee(observations: Observation[]): Server {
  const server = new Server();
  server.addService(RefereeServiceService, {
    play(call: ServerDuplexStream<PlayRequest, PlayResponse>) {
      let sent = 0;
      const next = () => {
        if (sent === observations.length) {
          call.write(PlayResponse.fromPartial({ events: [{ matchOver: { matchId: "m" } }] }));
          call.end();
          return;
        }
        sent++;
        call.write(
          PlayResponse.fromPartial({
            events: sent === 1 ? [{ welcome: { matchId: "m" } }] : [],
            request: {
              requestId: BigInt(sent),
              deadlineMs: 1000,
              observation: observations[sent - 1],
              legalActions: [Action.fromPartial({ id: 17, kind: ActionKind.ACTION_KIND_PLAY, card: "6C", text: "6C" })],
            },
          }),
        );
      };
      call.on("data", (message: PlayRequest) => {
        if (message.hello && !message.hello.compactObservations) {
          call.emit("error", { code: 3, details: "no_hello: the Hello does not ask for compact observations" });
        } else {
          next();
        }
      });
      call.on("error", () => {});
    },
  });
  return server;
}

const servers: Server[] = [];
after(() => {
  for (const server of servers) server.forceShutdown();
});

async function playAgainst(observations: Observation[]): Promise<{ code: number; seen: Observation[]; lines: string[] }> {
  const server = fakeReferee(observations);
  servers.push(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const seen: Observation[] = [];
  const lines: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split("\n").filter((line) => line));
    return true;
  }) as typeof process.stderr.write;
  try {
    const code = await play(
      {
        choose: (turn) => {
          seen.push(turn.observation);
          return turn.legal[0].id;
        },
      },
      { env: { TAVOLO_REFEREE: `127.0.0.1:${port}`, TAVOLO_TICKET: "tk", TAVOLO_RECONNECT_SECONDS: "2" } },
    );
    return { code, seen, lines };
  } finally {
    process.stderr.write = write;
  }
}

test("over gRPC the Hello asks for compact observations and the bot is shown them complete", async () => {
  const out = await playAgainst([
    Observation.fromPartial({ game: 1, deal: 1, tricks: [trick(0, "AD", "5D", "6D", "7D")] }),
    Observation.fromPartial({ game: 1, deal: 1, compact: true, tricks: [trick(3, "3C", "4C", "5C", "2C")] }),
  ]);
  assert.deepStrictEqual({ code: out.code, lines: out.lines }, { code: EXIT_OK, lines: [] });
  const want = Observation.fromPartial({
    game: 1,
    deal: 1,
    tricks: [trick(0, "AD", "5D", "6D", "7D"), trick(3, "3C", "4C", "5C", "2C")],
  });
  assert.equal(out.seen.length, 2);
  assert.deepStrictEqual(out.seen[1], want);
});

test("a compact observation the SDK cannot complete stops the stream with one line", async () => {
  const out = await playAgainst([Observation.fromPartial({ game: 1, deal: 4, compact: true })]);
  assert.equal(out.code, EXIT_FAILED);
  assert.deepStrictEqual(out.lines, [
    "tavolo-bot: the referee sent a compact observation (game 1, deal 4) as the first of this stream's deal; this stream stops",
  ]);
  assert.equal(out.seen.length, 0, "the bot was shown it");
});
