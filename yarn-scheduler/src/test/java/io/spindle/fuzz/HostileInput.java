package io.spindle.fuzz;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Runs a hostile-input check over many inputs and keeps the figures docs/reliability.md reports: tries, how many
 * were rejected (and as what), how many accepted, the slowest input.
 *
 * <p>A check gets one {@link FuzzInput}, builds whatever it feeds the code under test from it, and answers
 * {@link #ACCEPTED} or a rejection label ({@link #rejected}); it throws {@link AssertionError} where the contract is
 * broken. Anything else it throws, an {@link Error} such as {@link OutOfMemoryError} or {@link StackOverflowError}
 * included, breaks the contract too. Every failure names the input in Base64, so it can be turned into an example.
 *
 * <p>Inputs are random bytes: {@value #DEFAULT_TRIES} per check with seed {@value #DEFAULT_SEED} unless the system
 * properties {@value #TRIES} and {@value #SEED} (a number, or {@code random}) say otherwise. The same check also
 * runs under Jazzer ({@link #once}), which mutates the bytes guided by coverage.
 */
public final class HostileInput {

  public static final String TRIES = "spindle.fuzz.tries";
  public static final String SEED = "spindle.fuzz.seed";
  public static final int DEFAULT_TRIES = 1_000;
  public static final long DEFAULT_SEED = 11;
  public static final String ACCEPTED = "accepted";

  /** Messages that only restate a JDK failure: a user learns nothing about what to fix from them. */
  private static final Pattern UNREADABLE = Pattern.compile("(?s)(null|For input string.*|(integer|long) overflow"
      + "|Index -?\\d+ out of bounds.*|Cannot invoke .*|.*Exception|/ by zero|-?\\d+)");

  private static final Map<String, Tally> TALLIES = new ConcurrentHashMap<>();

  /** One hostile-input check: builds an input from the bytes, feeds it, judges what came back. */
  @FunctionalInterface
  public interface Check {
    String apply(FuzzInput in) throws Exception;
  }

  private HostileInput() {}

  /** Runs {@code check} over random inputs; fails on the first input that breaks the contract. */
  public static Tally run(String target, Check check) {
    int tries = Integer.getInteger(TRIES, DEFAULT_TRIES);
    String seedProperty = System.getProperty(SEED, Long.toString(DEFAULT_SEED));
    long seed = seedProperty.equals("random") ? new SplittableRandom().nextLong() : Long.parseLong(seedProperty);
    Tally tally = new Tally(target + " (random, seed " + seed + ")");
    byte[][] current = new byte[1][];
    // Generous: a hang shows as this timeout, naming the input it hung on.
    Duration limit = Duration.ofSeconds(120 + tries / 50);
    assertTimeoutPreemptively(limit, () -> {
      SplittableRandom random = new SplittableRandom(seed);
      for (int i = 0; i < tries; i++) {
        byte[] bytes = randomBytes(random);
        current[0] = bytes;
        tally.record(judge(target, check, bytes, "try " + i + " of seed " + seed));
      }
    }, () -> target + ": an input took longer than the whole run may (" + limit.toSeconds() + " s); input "
        + base64(current[0]));
    tally.finish();
    return tally;
  }

  /** One input from Jazzer; the figures go into the tally printed by {@link #report}. */
  public static void once(String target, Check check, byte[] bytes) {
    TALLIES.computeIfAbsent(target, t -> new Tally(t + " (Jazzer, coverage-guided)"))
        .record(judge(target, check, bytes, "Jazzer input"));
  }

  /** The run tried both readable and unreadable inputs, so it exercised both the parser and its refusals. */
  public static void assertBothKinds(Tally tally) {
    org.assertj.core.api.Assertions.assertThat(tally.rejected()).as("unreadable outputs tried").isPositive();
    org.assertj.core.api.Assertions.assertThat(tally.accepted()).as("readable outputs tried").isPositive();
  }

  /** Prints and files the tally of a Jazzer run. */
  public static void report(String target) {
    Tally tally = TALLIES.remove(target);
    if (tally != null) {
      tally.finish();
    }
  }

  /** Replays one input, e.g. from a failure message. */
  public static String replay(Check check, String base64) throws Exception {
    return check.apply(new FuzzInput(Base64.getDecoder().decode(base64)));
  }

  /** The label of a rejection by {@code e}, after checking it is of an expected type and says what was wrong. */
  @SafeVarargs
  public static String rejected(Throwable e, Class<? extends Throwable>... expected) {
    boolean typeOk = false;
    for (Class<? extends Throwable> type : expected) {
      typeOk |= type.isInstance(e);
    }
    if (!typeOk) {
      throw new AssertionError("rejected with an unexpected " + e, e);
    }
    requireReadable(e.getMessage(), e);
    return "rejected: " + e.getClass().getSimpleName();
  }

  /** A reason someone can act on: not empty, not merely a number, a class name or a JDK message. */
  public static void requireReadable(String reason, Throwable cause) {
    if (reason == null || reason.isBlank() || reason.strip().length() < 8 || UNREADABLE.matcher(reason.strip()).matches()
        || reason.contains("For input string") || reason.contains("Cannot invoke")) {
      throw new AssertionError("unreadable reason '" + reason + "'", cause);
    }
  }

  private static Judged judge(String target, Check check, byte[] bytes, String which) {
    FuzzInput in = new FuzzInput(bytes);
    long start = System.nanoTime();
    try {
      String outcome = check.apply(in);
      return new Judged(outcome, System.nanoTime() - start, in);
    } catch (Throwable e) { // NOSONAR: an Error is exactly what this looks for
      throw new AssertionError(target + ": hostile input broke the contract (" + which + "): " + e
          + "\ninput (Base64, the bytes read): " + base64(in.consumed()), e);
    }
  }

  /** One input's outcome and how long the check took. */
  private record Judged(String outcome, long nanos, FuzzInput input) {}

  /** Mostly short inputs, where parsers branch most; some long ones, where sizes and limits matter. */
  private static byte[] randomBytes(SplittableRandom random) {
    int roll = random.nextInt(10);
    int length = roll < 6 ? random.nextInt(64) : roll < 9 ? random.nextInt(1024) : random.nextInt(16_384);
    byte[] bytes = new byte[length];
    random.nextBytes(bytes);
    return bytes;
  }

  private static String base64(byte[] bytes) {
    if (bytes == null) {
      return "(none)";
    }
    String b64 = Base64.getEncoder().encodeToString(bytes);
    // A log line, not a dump: long inputs are better replayed from the seed and try number.
    return b64.length() <= 4_000 ? b64 : b64.substring(0, 4_000) + "… (" + bytes.length + " bytes)";
  }

  /** Counts of one run by outcome. */
  public static final class Tally {
    private final String name;
    private final Map<String, Long> outcomes = new TreeMap<>();
    private final long startNanos = System.nanoTime();
    private long tries;
    private long slowestNanos;
    private FuzzInput slowest;

    Tally(String name) {
      this.name = name;
    }

    synchronized void record(Judged judged) {
      if (judged.nanos() > slowestNanos) {
        slowestNanos = judged.nanos();
        slowest = judged.input();
      }
      tries++;
      outcomes.merge(judged.outcome(), 1L, Long::sum);
    }

    public synchronized long tries() {
      return tries;
    }

    public synchronized long rejected() {
      return outcomes.entrySet().stream().filter(e -> !e.getKey().equals(ACCEPTED)).mapToLong(Map.Entry::getValue)
          .sum();
    }

    public synchronized long accepted() {
      return outcomes.getOrDefault(ACCEPTED, 0L);
    }

    synchronized void finish() {
      String line = String.format("[hostile-input] %s: %d tries, %d rejected with a reason, %d accepted %s;"
          + " slowest input %d ms; %.1f s", name, tries, rejected(), accepted(), outcomes, slowestNanos / 1_000_000,
          (System.nanoTime() - startNanos) / 1e9);
      if (slowestNanos > 1_000_000_000L) {
        // Slow is how a hang starts: name the input, so it can be replayed and looked at.
        line += " (slowest input, Base64: " + base64(slowest.consumed()) + ")";
      }
      System.out.println(line);
      try {
        Path dir = Path.of("target", "hostile-input");
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("figures.txt"), line + System.lineSeparator(), StandardCharsets.UTF_8,
            StandardOpenOption.CREATE, StandardOpenOption.APPEND);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
