package io.spindle.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Where the local cluster keeps everything ({@code --workdir}): the HADOOP_CONF_DIR, YARN's and ZooKeeper's data,
 * the log, and the env file a shell sources.
 */
record LocalWorkdir(Path root) {

  LocalWorkdir {
    root = root.toAbsolutePath().normalize();
  }

  Path confDir() {
    return root.resolve("conf");
  }

  /** Where MiniYARNCluster puts its NodeManager directories. */
  Path yarnData() {
    return root.resolve("yarn");
  }

  Path zookeeperData() {
    return root.resolve("zookeeper");
  }

  Path logFile() {
    return root.resolve("logs").resolve("spindle-local.log");
  }

  Path envFile() {
    return root.resolve("spindle-local.env");
  }

  /** Empties what an earlier run left, so nothing of it is mistaken for this run's. */
  void prepare() throws IOException {
    Files.createDirectories(root);
    for (String sub : List.of("conf", "yarn", "zookeeper", "logs")) {
      deleteTree(root.resolve(sub));
      Files.createDirectories(root.resolve(sub));
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
}
