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
   * @param seed this stream's seed text for any randomness: TAVOLO_SEED (default: the ticket),
   *     with "/index" appended when the process plays several tickets ({@link #streamSeed})
   */
  record Slot(String ticket, int index, int count, String seed) {
    /**
     * The seed text of stream {@code index} (from 0) of {@code count}: {@code seed} (TAVOLO_SEED;
     * null or "" means unset, and then the stream's own ticket is the seed), with {@code "/index"}
     * appended when there are several tickets.
     */
    public static String streamSeed(String seed, String ticket, int index, int count) {
      String text = seed == null || seed.isEmpty() ? ticket : seed;
      return count > 1 ? text + "/" + index : text;
    }

    /**
     * The seed text of game {@code game} ({@code GameStarted.game}) of a stream seeded
     * {@code seed}: {@code seed + "/game/" + game}. Seeding each game afresh from it makes a match
     * resumed at a later game (by a new process) play that game as an uninterrupted run would.
     */
    public static String gameSeed(String seed, int game) {
      return seed + "/game/" + Integer.toUnsignedString(game);
    }

    /** The seed text of game {@code game} of this stream: {@code seed() + "/game/" + game}. */
    public String gameSeed(int game) {
      return gameSeed(seed, game);
    }

    /** A {@link java.util.Random} seeded from {@link #seed} (the same seed, the same numbers). */
    public java.util.Random random() {
      return randomFrom(seed);
    }

    /**
     * A fresh {@link java.util.Random} for game {@code game}, seeded from {@link #gameSeed(int)}:
     * make one when {@code GameStarted} arrives.
     */
    public java.util.Random gameRandom(int game) {
      return randomFrom(gameSeed(game));
    }

    private static java.util.Random randomFrom(String text) {
      long h = 1125899906842597L;
      for (int i = 0; i < text.length(); i++) {
        h = 31 * h + text.charAt(i);
      }
      return new java.util.Random(h);
    }
  }
}
