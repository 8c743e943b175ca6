package io.spindle.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The core engine is plain Java: it must run in the simulator and in tests with no cluster, and adapters depend on
 * it, never the reverse — neither on their libraries nor on Spindle's own adapter packages, which would bring those
 * libraries in behind them. Two checks, because each misses what the other sees: the bytecode rule catches a use
 * through a fully qualified name, the source scan catches an import that compiles away.
 */
class CoreBoundaryTest {

  private static final String[] ADAPTER_LIBRARIES = {
    "org.apache.hadoop", "org.apache.curator", "org.apache.zookeeper", "org.apache.avro", "com.codahale",
    "com.fasterxml.jackson", "com.sun.net.httpserver"
  };
  private static final String[] SPINDLE_ADAPTERS = {
    "io.spindle.yarn", "io.spindle.ha", "io.spindle.channel", "io.spindle.journal", "io.spindle.web",
    "io.spindle.metrics", "io.spindle.nm", "io.spindle.client"
  };
  private static final String[] FORBIDDEN =
      Stream.concat(Stream.of(ADAPTER_LIBRARIES), Stream.of(SPINDLE_ADAPTERS)).toArray(String[]::new);
  private static final Path CORE_SOURCES = Path.of("src/main/java/io/spindle/core");

  @Test
  void coreClassesDependOnNoAdapter() {
    JavaClasses core = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("io.spindle.core");
    assertThat(core).as("core classes found on the classpath").isNotEmpty();
    String[] packages = Stream.of(FORBIDDEN).map(p -> p + "..").toArray(String[]::new);
    noClasses().that().resideInAPackage("io.spindle.core..")
        .should().dependOnClassesThat().resideInAnyPackage(packages)
        .because("io.spindle.core is plain Java; adapters depend on it, never the reverse")
        .check(core);
  }

  @Test
  void coreSourcesImportNoAdapter() throws IOException {
    assertThat(CORE_SOURCES).isDirectory();
    Pattern forbidden = Pattern.compile(
        "^\\s*import\\s+(static\\s+)?(" + String.join("|", Stream.of(FORBIDDEN).map(Pattern::quote).toList())
            + ")\\.");
    List<String> offenders = new ArrayList<>();
    try (Stream<Path> files = Files.walk(CORE_SOURCES)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        List<String> lines = Files.readAllLines(file);
        for (int i = 0; i < lines.size(); i++) {
          if (forbidden.matcher(lines.get(i)).find()) {
            offenders.add(file + ":" + (i + 1) + ": " + lines.get(i).strip());
          }
        }
      }
    }
    assertThat(offenders).as("adapter imports in io.spindle.core").isEmpty();
  }
}
