import assert from "node:assert/strict";
import { test } from "node:test";
import { ExampleBot } from "../bots/example-bot";
import { Action, ActionKind, type DecisionRequest, Observation, Signal, Turn } from "../index";

function play(id: number, card: string, signal = Signal.SIGNAL_UNSPECIFIED): Action {
  const name = ["", " busso", " volo", " striscio"][signal] ?? "";
  // fromPartial: a field added to the protocol needs no change here.
  return Action.fromPartial({ id: signal * 40 + id, kind: ActionKind.ACTION_KIND_PLAY, card, signal, text: card + name });
}

function other(id: number, kind: ActionKind, text: string): Action {
  return Action.fromPartial({ id, kind, text });
}

function turn(legal: Action[], hand: string[], trick: string[] = []): Turn {
  const observation = Observation.fromPartial({
    seat: 1,
    players: 4,
    hand,
    trick: trick.map((card, i) => ({ seat: i, action: play(0, card) })),
  });
  const request: DecisionRequest = {
    requestId: 7n,
    deadlineMs: 1000,
    timeBankMs: 0,
    observation,
    legalActions: legal,
    attemptsLeft: 3,
  };
  return new Turn(request);
}

const bot = new ExampleBot();

test("declares first, then ends its declarations", () => {
  const declare = other(300, ActionKind.ACTION_KIND_DECLARE, "declare napoli-D");
  const end = other(320, ActionKind.ACTION_KIND_END_DECLARATIONS, "end-declarations");
  assert.equal(bot.choose(turn([declare, end], ["3D", "2D", "AD"])), 300);
  assert.equal(bot.choose(turn([end], ["3D", "2D", "AD"])), 320);
});

test("leads its cheapest card without a signal", () => {
  const legal = [play(0, "3D"), play(0, "3D", Signal.SIGNAL_BUSSO), play(2, "AD"), play(16, "7C"), play(19, "4C")];
  assert.equal(bot.choose(turn(legal, ["3D", "AD", "7C", "4C"])), 19); // 4C: no points, weakest
});

test("follows with the cheapest card that wins the trick", () => {
  const legal = [play(10, "3C"), play(12, "AC"), play(15, "JC"), play(19, "4C")];
  // Led 6C, then KC: JC does not beat KC; AC and 3C do, and 3C is cheaper (1 third, not 3).
  assert.equal(bot.choose(turn(legal, ["3C", "AC", "JC", "4C"], ["6C", "KC"])), 10);
});

test("follows with the cheapest card when none wins", () => {
  const legal = [play(15, "JC"), play(19, "4C")];
  assert.equal(bot.choose(turn(legal, ["JC", "4C"], ["3C"])), 19);
});

test("never calls out unless it must, and falls back on unknown kinds", () => {
  const callOut = other(321, ActionKind.ACTION_KIND_CALL_OUT, "call-out");
  const future = other(400, 99 as ActionKind, "bid 2");
  assert.equal(bot.choose(turn([callOut, future], [])), 400);
  assert.equal(bot.choose(turn([callOut], [])), 321);
});

test("plays Briscola by its own order and trumps", () => {
  const briscola = new ExampleBot();
  briscola.onEvent({ matchStarted: { matchId: "m", game: "briscola-a-quattro", rulesJson: "{}", games: 1, dealsPerGame: 1 } });
  const withTrump = (t: Turn) => new Turn({ ...t.request, observation: { ...t.observation, trump: "5B" } });
  // Bastoni are trumps. Leading: the cheapest card that is not a trump.
  assert.equal(briscola.choose(withTrump(turn([play(39, "2B"), play(5, "JD"), play(29, "4S")], []))), 29);
  // After KD: the 3D takes it more cheaply than the AD, and without a trump.
  assert.equal(briscola.choose(withTrump(turn([play(0, "3D"), play(2, "AD"), play(39, "4B")], [], ["KD"]))), 0);
  // After AD: only a trump takes it, the cheapest one.
  assert.equal(briscola.choose(withTrump(turn([play(0, "3D"), play(39, "4B"), play(33, "KB")], [], ["AD"]))), 39);
  // After AD and 3B nothing takes it: throw the cheapest.
  assert.equal(briscola.choose(withTrump(turn([play(3, "KD"), play(21, "2S"), play(39, "4B")], [], ["AD", "3B"]))), 21);
});
