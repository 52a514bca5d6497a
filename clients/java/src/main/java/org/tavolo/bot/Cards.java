package org.tavolo.bot;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Card text helpers: ranks, suits, strength, points and who beats whom.
 *
 * <p>A card is text, rank then suit: {@code "3D"}, {@code "QB"}, {@code "AS"}. Ranks, strongest
 * first in Tressette, are {@code 3 2 A K Q J 7 6 5 4} (Q the cavallo, J the fante); suits are
 * {@code D C S B} (denari, coppe, spade, bastoni). Tressette has no trumps: only a card of the
 * suit led can win a trick. Briscola has its own order ({@code A 3 K Q J 7 6 5 4 2}), its own
 * points and a trump suit: the {@code briscola} methods.
 */
public final class Cards {
  /** Rank letters, strongest first. */
  public static final String RANKS = "32AKQJ7654";

  /** Suit letters: denari, coppe, spade, bastoni. */
  public static final String SUITS = "DCSB";

  /** The 40 cards, suit by suit, strongest first within a suit. */
  public static final List<String> ALL;

  /** Signal names by {@code Signal} enum value, as action texts write them; "" for none. */
  public static final List<String> SIGNAL_NAMES =
      List.of("", "busso", "volo", "striscio", "ribusso", "striscio-lungo", "striscio-corto");

  private static final int[] POINTS_BY_RANK = {1, 1, 3, 1, 1, 1, 0, 0, 0, 0};

  /** Briscola's strength and whole points of each rank, in {@link #RANKS} order. */
  private static final int[] BRISCOLA_STRENGTH_BY_RANK = {8, 0, 9, 7, 6, 5, 4, 3, 2, 1};

  private static final int[] BRISCOLA_POINTS_BY_RANK = {10, 0, 11, 4, 3, 2, 0, 0, 0, 0};

  /** Cheapest first in Tressette: fewest points (in thirds), then weakest. */
  public static final Comparator<String> CHEAPEST_FIRST =
      Comparator.comparingInt(Cards::points).thenComparingInt(Cards::strength);

  static {
    List<String> all = new ArrayList<>(40);
    for (char suit : SUITS.toCharArray()) {
      for (char rank : RANKS.toCharArray()) {
        all.add("" + rank + suit);
      }
    }
    ALL = List.copyOf(all);
  }

  private Cards() {}

  /** The card as {@link #ALL} spells it; throws {@link IllegalArgumentException} for non-cards. */
  public static String canonical(String card) {
    String text = card == null ? "" : card.strip().toUpperCase(Locale.ROOT);
    if (text.length() != 2 || RANKS.indexOf(text.charAt(0)) < 0 || SUITS.indexOf(text.charAt(1)) < 0) {
      throw new IllegalArgumentException(
          "bad card '" + card + "': write rank (" + RANKS + ") then suit (" + SUITS + "), e.g. 3D");
    }
    return text;
  }

  /** Whether {@code text} names a card (case and surrounding spaces ignored). */
  public static boolean isCard(String text) {
    try {
      canonical(text);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /** Rank index: 0 for the 3 (strongest) to 9 for the 4 (weakest). */
  public static int rankOf(String card) {
    return RANKS.indexOf(canonical(card).charAt(0));
  }

  /** Suit letter: {@code suitOf("QB") == 'B'}. */
  public static char suitOf(String card) {
    return canonical(card).charAt(1);
  }

  /** 9 for the 3 down to 0 for the 4: higher is stronger in Tressette. */
  public static int strength(String card) {
    return 9 - rankOf(card);
  }

  /** Tressette value in thirds of a point: the ace 3; 3, 2, K, Q, J 1; 7, 6, 5, 4 nothing. */
  public static int points(String card) {
    return POINTS_BY_RANK[rankOf(card)];
  }

  /** Whether {@code a} beats {@code b} in a Tressette trick led in {@code ledSuit}. */
  public static boolean beats(String a, String b, char ledSuit) {
    if (suitOf(a) != ledSuit) {
      return false;
    }
    return suitOf(b) != ledSuit || rankOf(a) < rankOf(b);
  }

  /**
   * The card that wins among {@code cards} in Tressette, the first card's suit being the suit
   * led; null for no cards.
   */
  public static String winningCard(Collection<String> cards) {
    String best = null;
    for (String card : cards) {
      if (best == null || beats(card, best, suitOf(cards.iterator().next()))) {
        best = card;
      }
    }
    return best;
  }

  /** 9 for the ace down to 0 for the 2: higher is stronger in Briscola. */
  public static int briscolaStrength(String card) {
    return BRISCOLA_STRENGTH_BY_RANK[rankOf(card)];
  }

  /** Briscola value in whole points: the ace 11, the 3 10, K 4, Q 3, J 2, the rest nothing. */
  public static int briscolaPoints(String card) {
    return BRISCOLA_POINTS_BY_RANK[rankOf(card)];
  }

  /**
   * Whether {@code a} beats {@code b}, the best so far of a Briscola trick led in {@code ledSuit}
   * with trump suit {@code trump}: the higher trump wins, else the higher card of the suit led.
   */
  public static boolean briscolaBeats(String a, String b, char ledSuit, char trump) {
    boolean stronger = briscolaStrength(a) > briscolaStrength(b);
    if (suitOf(a) == trump) {
      return suitOf(b) != trump || stronger;
    }
    return suitOf(b) != trump && suitOf(a) == ledSuit && (suitOf(b) != ledSuit || stronger);
  }

  /**
   * The card that wins among {@code cards} in Briscola, the first card's suit being the suit led
   * and {@code trump} the trump suit; null for no cards.
   */
  public static String briscolaWinningCard(Collection<String> cards, char trump) {
    String best = null;
    for (String card : cards) {
      if (best == null || briscolaBeats(card, best, suitOf(cards.iterator().next()), trump)) {
        best = card;
      }
    }
    return best;
  }

  /** Cards in deck order: by suit (D C S B), strongest first within a suit. */
  public static List<String> sorted(Collection<String> cards) {
    List<String> out = new ArrayList<>(cards);
    out.sort(Comparator.comparingInt((String c) -> SUITS.indexOf(suitOf(c))).thenComparingInt(Cards::rankOf));
    return out;
  }

  /** Name of a {@code Signal} enum value, e.g. "volo"; "" for no signal or an unknown one. */
  public static String signalName(int signal) {
    return signal >= 0 && signal < SIGNAL_NAMES.size() ? SIGNAL_NAMES.get(signal) : "";
  }
}
