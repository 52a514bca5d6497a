package org.tavolo.bot;

import tavolo.v1.Referee.Event;

/**
 * A player for one ticket. Implement {@link #choose}; the hooks are optional.
 *
 * <p>The {@link Runner} makes one bot per ticket (through a {@link Factory}), so fields are
 * per-stream state. Calls for one ticket come one at a time; with several tickets, several bots
 * run on different threads.
 */
public interface Bot {
  /** The id of one of {@code turn.legal()}. Answer well within {@code turn.deadlineMs()}. */
  int choose(Turn turn);

  /** Every event the referee sends, in order, before any request that follows them. */
  default void onEvent(Event event) {}

  /** Called once, right after the {@code MatchOver} event. */
  default void onMatchOver() {}

  /** Makes the bot of one ticket. */
  @FunctionalInterface
  interface Factory {
    Bot create(Slot slot);
  }

  /**
   * What a bot knows of its stream before play starts.
   *
   * @param ticket the ticket this bot plays (a secret: do not print it)
   * @param index the ticket's position in TAVOLO_TICKET, from 0
   * @param count how many tickets this process plays
   * @param seed seed text for any randomness: TAVOLO_SEED (default: the ticket), with "/index"
   *     appended when the process plays several tickets
   */
  record Slot(String ticket, int index, int count, String seed) {
    /** A {@link java.util.Random} seeded from {@link #seed} (the same seed, the same numbers). */
    public java.util.Random random() {
      long h = 1125899906842597L;
      for (int i = 0; i < seed.length(); i++) {
        h = 31 * h + seed.charAt(i);
      }
      return new java.util.Random(h);
    }
  }
}
