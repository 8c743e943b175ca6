package io.spindle.bench;

import io.spindle.core.engine.CycleResult;
import io.spindle.core.engine.Decision;
import io.spindle.core.engine.DurableState;
import io.spindle.core.engine.Engine;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.EngineSettings;
import io.spindle.core.engine.ManualClock;
import io.spindle.core.engine.PlacementSpec;
import io.spindle.core.engine.RestoreReport;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.Resources;
import io.spindle.core.model.Topology;
import io.spindle.core.preemption.PreemptionSettings;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.core.queue.QueueTree;
import io.spindle.ha.SchedulerLeadership;
import io.spindle.ha.SchedulerStateCodec;
import io.spindle.ha.SchedulerStateStore;
import io.spindle.local.EmbeddedZooKeeper;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.ZooDefs;

/**
 * Leader failover time, from the leader's loss to the new leader's first decision, on a 3-server ZooKeeper ensemble
 * (Curator's {@code TestingCluster}, in this JVM).
 *
 * <p>Each trial: the leader talks to one ZooKeeper server only; its engine runs a full cluster (N nodes x 8 GPUs,
 * one gang of 2 x 4 GPUs per node in queue {@code a}) and a starving gang of queue {@code b} with a checkpoint
 * notice in flight, and it has saved its state. Two ways to lose it: <b>crash</b> (its server is stopped, so its
 * session must expire on the quorum before the standby can lead) and <b>handover</b> (it closes its latch, as a
 * ResourceManager going to standby does). The standby then loads the state, decodes it, and — after the cycle in
 * which YARN's recovery tells it the running containers — restores it and runs the cycle with the re-sent asks: its
 * first decision. Printed per phase: election, load + decode, recovery cycle (YARN's events, timed apart because it
 * is YARN's work, not the take-over's), restore + first cycle.
 *
 * <p>Run: {@code scripts/bench-failover [nodes ...]} (default 1000 5000).
 */
public final class FailoverBenchmark {

  private static final int TRIALS = Integer.getInteger("trials", 3);

  /** One trial's timings, in milliseconds, the session timeout ZooKeeper granted, and the saved state's size. */
  public record Trial(String mode, int nodes, int sessionMs, double electionMs, double loadMs, double recoveryMs,
      double restoreMs, int stateBytes, RestoreReport report) {
    double takeOverMs() {
      return electionMs + loadMs + restoreMs;
    }
  }

  public static void main(String[] args) throws Exception {
    List<Integer> sizes = new ArrayList<>();
    for (String a : args) {
      sizes.add(Integer.parseInt(a.replace("_", "")));
    }
    if (sizes.isEmpty()) {
      sizes = List.of(1_000, 5_000);
    }
    System.out.printf(Locale.ROOT, "Spindle leader failover (JDK %s, %d CPUs), %d trials each; times in ms%n",
        System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(), TRIALS);
    System.out.printf(Locale.ROOT, "%-9s %6s %8s %9s %8s %9s %9s %10s %12s%n", "mode", "nodes", "session",
        "election", "load", "restore", "total", "recovery", "state bytes");
    EmbeddedZooKeeper.prepare();
    try (TestingCluster ensemble = new TestingCluster(3)) {
      ensemble.start();
      run(ensemble, "handover", 200, 2_000, 1); // Warm-up: JIT and ZooKeeper connections, not reported.
      for (int nodes : sizes) {
        for (String mode : List.of("handover", "crash")) {
          for (int session : mode.equals("crash") ? List.of(2_000, 4_000) : List.of(2_000)) {
            List<Trial> trials = run(ensemble, mode, nodes, session, TRIALS);
            Trial worst = trials.stream().max(java.util.Comparator.comparingDouble(Trial::takeOverMs)).orElseThrow();
            Trial median = trials.stream().sorted(java.util.Comparator.comparingDouble(Trial::takeOverMs))
                .toList().get(trials.size() / 2);
            for (Trial t : List.of(median, worst)) {
              System.out.printf(Locale.ROOT, "%-9s %6d %8d %9.0f %8.1f %9.1f %9.0f %10.1f %12d  %s%n", t.mode(),
                  t.nodes(), t.sessionMs(), t.electionMs(), t.loadMs(), t.restoreMs(), t.takeOverMs(),
                  t.recoveryMs(), t.stateBytes(), t == median ? "median" : "worst");
            }
          }
        }
      }
    }
    System.exit(0); // ZooKeeper's server threads are not daemons.
  }

  /** {@code trials} failovers of a leader running {@code nodes} nodes. */
  public static List<Trial> run(TestingCluster ensemble, String mode, int nodes, int sessionMs, int trials)
      throws Exception {
    List<Trial> out = new ArrayList<>();
    List<InstanceSpec> servers = List.copyOf(ensemble.getInstances());
    for (int t = 0; t < trials; t++) {
      String root = "/spindle/bench-" + System.nanoTime();
      Scenario scenario = Scenario.build(nodes);
      CuratorFramework leaderZk = client(servers.get(0).getConnectString(), sessionMs);
      CuratorFramework standbyZk = client(servers.get(1).getConnectString() + "," + servers.get(2).getConnectString(),
          sessionMs);
      CompletableFuture<Long> leaderElected = new CompletableFuture<>();
      CompletableFuture<Long> standbyElected = new CompletableFuture<>();
      SchedulerLeadership leader = SchedulerLeadership.start(leaderZk, root, "rm1", ZooDefs.Ids.OPEN_ACL_UNSAFE,
          listener(leaderElected), System::currentTimeMillis);
      leaderElected.get(30, TimeUnit.SECONDS);
      SchedulerLeadership standby = SchedulerLeadership.start(standbyZk, root, "rm2", ZooDefs.Ids.OPEN_ACL_UNSAFE,
          listener(standbyElected), System::currentTimeMillis);
      byte[] saved = SchedulerStateCodec.encode(scenario.engine.durableState(Scenario::name), 1);
      new SchedulerStateStore(leaderZk, root, leader, ZooDefs.Ids.OPEN_ACL_UNSAFE).write(leader.term(), saved);

      int negotiated = leaderZk.getZookeeperClient().getZooKeeper().getSessionTimeout();
      long lost = System.nanoTime();
      if (mode.equals("crash")) {
        ensemble.killServer(servers.get(0));
      } else {
        leader.close();
      }
      long elected = standbyElected.get(60, TimeUnit.SECONDS);
      long t1 = System.nanoTime();
      byte[] loaded = new SchedulerStateStore(standbyZk, root, standby, ZooDefs.Ids.OPEN_ACL_UNSAFE).load()
          .orElseThrow();
      DurableState state = SchedulerStateCodec.decode(loaded).state();
      long t2 = System.nanoTime();
      Engine next = scenario.standbyEngine();
      next.cycle(scenario.recoveryEvents());
      long t3 = System.nanoTime();
      RestoreReport report = next.restore(state, Scenario::allocationOf);
      CycleResult first = next.cycle(scenario.asks());
      long t4 = System.nanoTime();
      if (first.decisions().stream().noneMatch(d -> d instanceof Decision.RequestCheckpoint)) {
        throw new IllegalStateException("the new leader's first cycle did not re-issue the notice in flight");
      }
      out.add(new Trial(mode, nodes, negotiated, ms(elected - lost), ms(t2 - t1), ms(t3 - t2), ms(t4 - t3),
          loaded.length, report));
      standby.close();
      leader.close();
      leaderZk.close();
      standbyZk.close();
      if (mode.equals("crash")) {
        ensemble.restartServer(servers.get(0));
        // Whole again before the next trial (or the ensemble's close, which fails on a server still starting).
        client(servers.get(0).getConnectString(), sessionMs).close();
      }
    }
    return out;
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }

  private static CuratorFramework client(String connect, int sessionMs) throws InterruptedException {
    CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connect).sessionTimeoutMs(sessionMs)
        .connectionTimeoutMs(Math.min(sessionMs, 2_000)).retryPolicy(new RetryNTimes(1_000, 100)).build();
    c.start();
    if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("no ZooKeeper at " + connect);
    }
    return c;
  }

  private static SchedulerLeadership.Listener listener(CompletableFuture<Long> elected) {
    return new SchedulerLeadership.Listener() {
      @Override
      public void elected(long epoch, long heldSince) {
        elected.complete(System.nanoTime());
      }

      @Override
      public void deposed(String why) {
        // Measured from the loss, not from the deposition.
      }
    };
  }

  /** The leader's cluster and workload, and what YARN's recovery tells the standby about it. */
  static final class Scenario {
    private static final Resources WORKER = Resources.of(16_384, 8).withGpus(4);
    final int nodes;
    final Engine engine;
    final ManualClock clock = new ManualClock(1_000_000);
    private final List<EngineEvent> running = new ArrayList<>();

    private Scenario(int nodes) {
      this.nodes = nodes;
      this.engine = newEngine(clock);
    }

    static Scenario build(int nodes) {
      Scenario s = new Scenario(nodes);
      List<EngineEvent> setup = new ArrayList<>(s.nodeEvents());
      setup.addAll(s.appEvents());
      for (int g = 0; g < nodes; g++) {
        setup.add(new EngineEvent.Demand(AppId.of("gang" + g), "workers", WORKER, 2, PlacementSpec.gang(null, false)));
      }
      CycleResult filled = s.engine.cycle(setup);
      for (Decision.Allocate a : filled.allocations()) {
        s.running.add(new EngineEvent.ContainerRecovered(-a.allocationId(), a.appId(), a.requestKey(), a.nodeId(),
            a.shape()));
      }
      s.clock.advance(1_000);
      s.engine.cycle(s.asks());
      s.clock.advance(61_000);
      CycleResult noticed = s.engine.cycle(List.of());
      if (noticed.decisions().stream().noneMatch(d -> d instanceof Decision.RequestCheckpoint)) {
        throw new IllegalStateException("the scenario needs a notice in flight");
      }
      return s;
    }

    /** The allocation id the standby's driver gives a recovered container (the leader's, negated). */
    static String name(long allocationId) {
      return "container-" + allocationId;
    }

    static Long allocationOf(String name) {
      return -Long.parseLong(name.substring("container-".length()));
    }

    Engine standbyEngine() {
      Engine e = newEngine(new ManualClock(clock.nowMillis()));
      e.cycle(nodeEvents());
      return e;
    }

    List<EngineEvent> recoveryEvents() {
      List<EngineEvent> out = new ArrayList<>(appEvents());
      out.addAll(running);
      return out;
    }

    List<EngineEvent> asks() {
      return List.of(new EngineEvent.Demand(AppId.of("urgent"), "workers", WORKER, 2, PlacementSpec.gang(null, false)));
    }

    private List<EngineEvent> nodeEvents() {
      GpuModel h100 = GpuModelCatalog.builtIn().require("model", "H100-80GB");
      List<EngineEvent> out = new ArrayList<>();
      for (int i = 0; i < nodes; i++) {
        List<Gpu> gpus = new ArrayList<>(8);
        for (int g = 0; g < 8; g++) {
          gpus.add(new Gpu(g, h100, 0, false));
        }
        out.add(new EngineEvent.NodeAdded(new Node(NodeId.of("node" + i), "/rack" + (i % 50), 1 << 20, 128, gpus)));
      }
      return out;
    }

    private List<EngineEvent> appEvents() {
      List<EngineEvent> out = new ArrayList<>();
      for (int g = 0; g < nodes; g++) {
        out.add(new EngineEvent.AppSubmitted(AppId.of("gang" + g), "a", "trainer", 0));
      }
      out.add(new EngineEvent.AppSubmitted(AppId.of("urgent"), "b", "oncall", 0));
      return out;
    }

    private static Engine newEngine(ManualClock clock) {
      Topology.Builder topo = Topology.builder("rack");
      for (int r = 0; r < 50; r++) {
        topo.location("/rack" + r);
      }
      Map<String, String> conf = new HashMap<>();
      String p = QueueConfigParser.PREFIX;
      conf.put(p + "root.queues", "a,b");
      conf.put(p + "root.a.capacity", "50");
      conf.put(p + "root.b.capacity", "50");
      conf.put(p + "root.a.user-limit-factor", "-1");
      conf.put(p + "root.b.user-limit-factor", "-1");
      QueueTree tree = new QueueConfigParser().parse(conf);
      EngineSettings settings = EngineSettings.defaults().withPreemption(PreemptionSettings.defaults()
          .withEnabled(true));
      return new Engine(GpuModelCatalog.builtIn(), tree, topo.build(), clock, settings);
    }
  }
}
