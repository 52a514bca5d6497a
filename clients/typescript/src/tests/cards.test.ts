import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CARDS,
  beats,
  briscolaBeats,
  briscolaPoints,
  briscolaStrength,
  briscolaWinningCard,
  isCard,
  pointsInThirds,
  rankOf,
  seededRandom,
  sortCards,
  strength,
  suitOf,
  winningCard,
} from "../index";

test("the deck has 40 cards in card-id order", () => {
  assert.equal(CARDS.length, 40);
  assert.equal(CARDS[0], "3D");
  assert.equal(CARDS[9], "4D");
  assert.equal(CARDS[34], "QB");
});

test("ranks, suits, strength and points", () => {
  assert.equal(rankOf("3S"), 0);
  assert.equal(rankOf("4S"), 9);
  assert.equal(suitOf("qb"), "B");
  assert.ok(strength("3C") > strength("AC"));
  assert.deepEqual(["AD", "3D", "KD", "7D"].map(pointsInThirds), [3, 1, 1, 0]);
  assert.ok(isCard(" as "));
  assert.ok(!isCard("1D"));
  assert.throws(() => rankOf("ZZ"));
});

test("only the led suit wins", () => {
  assert.ok(beats("2D", "AD", "D"));
  assert.ok(!beats("3C", "4D", "D"));
  assert.ok(beats("4D", "3C", "D"));
  assert.equal(winningCard(["5S", "3D", "KS"]), "KS");
  assert.equal(winningCard([]), undefined);
  assert.deepEqual(sortCards(["4B", "AD", "3D", "2C"]), ["3D", "AD", "2C", "4B"]);
});

test("seeded randomness repeats", () => {
  const a = seededRandom("s1");
  const b = seededRandom("s1");
  const xs = [a(), a(), a()];
  assert.deepEqual([b(), b(), b()], xs);
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  assert.notEqual(seededRandom("s2")(), xs[0]);
});

test("Briscola's order, points and trumps", () => {
  assert.deepEqual(["AD", "3D", "KD", "QD", "JD", "7D", "2D"].map(briscolaStrength), [9, 8, 7, 6, 5, 4, 0]);
  assert.equal(CARDS.map(briscolaPoints).reduce((a, b) => a + b), 120);
  assert.ok(briscolaBeats("2B", "AD", "D", "B"));
  assert.ok(!briscolaBeats("AD", "2B", "D", "B"));
  assert.ok(!briscolaBeats("AS", "4D", "D", "B"));
  assert.equal(briscolaWinningCard(["KD", "2B", "AD", "4B"], "B"), "4B");
  assert.equal(briscolaWinningCard(["KD", "AS", "AD"], "B"), "AD");
  assert.equal(briscolaWinningCard([], "B"), undefined);
});
