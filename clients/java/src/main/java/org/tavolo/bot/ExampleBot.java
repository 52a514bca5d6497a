package org.tavolo.bot;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import tavolo.v1.Referee.Action;
import tavolo.v1.Referee.ActionKind;

/**
 * A simple bot, a little better than random: declare whatever it can, never call out, win a
 * trick with the cheapest card that wins it, else throw the cheapest card. Deterministic: it uses
 * no randomness, so the same match seed replays the same match.
 */
public final class ExampleBot implements Bot {
  /** Fewest points first, then weakest. */
  private static final Comparator<Action> CHEAPEST =
      Comparator.comparing((Action a) -> card(a), Cards.CHEAPEST_FIRST);

  @Override
  public int choose(Turn turn) {
    // 1. Declaring a combination is free points; the referee asks again after each one.
    List<Action> declarations = turn.declarations();
    if (!declarations.isEmpty()) {
      return declarations.get(0).getId();
    }
    List<Action> end = turn.ofKind(ActionKind.ACTION_KIND_END_DECLARATIONS);
    if (!end.isEmpty()) {
      return end.get(0).getId();
    }
    // 2. Play a card, saying nothing (signals are for smarter bots).
    List<Action> plays = turn.quietPlays();
    if (!plays.isEmpty()) {
      return choosePlay(turn, plays).getId();
    }
    // 3. Anything else (an action kind this bot does not know): the first legal action that
    // is not a call-out, since calling out without counting loses the game.
    for (Action a : turn.legal()) {
      if (a.getKindValue() != ActionKind.ACTION_KIND_CALL_OUT_VALUE) {
        return a.getId();
      }
    }
    return turn.legal().get(0).getId();
  }

  private static Action choosePlay(Turn turn, List<Action> plays) {
    Optional<Character> led = turn.ledSuit();
    Optional<String> best = turn.winningCard();
    if (led.isPresent() && best.isPresent()) {
      // Following: win the trick as cheaply as possible, if any card can.
      Optional<Action> winner =
          plays.stream().filter(a -> Cards.beats(card(a), best.get(), led.get())).min(CHEAPEST);
      if (winner.isPresent()) {
        return winner.get();
      }
    }
    // Leading, or unable to win: give away as little as possible.
    return plays.stream().min(CHEAPEST).orElseThrow();
  }

  private static String card(Action play) {
    return Turn.cardOf(play).orElseThrow();
  }

  public static void main(String[] args) {
    Runner.main(slot -> new ExampleBot());
  }
}
