package io.spindle.sim.faults;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code spindle-sim --failures ...}: one failure-injection run, or with {@code --fault-compare} the six variants of
 * the question side by side (restart anywhere, hot swap in domain, hot swap with spares; each with the fixed
 * and the advised checkpoint interval), on the same seed. Writes {@code report.json} to {@code --out} and a Markdown
 * table to stdout; engine wall time goes to stderr only.
 */
public final class FaultCommand {

  static final String DEFAULT_MIX = "../shared/traces/philly/philly-sep-dec-2017.csv";

  private FaultCommand() {}

  public static int run(Map<String, String> a, PrintStream out, PrintStream err) throws IOException {
    FaultOptions base = FaultOptions.parse(a);
    List<BackgroundWork.Sample> mix = base.backgroundLoad() == 0 ? List.of()
        : BackgroundWork.philly(Path.of(a.getOrDefault("background-trace", DEFAULT_MIX)));
    List<FaultOptions> variants = new ArrayList<>();
    if (a.containsKey("fault-compare")) {
      long fixed = base.checkpointMillis() > 0 ? base.checkpointMillis() : 3_600_000;
      int spares = Math.max(1, base.sparesPerRack());
      for (long ckpt : new long[] {fixed, 0}) {
        variants.add(base.with(false, 0, ckpt));
        variants.add(base.with(true, 0, ckpt));
        variants.add(base.with(true, spares, ckpt));
      }
    } else {
      variants.add(base);
    }
    List<FaultResult> results = new ArrayList<>();
    for (FaultOptions v : variants) {
      long t0 = System.nanoTime();
      FaultResult r = new FaultSimulator(v, mix).run();
      results.add(r);
      err.println(String.format(Locale.ROOT, "%s: %.1f s wall, engine %.1f s over %,d cycles (%.2f ms a cycle), "
              + "%d GPU faults injected, %d hit a running training job", v.name(), (System.nanoTime() - t0) / 1e9,
          r.engineSeconds(), r.cycles(), 1000 * r.engineSeconds() / Math.max(1, r.cycles()), r.hardwareFaults(),
          r.faultsOnTraining()));
    }
    Path dir = Path.of(a.getOrDefault("out", "sim-out"));
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("report.json"), json(base, results), StandardCharsets.UTF_8);
    out.print(header(base));
    out.print(FaultResult.table(results));
    err.println("wrote " + dir.resolve("report.json"));
    return 0;
  }

  static String header(FaultOptions o) {
    return String.format(Locale.ROOT, "Failure injection: %,d nodes x %d GPUs (%,d GPUs, %d nodes a rack), training "
            + "jobs %s GPUs, %.2e interruptions per GPU-hour (%.1f%% GPU faults), repair %s, checkpoint write %d s, "
            + "restart %d min, background load %.0f%%, %.0f days, seed %d%n%n", o.nodes(), o.gpusPerNode(),
        o.totalGpus(), o.nodesPerRack(), o.trainingGpus(), o.perGpuHour(), 100 * o.hardwareShare(), o.repair(),
        o.writeMillis() / 1000, o.startupMillis() / 60_000, 100 * o.backgroundLoad(), o.days(), o.seed());
  }

  static String json(FaultOptions o, List<FaultResult> results) {
    StringBuilder b = new StringBuilder("{\n \"failureInjection\": {");
    b.append(String.format(Locale.ROOT, "\"nodes\": %d, \"gpusPerNode\": %d, \"nodesPerRack\": %d, "
            + "\"trainingGpus\": %s, \"interruptionsPerGpuHour\": %.6e, \"hardwareShare\": %.3f, \"repair\": %s, "
            + "\"checkpointWriteSeconds\": %.1f, \"restartSeconds\": %.1f, \"stopSeconds\": %.1f, "
            + "\"backgroundLoad\": %.3f, \"backgroundGpuScale\": %d, \"days\": %.2f, \"seed\": %d},\n \"runs\": [",
        o.nodes(), o.gpusPerNode(), o.nodesPerRack(), o.trainingGpus(), o.perGpuHour(), o.hardwareShare(),
        FaultResult.quote(o.repair().toString()), o.writeMillis() / 1000.0, o.startupMillis() / 1000.0,
        o.stopMillis() / 1000.0, o.backgroundLoad(), o.backgroundGpuScale(), o.days(), o.seed()));
    for (int i = 0; i < results.size(); i++) {
      b.append(i == 0 ? "\n  " : ",\n  ").append(results.get(i).json());
    }
    return b.append("\n ]\n}\n").toString();
  }
}
