package org.tavolo.bot;

import tavolo.v1.Referee.CalabresellaView;
import tavolo.v1.Referee.DecisionRequest;
import tavolo.v1.Referee.Observation;

/**
 * Rebuilds complete observations from the compact ones of one stream ({@code Hello.compact_observations}).
 *
 * <p>An observation with {@code compact} true holds in {@code tricks}, {@code declarations},
 * {@code draws} and {@code calabresella.bids} only the items added since the previous request of
 * the stream, of the same game and deal; one with {@code compact} false is complete. Not
 * thread-safe: one instance per stream.
 */
final class CompactMerger {
  /** The referee broke the rules of compact observations. */
  static final class CompactException extends RuntimeException {
    CompactException(String message) {
      super(message);
    }
  }

  private Observation previous;

  /** Forgets the previous observation: a new call to the referee starts afresh. */
  void reset() {
    previous = null;
  }

  /** {@code request} with its observation made complete (its {@code compact} false). */
  DecisionRequest complete(DecisionRequest request) {
    Observation observation = request.getObservation();
    Observation full = complete(observation);
    return full == observation ? request : request.toBuilder().setObservation(full).build();
  }

  /**
   * The complete observation that {@code observation} stands for, remembered for the next one.
   *
   * @throws CompactException if it is compact and follows no observation of its game and deal
   */
  Observation complete(Observation observation) {
    if (!observation.getCompact()) {
      previous = observation;
      return observation;
    }
    Observation before = previous;
    if (before == null) {
      throw new CompactException(
          "the referee sent a compact observation (game " + observation.getGame() + ", deal "
              + observation.getDeal() + ") as the first of this stream, with nothing to add it to");
    }
    if (before.getGame() != observation.getGame() || before.getDeal() != observation.getDeal()) {
      throw new CompactException(
          "the referee sent a compact observation of game " + observation.getGame() + ", deal "
              + observation.getDeal() + " after one of game " + before.getGame() + ", deal "
              + before.getDeal() + " (a new deal must come complete)");
    }
    Observation.Builder full = observation.toBuilder().setCompact(false);
    full.clearTricks().addAllTricks(before.getTricksList()).addAllTricks(observation.getTricksList());
    full.clearDeclarations()
        .addAllDeclarations(before.getDeclarationsList())
        .addAllDeclarations(observation.getDeclarationsList());
    full.clearDraws().addAllDraws(before.getDrawsList()).addAllDraws(observation.getDrawsList());
    // Whether there is a CalabresellaView at all is one of the complete fields.
    if (observation.hasCalabresella()) {
      CalabresellaView.Builder view = observation.getCalabresella().toBuilder();
      view.clearBids()
          .addAllBids(before.getCalabresella().getBidsList())
          .addAllBids(observation.getCalabresella().getBidsList());
      full.setCalabresella(view);
    }
    previous = full.build();
    return previous;
  }
}
