/**
 * The example bot: always legal, a little better than random, and deterministic.
 *
 * 1. Declare every combination it holds, one per request; then end its declarations.
 * 2. Never call out (unless that is the only legal action).
 * 3. Play without signals when it can. Leading: the cheapest card (fewest points, then
 *    weakest). Following: the cheapest card that takes the trick, if one does; else the
 *    cheapest card.
 * 4. Anything else (an action kind it does not know): the first legal action.
 */

import { type Action, ActionKind, type Bot, type Turn, beats, pointsInThirds, run, strength, winningCard } from "../index";

/** Orders cards cheapest first: fewest points (in thirds), then weakest. */
function cheaper(a: Action, b: Action): number {
  return pointsInThirds(a.card) - pointsInThirds(b.card) || strength(a.card) - strength(b.card);
}

function cheapest(actions: Action[]): Action {
  return actions.reduce((best, a) => (cheaper(a, best) < 0 ? a : best));
}

export class ExampleBot implements Bot {
  choose(turn: Turn): number {
    const declare = turn.ofKind(ActionKind.ACTION_KIND_DECLARE) ?? turn.ofKind(ActionKind.ACTION_KIND_END_DECLARATIONS);
    if (declare) return declare.id;

    const plays = turn.legal.filter((a) => a.kind === ActionKind.ACTION_KIND_PLAY && a.card);
    if (plays.length > 0) {
      const quiet = plays.filter((a) => !a.signal);
      const candidates = quiet.length > 0 ? quiet : plays;
      const led = turn.ledSuit;
      const best = winningCard(turn.trick.map((p) => p.card));
      if (led !== undefined && best !== undefined) {
        const winners = candidates.filter((a) => beats(a.card, best, led));
        if (winners.length > 0) return cheapest(winners).id;
      }
      return cheapest(candidates).id;
    }

    const notCallOut = turn.legal.find((a) => a.kind !== ActionKind.ACTION_KIND_CALL_OUT);
    return (notCallOut ?? turn.legal[0]).id;
  }
}

if (require.main === module) {
  run(() => new ExampleBot());
}
