package org.tavolo.bot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import tavolo.v1.Referee.Action;
import tavolo.v1.Referee.ActionKind;
import tavolo.v1.Referee.DecisionRequest;
import tavolo.v1.Referee.Event;
import tavolo.v1.Referee.MatchStarted;
import tavolo.v1.Referee.Observation;
import tavolo.v1.Referee.Play;

class ExampleBotTest {
  private static Action play(String card, int signal) {
    String text = signal == 0 ? card : card + " " + Cards.signalName(signal);
    return Action.newBuilder()
        .setId(signal * 40 + Cards.ALL.indexOf(card))
        .setKind(ActionKind.ACTION_KIND_PLAY)
        .setCard(card)
        .setSignalValue(signal)
        .setText(text)
        .build();
  }

  private static Turn turn(String[] trick, Action... legal) {
    Observation.Builder obs = Observation.newBuilder().setSeat(trick.length).setPlayers(4);
    for (int i = 0; i < trick.length; i++) {
      obs.addTrick(Play.newBuilder().setSeat(i).setAction(play(trick[i], 0)));
    }
    for (Action a : legal) {
      if (a.getKindValue() == ActionKind.ACTION_KIND_PLAY_VALUE && !obs.getHandList().contains(a.getCard())) {
        obs.addHand(a.getCard());
      }
    }
    return new Turn(
        DecisionRequest.newBuilder().setRequestId(7).setObservation(obs).addAllLegalActions(java.util.List.of(legal)).build());
  }

  private final ExampleBot bot = new ExampleBot();

  @Test
  void declaresFirstThenEndsDeclarations() {
    Action napoli = Action.newBuilder().setId(300).setKind(ActionKind.ACTION_KIND_DECLARE).setDeclaration("napoli-D").setText("declare napoli-D").build();
    Action end = Action.newBuilder().setId(320).setKind(ActionKind.ACTION_KIND_END_DECLARATIONS).setText("end-declarations").build();
    assertEquals(300, bot.choose(turn(new String[] {}, napoli, end)));
    assertEquals(320, bot.choose(turn(new String[] {}, end)));
  }

  @Test
  void leadsTheCheapestCardWithoutSignal() {
    // 4B is worthless and weakest; its busso variant is skipped.
    assertEquals(Cards.ALL.indexOf("4B"), bot.choose(turn(new String[] {}, play("AS", 0), play("4B", 0), play("4B", 1), play("KD", 0))));
  }

  @Test
  void winsTheTrickWithTheCheapestWinner() {
    // KC led: 3C and 2C beat it (one third each); 2C is the weaker of the two.
    int chosen = bot.choose(turn(new String[] {"KC"}, play("3C", 0), play("2C", 0), play("5C", 0)));
    assertEquals(Cards.ALL.indexOf("2C"), chosen);
  }

  @Test
  void throwsTheCheapestCardWhenItCannotWin() {
    int chosen = bot.choose(turn(new String[] {"3C", "AC"}, play("AD", 0), play("KS", 0), play("6B", 0)));
    assertEquals(Cards.ALL.indexOf("6B"), chosen);
  }

  @Test
  void neverCallsOutUnlessItMust() {
    Action callOut = Action.newBuilder().setId(321).setKind(ActionKind.ACTION_KIND_CALL_OUT).setText("call-out").build();
    Action unknown = Action.newBuilder().setId(400).setKindValue(42).setText("bid 70").build();
    assertEquals(400, bot.choose(turn(new String[] {}, callOut, unknown)));
    assertEquals(321, bot.choose(turn(new String[] {}, callOut)));
  }

  @Test
  void cardHelpers() {
    assertEquals(9, Cards.strength("3D"));
    assertEquals(3, Cards.points("AS"));
    assertEquals(0, Cards.points("7B"));
    assertTrue(Cards.beats("2C", "AC", 'C'));
    assertFalse(Cards.beats("3D", "4C", 'C'));
    assertEquals("AC", Cards.winningCard(java.util.List.of("KC", "3D", "AC")));
    assertEquals(java.util.List.of("3D", "AD", "4B"), Cards.sorted(java.util.List.of("4B", "AD", "3D")));
  }

  @Test
  void playsBriscolaByItsOwnOrderAndTrumps() {
    ExampleBot briscola = new ExampleBot();
    briscola.onEvent(
        Event.newBuilder().setMatchStarted(MatchStarted.newBuilder().setGame("briscola-a-quattro")).build());
    // Bastoni are trumps. Leading: the cheapest card that is not a trump.
    assertEquals(Cards.ALL.indexOf("4S"), briscola.choose(withTrump(turn(new String[] {}, play("2B", 0), play("JD", 0), play("4S", 0)))));
    // After KD: the 3D takes it more cheaply than the AD, and without a trump.
    assertEquals(Cards.ALL.indexOf("3D"), briscola.choose(withTrump(turn(new String[] {"KD"}, play("3D", 0), play("AD", 0), play("4B", 0)))));
    // After AD: only a trump takes it, the cheapest one.
    assertEquals(Cards.ALL.indexOf("4B"), briscola.choose(withTrump(turn(new String[] {"AD"}, play("3D", 0), play("4B", 0), play("KB", 0)))));
    // After AD and 3B nothing takes it: throw the cheapest.
    assertEquals(Cards.ALL.indexOf("2S"), briscola.choose(withTrump(turn(new String[] {"AD", "3B"}, play("KD", 0), play("2S", 0), play("4B", 0)))));
  }

  private static Turn withTrump(Turn turn) {
    return new Turn(
        turn.request().toBuilder().setObservation(turn.observation().toBuilder().setTrump("5B")).build());
  }

  @Test
  void briscolaCardHelpers() {
    assertEquals(9, Cards.briscolaStrength("AD"));
    assertEquals(0, Cards.briscolaStrength("2D"));
    assertEquals(120, Cards.ALL.stream().mapToInt(Cards::briscolaPoints).sum());
    assertTrue(Cards.briscolaBeats("2B", "AD", 'D', 'B'));
    assertFalse(Cards.briscolaBeats("AS", "4D", 'D', 'B'));
    assertEquals("4B", Cards.briscolaWinningCard(java.util.List.of("KD", "2B", "AD", "4B"), 'B'));
  }
}
