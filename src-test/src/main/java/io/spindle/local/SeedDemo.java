package io.spindle.local;

import io.spindle.ha.ZkSettings;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.client.api.YarnClient;

/**
 * The {@code --demo=seed} workload: the four seed scenarios of issue #22 on the seed cluster
 * ({@code conf/seed-cluster.properties}, {@code conf/seed-capacity-scheduler.xml}), one after another (the gang
 * overlaps the end of the first), each followed by its check ({@link SeedScenarios}). Prints one summary line per
 * scenario: what happened, in figures read from the cluster, and HELD or FAILED. See docs/local-cluster.md.
 */
final class SeedDemo {

  /** One scenario's result: a name, whether its check held, and what was seen. */
  record Outcome(String scenario, boolean held, String seen) {}

  private final SpindleLocalCluster cluster;
  private final PrintStream out;

  SeedDemo(SpindleLocalCluster cluster, PrintStream out) {
    this.cluster = cluster;
    this.out = out;
  }

  /** Runs the four scenarios and prints the summary; true when every check held. */
  boolean run() throws Exception {
    String web = cluster.webUrl().orElse(null);
    if (web == null) {
      out.println("Seed demo: needs Spindle's scheduler (its status API is where the checks read the cluster).");
      return false;
    }
    if (cluster.spec().nodes().stream().mapToInt(LocalClusterSpec.NodeSpec::wholeGpus).sum() < 64) {
      out.println("Seed demo: needs 64 whole GPUs (8 nodes x 8, conf/seed-cluster.properties); this cluster has "
          + "fewer.");
      return false;
    }
    Configuration conf = cluster.clientConf();
    ZkSettings zk = ZkSettings.from(cluster.resourceManager().getConfig());
    Path checkpoints = cluster.workdir().root().resolve("checkpoints");
    List<Outcome> outcomes = new ArrayList<>();
    try (YarnClient yarn = YarnClient.createYarnClient()) {
      yarn.init(conf);
      yarn.start();
      SpindleStatus status = new SpindleStatus(web);
      awaitEngineGpus(status, 64);
      SeedScenarios.Factory apps = spec -> new SeedAm(spec, yarn, conf, zk.address(), zk.root(), status,
          checkpoints, cluster.spec().gpuResource());
      long cycleMs = cluster.resourceManager().getConfig().getLong("yarn.scheduler.spindle.cycle-interval-ms", 100);
      Map<String, String> names = new HashMap<>();
      for (int i = 0; i < cluster.nodeIds().size(); i++) {
        names.put(cluster.nodeIds().get(i).getHost(), cluster.spec().nodes().get(i).name());
      }
      SeedScenarios scenarios = new SeedScenarios(apps, status, yarn, cycleMs, names);
      out.println("Seed demo: four scenarios on " + cluster.spec().nodes().size() + " nodes, 64 GPUs; unmanaged "
          + "ApplicationMasters in this JVM run `sleep` in their containers. Checks read the cluster: Spindle's "
          + "status API (" + web + "api/v1/), YARN's reports, and checkpoint notices from ZooKeeper.");
      out.println();
      List<SeedAm> teams = scenarios.startTeams();
      outcomes.add(guard("fair share", () -> scenarios.fairShare(teams)));
      outcomes.add(guard("32-GPU gang", scenarios::gang));
      scenarios.finish(teams);
      outcomes.add(guard("checkpoint+preempt", scenarios::preemption));
      outcomes.add(guard("NVLink node", scenarios::nvlinkNode));
    }
    out.println();
    out.println("Seed demo summary");
    for (Outcome o : outcomes) {
      out.printf("  %-19s %-6s %s%n", o.scenario(), o.held() ? "HELD" : "FAILED", o.seen());
    }
    long held = outcomes.stream().filter(Outcome::held).count();
    out.printf("%d of %d scenarios held.%n", held, outcomes.size());
    return held == outcomes.size();
  }

  /**
   * A node the ResourceManager lists as running may not have reached Spindle's engine yet, and a gang judged against
   * fewer nodes than there are is rejected as larger than the cluster.
   */
  private static void awaitEngineGpus(SpindleStatus status, int gpus) throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    while (status.get("api/v1/status").path("cluster").path("gpus").asDouble() < gpus) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("Spindle did not count " + gpus + " GPUs within 60 s");
      }
      Thread.sleep(100);
    }
  }

  /** A scenario that threw is a scenario whose check did not hold; the others still run. */
  private Outcome guard(String name, Scenario s) {
    out.println("== " + name);
    try {
      Outcome o = s.run();
      out.println("   " + (o.held() ? "held: " : "FAILED: ") + o.seen());
      return o;
    } catch (Exception e) {
      out.println("   FAILED: " + e);
      return new Outcome(name, false, "could not run: " + e);
    }
  }

  @FunctionalInterface
  private interface Scenario {
    Outcome run() throws Exception;
  }
}
