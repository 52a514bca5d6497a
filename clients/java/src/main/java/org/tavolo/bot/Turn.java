package org.tavolo.bot;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import tavolo.v1.Referee.Action;
import tavolo.v1.Referee.ActionKind;
import tavolo.v1.Referee.DecisionRequest;
import tavolo.v1.Referee.Observation;
import tavolo.v1.Referee.Play;
import tavolo.v1.Referee.Trick;

/** One decision to make: what the seat may know and the legal actions to choose from. */
public final class Turn {
  /** One card of the current trick: who played it, the card, its signal (0 for none). */
  public record TrickCard(int seat, String card, int signal) {
    /** The signal's name, e.g. "volo"; "" for none. */
    public String signalName() {
      return Cards.signalName(signal);
    }
  }

  private final DecisionRequest request;

  public Turn(DecisionRequest request) {
    this.request = request;
  }

  // -- the request as sent ---------------------------------------------------------------

  /** The request itself (protobuf messages are immutable). */
  public DecisionRequest request() {
    return request;
  }

  /** The id the decision answers; the SDK echoes it for you. */
  public long requestId() {
    return request.getRequestId();
  }

  /** Everything this seat may know of the deal. */
  public Observation observation() {
    return request.getObservation();
  }

  /** Every legal action, in the referee's order; {@code choose} returns one of their ids. */
  public List<Action> legal() {
    return request.getLegalActionsList();
  }

  /** Milliseconds for this decision, counted from when the referee sent it. */
  public int deadlineMs() {
    return request.getDeadlineMs();
  }

  /** Time bank left beyond the deadline, in milliseconds (0 without a time bank). */
  public int timeBankMs() {
    return request.getTimeBankMs();
  }

  /** Attempts left for this decision, this one included. */
  public int attemptsLeft() {
    return request.getAttemptsLeft();
  }

  // -- conveniences ----------------------------------------------------------------------

  /** This bot's seat in the current game (seats rotate between games). */
  public int seat() {
    return observation().getSeat();
  }

  /** Seats at the table: 4, or 3 in tressette a tre. */
  public int players() {
    int players = observation().getPlayers();
    return players == 0 ? 4 : players;
  }

  /**
   * The partner's seat, opposite this one; -1 when each seat plays alone (a tre, a due,
   * ciapanò, calabresella). A referee older than the sides field sends 0: four are partners.
   */
  public int partner() {
    int sides = observation().getSides();
    return players() == 4 && (sides == 0 || sides == 2) ? (seat() + 2) % 4 : -1;
  }

  /** This seat's unplayed cards, e.g. ["3D", "KS"]. */
  public List<String> hand() {
    return observation().getHandList();
  }

  /** The current trick so far, in the order played. */
  public List<TrickCard> trick() {
    List<TrickCard> out = new ArrayList<>();
    for (Play play : observation().getTrickList()) {
      cardOf(play.getAction())
          .ifPresent(card -> out.add(new TrickCard(play.getSeat(), card, play.getAction().getSignalValue())));
    }
    return out;
  }

  /** The cards of the current trick, in the order played. */
  public List<String> trickCards() {
    List<String> out = new ArrayList<>();
    for (TrickCard t : trick()) {
      out.add(t.card());
    }
    return out;
  }

  /** The card whose suit is trump (Briscola, Tressette con la briscola); empty without one. */
  public Optional<String> trump() {
    String trump = observation().getTrump();
    return Cards.isCard(trump) ? Optional.of(Cards.canonical(trump)) : Optional.empty();
  }

  /** Suit of the current trick's first card; empty when nobody has played to it yet. */
  public Optional<Character> ledSuit() {
    List<TrickCard> trick = trick();
    return trick.isEmpty() ? Optional.empty() : Optional.of(Cards.suitOf(trick.get(0).card()));
  }

  /**
   * The card winning the current trick so far in Tressette (no trumps); empty when nobody has
   * played to it yet.
   */
  public Optional<String> winningCard() {
    return Optional.ofNullable(Cards.winningCard(trickCards()));
  }

  /** Whether this seat plays the first card of the trick now. */
  public boolean isLeading() {
    return observation().getTrickCount() == 0 && !plays().isEmpty();
  }

  /** Every card played in this deal so far, completed tricks first, in order. */
  public List<String> playedCards() {
    List<String> out = new ArrayList<>();
    for (Trick trick : observation().getTricksList()) {
      for (Play play : trick.getPlaysList()) {
        cardOf(play.getAction()).ifPresent(out::add);
      }
    }
    out.addAll(trickCards());
    return out;
  }

  /** The legal actions that play a card (each card once per signal it may carry). */
  public List<Action> plays() {
    List<Action> out = new ArrayList<>();
    for (Action a : legal()) {
      if (isPlay(a)) {
        out.add(a);
      }
    }
    return out;
  }

  /** The legal plays without a signal, or every legal play if none is silent. */
  public List<Action> quietPlays() {
    List<Action> plays = plays();
    List<Action> quiet = new ArrayList<>();
    for (Action a : plays) {
      if (a.getSignalValue() == 0) {
        quiet.add(a);
      }
    }
    return quiet.isEmpty() ? plays : quiet;
  }

  /** The legal actions that declare a combination. */
  public List<Action> declarations() {
    return ofKind(ActionKind.ACTION_KIND_DECLARE);
  }

  /** The legal actions of one kind, in the referee's order. */
  public List<Action> ofKind(ActionKind kind) {
    List<Action> out = new ArrayList<>();
    for (Action a : legal()) {
      if (a.getKindValue() == kind.getNumber()) {
        out.add(a);
      }
    }
    return out;
  }

  /** The legal action whose text is exactly {@code text} (e.g. "AS volo"). */
  public Optional<Action> find(String text) {
    for (Action a : legal()) {
      if (a.getText().equals(text)) {
        return Optional.of(a);
      }
    }
    return Optional.empty();
  }

  @Override
  public String toString() {
    List<String> texts = new ArrayList<>();
    for (Action a : legal()) {
      texts.add(a.getText());
    }
    return "Turn(requestId=" + requestId() + ", seat=" + seat() + ", hand=" + hand() + ", trick="
        + trickCards() + ", legal=" + texts + ")";
  }

  // -- single actions --------------------------------------------------------------------

  /** The card a play action plays; empty for any other action. */
  public static Optional<String> cardOf(Action action) {
    if (!action.getCard().isEmpty()) {
      return Optional.of(action.getCard());
    }
    // A referee may fill only the text ("AS volo"): the card is its first word then.
    int kind = action.getKindValue();
    if (kind == ActionKind.ACTION_KIND_PLAY_VALUE || kind == ActionKind.ACTION_KIND_UNSPECIFIED_VALUE) {
      String[] words = action.getText().strip().split("\\s+");
      if (words.length > 0 && Cards.isCard(words[0])) {
        return Optional.of(Cards.canonical(words[0]));
      }
    }
    return Optional.empty();
  }

  /** Whether the action plays a card. */
  public static boolean isPlay(Action action) {
    int kind = action.getKindValue();
    return kind == ActionKind.ACTION_KIND_PLAY_VALUE
        || (kind == ActionKind.ACTION_KIND_UNSPECIFIED_VALUE && cardOf(action).isPresent());
  }
}
