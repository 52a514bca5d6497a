/**
 * Compact observations: the SDK's Hello asks for them (Hello.compactObservations), and this
 * completes them. A compact observation (Observation.compact) holds in tricks, declarations,
 * draws and calabresella.bids only what is new since the previous request on the stream;
 * every other field is complete.
 */

import type { Observation } from "./gen/tavolo/v1/referee";

/** One stream's observations, completed. */
export class Merger {
  /** The complete observation of the stream's previous request. */
  private last?: Observation;

  /**
   * Makes `obs` complete, in place, and keeps it for the next request. Throws a
   * CompactError if `obs` is compact but the previous observation kept is not of the same
   * game and deal (or there is none). The complete observation has `compact` false, as
   * bots saw before compact observations existed.
   */
  complete(obs: Observation | undefined): void {
    const last = this.last;
    this.last = undefined;
    if (obs === undefined) return;
    if (obs.compact) {
      if (last === undefined) {
        throw new CompactError(
          `the referee sent a compact observation (game ${obs.game}, deal ${obs.deal}) as the first of this stream's deal`,
        );
      }
      if (last.game !== obs.game || last.deal !== obs.deal) {
        throw new CompactError(
          `the referee sent a compact observation of game ${obs.game}, deal ${obs.deal} ` +
            `after one of game ${last.game}, deal ${last.deal}`,
        );
      }
      // Fresh arrays: a bot may keep the previous observation.
      obs.tricks = last.tricks.concat(obs.tricks);
      obs.declarations = last.declarations.concat(obs.declarations);
      obs.draws = last.draws.concat(obs.draws);
      if (obs.calabresella !== undefined) {
        obs.calabresella.bids = (last.calabresella?.bids ?? []).concat(obs.calabresella.bids);
      }
      obs.compact = false;
    }
    this.last = obs;
  }
}

/** A compact observation that cannot be completed: the referee broke the protocol. */
export class CompactError extends Error {}
