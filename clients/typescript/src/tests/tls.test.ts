// A bot without TAVOLO_TLS_CA whose host:port referee closes the connection before a word was
// said (as a referee serving TLS closes a plain-text one) TLS_EXPECTED_AFTER attempts in a row
// is told so, and stops; fewer such closes (as a referee going down mid-connection gives) are
// retried, and so is a slot's own Unix socket doing the same.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { type Server, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { status as Code } from "@grpc/grpc-js";
import { EXIT_FAILED } from "../index";
import { TLS_EXPECTED_AFTER, tlsExpected } from "../runner";
import { playCaptured } from "./capture";

// grpc-js's details when the referee closes the connection at once (and when none listens).
const CLOSED = "No connection established. Last error: Failed to connect (2026-01-01T00:00:00.000Z). Resolution note: ";
const RESET = "No connection established. Last error: read ECONNRESET (2026-01-01T00:00:00.000Z). Resolution note: ";
const REFUSED = "No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1. Resolution note: ";
const TLS_LINE = "it serves TLS, and this bot spoke plain text; give it the referee's certificate in TAVOLO_TLS_CA";

test("a TCP connection without a CA, closed at once, means the referee serves TLS", () => {
  const plain = { referee: "127.0.0.1:50051", tlsCa: undefined };
  assert.equal(tlsExpected(plain, Code.UNAVAILABLE, CLOSED), true);
  assert.equal(tlsExpected(plain, Code.UNAVAILABLE, RESET), true);
  assert.equal(tlsExpected({ referee: "referee.example.org:443" }, Code.UNAVAILABLE, CLOSED), true);
  // A slot's own Unix socket never serves TLS.
  assert.equal(tlsExpected({ referee: "unix:/tmp/referee.sock" }, Code.UNAVAILABLE, CLOSED), false);
  assert.equal(tlsExpected({ referee: "unix:///tmp/referee.sock" }, Code.UNAVAILABLE, CLOSED), false);
  // With a CA the bot spoke TLS already.
  assert.equal(tlsExpected({ ...plain, tlsCa: Buffer.from("pem") }, Code.UNAVAILABLE, CLOSED), false);
  // A restarting referee refuses the connection; other statuses and details are something else.
  assert.equal(tlsExpected(plain, Code.UNAVAILABLE, REFUSED), false);
  assert.equal(tlsExpected(plain, Code.UNAVAILABLE, "referee restarting"), false);
  for (const code of [Code.CANCELLED, Code.INTERNAL, Code.ABORTED, Code.UNKNOWN, Code.ALREADY_EXISTS]) {
    assert.equal(tlsExpected(plain, code, CLOSED), false, Code[code]);
  }
});

const servers: Server[] = [];
const folders: string[] = [];
after(() => {
  for (const server of servers) server.close();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/**
 * A listener that closes every connection at once, as a referee serving TLS closes plain text;
 * after `closes` connections it stops listening, so that later ones are refused.
 */
function closer(closes = Infinity): { server: Server; accepted: () => number } {
  let count = 0;
  const server = createServer((socket) => {
    count++;
    socket.on("error", () => {});
    socket.end();
    if (count >= closes) server.close();
  });
  servers.push(server);
  return { server, accepted: () => count };
}

function listen(server: Server, where: number | string): Promise<void> {
  return new Promise((resolve) =>
    typeof where === "number" ? server.listen(where, "127.0.0.1", resolve) : server.listen(where, resolve),
  );
}

/** `play` of a bot that takes the first legal action, against ``referee``. */
function playFirstLegal(referee: string, seconds: string): Promise<{ code: number; lines: string[]; ms: number }> {
  const env = { TAVOLO_REFEREE: referee, TAVOLO_TICKET: "tk", TAVOLO_RECONNECT_SECONDS: seconds };
  return playCaptured({ choose: (turn) => turn.legal[0].id }, env);
}

test("a plain-text bot is told after three attempts that a host:port referee closing the connection serves TLS", async () => {
  assert.equal(TLS_EXPECTED_AFTER, 3);
  const { server, accepted } = closer();
  await listen(server, 0);
  const address = server.address();
  assert.ok(address !== null && typeof address === "object");
  const referee = `127.0.0.1:${address.port}`;
  const out = await playFirstLegal(referee, "10");
  assert.equal(out.code, EXIT_FAILED);
  assert.ok(out.ms < 5000, `${out.ms} ms`);
  assert.equal(accepted(), TLS_EXPECTED_AFTER);
  assert.equal(out.lines.length, 1, out.lines.join("\n"));
  const line = out.lines[0];
  const start = `tavolo-bot: the referee at ${referee} closed the connection before a word was said (UNAVAILABLE: `;
  assert.ok(line.startsWith(start), line);
  assert.ok(line.endsWith(TLS_LINE), line);
});

for (const closes of [1, TLS_EXPECTED_AFTER - 1]) {
  const what = closes === 1 ? "one connection" : `${closes} connections in a row`;
  test(`${what} closed at once, then refused ones, are retried without the TLS line`, async () => {
    const { server, accepted } = closer(closes);
    await listen(server, 0);
    const address = server.address();
    assert.ok(address !== null && typeof address === "object");
    const referee = `127.0.0.1:${address.port}`;
    const out = await playFirstLegal(referee, "0.5");
    assert.equal(out.code, EXIT_FAILED);
    assert.equal(accepted(), closes);
    assert.equal(out.lines.length, 1, out.lines.join("\n"));
    const line = out.lines[0];
    assert.ok(line.startsWith(`tavolo-bot: cannot reach the referee at ${referee} (UNAVAILABLE: `), line);
    assert.ok(line.includes("ECONNREFUSED"), line);
    assert.ok(line.includes("gave up after retrying"), line);
    assert.ok(!line.includes("TLS"), line);
  });
}

test("a unix: socket closing the connection is retried", async () => {
  const folder = mkdtempSync(join(tmpdir(), "tavolo-ts-"));
  folders.push(folder);
  const { server, accepted } = closer();
  await listen(server, join(folder, "referee.sock"));
  const out = await playFirstLegal(`unix:${join(folder, "referee.sock")}`, "0.5");
  assert.equal(out.code, EXIT_FAILED);
  assert.ok(accepted() > 1, `connections: ${accepted()}`);
  assert.equal(out.lines.length, 1, out.lines.join("\n"));
  assert.ok(out.lines[0].includes("gave up after retrying"), out.lines[0]);
  assert.ok(!out.lines[0].includes("TLS"), out.lines[0]);
});
