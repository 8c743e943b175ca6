package io.spindle.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Runs the real {@code spark-submit} for tests: Spark's {@code SparkSubmit} in a JVM of its own, with Spark's runtime
 * classpath (resolved by {@code src-test/spark-runtime}) and a {@code HADOOP_CONF_DIR}, as a user's shell would. Only
 * what a Spark distribution and the user's environment would otherwise provide is added ({@link #environmentConf}).
 */
public final class SparkRuntime {

  /** spark-integration, relative to src-test (the tests' working directory). */
  public static final Path SPARK_INTEGRATION = Path.of("../spark-integration");

  private SparkRuntime() {}

  /** Spark's runtime JARs, at the Spark version the plugin is built against. */
  public static List<Path> jars() throws IOException {
    Path file = Path.of("spark-runtime/target/spark-classpath.txt");
    assertThat(file).as("Spark's classpath, written by src-test/spark-runtime (mvn verify builds it)").exists();
    List<Path> jars = Arrays.stream(Files.readString(file).strip().split(File.pathSeparator)).map(Path::of).toList();
    String version = System.getProperty("spindle.spark.version");
    assertThat(jars).as("spark.version in pom.xml (%s) and src-test/spark-runtime/pom.xml must be equal", version)
        .anyMatch(j -> j.getFileName().toString().equals("spark-core_2.13-" + version + ".jar"));
    return jars;
  }

  /** spark-integration's JAR: the plugin, Spindle's client classes, the example jobs. */
  public static Path pluginJar() throws IOException {
    try (Stream<Path> files = Files.list(SPARK_INTEGRATION.resolve("target"))) {
      return files.filter(f -> f.getFileName().toString().matches("spindle-spark-integration-[^-]+(-SNAPSHOT)?\\.jar"))
          .findFirst().orElseThrow(() -> new AssertionError("build spark-integration first (mvn package)"))
          .toAbsolutePath();
    }
  }

  public static Path discoveryScript() {
    return SPARK_INTEGRATION.resolve("scripts/spindle-gpu-discovery.sh").toAbsolutePath().normalize();
  }

  /**
   * Settings a user's installation provides by other means: Spark's JARs for the containers (here the ones Maven
   * resolved, by {@code local:} path, since the NodeManagers run on this machine), the staging directory, the
   * containers' {@code JAVA_HOME}, and a log file per Spark JVM under {@code logs} (kept after the run).
   */
  public static List<String> environmentConf(Path work, Path logs) throws IOException {
    String javaHome = System.getProperty("java.home");
    String yarnJars = jars().stream().filter(j -> !j.getFileName().toString().startsWith("rocksdbjni"))
        .map(j -> "local:" + j.toAbsolutePath()).collect(Collectors.joining(","));
    String logging = "-Dlog4j2.configurationFile=" + log4jConfig(work, logs).toUri();
    List<String> conf = new ArrayList<>();
    for (String kv : List.of("spark.yarn.jars=" + yarnJars,
        "spark.yarn.stagingDir=" + work.resolve("staging").toUri(),
        "spark.yarn.appMasterEnv.JAVA_HOME=" + javaHome,
        "spark.executorEnv.JAVA_HOME=" + javaHome,
        "spark.driver.extraJavaOptions=" + logging,
        "spark.executor.extraJavaOptions=" + logging,
        "spark.yarn.maxAppAttempts=1",
        "spark.yarn.report.interval=2s",
        "spark.ui.enabled=false")) {
      conf.add("--conf");
      conf.add(kv);
    }
    return conf;
  }

  /** Starts {@code spark-submit <args>} with {@code hadoopConfDir}; its output goes to {@code output}. */
  public static Process submit(Path hadoopConfDir, List<String> args, Path work, Path logs, Path output)
      throws IOException {
    String javaHome = System.getProperty("java.home");
    List<String> cmd = new ArrayList<>(List.of(Path.of(javaHome, "bin", "java").toString(), "-Xmx512m",
        "-Dlog4j2.configurationFile=" + log4jConfig(work, logs).toUri(),
        "-cp", hadoopConfDir + File.pathSeparator
            + jars().stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator)),
        "org.apache.spark.deploy.SparkSubmit"));
    cmd.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(output.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("SPARK_") || k.startsWith("HADOOP_") || k.startsWith("YARN_"));
    pb.environment().put("HADOOP_CONF_DIR", hadoopConfDir.toString());
    pb.environment().put("JAVA_HOME", javaHome);
    return pb.start();
  }

  /** Every Spark JVM (spark-submit, drivers, executors) logs to its own file under {@code logs}. */
  private static Path log4jConfig(Path work, Path logs) throws IOException {
    Path file = work.resolve("log4j2.properties");
    Files.writeString(file, String.join("\n",
        "rootLogger.level = warn",
        "rootLogger.appenderRef.file.ref = file",
        "appender.file.type = File",
        "appender.file.name = file",
        "appender.file.fileName = " + logs + "/${env:CONTAINER_ID:-spark-submit}.log",
        "appender.file.append = true",
        "appender.file.layout.type = PatternLayout",
        "appender.file.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1}: %m%n",
        "logger.spindle.name = io.spindle",
        "logger.spindle.level = info",
        "logger.yarn.name = org.apache.spark.deploy.yarn",
        "logger.yarn.level = info",
        "logger.scheduler.name = org.apache.spark.scheduler",
        "logger.scheduler.level = info",
        "logger.decommissioner.name = org.apache.spark.storage.BlockManagerDecommissioner",
        "logger.decommissioner.level = info",
        ""), StandardCharsets.UTF_8);
    return file;
  }

  /** {@code output} and the end of every Spark JVM's log, for a failed run. */
  public static String diagnostics(Path output, Path logs) {
    StringBuilder b = new StringBuilder("---- spark-submit\n").append(tail(output, 60));
    try (Stream<Path> files = Files.list(logs)) {
      for (Path f : files.sorted().toList()) {
        b.append("---- ").append(f.getFileName()).append('\n').append(tail(f, 80));
      }
    } catch (IOException e) {
      b.append("(no Spark logs: ").append(e.getMessage()).append(")\n");
    }
    return b.toString();
  }

  private static String tail(Path file, int lines) {
    try {
      List<String> all = Files.readAllLines(file);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size())) + "\n";
    } catch (IOException e) {
      return "(" + e.getMessage() + ")\n";
    }
  }
}
