package io.spindle.spark;

import io.spindle.client.AmRmTokenSecret;
import io.spindle.client.SpindleCheckpointClient;
import io.spindle.client.SpindleZkSettings;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver side of {@link SpindlePlugin}. In YARN cluster mode the driver runs inside the ApplicationMaster's
 * container, which holds the attempt's AMRMToken, the secret Spindle's notices are authenticated with; there it
 * connects to Spindle's ZooKeeper (found through the cluster's {@code yarn-site.xml}, as the ResourceManager finds it)
 * and answers notices through a {@link NoticeResponder}. Anywhere else (client mode, where the AM is a separate
 * process; not YARN; no ZooKeeper configured) it says why in the log and only tracks executors. At start it also checks
 * that an elastic executor gang's tags agree with Spark's executor bounds ({@link ElasticExecutors}).
 */
final class SpindleDriverPlugin implements DriverPlugin {

  private static final Logger LOG = LoggerFactory.getLogger(SpindleDriverPlugin.class);

  private ExecutorTasks tasks;
  private NoticeResponder responder;
  private SpindleCheckpointClient client;

  @Override
  public Map<String, String> init(SparkContext sc, PluginContext context) {
    SparkConf conf = sc.getConf();
    if (!conf.getBoolean(SpindlePlugin.ENABLED, true)) {
      LOG.info("Spindle plugin is off ({}=false)", SpindlePlugin.ENABLED);
      return Map.of();
    }
    Optional<ElasticExecutors> elastic = ElasticExecutors.check(conf, LOG::warn);
    SparkCheckpointHandler handler = handler(conf);
    tasks = new ExecutorTasks();
    sc.addSparkListener(new ExecutorTasksListener(tasks));
    Duration ackBeforeDeadline = Duration.ofMillis(conf.getTimeAsMs(SpindlePlugin.ACK_BEFORE_DEADLINE, "2s"));
    ResizeResponder resizes = new ResizeResponder(tasks, new SparkExecutorDecommission(sc), ackBeforeDeadline,
        System::currentTimeMillis);
    responder = new NoticeResponder(handler, sc, tasks, ackBeforeDeadline, System::currentTimeMillis, resizes);
    SpindleSpark.attach(this);
    Optional<String> notListening = whyNotListening(conf);
    if (notListening.isPresent()) {
      LOG.warn("Spindle plugin does not listen for checkpoint notices: {}. Executors Spindle preempts go at the "
          + "notice's deadline without an answer.", notListening.get());
      return Map.of();
    }
    YarnConfiguration yarn = new YarnConfiguration(sc.hadoopConfiguration());
    SpindleZkSettings zk = SpindleZkSettings.from(yarn::get);
    if (!zk.enabled()) {
      LOG.warn("Spindle plugin does not listen for checkpoint notices: the cluster configuration names no "
          + "ZooKeeper ({} or {})", SpindleZkSettings.ZK_ADDRESS, SpindleZkSettings.HADOOP_ZK_ADDRESS);
      return Map.of();
    }
    String appId = ContainerId.fromString(System.getenv("CONTAINER_ID")).getApplicationAttemptId()
        .getApplicationId().toString();
    try {
      // The driver thread runs as the AM's user, which holds the AMRMToken (and the replacement when YARN rolls it).
      // Threads that later need the token (the client's, Curator's) need not run as that user: keep it.
      UserGroupInformation user = UserGroupInformation.getCurrentUser();
      client = SpindleCheckpointClient.builder().settings(zk).appId(appId).secret(() -> AmRmTokenSecret.of(user))
          .build();
    } catch (IOException | RuntimeException e) {
      LOG.error("Spindle plugin cannot reach Spindle's ZooKeeper at {} for {}; running without checkpoint notices "
          + "(executors Spindle preempts go at the deadline)", zk.address(), appId, e);
      return Map.of();
    }
    responder.reportTo(client::reportCheckpoint);
    client.register(responder);
    LOG.info("Spindle plugin listens for checkpoint notices of {} ({}; {}; {})", appId,
        conf.contains(SpindlePlugin.HANDLER) ? "handler " + conf.get(SpindlePlugin.HANDLER)
            : "no handler: drains the named executors, then acknowledges",
        elastic.map(e -> "elastic executor gang of at least " + e.min() + ", step " + e.step()
            + ": resize notices decommission the executors they name").orElse("executor gang not elastic"), zk);
    return Map.of();
  }

  @Override
  public void shutdown() {
    if (tasks == null) {
      return; // off
    }
    SpindleSpark.detach(this);
    if (client != null) {
      client.close();
    }
  }

  ExecutorTasks tasks() {
    return tasks;
  }

  NoticeResponder responder() {
    return responder;
  }

  boolean listening() {
    return client != null;
  }

  /** Why the driver cannot answer notices here, or empty when it can. */
  static Optional<String> whyNotListening(SparkConf conf) {
    if (!conf.getBoolean(SpindlePlugin.ENABLED, true)) {
      return Optional.of(SpindlePlugin.ENABLED + " is false");
    }
    String master = conf.get("spark.master", "");
    if (!master.startsWith("yarn")) {
      return Optional.of("the master is '" + master + "', not YARN");
    }
    if (!"cluster".equals(conf.get("spark.submit.deployMode", "client"))) {
      return Optional.of("client deploy mode: the ApplicationMaster (ExecutorLauncher) is another process, and only "
          + "it holds the AMRMToken that answers are authenticated with; use --deploy-mode cluster");
    }
    if (System.getenv("CONTAINER_ID") == null) {
      return Optional.of("the driver does not run in a YARN container (no CONTAINER_ID)");
    }
    return Optional.empty();
  }

  /** The configured handler, created once; a bad class name stops the application at start, with the reason. */
  static SparkCheckpointHandler handler(SparkConf conf) {
    if (!conf.contains(SpindlePlugin.HANDLER)) {
      return null;
    }
    String name = conf.get(SpindlePlugin.HANDLER).strip();
    try {
      ClassLoader loader = Thread.currentThread().getContextClassLoader();
      Class<?> type = Class.forName(name, true, loader == null ? SpindleDriverPlugin.class.getClassLoader() : loader);
      if (!SparkCheckpointHandler.class.isAssignableFrom(type)) {
        throw new IllegalArgumentException(SpindlePlugin.HANDLER + "=" + name + " does not implement "
            + SparkCheckpointHandler.class.getName());
      }
      return (SparkCheckpointHandler) type.getConstructor().newInstance();
    } catch (ReflectiveOperationException e) {
      throw new IllegalArgumentException(SpindlePlugin.HANDLER + "=" + name + " cannot be created (a public class "
          + "with a public no-argument constructor, in the application JAR or --jars): " + e, e);
    }
  }
}
