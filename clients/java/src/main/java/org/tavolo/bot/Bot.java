package org.tavolo.bot;

import tavolo.v1.Referee.Event;

/**
 * A player for one ticket, or for one match of an entrant key. Implement {@link #choose}; the
 * hooks are optional.
 *
 * <p>The {@link Runner} makes one bot per ticket, or with a key one per match (through a {@link
 * Factory}), so fields are per-match state. Calls to one bot come one at a time; with several
 * streams, several bots run on different threads.
 */
public interface Bot {
  /** The id of one of {@code turn.legal()}. Answer well within {@code turn.deadlineMs()}. */
  int choose(Turn turn);

  /**
   * Every event of the match, in order, before any request that follows them. {@code KeyAccepted}
   * belongs to a key's stream, not to a match: no bot hears it.
   */
  default void onEvent(Event event) {}

  /** Called once, right after the {@code MatchOver} event. */
  default void onMatchOver() {}

  /**
   * Makes the bot of one ticket (called once per ticket, before the streams open), or of one match
   * of an entrant key (called at each {@code Welcome} that names a new match).
   */
  @FunctionalInterface
  interface Factory {
    Bot create(Slot slot);
  }

  /**
   * What a bot knows of its stream before play starts.
   *
   * @param ticket the ticket this bot plays (a secret: do not print it); "" with a key
   * @param index the ticket's position in TAVOLO_TICKET, or the key stream's, from 0
   * @param count how many streams this process opens: one per ticket, or TAVOLO_STREAMS with a key
   * @param seed this bot's seed text for any randomness. With a ticket: TAVOLO_SEED (default: the
   *     ticket), with "/index" appended when the process plays several tickets ({@link
   *     #streamSeed}). With a key: the same with the key for the ticket, then "/match/n" ({@link
   *     #matchSeed})
   * @param key the entrant key of the stream (a secret too); "" with a ticket
   * @param match with a key, this bot's match is the stream's match number {@code match} (1, 2,
   *     ...); 0 with a ticket
   * @param matchId with a key, the match this bot plays ({@code Welcome.match_id}); "" with a ticket
   */
  record Slot(String ticket, int index, int count, String seed, String key, int match, String matchId) {
    /** The slot of a ticket's bot. */
    public Slot(String ticket, int index, int count, String seed) {
      this(ticket, index, count, seed, "", 0, "");
    }

    /**
     * The seed text of match {@code match} (from 1) of a key stream seeded {@code seed} ({@link
     * #streamSeed} of the key): {@code seed + "/match/" + match}.
     */
    public static String matchSeed(String seed, int match) {
      return seed + "/match/" + match;
    }

    /**
     * The seed text of stream {@code index} (from 0) of {@code count}: {@code seed} (TAVOLO_SEED;
     * null or "" means unset, and then the stream's own ticket, or key, is the seed), with {@code
     * "/index"} appended when there are several streams.
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
