package io.spindle.yarn;

import static io.spindle.yarn.MiniClusterSupport.GPU;
import static io.spindle.yarn.MiniClusterSupport.gpus;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * AMs of one queue change their GPU asks at once while Spindle allocates and they release. YARN keeps a queue's GPU
 * figures in a plain HashMap that every application of the queue (and, through the parents, of the cluster) updates;
 * Spindle updated it from IPC handlers (asks), its scheduling thread (allocations) and the dispatcher (completions)
 * at once, and an AM's allocate call failed with ConcurrentModificationException (found by the failover soak,
 * docs/reliability.md). The queue's metrics here are watched: each update takes a moment, so two at once would be
 * seen; none may overlap, and once the applications end the queue's figures are back at zero.
 */
class QueueMetricsConcurrencyTest {

  private static final int AMS = 6;
  private static final int ROUNDS = 12;
  private static MiniYARNCluster cluster;
  private static YarnClient client;
  private static Watched queueA;

  /** Queue metrics that notice two updates at once (a millisecond each, so that they would). */
  static final class Watched extends QueueMetrics {
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger overlaps = new AtomicInteger();
    private final AtomicInteger updates = new AtomicInteger();

    private Watched(String queue, Configuration conf) {
      super(DefaultMetricsSystem.instance(), queue, null, false, conf);
    }

    /** Registered as YARN registers a queue's metrics (which fills in its counters), under {@code queue}. */
    static Watched register(String queue, Configuration conf) {
      Watched w = DefaultMetricsSystem.instance().register(sourceName(queue).toString(), "Metrics for queue: " + queue,
          new Watched(queue, conf));
      QueueMetrics.getQueueMetrics().put(queue, w);
      return w;
    }

    private void enter() {
      updates.incrementAndGet();
      if (inside.incrementAndGet() > 1) {
        overlaps.incrementAndGet();
      }
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    @Override
    public void incrPendingResources(String partition, String user, int containers, Resource res) {
      enter();
      try {
        super.incrPendingResources(partition, user, containers, res);
      } finally {
        inside.decrementAndGet();
      }
    }

    @Override
    public void decrPendingResources(String partition, String user, int containers, Resource res) {
      enter();
      try {
        super.decrPendingResources(partition, user, containers, res);
      } finally {
        inside.decrementAndGet();
      }
    }

    @Override
    public void allocateResources(String partition, String user, int containers, Resource res,
        boolean decrPending) {
      enter();
      try {
        super.allocateResources(partition, user, containers, res, decrPending);
      } finally {
        inside.decrementAndGet();
      }
    }

    @Override
    public void releaseResources(String partition, String user, int containers, Resource res) {
      enter();
      try {
        super.releaseResources(partition, user, containers, res);
      } finally {
        inside.decrementAndGet();
      }
    }
  }

  @BeforeAll
  static void start() {
    YarnConfiguration c = new YarnConfiguration();
    c.set(YarnConfiguration.RM_SCHEDULER, SpindleScheduler.class.getName());
    c.set(YarnConfiguration.RESOURCE_TYPES, GPU);
    c.set("yarn.nodemanager.resource-type." + GPU, "4");
    c.setInt(YarnConfiguration.NM_LOG_RETAIN_SECONDS, 0);
    c.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 16_384);
    c.setInt(YarnConfiguration.NM_VCORES, 8);
    MiniClusterSupport.halvesAandB(c);
    QueueMetrics.clearQueueMetrics();
    ResourceUtils.resetResourceTypes(c);
    // Spindle takes a queue's metrics from YARN's registry, where this one is found first.
    queueA = Watched.register("root.a", c);
    cluster = new MiniYARNCluster("queue-metrics", 1, 2, 1, 1);
    cluster.init(c);
    cluster.start();
    client = MiniClusterSupport.startClient(cluster.getConfig());
  }

  @AfterAll
  static void stop() throws Exception {
    MiniClusterSupport.stopAll(client, cluster);
    QueueMetrics.clearQueueMetrics();
  }

  @Test
  void asksAllocationsAndReleasesOfManyApplicationsUpdateTheQueuesMetricsOneAtATime() throws Exception {
    MiniClusterSupport.awaitEngineGpus(cluster, 8);
    SpindleScheduler spindle = (SpindleScheduler) cluster.getResourceManager().getResourceScheduler();
    assertThat(spindle.getQueueInfo("a", false, false)).isNotNull();
    List<UnmanagedAm> ams = new ArrayList<>();
    for (int i = 0; i < AMS; i++) {
      ams.add(UnmanagedAm.register(client, cluster.getConfig(),
          UnmanagedAm.submit(client, "churn-" + i, "a", Set.of())));
    }
    ExecutorService pool = Executors.newFixedThreadPool(AMS);
    try {
      List<Future<?>> runs = new ArrayList<>();
      for (UnmanagedAm am : ams) {
        runs.add(pool.submit(() -> {
          for (int round = 0; round < ROUNDS; round++) {
            am.ask(1 + round % 3, gpus(1));
            am.heartbeat();
            am.heartbeat();
            am.withdraw();
            am.release(am.held().size());
          }
          return null;
        }));
      }
      for (Future<?> run : runs) {
        run.get(120, TimeUnit.SECONDS); // An allocate call that failed fails here.
      }
    } finally {
      pool.shutdownNow();
    }
    for (UnmanagedAm am : ams) {
      am.withdraw();
      am.release(am.held().size());
      am.close();
    }
    MiniClusterSupport.await(Duration.ofSeconds(30), () -> spindle.getAppsInQueue("a").isEmpty()
        && queueA.getAllocatedContainers() == 0);

    assertThat(queueA.updates.get()).as("updates watched").isGreaterThan(AMS * ROUNDS);
    assertThat(queueA.getAggregateAllocatedContainers()).as("the AMs were given containers").isPositive();
    assertThat(queueA.overlaps.get()).as("updates of the queue's metrics at once").isZero();
    assertThat(figures(queueA.getPendingResources())).as("pending").containsExactly(0L, 0L, 0L);
    assertThat(figures(queueA.getAllocatedResources())).as("allocated").containsExactly(0L, 0L, 0L);
  }

  private static List<Long> figures(Resource r) {
    return List.of(r.getMemorySize(), (long) r.getVirtualCores(), r.getResourceValue(GPU));
  }
}
