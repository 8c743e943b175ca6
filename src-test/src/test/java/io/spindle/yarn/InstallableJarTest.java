package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.local.FixedPorts;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The installable artifact: a stock ResourceManager process, started with Hadoop's own classpath plus only the
 * Spindle JAR, comes up with Spindle as its scheduler and serves the queues of the shipped capacity-scheduler.xml.
 */
class InstallableJarTest {

  @Test
  void aStockResourceManagerRunsSpindleFromTheJarAlone(@TempDir Path confDir) throws Exception {
    Path jar = builtJar();
    String hadoopClasspath = Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(entry -> !entry.contains("spindle") && !entry.contains("src-test") && !entry.contains("yarn-scheduler")
            && !entry.contains("/client/target") && !entry.contains("io/prometheus"))
        .collect(Collectors.joining(File.pathSeparator));
    int rmPort = FixedPorts.next();
    int metricsPort = FixedPorts.next();
    Files.writeString(confDir.resolve("yarn-site.xml"), """
        <configuration>
          <property><name>yarn.resourcemanager.scheduler.class</name><value>io.spindle.yarn.SpindleScheduler</value></property>
          <property><name>yarn.resource-types</name><value>yarn.io/gpu</value></property>
          <property><name>yarn.resourcemanager.address</name><value>127.0.0.1:%d</value></property>
          <property><name>yarn.resourcemanager.scheduler.address</name><value>127.0.0.1:%d</value></property>
          <property><name>yarn.resourcemanager.resource-tracker.address</name><value>127.0.0.1:%d</value></property>
          <property><name>yarn.resourcemanager.admin.address</name><value>127.0.0.1:%d</value></property>
          <property><name>yarn.resourcemanager.webapp.address</name><value>127.0.0.1:%d</value></property>
          <property><name>yarn.scheduler.spindle.http.bind-address</name><value>127.0.0.1</value></property>
          <property><name>yarn.scheduler.spindle.http.port</name><value>%d</value></property>
        </configuration>
        """.formatted(rmPort, FixedPorts.next(), FixedPorts.next(), FixedPorts.next(), FixedPorts.next(), metricsPort));
    Files.copy(Path.of("../conf/capacity-scheduler.xml"), confDir.resolve("capacity-scheduler.xml"));
    Path log = confDir.resolve("rm.log");
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx512m", "-cp", confDir + File.pathSeparator + jar + File.pathSeparator + hadoopClasspath,
        "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager"));
    Process rm = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    YarnConfiguration clientConf = new YarnConfiguration();
    clientConf.set(YarnConfiguration.RM_ADDRESS, "127.0.0.1:" + rmPort);
    YarnClient client = YarnClient.createYarnClient();
    client.init(clientConf);
    client.start();
    try {
      QueueInfo llm = awaitQueue(client, "llm", rm, log);
      assertThat(llm.getQueuePath()).isEqualTo("root.research.llm");
      assertThat(Files.readString(log)).contains("Spindle scheduler initialised");
      // The Prometheus bridge is bundled (relocated) in the JAR and reads the RM's own Dropwizard Metrics.
      MiniClusterSupport.await(Duration.ofSeconds(30), () -> scrape(metricsPort)
          .contains("spindle_queue_guarantee_gpus{queue=\"root.research.llm\",}"));
      assertThat(scrape(metricsPort)).contains("spindle_cycle_seconds_count");
      // The status API's JSON comes from the RM's own Jackson; the GPU map page is inside the JAR.
      assertThat(fetch(metricsPort, "/api/v1/queues")).contains("\"path\" : \"root.research.llm\"");
      assertThat(fetch(metricsPort, "/")).contains("Spindle GPU map");
    } finally {
      client.stop();
      rm.destroy();
      rm.waitFor();
    }
  }

  private static String scrape(int port) throws IOException {
    return fetch(port, "/metrics");
  }

  private static String fetch(int port, String path) throws IOException {
    try (java.io.InputStream in = new java.net.URL("http://127.0.0.1:" + port + path).openStream()) {
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  private static QueueInfo awaitQueue(YarnClient client, String queue, Process rm, Path log) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    while (System.nanoTime() < deadline) {
      if (!rm.isAlive()) {
        throw new AssertionError("ResourceManager exited: " + tail(log));
      }
      try {
        QueueInfo info = client.getQueueInfo(queue);
        if (info != null) {
          return info;
        }
      } catch (Exception notUpYet) {
        // The RM is still starting.
      }
      Thread.sleep(500);
    }
    throw new AssertionError("ResourceManager did not serve queue " + queue + ": " + tail(log));
  }

  private static String tail(Path log) throws IOException {
    List<String> lines = Files.readAllLines(log);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
  }

  private static Path builtJar() throws IOException {
    try (Stream<Path> files = Files.list(Path.of("../yarn-scheduler/target"))) {
      return files.filter(p -> p.getFileName().toString().matches("spindle-yarn-scheduler-.*(?<!tests|sources)\\.jar"))
          .findFirst().orElseThrow(() -> new AssertionError("build yarn-scheduler first (mvn package)"));
    }
  }
}
