package io.spindle.launcher;

import io.spindle.launcher.yarn.SpindleRun;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.hadoop.conf.Configuration;

/** One {@code spindle-run} in the background of a test, as a user would run it: what it printed so far, its end. */
record SpindleRunJob(ByteArrayOutputStream bytes, Future<Integer> exit) {

  /** How one spindle-run ended and everything it printed. */
  record Outcome(int exit, String output) {}

  static SpindleRunJob launch(ExecutorService background, Configuration conf, String... args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    return new SpindleRunJob(bytes, background.submit(() -> new SpindleRun(conf, out, 200).run(args)));
  }

  String output() {
    return bytes.toString(StandardCharsets.UTF_8);
  }

  Outcome get(long minutes) throws Exception {
    try {
      return new Outcome(exit.get(minutes, TimeUnit.MINUTES), output());
    } catch (TimeoutException e) {
      throw new AssertionError("spindle-run did not end within " + minutes + " min; it printed:\n" + output(), e);
    }
  }
}
