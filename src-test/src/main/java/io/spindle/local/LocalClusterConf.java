package io.spindle.local;

import io.spindle.core.model.GpuModel;
import io.spindle.ha.ZkSettings;
import io.spindle.local.LocalClusterSpec.NodeSpec;
import io.spindle.local.SpindleLocalCluster.Options;
import io.spindle.web.SpindleWeb;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.net.TableMapping;
import org.apache.hadoop.yarn.conf.HAUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;

/**
 * The local cluster's configuration: what its ResourceManagers and NodeManagers start with, and the HADOOP_CONF_DIR
 * it writes for the stock {@code yarn} CLI and {@code spark-submit}, which must agree with it.
 */
final class LocalClusterConf {

  /** Spindle's scheduler keys this launcher sets (see yarn-scheduler's {@code SpindleScheduler}). */
  static final String SPINDLE_TOPOLOGY_LEVELS = "yarn.scheduler.spindle.topology.levels";
  static final String SPINDLE_NODE_GPU_MODEL = "yarn.scheduler.spindle.node.gpu-model";
  static final String CS_RESOURCE_CALCULATOR = "yarn.scheduler.capacity.resource-calculator";
  /** Spindle's web endpoints serve this machine only: the local cluster has no authentication. */
  static final String WEB_HOST = "127.0.0.1";

  private final Options options;
  private final LocalClusterSpec spec;
  private final LocalHosts hosts;
  private final LocalWorkdir workdir;
  private final Path confDir;

  LocalClusterConf(Options options, LocalClusterSpec spec, LocalHosts hosts, LocalWorkdir workdir) {
    this.options = options;
    this.spec = spec;
    this.hosts = hosts;
    this.workdir = workdir;
    this.confDir = workdir.confDir();
  }

  /** The HADOOP_CONF_DIR files that do not depend on ports: queues, resource types, topology, core-site. */
  void writeStatic() throws IOException {
    Files.copy(options.queues(), confDir.resolve("capacity-scheduler.xml"), StandardCopyOption.REPLACE_EXISTING);

    Configuration types = new Configuration(false);
    types.set(YarnConfiguration.RESOURCE_TYPES, String.join(",", spec.resourceTypes()));
    writeXml(types, confDir.resolve("resource-types.xml"));

    StringBuilder table = new StringBuilder();
    table.append("# host rack: written by spindle-local; read by Hadoop's TableMapping and by conf/topology.sh\n");
    for (int i = 0; i < spec.nodes().size(); i++) {
      if (hosts.distinct()) {
        table.append(hosts.hosts().get(i)).append(' ').append(spec.nodes().get(i).rack()).append('\n');
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

  /** What the daemons start with: {@code schedulerClass} on every ResourceManager, Spindle's state in {@code zk}. */
  YarnConfiguration daemons(String schedulerClass, String zk) throws IOException {
    YarnConfiguration conf = new YarnConfiguration();
    // capacity-scheduler.xml and resource-types.xml come from the HADOOP_CONF_DIR before anything else on the
    // classpath: hadoop-yarn-server-tests' test-jar carries its own capacity-scheduler.xml (one queue, "default").
    conf.setClassLoader(new ConfDirFirstClassLoader(confDir, LocalClusterConf.class.getClassLoader()));
    spec.schedulerSettings().forEach(conf::set);
    conf.set(YarnConfiguration.RM_SCHEDULER, schedulerClass);
    conf.set(YarnConfiguration.RM_CLUSTER_ID, SpindleLocalCluster.CLUSTER_ID);
    conf.set(YarnConfiguration.RESOURCE_TYPES, String.join(",", spec.resourceTypes()));
    // GPUs count only with dominant resource fairness. Spindle always uses it; CapacityScheduler reads this key
    // (a value in capacity-scheduler.xml wins).
    conf.set(CS_RESOURCE_CALCULATOR, DominantResourceCalculator.class.getName());
    conf.set("net.topology.node.switch.mapping.impl", TableMapping.class.getName());
    conf.set("net.topology.table.file.name", topologyTable().toString());
    if (!hosts.distinct()) {
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
    conf.set(ZkSettings.ZK_ADDRESS, zk);
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
      RmHaPair.configure(conf, zk, SpindleLocalCluster.CLUSTER_ID,
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

  /**
   * yarn-site.xml with the addresses the ResourceManager really bound ({@code live}: the running cluster's
   * configuration), and an env file to source; {@code webPort} is Spindle's web port, empty under another scheduler.
   */
  void writeForClients(Configuration live, Optional<Integer> webPort) throws IOException {
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
    // So that a standby-less restart from this directory, or a reader of it, sees the same scheduler settings.
    spec.schedulerSettings().forEach(site::set);
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
    webPort.ifPresent(port -> {
      site.setInt(SpindleWeb.PORT, port);
      site.set(SpindleWeb.BIND_ADDRESS, WEB_HOST);
    });
    writeXml(site, confDir.resolve("yarn-site.xml"));
    Files.writeString(workdir.envFile(),
        "# source this file to use the Spindle local cluster from this shell\n"
            + "export HADOOP_CONF_DIR=" + confDir + "\n"
            + "export YARN_CONF_DIR=" + confDir + "\n"
            + webPort.map(port -> "export SPINDLE_URL=" + webUrl(port) + "\n").orElse(""),
        StandardCharsets.UTF_8);
  }

  /** Where Spindle's GPU map, status API and Prometheus endpoint are, on {@code port}. */
  static String webUrl(int port) {
    return "http://" + WEB_HOST + ":" + port + "/";
  }

  private static void writeXml(Configuration c, Path file) throws IOException {
    try (OutputStream os = Files.newOutputStream(file)) {
      c.writeXml(os);
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
