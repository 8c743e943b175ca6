package io.spindle.channel.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The scheduler JAR carries the checkpoint protocol of spindle-client (admins install one JAR), and its checkpoint
 * classes link on a Hadoop classpath plus that JAR alone — no spindle-client JAR or classes directory beside it.
 */
class SchedulerJarBundlesClientTest {

  @Test
  void theSchedulerJarHoldsTheClientsProtocolClasses() throws Exception {
    try (JarFile jar = new JarFile(builtJar().toFile())) {
      for (String name : List.of("io/spindle/client/CheckpointCredentials.class",
          "io/spindle/client/CheckpointRecords.class", "io/spindle/client/SpindleZkSettings.class",
          "io/spindle/client/avro/CheckpointNotice.class", "io/spindle/client/avro/CheckpointAck.class",
          "io/spindle/channel/checkpoint/CheckpointNoticeStore.class")) {
        assertThat(jar.getEntry(name)).as(name).isNotNull();
      }
    }
  }

  @Test
  void itsCheckpointClassesLinkWithoutASeparateClientJar() throws Exception {
    List<URL> classpath = new ArrayList<>(List.of(builtJar().toUri().toURL()));
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String e = entry.replace('\\', '/');
      if (!e.contains("spindle") && !e.contains("src-test") && !e.contains("yarn-scheduler")
          && !e.contains("/client/target")) {
        classpath.add(Path.of(entry).toUri().toURL());
      }
    }
    ClassLoader caller = Thread.currentThread().getContextClassLoader();
    try (URLClassLoader rm = new URLClassLoader(classpath.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
      Thread.currentThread().setContextClassLoader(rm); // log4j loads its appenders through it, as in a daemon
      Class<?> identity = Class.forName("io.spindle.ha.SchedulerZkIdentity", true, rm);
      Object digest = identity.getMethod("digest", String.class, String.class).invoke(null, "spindle-rm", "pw");
      assertThat(digest.toString()).contains("digest:spindle-rm");

      Class<?> credentials = Class.forName("io.spindle.client.CheckpointCredentials", true, rm);
      assertThat(credentials.getProtectionDomain().getCodeSource().getLocation()).isEqualTo(classpath.get(0));
      Object owner = credentials.getMethod("of", String.class, byte[].class)
          .invoke(null, "application_1_0001", "token".getBytes(StandardCharsets.UTF_8));
      assertThat(credentials.getMethod("aclId").invoke(owner).toString()).contains("application_1_0001:");

      Class.forName("io.spindle.channel.checkpoint.CheckpointNoticeStore", true, rm);
      Class.forName("io.spindle.client.avro.CheckpointAck", true, rm);
    } finally {
      Thread.currentThread().setContextClassLoader(caller);
    }
  }

  private static Path builtJar() throws IOException {
    try (Stream<Path> files = Files.list(Path.of("../yarn-scheduler/target"))) {
      return files.filter(p -> p.getFileName().toString().matches("spindle-yarn-scheduler-.*(?<!tests|sources)\\.jar"))
          .findFirst().orElseThrow(() -> new AssertionError("build yarn-scheduler first (mvn package)"));
    }
  }
}
