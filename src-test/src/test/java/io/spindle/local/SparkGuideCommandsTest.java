package io.spindle.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.spark.SparkRuntime;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code spark-submit} commands of docs/spark-guide.md, as written there, against the local cluster of
 * {@code scripts/spindle-local} (its sample nodes and queues, its {@code HADOOP_CONF_DIR}): every {@code bash} block
 * of the guide that starts with {@code spark-submit} must succeed. The guide's variables ({@code $SPINDLE_JAR},
 * {@code $SPINDLE_GPU_SCRIPT}, {@code $PWD}) are expanded as its setup block defines them; only what a Spark
 * installation and the shell provide is added ({@link SparkRuntime#environmentConf}).
 */
class SparkGuideCommandsTest {

  private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
  private static final Path GUIDE = REPO.resolve("docs/spark-guide.md");
  private static final Pattern BASH_BLOCK = Pattern.compile("```bash\\n(.*?)```", Pattern.DOTALL);

  @TempDir
  static Path tmp;
  private static SpindleLocalCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = SpindleLocalCluster.start(SpindleLocalCluster.Options.parse("--workdir", tmp.resolve("run").toString()),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void theGuidesGangMigSharedGpuAndCheckpointingJobsSucceedOnTheLocalCluster() throws Exception {
    List<List<String>> commands = sparkSubmitCommands(Files.readString(GUIDE));
    assertThat(commands).as("the guide's spark-submit commands").hasSize(5);
    Path steps = REPO.resolve("target/spindle-steps");
    deleteTree(steps);
    Path confDir = tmp.resolve("run/conf");
    for (List<String> command : commands) {
      String name = command.get(command.indexOf("--name") + 1);
      Path work = Files.createDirectories(tmp.resolve(name));
      Path logs = Files.createDirectories(work.resolve("logs"));
      Path output = work.resolve("spark-submit.log");
      List<String> args = new ArrayList<>(SparkRuntime.environmentConf(work, logs));
      args.addAll(command.subList(1, command.size()));
      Process submit = SparkRuntime.submit(confDir, args, work, logs, output);
      try {
        assertThat(submit.waitFor(4, TimeUnit.MINUTES)).as("%s ended", name).isTrue();
        assertThat(submit.exitValue()).as("%s: spark-submit's exit status", name).isZero();
        assertThat(Files.readString(logs.resolve("spark-submit.log"))).as(name).contains("final status: SUCCEEDED");
        for (String word : command) {
          if (word.startsWith("spark.yarn.executor.resource.") && word.contains(".amount=")) {
            // Spark's allocator logs each executor container it asks for: the custom YARN resource must be in it.
            String type = word.substring("spark.yarn.executor.resource.".length(), word.indexOf(".amount="));
            String asked = type + ": " + word.substring(word.indexOf(".amount=") + ".amount=".length());
            assertThat(allLogs(logs)).as("%s: the executors' containers ask %s", name, asked).contains(asked);
          }
        }
      } catch (AssertionError e) {
        System.err.println(SparkRuntime.diagnostics(output, logs));
        throw e;
      } finally {
        submit.destroyForcibly();
      }
    }
    assertThat(Files.readString(steps.resolve("step")).strip()).as("the checkpointing job saved its last step")
        .isEqualTo("10");
  }

  /** Each spark-submit command of the guide's bash blocks, split into words, the guide's variables expanded. */
  static List<List<String>> sparkSubmitCommands(String markdown) throws IOException {
    Map<String, String> vars = Map.of(
        "$SPINDLE_JAR", SparkRuntime.pluginJar().toString(),
        "$SPINDLE_GPU_SCRIPT", SparkRuntime.discoveryScript().toString(),
        "$PWD", REPO.toString());
    List<List<String>> out = new ArrayList<>();
    Matcher m = BASH_BLOCK.matcher(markdown);
    while (m.find()) {
      String block = m.group(1).replace("\\\n", " ");
      if (!block.startsWith("spark-submit ")) {
        continue;
      }
      List<String> words = new ArrayList<>();
      for (String w : block.strip().split("\\s+")) {
        for (Map.Entry<String, String> v : vars.entrySet()) {
          w = w.replace(v.getKey(), v.getValue());
        }
        assertThat(w).as("a word of the guide's command the test cannot expand like a shell").doesNotContain("$")
            .doesNotContain("'").doesNotContain("\"").doesNotContain("*");
        words.add(w);
      }
      out.add(words);
    }
    return out;
  }

  @Test
  void theGuideParserSplitsContinuedLinesAndExpandsTheGuidesVariables() throws IOException {
    List<List<String>> commands = sparkSubmitCommands("text\n```bash\nspark-submit --name x \\\n  --files "
        + "$SPINDLE_GPU_SCRIPT a.jar file://$PWD/t\n```\n```bash\nsource env\n```\n");
    assertThat(commands).singleElement().satisfies(c -> assertThat(c).containsExactly("spark-submit", "--name", "x",
        "--files", SparkRuntime.discoveryScript().toString(), "a.jar", "file://" + REPO + "/t"));
  }

  private static String allLogs(Path logs) throws IOException {
    StringBuilder all = new StringBuilder();
    try (var files = Files.list(logs)) {
      for (Path f : files.sorted().toList()) {
        all.append(Files.readString(f));
      }
    }
    return all.toString();
  }

  private static void deleteTree(Path dir) throws IOException {
    if (Files.exists(dir)) {
      try (var files = Files.walk(dir)) {
        for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
    }
  }
}
