/** Reproducible randomness from a seed string (TAVOLO_SEED). */

import { createHash } from "node:crypto";

/**
 * A pseudo-random generator seeded with text: each call returns a number in [0, 1), the
 * same sequence for the same seed on every platform (sfc32 seeded from SHA-256 of the text).
 */
export function seededRandom(seed: string): () => number {
  const digest = createHash("sha256").update(seed, "utf8").digest();
  let a = digest.readUInt32LE(0);
  let b = digest.readUInt32LE(4);
  let c = digest.readUInt32LE(8);
  let d = digest.readUInt32LE(12);
  const next = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next(); // mix the seed in
  return next;
}

/** A uniformly chosen element of a non-empty list, using `random` (e.g. from `seededRandom`). */
export function pick<T>(items: readonly T[], random: () => number): T {
  if (items.length === 0) throw new Error("pick() needs a non-empty list");
  return items[Math.floor(random() * items.length)];
}
