package io.spindle.nm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

/**
 * The fake {@code nvidia-smi} script over a private copy of one fixture folder: discovery reads the recorded
 * outputs through a real child process, and every {@code mig} command lands in {@link #migLog()}.
 */
public final class FakeNvidiaSmi {

  private final Path dir;
  private final ProcessNvidiaSmi smi;

  private FakeNvidiaSmi(Path dir) {
    this.dir = dir;
    this.smi = new ProcessNvidiaSmi(List.of("sh", resource("fake-nvidia-smi.sh").toString(), dir.toString()),
        Duration.ofSeconds(10));
  }

  /** Copies {@code src/test/resources/nvidia-smi/<fixture>} into {@code tempDir} and serves it. */
  public static FakeNvidiaSmi of(String fixture, Path tempDir) {
    Path target = tempDir.resolve(fixture);
    copy(resource(fixture), target);
    return new FakeNvidiaSmi(target);
  }

  public NvidiaSmi smi() {
    return smi;
  }

  /** The fixture folder's path, for settings that take the binary path. */
  public Path dir() {
    return dir;
  }

  /** Serves another file of the fixture as {@code name} from now on (e.g. query-busy.xml as query.xml). */
  public FakeNvidiaSmi serve(String name, String fromFile) {
    try {
      Files.copy(dir.resolve(fromFile), dir.resolve(name), StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  /** Writes a fixture file, e.g. {@code query.xml.exit} or {@code mig-fails}. */
  public FakeNvidiaSmi write(String name, String content) {
    try {
      Files.writeString(dir.resolve(name), content);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  /** Every {@code mig} invocation so far, one per line, arguments as passed. */
  public List<String> migLog() {
    Path log = dir.resolve("mig.log");
    try {
      return Files.exists(log) ? Files.readAllLines(log) : List.of();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static Path resource(String name) {
    URL url = FakeNvidiaSmi.class.getResource("/nvidia-smi/" + name);
    if (url == null) {
      throw new IllegalStateException("test resource nvidia-smi/" + name + " missing");
    }
    try {
      return Path.of(url.toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The text of a fixture file, for tests that feed outputs directly. */
  public static String fixture(String name) {
    try {
      return Files.readString(resource(name));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void copy(Path from, Path to) {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path f : files.toList()) {
        Path target = to.resolve(from.relativize(f).toString());
        if (Files.isDirectory(f)) {
          Files.createDirectories(target);
        } else {
          Files.copy(f, target, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
