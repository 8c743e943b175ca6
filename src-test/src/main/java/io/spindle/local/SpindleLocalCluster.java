package io.spindle.local;

import io.spindle.channel.mig.MigStateStore;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.ha.ZkSettings;
import io.spindle.local.LocalClusterSpec.NodeSpec;
import io.spindle.yarn.SpindleScheduler;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.util.RackResolver;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.apache.hadoop.yarn.webapp.util.WebAppUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spindle on one machine, one command ({@code scripts/spindle-local}): an embedded ZooKeeper, a YARN cluster in this
 * JVM (one ResourceManager running Spindle's scheduler, one NodeManager per node of
 * {@code conf/local-cluster.properties}, on two racks, advertising fake GPUs and MIG instances), a
 * {@code HADOOP_CONF_DIR} for the stock {@code yarn} CLI and {@code spark-submit}; runs until Ctrl-C, for
 * {@code --duration} seconds, or through the {@code --demo} workload.
 * See docs/local-cluster.md.
 */
public final class SpindleLocalCluster implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SpindleLocalCluster.class);
  public static final String SPINDLE_SCHEDULER = "io.spindle.yarn.SpindleScheduler";
  public static final String CLUSTER_ID = "spindle-local";
  private static final long STOP_TIMEOUT_MS = 30_000;

  static final String USAGE = String.join("\n",
      "Usage: scripts/spindle-local [options]",
      "  --demo                 submit a small workload (two gangs, GPU jobs in three queues, a MIG job),",
      "                         show progress, print a summary and stop (--demo=small: the same)",
      "  --demo=seed            the four seed scenarios (fair share, a 32-GPU gang, checkpoint and preemption,",
      "                         8 ranks on one NVLink node) on 8 nodes x 8 GPUs (conf/seed-cluster.properties and",
      "                         conf/seed-capacity-scheduler.xml unless --conf/--queues), each checked; then stop",
      "  --duration <seconds>   stop by itself after this long (default: run until Ctrl-C)",
      "  --scheduler <class>    ResourceManager scheduler (default " + SPINDLE_SCHEDULER + ")",
      "  --conf <file>          the fake nodes (default conf/local-cluster.properties)",
      "  --queues <file>        queue tree (default conf/capacity-scheduler.xml)",
      "  --workdir <dir>        where the HADOOP_CONF_DIR, logs and YARN/ZooKeeper data go",
      "                         (default target/spindle-local; emptied at start)",
      "  --demo-run-seconds <s> how long each demo container runs (default 3-4 s; longer to watch the GPU map)",
      "  --http-port <port>     port of Spindle's GPU map, status API and /metrics on 127.0.0.1 (default: any free",
      "                         port; printed, and written to the HADOOP_CONF_DIR for scripts/spindle)",
      "  --ha                   two ResourceManagers with Spindle as a YARN HA pair (rm0 active, rm1 standby;",
      "                         state in ZooKeeper, work-preserving recovery, manual failover:",
      "                         yarn rmadmin -transitionToStandby rm0; yarn rmadmin -transitionToActive rm1)",
      "  --verbose              Hadoop's log on the console too (it always goes to <workdir>/logs)",
      "  --help");

  /** Parsed command line. */
  record Options(String scheduler, Path conf, Path queues, Path workdir, Demo demo, long durationSeconds,
      boolean verbose, int httpPort, int demoRunSeconds, boolean ha) {

    static Options parse(String... args) {
      String scheduler = null;
      Path conf = null;
      Path queues = null;
      Path workdir = Path.of("target", "spindle-local");
      Demo demo = Demo.NONE;
      long duration = -1;
      boolean verbose = false;
      int httpPort = 0;
      int demoRunSeconds = 0;
      boolean ha = false;
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        switch (a) {
          case "--demo", "--demo=small" -> demo = Demo.SMALL;
          case "--demo=seed" -> demo = Demo.SEED;
          case "--verbose" -> verbose = true;
          case "--ha" -> ha = true;
          case "--help", "-h" -> throw new UsageException(null);
          case "--scheduler" -> scheduler = value(args, ++i, a);
          case "--conf" -> conf = Path.of(value(args, ++i, a));
          case "--queues" -> queues = Path.of(value(args, ++i, a));
          case "--workdir" -> workdir = Path.of(value(args, ++i, a));
          case "--http-port" -> httpPort = number(value(args, ++i, a), a, 0, 65_535);
          case "--demo-run-seconds" -> demoRunSeconds = number(value(args, ++i, a), a, 1, 3_600);
          case "--duration" -> {
            String v = value(args, ++i, a);
            try {
              duration = Long.parseLong(v);
            } catch (NumberFormatException e) {
              duration = -2;
            }
            if (duration < 0) {
              throw new UsageException("--duration needs a whole number of seconds, not '" + v + "'");
            }
          }
          default -> throw new UsageException("unknown argument '" + a + "'");
        }
      }
      boolean seed = demo == Demo.SEED;
      return new Options(scheduler,
          conf != null ? conf : confFile(seed ? "seed-cluster.properties" : "local-cluster.properties"),
          queues != null ? queues : confFile(seed ? "seed-capacity-scheduler.xml" : "capacity-scheduler.xml"),
          workdir, demo, duration, verbose, httpPort, demoRunSeconds, ha);
    }

    private static int number(String v, String flag, int min, int max) {
      try {
        int n = Integer.parseInt(v);
        if (n >= min && n <= max) {
          return n;
        }
      } catch (NumberFormatException e) {
        // Reported below with the range.
      }
      throw new UsageException(flag + " needs a whole number from " + min + " to " + max + ", not '" + v + "'");
    }

    private static String value(String[] args, int i, String flag) {
      if (i >= args.length || args[i].startsWith("--")) {
        throw new UsageException(flag + " needs a value");
      }
      return args[i];
    }

    /** {@code conf/<name>} from the repository root, also when run from a module directory. */
    private static Path confFile(String name) {
      Path here = Path.of("conf", name);
      Path up = Path.of("..", "conf", name);
      return Files.exists(here) || !Files.exists(up) ? here : up;
    }
  }

  /** Which demo runs after start, if any. */
  enum Demo {
    NONE,
    /** {@link DemoWorkload} on the sample cluster. */
    SMALL,
    /** {@link SeedDemo} on the seed cluster. */
    SEED
  }

  /** A command-line error; the message (or null for --help) goes in front of the usage text. */
  static final class UsageException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }

  private final Options options;
  private final PrintStream out;
  private final LocalWorkdir workdir;
  private final LocalClusterSpec spec;
  private final String schedulerClass;
  private LocalHosts hosts;
  private TestingServer zookeeper;
  private CuratorFramework zkClient;
  private FakeMigAgents migAgents;
  private LocalYarnCluster yarn;
  private ClassLoader previousContextLoader;
  private final List<NodeId> nodeIds = new ArrayList<>();
  private boolean loggingConfigured;
  private boolean stopped;

  private SpindleLocalCluster(Options options, PrintStream out) throws IOException {
    this.options = options;
    this.out = out;
    this.workdir = new LocalWorkdir(options.workdir());
    if (!Files.isRegularFile(options.conf())) {
      throw new UsageException("node file " + options.conf() + " not found (--conf)");
    }
    if (!Files.isRegularFile(options.queues())) {
      throw new UsageException("queue file " + options.queues() + " not found (--queues)");
    }
    this.spec = LocalClusterSpec.read(options.conf(), GpuModelCatalog.builtIn());
    this.schedulerClass = resolveScheduler(options.scheduler());
  }

  /** Starts ZooKeeper and YARN and writes the HADOOP_CONF_DIR; on failure stops what started and rethrows. */
  public static SpindleLocalCluster start(Options options, PrintStream out) throws Exception {
    SpindleLocalCluster c = new SpindleLocalCluster(options, out);
    try {
      c.startAll();
      return c;
    } catch (Exception | Error e) {
      c.close();
      throw e;
    }
  }

  /**
   * As {@link #start(Options, PrintStream)}, from the command line {@code scripts/spindle-local} takes: for harnesses
   * outside this package (the soak benchmark) that run their own workload on the cluster.
   */
  public static SpindleLocalCluster start(PrintStream out, String... args) throws Exception {
    return start(Options.parse(args), out);
  }

  public static void main(String[] args) {
    inMain = true;
    System.exit(run(args, System.out, true));
  }

  /** Whether this JVM is the command's own (then the log stays in the file until the end). */
  private static volatile boolean inMain;

  /**
   * The command: starts, prints where everything is, then runs the demo, waits {@code --duration} or waits for
   * Ctrl-C (when {@code ctrlC}; the JVM's shutdown hook stops YARN, then ZooKeeper). Interrupting the calling thread
   * stops the cluster too. Returns the exit status: 0 done, 1 failed, 2 bad command line.
   */
  public static int run(String[] args, PrintStream out, boolean ctrlC) {
    Options options;
    try {
      options = Options.parse(args);
    } catch (UsageException e) {
      if (e.getMessage() != null) {
        out.println("spindle-local: " + e.getMessage());
      }
      out.println(USAGE);
      return e.getMessage() == null ? 0 : 2;
    }
    SpindleLocalCluster cluster;
    try {
      cluster = new SpindleLocalCluster(options, out);
    } catch (IllegalArgumentException | IOException e) {
      out.println("spindle-local: " + e.getMessage());
      return 2;
    }
    try {
      cluster.startAll();
    } catch (Exception e) {
      cluster.close();
      out.println("spindle-local: could not start: " + e);
      out.println("  details: " + cluster.workdir.logFile());
      return 1;
    }
    Thread hook = new Thread(() -> {
      out.println();
      out.println("Stopping (Ctrl-C or signal) ...");
      cluster.close();
      out.println("Stopped.");
      out.flush();
    }, "spindle-local-shutdown");
    if (ctrlC) {
      Runtime.getRuntime().addShutdownHook(hook);
    }
    int rc = 0;
    boolean interrupted = false;
    try {
      StartupSummary.print(cluster, out);
      if (options.demo() == Demo.SMALL) {
        rc = new DemoWorkload(cluster, out).run() ? 0 : 1;
      } else if (options.demo() == Demo.SEED) {
        rc = new SeedDemo(cluster, out).run() ? 0 : 1;
      } else if (options.durationSeconds() >= 0) {
        out.printf("Running for %d s (--duration).%n", options.durationSeconds());
        Thread.sleep(options.durationSeconds() * 1000);
      } else {
        out.println("Press Ctrl-C to stop.");
        Thread.sleep(Long.MAX_VALUE);
      }
    } catch (InterruptedException e) {
      // Stopped by the caller; stop the cluster below with the flag clear, so that stopping can wait.
      interrupted = true;
    } catch (Exception e) {
      out.println("spindle-local: " + e);
      rc = 1;
    } finally {
      boolean hookStops = false;
      if (ctrlC) {
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
          hookStops = true; // Ctrl-C arrived meanwhile: the hook stops the cluster.
        }
      }
      if (!hookStops) {
        out.println("Stopping ...");
        cluster.close();
        out.println("Stopped.");
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    return rc;
  }

  private static String resolveScheduler(String requested) {
    String name = requested != null ? requested : SPINDLE_SCHEDULER;
    Class<?> c;
    try {
      c = Class.forName(name, false, SpindleLocalCluster.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      if (requested == null) {
        throw new IllegalArgumentException(SPINDLE_SCHEDULER + " is not on the classpath (is the YARN adapter in "
            + "yarn-scheduler built?). Run another scheduler with --scheduler <class>, e.g. --scheduler "
            + "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler");
      }
      throw new IllegalArgumentException("scheduler class " + name + " is not on the classpath (--scheduler)");
    }
    if (!ResourceScheduler.class.isAssignableFrom(c)) {
      throw new IllegalArgumentException(name + " is not a YARN " + ResourceScheduler.class.getName());
    }
    return name;
  }

  private void startAll() throws Exception {
    workdir.prepare();
    LocalClusterLog.toFile(workdir.logFile(), options.verbose());
    loggingConfigured = true;
    hosts = LocalHosts.choose(spec.nodes().size());

    EmbeddedZooKeeper.prepare();
    zookeeper = new TestingServer(new InstanceSpec(workdir.zookeeperData().toFile(), -1, -1, -1, false, -1), true);

    LocalClusterConf clusterConf = new LocalClusterConf(options, spec, hosts, workdir);
    clusterConf.writeStatic();
    YarnConfiguration conf = clusterConf.daemons(schedulerClass, zookeeper.getConnectString());

    // MiniYARNCluster puts its NodeManager directories under ${test.build.data}/<name>.
    String previousDataDir = System.getProperty("test.build.data");
    System.setProperty("test.build.data", workdir.yarnData().toString());
    previousContextLoader = Thread.currentThread().getContextClassLoader();
    Thread.currentThread().setContextClassLoader(conf.getClassLoader());
    try {
      List<Map<String, Long>> resources = new ArrayList<>();
      for (NodeSpec n : spec.nodes()) {
        resources.add(spec.advertised(n));
      }
      yarn = new LocalYarnCluster(options.ha() ? RmHaPair.IDS.size() : 1, spec.nodes(), hosts.hosts(), resources);
      resetRackResolver();
      yarn.init(conf);
      yarn.start();
    } finally {
      // Threads YARN started meanwhile keep the loader they inherited; this thread gets its own back.
      Thread.currentThread().setContextClassLoader(previousContextLoader);
      if (previousDataDir == null) {
        System.clearProperty("test.build.data");
      } else {
        System.setProperty("test.build.data", previousDataDir);
      }
    }
    waitForNodes();
    for (int i = 0; i < spec.nodes().size(); i++) {
      nodeIds.add(yarn.getNodeManager(i).getNMContext().getNodeId());
    }
    startMigAgents();
    clusterConf.writeForClients(yarn.getConfig(), webPort());
  }

  /**
   * YARN's rack resolver is JVM-wide and takes its mapping from the first ResourceManager that starts: a cluster
   * started earlier in this JVM (another test) would keep ours on its mapping, every node on /default-rack. Its
   * reset is package-private ("only used by tests"), hence reflection.
   */
  private static void resetRackResolver() {
    try {
      Method reset = RackResolver.class.getDeclaredMethod("reset");
      reset.setAccessible(true);
      reset.invoke(null);
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.warn("Cannot reset YARN's RackResolver ({}); racks may come from an earlier cluster in this JVM",
          e.toString());
    }
  }

  private void waitForNodes() throws InterruptedException {
    long deadline = System.currentTimeMillis() + 60_000;
    int want = spec.nodes().size();
    while (true) {
      long running = yarn.getResourceManager().getRMContext().getRMNodes().values().stream()
          .filter(n -> n.getState() == NodeState.RUNNING).count();
      if (running >= want) {
        return;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException(running + " of " + want + " NodeManagers registered within 60 s; see "
            + workdir.logFile());
      }
      Thread.sleep(100);
    }
  }

  private void startMigAgents() throws IOException, InterruptedException {
    ZkSettings zk = ZkSettings.from(yarn.getConfig());
    zkClient = CuratorFrameworkFactory.newClient(zk.address(), new ExponentialBackoffRetry(200, 5));
    zkClient.start();
    if (!zkClient.blockUntilConnected(30, java.util.concurrent.TimeUnit.SECONDS)) {
      throw new IOException("embedded ZooKeeper at " + zk.address() + " did not answer within 30 s");
    }
    migAgents = new FakeMigAgents(new MigStateStore(zkClient, zk.root()));
    for (int i = 0; i < spec.nodes().size(); i++) {
      // A node with shared GPUs stands for one without Spindle's agent: modelled from what it advertises.
      if (spec.nodes().get(i).sharedGpus() == 0) {
        migAgents.start(hosts.zkNodeName(nodeIds.get(i)), spec.nodes().get(i));
      }
    }
  }

  /** Where Spindle's GPU map, status API and Prometheus endpoint are; empty under another scheduler. */
  public Optional<String> webUrl() {
    return webPort().map(LocalClusterConf::webUrl);
  }

  private Optional<Integer> webPort() {
    return yarn.getResourceManager().getResourceScheduler() instanceof SpindleScheduler s
        ? s.webAddress().map(InetSocketAddress::getPort) : Optional.empty();
  }

  String rmWebUrl() {
    // In an HA pair only the ResourceManager's own configuration names its web address (by its HA id).
    Configuration c = options.ha() ? yarn.getResourceManager().getConfig() : yarn.getConfig();
    return WebAppUtils.getRMWebAppURLWithScheme(c) + "/";
  }

  /**
   * The live cluster configuration (real ports), for clients in this JVM. Calls to a ResourceManager that does not
   * answer fail after 20-30 s instead of waiting up to 15 minutes or for ever.
   */
  public Configuration clientConf() {
    YarnConfiguration c = new YarnConfiguration(yarn.getConfig());
    c.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_MAX_WAIT_MS, 20_000);
    c.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, 1_000);
    c.setInt("ipc.client.rpc-timeout.ms", 30_000);
    return c;
  }

  int demoRunSeconds() {
    return options.demoRunSeconds();
  }

  public Path hadoopConfDir() {
    return workdir.confDir();
  }

  LocalWorkdir workdir() {
    return workdir;
  }

  String schedulerClass() {
    return schedulerClass;
  }

  public LocalClusterSpec spec() {
    return spec;
  }

  /** The YARN NodeId of each node of the spec, in spec order. */
  public List<NodeId> nodeIds() {
    return List.copyOf(nodeIds);
  }

  /**
   * The ResourceManager, for harnesses in this JVM that read its state (scheduler, nodes, queue metrics); with
   * {@code --ha} the active one (waiting up to YARN's ZooKeeper timeout while none is, then null).
   */
  public ResourceManager resourceManager() {
    return yarn.getResourceManager();
  }

  /**
   * The YARN cluster itself, for harnesses that fail its ResourceManagers over ({@link RmHaPair}) or reach a
   * NodeManager.
   */
  public MiniYARNCluster yarnCluster() {
    return yarn;
  }

  /** Whether this cluster runs a ResourceManager HA pair ({@code --ha}). */
  public boolean ha() {
    return options.ha();
  }

  /** Whether every node has its own host (and so its own rack). */
  public boolean distinctHosts() {
    return hosts.distinct();
  }

  public String zookeeperConnectString() {
    return zookeeper.getConnectString();
  }

  /** Stops YARN, then the MIG agents and ZooKeeper. Safe to call more than once and from a shutdown hook. */
  @Override
  public synchronized void close() {
    if (stopped) {
      return;
    }
    stopped = true;
    if (yarn != null) {
      // Bounded: a scheduler that deadlocked would otherwise keep the ResourceManager (and Ctrl-C) from stopping.
      Thread stopper = new Thread(() -> {
        try {
          yarn.stop();
        } catch (RuntimeException e) {
          out.println("spindle-local: stopping YARN: " + e);
        }
      }, "spindle-local-stop-yarn");
      stopper.setDaemon(true);
      stopper.start();
      try {
        stopper.join(STOP_TIMEOUT_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (stopper.isAlive()) {
        out.println("spindle-local: YARN did not stop within " + STOP_TIMEOUT_MS / 1000 + " s (is a scheduler thread "
            + "stuck? see " + workdir.logFile() + "); leaving it");
      }
      // JVM-wide state holding this cluster's racks and last node's resources; clear it for clusters after this one.
      resetRackResolver();
      ResourceUtils.resetNodeResources();
    }
    if (migAgents != null) {
      migAgents.close();
    }
    if (zkClient != null) {
      zkClient.close();
    }
    if (zookeeper != null) {
      try {
        zookeeper.close();
      } catch (IOException e) {
        out.println("spindle-local: stopping ZooKeeper: " + e);
      }
    }
    if (loggingConfigured && !inMain) {
      LocalClusterLog.restoreClasspathDefaults();
    }
  }
}
