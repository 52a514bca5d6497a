package org.tavolo.bot;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import tavolo.v1.Referee.Action;
import tavolo.v1.Referee.ActionKind;
import tavolo.v1.Referee.Event;

/**
 * A simple bot, a little better than random: declare whatever it can, never call out, win a
 * trick with the cheapest card that wins it, else throw the cheapest card. In Briscola ({@code
 * MatchStarted.game}) it goes by Briscola's order, points and trumps, and a trump costs more than
 * any other card. Deterministic: it uses no randomness, so the same match seed replays the same
 * match.
 */
public final class ExampleBot implements Bot {
  /** Fewest points first, then weakest. */
  private static final Comparator<Action> CHEAPEST =
      Comparator.comparing((Action a) -> card(a), Cards.CHEAPEST_FIRST);

  /** The Briscola families, as {@code MatchStarted.game} names them. */
  private static final Set<String> BRISCOLA = Set.of("briscola", "briscola-a-quattro");

  /** The match's game family, which decides the cards' order. */
  private String game = "";

  @Override
  public void onEvent(Event event) {
    if (event.hasMatchStarted()) {
      game = event.getMatchStarted().getGame();
    }
  }

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
      return (BRISCOLA.contains(game) ? chooseBriscola(turn, plays) : choosePlay(turn, plays)).getId();
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

  private static Action chooseBriscola(Turn turn, List<Action> plays) {
    // Briscola always turns a trump up; '-', a suit of no card, would stand for none.
    char trump = turn.trump().map(Cards::suitOf).orElse('-');
    Comparator<Action> cheapest =
        Comparator.comparing((Action a) -> Cards.suitOf(card(a)) == trump)
            .thenComparingInt(a -> Cards.briscolaPoints(card(a)))
            .thenComparingInt(a -> Cards.briscolaStrength(card(a)));
    List<String> trick = turn.trickCards();
    if (!trick.isEmpty()) {
      String best = Cards.briscolaWinningCard(trick, trump);
      char led = Cards.suitOf(trick.get(0));
      Optional<Action> winner =
          plays.stream().filter(a -> Cards.briscolaBeats(card(a), best, led, trump)).min(cheapest);
      if (winner.isPresent()) {
        return winner.get();
      }
    }
    return plays.stream().min(cheapest).orElseThrow();
  }

  private static String card(Action play) {
    return Turn.cardOf(play).orElseThrow();
  }

  public static void main(String[] args) {
    Runner.main(slot -> new ExampleBot());
  }
}
