package io.spindle.nm;

import java.util.List;

/**
 * Runs {@code nvidia-smi} with arguments. Injected so that discovery and re-partitioning can be tested against
 * recorded outputs and a fake binary; never throws, because a failing tool must never take the NodeManager down.
 */
public interface NvidiaSmi {

  /** Runs {@code nvidia-smi args...} and returns what it printed; a failure to start or a timeout is a result too. */
  Result run(List<String> args);

  /** Exit code, standard output and standard error of one invocation ({@code exitCode < 0}: it did not finish). */
  record Result(int exitCode, String stdout, String stderr) {

    public Result {
      stdout = stdout == null ? "" : stdout;
      stderr = stderr == null ? "" : stderr;
    }

    public boolean ok() {
      return exitCode == 0;
    }

    /** A short description of a failure for a log line: the exit code and the first line of stderr or stdout. */
    public String failure() {
      String text = stderr.isBlank() ? stdout : stderr;
      String first = text.strip().lines().findFirst().orElse("");
      return "exit code " + exitCode + (first.isEmpty() ? "" : ": " + first);
    }
  }

  /** The command line as a person would type it, for log lines. */
  static String describe(List<String> args) {
    return "nvidia-smi " + String.join(" ", args);
  }
}
