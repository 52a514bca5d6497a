/**
 * The example bot: always legal, a little better than random, and deterministic.
 *
 * 1. Declare every combination it holds, one per request; then end its declarations.
 * 2. Never call out (unless that is the only legal action).
 * 3. Play without signals when it can. Leading: the cheapest card (fewest points, then
 *    weakest). Following: the cheapest card that takes the trick, if one does; else the
 *    cheapest card.
 * 4. Anything else (an action kind it does not know): the first legal action.
 *
 * In Briscola (`MatchStarted.game`) it goes by Briscola's order, points and trumps, and a
 * trump costs more than any other card.
 */

import {
  type Action,
  ActionKind,
  type Bot,
  type Event,
  type Turn,
  beats,
  briscolaBeats,
  briscolaPoints,
  briscolaStrength,
  briscolaWinningCard,
  pointsInThirds,
  run,
  strength,
  suitOf,
  winningCard,
} from "../index";

/** Orders cards cheapest first: fewest points (in thirds), then weakest. */
function cheaper(a: Action, b: Action): number {
  return pointsInThirds(a.card) - pointsInThirds(b.card) || strength(a.card) - strength(b.card);
}

function cheapest(actions: Action[], order = cheaper): Action {
  return actions.reduce((best, a) => (order(a, best) < 0 ? a : best));
}

/** The Briscola play among `plays`: the cheapest that takes the trick, else the cheapest. */
function chooseBriscola(turn: Turn, plays: Action[]): Action {
  // Briscola always turns a trump up; "-", a suit of no card, would stand for none.
  const trump = turn.trump === undefined ? "-" : suitOf(turn.trump);
  const cost = (a: Action) => [suitOf(a.card) === trump ? 1 : 0, briscolaPoints(a.card), briscolaStrength(a.card)];
  const order = (a: Action, b: Action) => {
    const [x, y] = [cost(a), cost(b)];
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
  };
  const trick = turn.trick.map((p) => p.card);
  const best = briscolaWinningCard(trick, trump);
  if (best !== undefined) {
    const winners = plays.filter((a) => briscolaBeats(a.card, best, suitOf(trick[0]), trump));
    if (winners.length > 0) return cheapest(winners, order);
  }
  return cheapest(plays, order);
}

/** The Briscola families, as `MatchStarted.game` names them. */
const BRISCOLA = new Set(["briscola", "briscola-a-quattro"]);

export class ExampleBot implements Bot {
  /** The match's game family, which decides the cards' order. */
  private game = "";

  onEvent(event: Event): void {
    if (event.matchStarted) this.game = event.matchStarted.game;
  }

  choose(turn: Turn): number {
    const declare = turn.ofKind(ActionKind.ACTION_KIND_DECLARE) ?? turn.ofKind(ActionKind.ACTION_KIND_END_DECLARATIONS);
    if (declare) return declare.id;

    const plays = turn.legal.filter((a) => a.kind === ActionKind.ACTION_KIND_PLAY && a.card);
    if (plays.length > 0) {
      const quiet = plays.filter((a) => !a.signal);
      const candidates = quiet.length > 0 ? quiet : plays;
      if (BRISCOLA.has(this.game)) return chooseBriscola(turn, candidates).id;
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
