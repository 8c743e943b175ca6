package io.spindle.launcher;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Quotes a command for a YARN container's launch command. A NodeManager on Linux writes it into
 * {@code launch_container.sh} as {@code exec /bin/bash -c "COMMAND"}: the script's shell first reads COMMAND as a
 * double-quoted string (where {@code $ ` " \} are special), then the inner bash splits it into words. Each word is
 * single-quoted for the inner shell and its {@code $ ` " \} escaped for the outer one, so every word arrives in the
 * worker exactly as it was given to {@code spindle-run} (Spark's YARN client does the same for its executors).
 */
public final class ShellWords {

  private ShellWords() {}

  /** One word; left bare when it holds only characters no shell treats specially. */
  public static String quote(String word) {
    if (!word.isEmpty() && word.chars().allMatch(c -> Character.isLetterOrDigit(c) || "-_./=:,+@%".indexOf(c) >= 0)) {
      return word;
    }
    StringBuilder b = new StringBuilder("'");
    for (char c : word.toCharArray()) {
      switch (c) {
        case '\'' -> b.append("'\\''"); // inside the outer double quotes "\'" stays as it is
        case '$', '`', '"', '\\' -> b.append('\\').append(c);
        default -> b.append(c);
      }
    }
    return b.append('\'').toString();
  }

  public static String join(List<String> words) {
    return words.stream().map(ShellWords::quote).collect(Collectors.joining(" "));
  }
}
