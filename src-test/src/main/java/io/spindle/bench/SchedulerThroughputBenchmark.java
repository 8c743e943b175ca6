package io.spindle.bench;

import io.spindle.yarn.SpindleScheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;

/**
 * Container allocations per second of YARN's CapacityScheduler and of Spindle, driven the same way in one JVM: a
 * ResourceManager ({@code MockRM}: the real RM services and state machines, without RPC servers) with simulated
 * NodeManagers that heartbeat through the resource tracker, and unmanaged ApplicationMasters that ask through the
 * ApplicationMasterService, i.e. {@code ResourceScheduler.handle(NODE_UPDATE)} and {@code ResourceScheduler.allocate}
 * for both schedulers.
 *
 * <p>Workload (seeded, identical for both): nodes with 8 GPUs, 64 vcores and 512 GB; {@code apps} applications in
 * two queues (50/50 guarantees, each may use the whole cluster), each asking one batch of containers of 1, 2, 4 or 8
 * GPUs (50/20/20/10%) with 4 vcores and 8 GB per GPU, until the asks cover {@code fill} of the cluster's GPUs. The
 * clock starts when the asks are in and stops at the last container the AMs received (everything, or what the
 * scheduler could place before nothing more came for 5 s). Heartbeats go round all
 * nodes as fast as the harness thread can send them; the CapacityScheduler allocates in those heartbeats (several
 * containers per heartbeat, its default), Spindle in its scheduling thread, which heartbeats wake.
 *
 * <p>Run: {@code scripts/bench-yarn [nodes ...]}.
 */
public final class SchedulerThroughputBenchmark {

  private static final String GPU = "yarn.io/gpu";
  private static final int GPUS_PER_NODE = 8;
  private static final long STALL_MS = 5_000;

  record Ask(int queue, int gpus, int containers) {}

  /** @param seconds from the asks to the last container the AMs received */
  record Result(String scheduler, int nodes, int asked, int allocated, double seconds, int heartbeatRounds) {
    double perSecond() {
      return allocated / seconds;
    }
  }

  public static void main(String[] args) throws Exception {
    List<Integer> sizes = new ArrayList<>();
    for (String a : args) {
      sizes.add(Integer.parseInt(a));
    }
    if (sizes.isEmpty()) {
      sizes = List.of(1_000, 5_000);
    }
    int apps = 200;
    double fill = 0.9;
    long seed = 7;
    System.out.printf(Locale.ROOT, "YARN scheduler throughput: %d apps, asks cover %.0f%% of the GPUs, seed %d "
        + "(JDK %s, %d CPUs, heap %d MB)%n", apps, fill * 100, seed, System.getProperty("java.version"),
        Runtime.getRuntime().availableProcessors(), Runtime.getRuntime().maxMemory() >> 20);
    System.out.printf(Locale.ROOT, "%-18s %7s %8s %10s %9s %14s %10s%n", "scheduler", "nodes", "asked", "allocated",
        "seconds", "allocations/s", "hb rounds");
    List<String> ratios = new ArrayList<>();
    for (int nodes : sizes) {
      List<Ask> asks = workload(nodes, apps, fill, new Random(seed));
      Result cs = run(CapacityScheduler.class.getName(), "CapacityScheduler", nodes, asks);
      print(cs);
      Result spindle = run(SpindleScheduler.class.getName(), "Spindle", nodes, asks);
      print(spindle);
      ratios.add(String.format(Locale.ROOT, "%d nodes: Spindle / CapacityScheduler = %.2fx", nodes,
          spindle.perSecond() / cs.perSecond()));
    }
    ratios.forEach(System.out::println);
  }

  private static void print(Result r) {
    System.out.printf(Locale.ROOT, "%-18s %7d %8d %10d %9.2f %14.0f %10d%n", r.scheduler(), r.nodes(), r.asked(),
        r.allocated(), r.seconds(), r.perSecond(), r.heartbeatRounds());
  }

  static List<Ask> workload(int nodes, int apps, double fill, Random random) {
    long budget = (long) (nodes * GPUS_PER_NODE * fill);
    long perApp = Math.max(1, budget / apps);
    List<Ask> out = new ArrayList<>();
    for (int a = 0; a < apps && budget > 0; a++) {
      double p = random.nextDouble();
      int gpus = p < 0.5 ? 1 : p < 0.7 ? 2 : p < 0.9 ? 4 : 8;
      int containers = (int) Math.max(1, Math.min(budget, perApp) / gpus);
      out.add(new Ask(a % 2, gpus, containers));
      budget -= (long) containers * gpus;
    }
    return out;
  }

  static Configuration conf(String scheduler) {
    YarnConfiguration c = new YarnConfiguration();
    c.set(YarnConfiguration.RM_SCHEDULER, scheduler);
    c.set(YarnConfiguration.RESOURCE_TYPES, GPU);
    c.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, 512 * 1024);
    c.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES, 64);
    c.setBoolean(YarnConfiguration.RECOVERY_ENABLED, false);
    String p = "yarn.scheduler.capacity.";
    // Without the dominant resource calculator CapacityScheduler counts memory only and ignores GPUs.
    c.set(p + "resource-calculator", DominantResourceCalculator.class.getName());
    // The Hadoop test jars on this classpath ship a capacity-scheduler.xml with a 'default' queue; it stays, empty.
    c.set(p + "root.queues", "a,b,default");
    c.set(p + "root.default.capacity", "0");
    for (String q : List.of("a", "b")) {
      c.set(p + "root." + q + ".capacity", "50");
      c.set(p + "root." + q + ".maximum-capacity", "100");
      c.set(p + "root." + q + ".user-limit-factor", "100");
    }
    c.set(p + "node-locality-delay", "-1");
    c.set(p + "maximum-am-resource-percent", "1.0");
    return c;
  }

  static Result run(String schedulerClass, String name, int nodes, List<Ask> asks) throws Exception {
    Configuration conf = conf(schedulerClass);
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.shutdown();
    ResourceUtils.resetResourceTypes(conf);
    MockRM rm = new MockRM(conf);
    // MockRM turns the root logger to DEBUG, which would make logging the benchmark.
    org.apache.log4j.LogManager.getRootLogger().setLevel(org.apache.log4j.Level.WARN);
    org.apache.log4j.LogManager.getLogger("io.spindle").setLevel(org.apache.log4j.Level.WARN);
    rm.start();
    try {
      List<MockNM> nms = new ArrayList<>();
      for (int i = 0; i < nodes; i++) {
        Resource capability = Resource.newInstance(512 * 1024, 64);
        capability.setResourceValue(GPU, GPUS_PER_NODE);
        // Distinct ports on one resolvable host: the RM resolves node hosts when it writes container tokens.
        MockNM nm = new MockNM("localhost:" + (20_000 + i), capability,
            rm.getResourceTrackerService());
        nm.registerNode();
        nms.add(nm);
      }
      rm.drainEvents();
      for (MockNM nm : nms) {
        nm.nodeHeartbeat(true);
      }
      rm.drainEvents();
      List<MockAM> ams = new ArrayList<>();
      String user = UserGroupInformation.getCurrentUser().getShortUserName();
      for (int i = 0; i < asks.size(); i++) {
        RMApp app = MockRMAppSubmitter.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(1024, rm)
            .withAppName("bench-" + i).withUser(user).withQueue(asks.get(i).queue() == 0 ? "a" : "b")
            .withUnmanagedAM(true).withWaitForAppAcceptedState(true).build());
        rm.waitForState(app.getApplicationId(), RMAppState.ACCEPTED);
        MockAM am = new MockAM(rm.getRMContext(), rm.getApplicationMasterService(),
            app.getCurrentAppAttempt().getAppAttemptId());
        rm.waitForState(am.getApplicationAttemptId(), RMAppAttemptState.LAUNCHED);
        am.registerAppAttempt();
        ams.add(am);
      }
      int total = 0;
      long start = System.nanoTime();
      for (int i = 0; i < asks.size(); i++) {
        Ask a = asks.get(i);
        Resource each = Resource.newInstance(8L * 1024 * a.gpus(), 4 * a.gpus());
        each.setResourceValue(GPU, a.gpus());
        ResourceRequest req = ResourceRequest.newInstance(Priority.newInstance(1), ResourceRequest.ANY, each,
            a.containers());
        ams.get(i).allocate(List.of(req), List.<ContainerId>of());
        total += a.containers();
      }
      int received = 0;
      int rounds = 0;
      long lastProgress = System.nanoTime();
      // Placement may leave asks that no node can hold any more (e.g. 8-GPU containers once 1-GPU ones are spread
      // over every node): the run ends when everything is allocated or nothing has come for STALL_MS.
      while (received < total && System.nanoTime() - lastProgress < STALL_MS * 1_000_000) {
        for (MockNM nm : nms) {
          nm.nodeHeartbeat(true);
        }
        rounds++;
        for (MockAM am : ams) {
          List<Container> got = am.allocate(List.of(), List.<ContainerId>of()).getAllocatedContainers();
          if (!got.isEmpty()) {
            received += got.size();
            lastProgress = System.nanoTime();
          }
        }
      }
      double seconds = (lastProgress - start) / 1e9;
      return new Result(name, nodes, total, received, seconds, rounds);
    } finally {
      rm.stop();
    }
  }
}
