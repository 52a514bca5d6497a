// The SDK plays a match against a fake referee on a Unix-domain socket (unix:/path, as the
// referee gives every bot it starts) and on TCP (host:port, for remote bots).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";
import { Action, ActionKind, EXIT_OK, type PlayRequest, PlayResponse, play } from "../index";
import { RefereeServiceService } from "../gen/tavolo/v1/referee";
import { ConfigError, loadSettings, unixSocketPath } from "../runner";

/** A referee that sends one request and ends the match after a right answer. */
function fakeReferee(): Server {
  const server = new Server();
  server.addService(RefereeServiceService, {
    play(call: ServerDuplexStream<PlayRequest, PlayResponse>) {
      call.on("data", (message: PlayRequest) => {
        if (message.hello) {
          assert.equal(message.hello.ticket, "tk");
          call.write(
            PlayResponse.fromPartial({
              events: [{ welcome: { matchId: "m" } }],
              request: {
                requestId: 5n,
                deadlineMs: 1000,
                legalActions: [Action.fromPartial({ id: 17, kind: ActionKind.ACTION_KIND_PLAY, card: "6C", text: "6C" })],
              },
            }),
          );
        } else if (message.decision?.requestId === 5n && message.decision.actionId === 17) {
          call.write(PlayResponse.fromPartial({ events: [{ matchOver: { matchId: "m" } }] }));
          call.end();
        }
      });
      call.on("error", () => {});
    },
  });
  return server;
}

function listen(server: Server, address: string): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync(address, ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
  );
}

const servers: Server[] = [];
const folders: string[] = [];
after(() => {
  for (const server of servers) server.forceShutdown();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

async function playOneMatch(referee: string): Promise<{ code: number; chosen: number; over: boolean }> {
  let chosen = 0;
  let over = false;
  const code = await play(
    {
      choose: (turn) => {
        chosen++;
        return turn.legal[0].id;
      },
      onMatchOver: () => {
        over = true;
      },
    },
    { env: { TAVOLO_REFEREE: referee, TAVOLO_TICKET: "tk", TAVOLO_RECONNECT_SECONDS: "2" } },
  );
  return { code, chosen, over };
}

test("plays over a Unix-domain socket: unix:/path and unix:///path", async () => {
  const folder = mkdtempSync(join(tmpdir(), "tavolo-ts-"));
  folders.push(folder);
  const socket = join(folder, "referee.sock");
  const server = fakeReferee();
  servers.push(server);
  await listen(server, `unix:${socket}`);
  for (const referee of [`unix:${socket}`, `unix://${socket}`]) {
    assert.deepEqual(await playOneMatch(referee), { code: EXIT_OK, chosen: 1, over: true }, referee);
  }
});

test("plays over TCP: host:port", async () => {
  const server = fakeReferee();
  servers.push(server);
  const port = await listen(server, "127.0.0.1:0");
  for (const referee of [`127.0.0.1:${port}`, `localhost:${port}`]) {
    assert.deepEqual(await playOneMatch(referee), { code: EXIT_OK, chosen: 1, over: true }, referee);
  }
});

test("referee addresses: host:port or unix:/path", () => {
  const settings = (referee: string) => loadSettings({ env: { TAVOLO_REFEREE: referee, TAVOLO_TICKET: "t" } });
  for (const referee of ["127.0.0.1:50051", "referee.example.org:443", "[::1]:50051"]) {
    assert.equal(settings(referee).referee, referee);
    assert.equal(unixSocketPath(referee), undefined);
  }
  assert.equal(settings(" unix:/run/tavolo/referee.sock ").referee, "unix:/run/tavolo/referee.sock");
  assert.equal(unixSocketPath("unix:/run/tavolo/referee.sock"), "/run/tavolo/referee.sock");
  assert.equal(unixSocketPath("unix:///tmp/x/referee.sock"), "/tmp/x/referee.sock");
  for (const referee of ["unix:", "unix:/", "unix:referee.sock", "unix://host/referee.sock"]) {
    const refused = (err: Error) => err instanceof ConfigError && /host:port or unix:\/path/.test(err.message);
    assert.throws(() => settings(referee), refused, referee);
  }
  assert.throws(() => loadSettings({ env: { TAVOLO_TICKET: "t" } }), /set TAVOLO_REFEREE to host:port or unix:\/path/);
});
