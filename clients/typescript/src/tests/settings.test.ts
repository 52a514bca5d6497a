import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, EXIT_USAGE, loadSettings, play } from "../index";

test("settings come from the environment", () => {
  const s = loadSettings({ env: { TAVOLO_REFEREE: " h:1 ", TAVOLO_TICKET: "a, b,", TAVOLO_SEED: "x" } });
  assert.equal(s.referee, "h:1");
  assert.deepEqual(s.tickets, ["a", "b"]);
  assert.equal(s.seed, "x");
  assert.equal(s.reconnectSeconds, 10);
});

test("missing or bad settings are refused", () => {
  assert.throws(() => loadSettings({ env: {} }), ConfigError);
  assert.throws(() => loadSettings({ env: { TAVOLO_REFEREE: "h:1" } }), ConfigError);
  assert.throws(
    () => loadSettings({ env: { TAVOLO_REFEREE: "h:1", TAVOLO_TICKET: "t", TAVOLO_RECONNECT_SECONDS: "-1" } }),
    ConfigError,
  );
});

test("play() returns 2 without a referee", async () => {
  const code = await play({ choose: () => 0 }, { env: {} });
  assert.equal(code, EXIT_USAGE);
});
