package io.spindle.local;

import io.spindle.channel.mig.MigStateStore;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.ha.ZkSettings;
import io.spindle.local.LocalClusterSpec.NodeSpec;
import io.spindle.web.SpindleWeb;
import io.spindle.yarn.SpindleScheduler;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.net.TableMapping;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.conf.HAUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.util.RackResolver;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.apache.hadoop.yarn.webapp.util.WebAppUtils;
import org.apache.log4j.LogManager;
import org.apache.log4j.PropertyConfigurator;
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
  /** Spindle's scheduler keys this launcher sets (see yarn-scheduler's {@code SpindleScheduler}). */
  static final String SPINDLE_TOPOLOGY_LEVELS = "yarn.scheduler.spindle.topology.levels";
  static final String SPINDLE_NODE_GPU_MODEL = "yarn.scheduler.spindle.node.gpu-model";
  static final String CS_RESOURCE_CALCULATOR = "yarn.scheduler.capacity.resource-calculator";
  private static final long STOP_TIMEOUT_MS = 30_000;
  /** Spindle's web endpoints serve this machine only: the local cluster has no authentication. */
  private static final String WEB_HOST = "127.0.0.1";

  static final String USAGE = String.join("\n",
      "Usage: scripts/spindle-local [options]",
      "  --demo                 submit a small workload (two gangs, GPU jobs in three queues, a MIG job),",
      "                         show progress, print a summary and stop",
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
  record Options(String scheduler, Path conf, Path queues, Path workdir, boolean demo, long durationSeconds,
      boolean verbose, int httpPort, int demoRunSeconds, boolean ha) {

    static Options parse(String... args) {
      String scheduler = null;
      Path conf = null;
      Path queues = null;
      Path workdir = Path.of("target", "spindle-local");
      boolean demo = false;
      long duration = -1;
      boolean verbose = false;
      int httpPort = 0;
      int demoRunSeconds = 0;
      boolean ha = false;
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        switch (a) {
          case "--demo" -> demo = true;
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
      return new Options(scheduler, conf != null ? conf : confFile("local-cluster.properties"),
          queues != null ? queues : confFile("capacity-scheduler.xml"), workdir, demo, duration, verbose, httpPort,
          demoRunSeconds, ha);
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

  /** A command-line error; the message (or null for --help) goes in front of the usage text. */
  static final class UsageException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }

  private final Options options;
  private final PrintStream out;
  private final Path workdir;
  private final Path confDir;
  private final Path logFile;
  private final LocalClusterSpec spec;
  private final String schedulerClass;
  private TestingServer zookeeper;
  private CuratorFramework zkClient;
  private FakeMigAgents migAgents;
  private LocalYarnCluster yarn;
  private ClassLoader previousContextLoader;
  private final List<String> hosts = new ArrayList<>();
  private final List<NodeId> nodeIds = new ArrayList<>();
  private boolean distinctHosts;
  private boolean loggingConfigured;
  private boolean stopped;

  private SpindleLocalCluster(Options options, PrintStream out) throws IOException {
    this.options = options;
    this.out = out;
    this.workdir = options.workdir().toAbsolutePath().normalize();
    this.confDir = workdir.resolve("conf");
    this.logFile = workdir.resolve("logs").resolve("spindle-local.log");
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
      out.println("  details: " + cluster.logFile);
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
      cluster.printInfo();
      if (options.demo()) {
        rc = new DemoWorkload(cluster, out).run() ? 0 : 1;
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
    prepareWorkdir();
    configureLogging();
    chooseHosts();

    EmbeddedZooKeeper.prepare();
    zookeeper = new TestingServer(new InstanceSpec(workdir.resolve("zookeeper").toFile(), -1, -1, -1, false, -1),
        true);

    writeStaticConf();
    YarnConfiguration conf = clusterConf();

    // MiniYARNCluster puts its NodeManager directories under ${test.build.data}/<name>.
    String previousDataDir = System.getProperty("test.build.data");
    System.setProperty("test.build.data", workdir.resolve("yarn").toString());
    previousContextLoader = Thread.currentThread().getContextClassLoader();
    Thread.currentThread().setContextClassLoader(conf.getClassLoader());
    try {
      List<Map<String, Long>> resources = new ArrayList<>();
      for (NodeSpec n : spec.nodes()) {
        resources.add(spec.advertised(n));
      }
      yarn = new LocalYarnCluster(options.ha() ? RmHaPair.IDS.size() : 1, spec.nodes(), hosts, resources);
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
    writeYarnSite();
  }

  private void prepareWorkdir() throws IOException {
    Files.createDirectories(workdir);
    for (String sub : List.of("conf", "yarn", "zookeeper", "logs")) {
      deleteTree(workdir.resolve(sub));
      Files.createDirectories(workdir.resolve(sub));
    }
  }

  private static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(p)) {
      for (Path q : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(q);
      }
    }
  }

  /** Hadoop's, ZooKeeper's and Spindle's logs go to {@code <workdir>/logs/spindle-local.log}, not the console. */
  private void configureLogging() {
    Properties p = new Properties();
    p.setProperty("log4j.rootLogger", options.verbose() ? "INFO, file, console" : "INFO, file");
    p.setProperty("log4j.appender.file", "org.apache.log4j.FileAppender");
    p.setProperty("log4j.appender.file.File", logFile.toString());
    p.setProperty("log4j.appender.file.Append", "false");
    p.setProperty("log4j.appender.file.layout", "org.apache.log4j.PatternLayout");
    p.setProperty("log4j.appender.file.layout.ConversionPattern", "%d{ISO8601} %-5p [%t] %c{2}: %m%n");
    p.setProperty("log4j.appender.console", "org.apache.log4j.ConsoleAppender");
    p.setProperty("log4j.appender.console.Target", "System.err");
    p.setProperty("log4j.appender.console.layout", "org.apache.log4j.PatternLayout");
    p.setProperty("log4j.appender.console.layout.ConversionPattern", "%d{ISO8601} %-5p %c{1}: %m%n");
    // Chatty at INFO and of no use here.
    p.setProperty("log4j.logger.org.apache.zookeeper", "WARN");
    p.setProperty("log4j.logger.org.apache.curator", "WARN");
    p.setProperty("log4j.logger.org.apache.hadoop.ipc", "WARN");
    p.setProperty("log4j.logger.org.apache.hadoop.metrics2", "WARN");
    LogManager.resetConfiguration();
    PropertyConfigurator.configure(p);
    loggingConfigured = true;
    // Guice and Jersey (the web UIs) log through java.util.logging straight to the console.
    for (java.util.logging.Logger l : JUL_QUIET) {
      l.setLevel(options.verbose() ? java.util.logging.Level.INFO : java.util.logging.Level.SEVERE);
    }
  }

  /** Held so the level settings are not garbage-collected with the loggers. */
  private static final List<java.util.logging.Logger> JUL_QUIET = List.of(
      java.util.logging.Logger.getLogger("com.google.inject"), java.util.logging.Logger.getLogger("org.glassfish"));

  /**
   * Every node gets its own loopback address (127.0.0.2, .3, ...) so that it registers under its own host and the
   * rack mapping can place it; where those addresses cannot be bound (e.g. macOS without aliases) all nodes share
   * {@code localhost} and therefore one rack.
   */
  private void chooseHosts() {
    distinctHosts = true;
    for (int i = 0; i < spec.nodes().size(); i++) {
      String host = "127.0.0." + (i + 2);
      if (i + 2 > 254 || !canBind(host)) {
        distinctHosts = false;
        break;
      }
      hosts.add(host);
    }
    if (!distinctHosts) {
      hosts.clear();
      for (int i = 0; i < spec.nodes().size(); i++) {
        hosts.add("localhost");
      }
    }
  }

  private static boolean canBind(String host) {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress(host, 0));
      return true;
    } catch (IOException e) {
      return false;
    }
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

  /** The HADOOP_CONF_DIR files that do not depend on ports: queues, resource types, topology, core-site. */
  private void writeStaticConf() throws IOException {
    Files.copy(options.queues(), confDir.resolve("capacity-scheduler.xml"), StandardCopyOption.REPLACE_EXISTING);

    Configuration types = new Configuration(false);
    types.set(YarnConfiguration.RESOURCE_TYPES, String.join(",", spec.resourceTypes()));
    writeXml(types, confDir.resolve("resource-types.xml"));

    StringBuilder table = new StringBuilder();
    table.append("# host rack: written by spindle-local; read by Hadoop's TableMapping and by conf/topology.sh\n");
    for (int i = 0; i < spec.nodes().size(); i++) {
      if (distinctHosts) {
        table.append(hosts.get(i)).append(' ').append(spec.nodes().get(i).rack()).append('\n');
      }
    }
    Files.writeString(topologyTable(), table.toString(), StandardCharsets.UTF_8);

    // For the stock CLI, which otherwise finds no log4j configuration in a HADOOP_CONF_DIR and says so.
    Files.writeString(confDir.resolve("log4j.properties"), String.join("\n",
        "# written by spindle-local for clients (yarn, spark-submit) using this HADOOP_CONF_DIR",
        "hadoop.root.logger=WARN,console",
        "log4j.rootLogger=${hadoop.root.logger}",
        "log4j.appender.console=org.apache.log4j.ConsoleAppender",
        "log4j.appender.console.target=System.err",
        "log4j.appender.console.layout=org.apache.log4j.PatternLayout",
        "log4j.appender.console.layout.ConversionPattern=%d{yy/MM/dd HH:mm:ss} %p %c{2}: %m%n", ""),
        StandardCharsets.UTF_8);

    Configuration core = new Configuration(false);
    core.set("fs.defaultFS", "file:///");
    core.set("net.topology.node.switch.mapping.impl", TableMapping.class.getName());
    core.set("net.topology.table.file.name", topologyTable().toString());
    writeXml(core, confDir.resolve("core-site.xml"));
  }

  private Path topologyTable() {
    return confDir.resolve("topology.table");
  }

  private YarnConfiguration clusterConf() throws IOException {
    YarnConfiguration conf = new YarnConfiguration();
    // capacity-scheduler.xml and resource-types.xml come from the HADOOP_CONF_DIR before anything else on the
    // classpath: hadoop-yarn-server-tests' test-jar carries its own capacity-scheduler.xml (one queue, "default").
    conf.setClassLoader(new ConfDirFirstClassLoader(confDir, SpindleLocalCluster.class.getClassLoader()));
    conf.set(YarnConfiguration.RM_SCHEDULER, schedulerClass);
    conf.set(YarnConfiguration.RM_CLUSTER_ID, CLUSTER_ID);
    conf.set(YarnConfiguration.RESOURCE_TYPES, String.join(",", spec.resourceTypes()));
    // GPUs count only with dominant resource fairness. Spindle always uses it; CapacityScheduler reads this key
    // (a value in capacity-scheduler.xml wins).
    conf.set(CS_RESOURCE_CALCULATOR, DominantResourceCalculator.class.getName());
    conf.set("net.topology.node.switch.mapping.impl", TableMapping.class.getName());
    conf.set("net.topology.table.file.name", topologyTable().toString());
    if (!distinctHosts) {
      conf.setBoolean(YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME, true);
    }
    long maxMemory = 0;
    int maxVcores = 0;
    for (NodeSpec n : spec.nodes()) {
      maxMemory = Math.max(maxMemory, n.memoryMb());
      maxVcores = Math.max(maxVcores, n.vcores());
    }
    conf.setLong(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, maxMemory);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES, maxVcores);
    conf.set(ZkSettings.ZK_ADDRESS, zookeeper.getConnectString());
    int depth = spec.rackDepth();
    if (depth > 0) {
      conf.set(SPINDLE_TOPOLOGY_LEVELS, String.join(",", topologyLevels(depth)));
    }
    GpuModel model = spec.commonModel();
    if (model != null) {
      conf.set(SPINDLE_NODE_GPU_MODEL, model.name());
    }
    // Stopping waits for log retention otherwise (~35 s); the fake disks must not be judged full.
    conf.setLong(YarnConfiguration.NM_LOG_RETAIN_SECONDS, 0);
    conf.setFloat(YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE, 100.0f);
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    conf.setInt(SpindleWeb.PORT, options.httpPort());
    conf.set(SpindleWeb.BIND_ADDRESS, WEB_HOST);
    if (options.ha()) {
      // YARN's default wait: a new active ResourceManager schedules once NodeManagers and AMs had time to return.
      RmHaPair.configure(conf, zookeeper.getConnectString(), CLUSTER_ID,
          YarnConfiguration.DEFAULT_RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS);
      RmHaPair.shareConfiguration(conf, confDir.toUri());
      // One ZooKeeper identity for both ResourceManagers, or the new active one could not take over the checkpoint
      // znodes the other created (admin guide, yarn.scheduler.spindle.zk.auth).
      conf.set("yarn.scheduler.spindle.zk.auth", "digest:spindle-rm:" + java.util.UUID.randomUUID());
    }
    return conf;
  }

  /** Names for the levels of rack paths of {@code depth} segments: rack; spine, rack; zone, spine, rack; ... */
  static List<String> topologyLevels(int depth) {
    List<String> names = new ArrayList<>(List.of("zone", "spine", "rack"));
    while (names.size() < depth) {
      names.add(0, "level" + (depth - names.size()));
    }
    return names.subList(names.size() - depth, names.size());
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
            + logFile);
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
      migAgents.start(zkNodeName(i), spec.nodes().get(i));
    }
  }

  /** The node's name in Spindle's ZooKeeper state: the host of its NodeId (host:port when hosts are shared). */
  private String zkNodeName(int i) {
    NodeId id = nodeIds.get(i);
    return distinctHosts ? id.getHost() : id.getHost() + ":" + id.getPort();
  }

  /** yarn-site.xml with the addresses the ResourceManager really bound, and an env file to source. */
  private void writeYarnSite() throws IOException {
    Configuration live = yarn.getConfig();
    Configuration site = new Configuration(false);
    for (String key : List.of(YarnConfiguration.RM_ADDRESS, YarnConfiguration.RM_SCHEDULER_ADDRESS,
        YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, YarnConfiguration.RM_ADMIN_ADDRESS,
        YarnConfiguration.RM_WEBAPP_ADDRESS, YarnConfiguration.RM_SCHEDULER, YarnConfiguration.RM_CLUSTER_ID,
        YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES,
        ZkSettings.ZK_ADDRESS, SPINDLE_TOPOLOGY_LEVELS, SPINDLE_NODE_GPU_MODEL,
        YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME)) {
      String v = live.get(key);
      if (v != null) {
        site.set(key, v);
      }
    }
    site.set(YarnConfiguration.RESOURCE_TYPES, String.join(",", spec.resourceTypes()));
    if (options.ha()) {
      for (String key : List.of(YarnConfiguration.RM_HA_ENABLED, YarnConfiguration.RM_HA_IDS,
          YarnConfiguration.AUTO_FAILOVER_ENABLED, YarnConfiguration.RECOVERY_ENABLED,
          YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, YarnConfiguration.RM_STORE,
          YarnConfiguration.RM_ZK_ADDRESS)) {
        site.set(key, live.get(key));
      }
      for (String id : RmHaPair.IDS) {
        for (String key : YarnConfiguration.getServiceAddressConfKeys(live)) {
          String v = live.get(HAUtil.addSuffix(key, id));
          if (v != null) {
            site.set(HAUtil.addSuffix(key, id), v);
          }
        }
        site.set(HAUtil.addSuffix(YarnConfiguration.RM_HOSTNAME, id), "localhost");
      }
    }
    Optional<String> web = webUrl();
    webPort().ifPresent(port -> {
      site.setInt(SpindleWeb.PORT, port);
      site.set(SpindleWeb.BIND_ADDRESS, WEB_HOST);
    });
    writeXml(site, confDir.resolve("yarn-site.xml"));
    Files.writeString(workdir.resolve("spindle-local.env"),
        "# source this file to use the Spindle local cluster from this shell\n"
            + "export HADOOP_CONF_DIR=" + confDir + "\n"
            + "export YARN_CONF_DIR=" + confDir + "\n"
            + web.map(url -> "export SPINDLE_URL=" + url + "\n").orElse(""),
        StandardCharsets.UTF_8);
  }

  private static void writeXml(Configuration c, Path file) throws IOException {
    try (OutputStream os = Files.newOutputStream(file)) {
      c.writeXml(os);
    }
  }

  /** Prints where everything is and how to use it. */
  void printInfo() {
    Configuration c = yarn.getConfig();
    out.println();
    out.println("Spindle local cluster is up.");
    out.printf("  scheduler        %s%n", schedulerClass);
    out.printf("  ZooKeeper        %s   (Spindle state under %s)%n", zookeeper.getConnectString(),
        ZkSettings.from(c).root());
    if (options.ha()) {
      for (String id : RmHaPair.IDS) {
        out.printf("  ResourceManager  %s   (%s%s; scheduler %s, admin %s)%n",
            c.get(HAUtil.addSuffix(YarnConfiguration.RM_ADDRESS, id)), id,
            id.equals(RmHaPair.IDS.get(0)) ? ", active" : ", standby",
            c.get(HAUtil.addSuffix(YarnConfiguration.RM_SCHEDULER_ADDRESS, id)),
            c.get(HAUtil.addSuffix(YarnConfiguration.RM_ADMIN_ADDRESS, id)));
      }
    } else {
      out.printf("  ResourceManager  %s   (scheduler %s, admin %s)%n", c.get(YarnConfiguration.RM_ADDRESS),
          c.get(YarnConfiguration.RM_SCHEDULER_ADDRESS), c.get(YarnConfiguration.RM_ADMIN_ADDRESS));
    }
    out.printf("  RM web UI        %s%n", rmWebUrl());
    webUrl().ifPresent(url -> out.printf("  Spindle web      %s   (GPU map; status API %sapi/v1/status; %smetrics)%n",
        url, url, url));
    out.printf("  HADOOP_CONF_DIR  %s%n", confDir);
    out.printf("  logs             %s%n", logFile);
    out.println("  nodes:");
    Map<NodeId, RMNode> rmNodes = yarn.getResourceManager().getRMContext().getRMNodes();
    for (int i = 0; i < spec.nodes().size(); i++) {
      NodeSpec n = spec.nodes().get(i);
      RMNode rm = rmNodes.get(nodeIds.get(i));
      String rack = rm == null ? "?" : rm.getRackName();
      StringBuilder res = new StringBuilder();
      if (rm != null) {
        for (String type : spec.resourceTypes()) {
          long v = rm.getTotalCapability().getResourceValue(type);
          if (v > 0) {
            res.append(res.length() == 0 ? "" : ", ").append(type).append('=').append(v);
          }
        }
      }
      out.printf("    %-6s %-21s %-14s %s, %d GiB, %d vcores; %s%n", n.name(), nodeIds.get(i), rack,
          n.model().name(), n.memoryMb() / 1024, n.vcores(), res);
      for (int j = 0; j < n.migGpus().size(); j++) {
        out.printf("    %-6s %-21s %-14s   MIG GPU %d: %s%n", "", "", "", n.wholeGpus() + j,
            n.migGpus().get(j).placements());
      }
    }
    if (!distinctHosts) {
      out.println("  note: 127.0.0.2.. cannot be bound here, so all nodes share the host localhost and one rack");
    }
    out.println();
    out.println("Use it from another shell:");
    out.printf("  HADOOP_CONF_DIR=%s yarn node -list -showDetails%n", confDir);
    out.printf("  source %s   # then yarn, spark-submit --master yarn ...%n", workdir.resolve("spindle-local.env"));
    out.println();
    out.flush();
  }

  /** Where Spindle's GPU map, status API and Prometheus endpoint are; empty under another scheduler. */
  public Optional<String> webUrl() {
    return webPort().map(port -> "http://" + WEB_HOST + ":" + port + "/");
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
    return confDir;
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
    return distinctHosts;
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
            + "stuck? see " + logFile + "); leaving it");
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
      // Back to the classpath's log4j.properties, for whatever else runs in this JVM (other tests).
      LogManager.resetConfiguration();
      URL defaults = SpindleLocalCluster.class.getClassLoader().getResource("log4j.properties");
      if (defaults != null) {
        PropertyConfigurator.configure(defaults);
      }
    }
  }

  /**
   * Finds resources in the HADOOP_CONF_DIR first, then on the classpath, as Hadoop's scripts do by putting the
   * conf dir first on the classpath. Classes always come from the parent.
   */
  static final class ConfDirFirstClassLoader extends URLClassLoader {
    static {
      registerAsParallelCapable();
    }

    ConfDirFirstClassLoader(Path dir, ClassLoader parent) throws IOException {
      super(new URL[] {dir.toUri().toURL()}, parent);
    }

    @Override
    public URL getResource(String name) {
      URL own = findResource(name);
      return own != null ? own : super.getResource(name);
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
      throw new ClassNotFoundException(name);
    }
  }
}
