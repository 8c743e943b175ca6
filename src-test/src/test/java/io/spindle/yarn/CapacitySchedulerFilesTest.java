package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacitySchedulerConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.converter.ConversionOptions;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.converter.DryRunResultHolder;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.converter.FSConfigToCSConfigConverter;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.converter.FSConfigToCSConfigConverterParams;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.converter.FSConfigToCSConfigRuleHandler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * capacity-scheduler.xml files written by others, loaded into a ResourceManager (MockRM) under CapacityScheduler and
 * under Spindle: every file CapacityScheduler starts with, Spindle starts with; every file it refuses, Spindle
 * refuses naming a key. The files come from Hadoop 3.5.0's own test jars on the test classpath (not copied here):
 * <ul>
 *   <li>{@code hadoop-yarn-server-resourcemanager-3.5.0-tests.jar!/capacity-scheduler.xml}: the file Hadoop ships in
 *       {@code etc/hadoop}, key for key;
 *   <li>{@code hadoop-yarn-server-tests-3.5.0-tests.jar!/capacity-scheduler.xml}: MiniYARNCluster's;
 *   <li>{@code ...resourcemanager-3.5.0-tests.jar!/cs-validation-pass/} and {@code cs-validation-fail/}: the files of
 *       CapacityScheduler's own configuration-validation tests;
 *   <li>fs2cs output: Hadoop's {@code FSConfigToCSConfigConverter} run here on the RM test jar's fair-scheduler files
 *       ({@code fair-scheduler-conversion.xml} is its own converter test's input);
 *   <li>the configurations CapacityScheduler's own node-label, weight-mode and auto-creation tests build, made here by
 *       the same helpers of the RM test jar ({@code TestCapacitySchedulerWeightMode.getCSConfWith…Labels…},
 *       {@code TestCapacitySchedulerAutoCreatedQueueBase.setupQueueConfiguration…} and others): per-label capacities
 *       and maximums as percentages and weights, accessible labels, legacy and flexible managed parents;
 * </ul>
 * files given key for key where they were written elsewhere (Ambari's HDP stack default; the CapacityScheduler
 * docs' node-label and auto-creation examples), and the edits admins make first to the shipped file (each a variant
 * of it, described in the case's name).
 */
class CapacitySchedulerFilesTest {

  private static final String P = "yarn.scheduler.capacity.";

  @TempDir
  Path dir;

  record Case(String name, String resource, Consumer<Configuration> edit) {
    @Override
    public String toString() {
      return name;
    }
  }

  static List<Case> files() {
    String rmTests = "capacity-scheduler.xml";
    return List.of(
        new Case("Hadoop's shipped capacity-scheduler.xml", rmTests, c -> { }),
        new Case("MiniYARNCluster's capacity-scheduler.xml", null, c -> { }),
        new Case("CapacityScheduler's validation test, passing file", "cs-validation-pass/capacity-scheduler.xml",
            c -> { }),
        new Case("CapacityScheduler's validation test, failing file", "cs-validation-fail/capacity-scheduler.xml",
            c -> { }),
        new Case("shipped file, root.queues=a,b at 50/50, root.default.* left in place", rmTests, c -> {
          c.set(P + "root.queues", "a,b");
          c.set(P + "root.a.capacity", "50");
          c.set(P + "root.b.capacity", "50");
        }),
        new Case("shipped file, weight mode", rmTests, c -> {
          c.set(P + "legacy-queue-mode.enabled", "false");
          c.set(P + "root.queues", "prod,ml");
          c.set(P + "root.prod.capacity", "1w");
          c.set(P + "root.ml.capacity", "3w");
        }),
        new Case("shipped file, maximum-capacity -1", rmTests, c -> c.set(P + "root.default.maximum-capacity", "-1")),
        new Case("shipped file, one leaf name under two parents", rmTests, c -> {
          c.set(P + "root.queues", "eng,sales");
          c.set(P + "root.eng.capacity", "50");
          c.set(P + "root.sales.capacity", "50");
          c.set(P + "root.eng.queues", "dev");
          c.set(P + "root.sales.queues", "dev");
          c.set(P + "root.eng.dev.capacity", "100");
          c.set(P + "root.sales.dev.capacity", "100");
        }),
        new Case("shipped file, children not adding up to 100", rmTests, c -> {
          c.set(P + "root.queues", "a,b");
          c.set(P + "root.a.capacity", "50");
          c.set(P + "root.b.capacity", "60");
        }),
        fs2cs("fair-scheduler-conversion.xml"),
        fs2cs("fair-scheduler-orderingpolicy.xml"),
        fs2cs("fair-scheduler-onlyfairpolicy.xml"),
        fs2cs("fair-scheduler-max-resources-percentage.xml"),
        fs2cs("test-fair-scheduler.xml"),
        new Case("shipped file, user and %user queue mappings with a legacy managed parent", rmTests, c -> {
          c.set(P + "root.queues", "prod,research,users");
          c.set(P + "root.prod.capacity", "40");
          c.set(P + "root.research.capacity", "30");
          c.set(P + "root.users.capacity", "30");
          c.set(P + "root.users.auto-create-child-queue.enabled", "true");
          c.set(P + "root.users.leaf-queue-template.capacity", "10");
          c.set(P + "queue-mappings", "u:alice:research,g:ml:research,u:%user:root.users.%user");
        }),
        new Case("shipped file, %user mapping under a flexible (v2) parent in weight mode", rmTests, c -> {
          c.set(P + "legacy-queue-mode.enabled", "false");
          c.set(P + "root.queues", "prod,teams");
          c.set(P + "root.prod.capacity", "1w");
          c.set(P + "root.teams.capacity", "1w");
          c.set(P + "root.teams.auto-queue-creation-v2.enabled", "true");
          c.set(P + "queue-mappings", "u:%user:root.teams.%user");
        }),
        new Case("shipped file, a flexible (v2) parent in weight mode in the default legacy queue mode", rmTests,
            c -> {
              c.set(P + "root.queues", "prod,teams");
              c.set(P + "root.prod.capacity", "1w");
              c.set(P + "root.teams.capacity", "1w");
              c.set(P + "root.teams.auto-queue-creation-v2.enabled", "true");
              c.set(P + "queue-mappings", "u:%user:root.teams.%user");
            }),
        new Case("shipped file, weight mode in CapacityScheduler's default legacy queue mode", rmTests, c -> {
          c.set(P + "root.queues", "prod,ml");
          c.set(P + "root.prod.capacity", "1w");
          c.set(P + "root.ml.capacity", "3w");
        }),
        new Case("shipped file, with CapacityScheduler's preemption monitor enabled (yarn-site.xml)", rmTests,
            c -> c.setBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS, true)),
        new Case("shipped file, a mapping to a queue that does not exist", rmTests,
            c -> c.set(P + "queue-mappings", "u:alice:nosuch")),
        hadoopTests("TestCapacitySchedulerWeightMode.getConfigWithInheritedAccessibleNodeLabel"),
        hadoopTests("TestCapacitySchedulerWeightMode.getCSConfWithQueueLabelsWeightOnly"),
        hadoopTests("TestCapacitySchedulerWeightMode.getCSConfWithLabelsParentUseWeightChildUsePct"),
        hadoopTests("TestCapacitySchedulerWeightMode.getCSConfWithLabelsParentUsePctChildUseWeight"),
        hadoopTests("CapacitySchedulerQueueHelpers.setupQueueConfiguration"),
        hadoopTests(
            "TestCapacitySchedulerAutoCreatedQueuePreemption.setupQueueConfigurationForSimpleSurgicalPreemption"),
        hadoopTests("TestCapacitySchedulerAutoCreatedQueueBase.setupQueueConfiguration"),
        hadoopTests("TestCapacitySchedulerAutoCreatedQueueBase.setupQueueConfigurationForSingleAutoCreatedLeafQueue"),
        hadoopTests(
            "TestCapacitySchedulerAutoCreatedQueueBase.setupQueueConfigurationForSingleFlexibleAutoCreatedLeafQueue"),
        new Case("shipped file, children's capacities in a label adding up to 80", rmTests, c -> {
          c.set(P + "root.queues", "a,b");
          c.set(P + "root.a.capacity", "50");
          c.set(P + "root.b.capacity", "50");
          c.set(P + "root.accessible-node-labels.GPU.capacity", "100");
          c.set(P + "root.a.accessible-node-labels", "GPU");
          c.set(P + "root.b.accessible-node-labels", "GPU");
          c.set(P + "root.a.accessible-node-labels.GPU.capacity", "50");
          c.set(P + "root.b.accessible-node-labels.GPU.capacity", "30");
        }),
        new Case("shipped file, children's capacities in a label adding up to 110", rmTests, c -> {
          c.set(P + "root.queues", "a,b");
          c.set(P + "root.a.capacity", "50");
          c.set(P + "root.b.capacity", "50");
          c.set(P + "root.a.accessible-node-labels.GPU.capacity", "60");
          c.set(P + "root.b.accessible-node-labels.GPU.capacity", "50");
        }),
        new Case("shipped file, a label capacity of a queue that may not use the label", rmTests, c -> {
          c.set(P + "root.queues", "a,b");
          c.set(P + "root.a.capacity", "50");
          c.set(P + "root.b.capacity", "50");
          c.set(P + "root.a.accessible-node-labels", "GPU");
          c.set(P + "root.a.accessible-node-labels.GPU.capacity", "100");
          c.set(P + "root.b.accessible-node-labels", " ");
          c.set(P + "root.b.accessible-node-labels.GPU.capacity", "50");
        }),
        // Ambari's HDP stack default (common-services YARN capacity-scheduler.xml), key for key as Ambari writes it,
        // its own acl_administer_jobs key and root.capacity included.
        written("Ambari's HDP stack default", c -> {
          c.set(P + "maximum-applications", "10000");
          c.set(P + "maximum-am-resource-percent", "0.2");
          c.set(P + "root.queues", "default");
          c.set(P + "root.capacity", "100");
          c.set(P + "root.acl_administer_queue", "*");
          c.set(P + "root.accessible-node-labels", "*");
          c.set(P + "root.default.capacity", "100");
          c.set(P + "root.default.maximum-capacity", "100");
          c.set(P + "root.default.user-limit-factor", "1");
          c.set(P + "root.default.state", "RUNNING");
          c.set(P + "root.default.acl_submit_applications", "*");
          c.set(P + "root.default.acl_administer_jobs", "*");
          c.set(P + "node-locality-delay", "40");
          c.set(P + "resource-calculator", "org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator");
          c.set(P + "queue-mappings-override.enable", "false");
        }),
        // The CapacityScheduler docs' node-label example (NodeLabel.md, "Configuring queues"): three queues, GPU
        // nodes shared by two of them.
        written("the CapacityScheduler docs' node-label example", c -> {
          c.set(P + "root.queues", "engineering,marketing,sales");
          c.set(P + "root.engineering.capacity", "33");
          c.set(P + "root.marketing.capacity", "34");
          c.set(P + "root.sales.capacity", "33");
          c.set(P + "root.engineering.accessible-node-labels", "GPU");
          c.set(P + "root.marketing.accessible-node-labels", "GPU");
          c.set(P + "root.engineering.accessible-node-labels.GPU.capacity", "50");
          c.set(P + "root.marketing.accessible-node-labels.GPU.capacity", "50");
          c.set(P + "root.engineering.default-node-label-expression", "GPU");
        }),
        // The CapacityScheduler docs' auto-creation example (CapacityScheduler.md, "Dynamic Auto-Creation and
        // Management of Leaf Queues"), with its stray root.parent1.GPU.capacity key, under a two-queue root.
        written("the CapacityScheduler docs' auto-creation example", c -> {
          c.set(P + "root.queues", "default,parent1");
          c.set(P + "root.default.capacity", "50");
          c.set(P + "root.parent1.capacity", "50");
          c.set(P + "root.parent1.auto-create-child-queue.enabled", "true");
          c.set(P + "root.parent1.leaf-queue-template.capacity", "5");
          c.set(P + "root.parent1.leaf-queue-template.maximum-capacity", "100");
          c.set(P + "root.parent1.leaf-queue-template.user-limit-factor", "3.0");
          c.set(P + "root.parent1.leaf-queue-template.ordering-policy", "fair");
          c.set(P + "root.parent1.GPU.capacity", "50");
          c.set(P + "root.parent1.accessible-node-labels", "GPU,SSD");
          c.set(P + "root.parent1.leaf-queue-template.accessible-node-labels", "GPU");
          c.set(P + "root.parent1.leaf-queue-template.accessible-node-labels.GPU.capacity", "5");
        }),
        new Case("shipped file, a %user mapping under a parent that creates no queues", rmTests, c -> {
          c.set(P + "root.queues", "prod,users");
          c.set(P + "root.prod.capacity", "50");
          c.set(P + "root.users.capacity", "50");
          c.set(P + "root.users.queues", "x");
          c.set(P + "root.users.x.capacity", "100");
          c.set(P + "queue-mappings", "u:%user:root.users.x.%user");
        }));
  }

  /**
   * What Hadoop's FairScheduler-to-CapacityScheduler converter ({@code yarn fs2cs}) writes for one of the
   * fair-scheduler.xml files of the ResourceManager's own tests (its converter tests use the first): weight-mode
   * capacities, JSON placement rules, flexible auto-creation where FairScheduler created queues.
   */
  private static Case fs2cs(String fairSchedulerXml) {
    return new Case("fs2cs output of the RM tests' " + fairSchedulerXml, FS2CS + fairSchedulerXml, c -> { });
  }

  private static final String FS2CS = "fs2cs:";
  private static final String HADOOP_TESTS = "hadoop-tests:";
  private static final String WRITTEN = "written:";

  /** A file as its authors wrote it elsewhere (each case says where), given key for key. */
  private static Case written(String name, Consumer<Configuration> keys) {
    return new Case(name, WRITTEN, keys);
  }

  /** A configuration one of CapacityScheduler's own tests builds, by the RM test jar's {@code Class.method}. */
  private static Case hadoopTests(String method) {
    return new Case("CapacityScheduler's tests' " + method, HADOOP_TESTS + method, c -> { });
  }

  /**
   * Runs the RM test jar's static configuration helper {@code Class.method} (it takes a Configuration or a
   * CapacitySchedulerConfiguration and returns or fills one) and keeps the scheduler keys it set.
   */
  private static Configuration generated(String method) throws Exception {
    String cls = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity." + method.substring(0,
        method.lastIndexOf('.'));
    String name = method.substring(method.lastIndexOf('.') + 1);
    CapacitySchedulerConfiguration base = new CapacitySchedulerConfiguration(new Configuration(false), false);
    java.lang.reflect.Method m = java.util.Arrays.stream(Class.forName(cls).getMethods())
        .filter(x -> x.getName().equals(name) && x.getParameterCount() == 1).findFirst().orElseThrow();
    Object out = m.invoke(null, base);
    Configuration made = out instanceof Configuration c ? c : base;
    Configuration keys = new Configuration(false);
    for (Map.Entry<String, String> e : made) {
      if (e.getKey().startsWith(P)) {
        keys.set(e.getKey(), made.get(e.getKey()));
      }
    }
    assertThat(keys.get(P + "root.queues")).as("%s declares queues", method).isNotNull();
    return keys;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("files")
  void spindleStartsWithWhatCapacitySchedulerStartsWithAndRefusesWhatItRefuses(Case file) throws Exception {
    Configuration xml = load(file);
    Outcome cs = start(xml, CapacityScheduler.class.getName());
    Outcome spindle = start(xml, SpindleScheduler.class.getName());
    assertThat(spindle.started()).as("%s: CapacityScheduler %s, Spindle %s", file, cs, spindle)
        .isEqualTo(cs.started());
    if (file.resource() != null && file.resource().startsWith(FS2CS)) {
      assertThat(cs.started()).as("fs2cs checks its output with CapacityScheduler: %s", cs).isTrue();
    }
    if (!cs.started()) {
      assertThat(spindle.error()).as("Spindle's refusal names a key").contains(P);
    } else {
      // CapacityScheduler itself fails some refreshes of files it started with (its own validation test's passing
      // file: a ClassCastException on root's auto-creation flag); Spindle takes every file again that it started with.
      assertThat(spindle.refreshed()).as("%s: Spindle's refresh: %s", file, spindle).isTrue();
    }
    // scripts/spindle check-config says the same offline.
    ConfigCheck.Report offline = ConfigCheck.check(xml);
    assertThat(offline.starts()).as("check-config on %s: %s", file, offline.refusal()).isEqualTo(cs.started());
    if (offline.starts()) {
      assertThat(offline.lines()).as("every key of the file is accounted for").hasSize(xml.size());
    } else {
      assertThat(offline.refusal()).contains(P);
    }
  }

  @Test
  void checkConfigPrintsEveryKeyWithWhatSpindleDoesAndExitsByWhetherTheRmWouldStart() throws Exception {
    Configuration shipped = load(files().get(4)); // root.queues=a,b with root.default.* left in place.
    Path xml = dir.resolve("capacity-scheduler.xml");
    try (OutputStream out = Files.newOutputStream(xml)) {
      shipped.writeXml(out);
    }
    java.io.ByteArrayOutputStream text = new java.io.ByteArrayOutputStream();
    int status = ConfigCheck.run(new String[] {xml.toString()}, new java.io.PrintStream(text, true), System.err);
    assertThat(status).isZero();
    assertThat(text.toString()).contains("honoured (").contains(P + "root.a.capacity")
        .contains("ignored (").contains(P + "root.default.capacity")
        .contains("queue 'root.default' is not declared").contains("not used by Spindle (")
        .contains(P + "node-locality-delay").contains("STARTS:");

    Configuration broken = load(files().get(8)); // children adding up to 110
    try (OutputStream out = Files.newOutputStream(xml)) {
      broken.writeXml(out);
    }
    text.reset();
    assertThat(ConfigCheck.run(new String[] {xml.toString()}, new java.io.PrintStream(text, true), System.err))
        .isEqualTo(1);
    assertThat(text.toString()).contains("REFUSED:").contains(P + "root.queues").contains("sum to 110");
    assertThat(ConfigCheck.run(new String[] {dir.resolve("missing.xml").toString()}, System.out, System.err))
        .isEqualTo(2);
  }

  /** Whether the RM started with the file, whether it then took it again on a refresh, and why not. */
  record Outcome(boolean started, boolean refreshed, String error) {}

  private static String causes(Throwable e) {
    StringBuilder causes = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      causes.append(t.getMessage()).append(" | ");
    }
    return causes.toString();
  }

  /**
   * Starts a ResourceManager whose scheduler configuration is exactly {@code xml}: its keys are set on the RM's
   * configuration, which wins over every resource. (Served from a configuration store instead, the file was read
   * beneath the test classpath's own capacity-scheduler.xml, whose {@code root.default.*} keys then won.)
   */
  private Outcome start(Configuration xml, String scheduler) throws Exception {
    YarnConfiguration c = new YarnConfiguration();
    for (Map.Entry<String, String> e : xml) {
      c.set(e.getKey(), e.getValue());
    }
    c.set(YarnConfiguration.RM_SCHEDULER, scheduler);
    QueueMetrics.clearQueueMetrics();
    MockRM rm = null;
    try {
      try {
        rm = new MockRM(c); // Initialises the RM, and with it the scheduler and its queues.
        rm.start();
      } catch (Exception e) {
        return new Outcome(false, false, causes(e));
      }
      try {
        // And it takes the same file again, as `yarn rmadmin -refreshQueues` (and every HA take-over) makes it do.
        rm.getRMContext().getScheduler().reinitialize(c, rm.getRMContext());
        return new Outcome(true, true, null);
      } catch (Exception e) {
        return new Outcome(true, false, causes(e));
      }
    } finally {
      if (rm != null) {
        rm.stop();
      }
    }
  }

  private static Configuration load(Case file) throws Exception {
    if (file.resource() != null && (file.resource().startsWith(HADOOP_TESTS) || file.resource().equals(WRITTEN))) {
      Configuration c = file.resource().equals(WRITTEN) ? new Configuration(false)
          : generated(file.resource().substring(HADOOP_TESTS.length()));
      file.edit().accept(c);
      return c;
    }
    Configuration c = new Configuration(false);
    URL url = file.resource() == null ? serverTestsFile() : file.resource().startsWith(FS2CS)
        ? convert(file.resource().substring(FS2CS.length())) : CapacitySchedulerFilesTest.class.getClassLoader()
        .getResource(file.resource());
    assertThat(url).as("%s on the test classpath", file.resource()).isNotNull();
    try (InputStream in = url.openStream()) {
      Configuration read = new Configuration(false);
      read.addResource(in);
      for (Map.Entry<String, String> e : read) {
        c.set(e.getKey(), e.getValue());
      }
    }
    file.edit().accept(c);
    return c;
  }

  /** Runs fs2cs on the RM tests' {@code fairSchedulerXml}; the capacity-scheduler.xml it wrote. */
  private static URL convert(String fairSchedulerXml) throws Exception {
    Path out = Files.createTempDirectory("fs2cs");
    Path input = out.resolve("fair-scheduler.xml");
    try (InputStream in = CapacitySchedulerFilesTest.class.getClassLoader().getResourceAsStream(fairSchedulerXml)) {
      assertThat(in).as("%s on the test classpath", fairSchedulerXml).isNotNull();
      Files.copy(in, input);
    }
    Path yarnSite = out.resolve("yarn-site-in.xml");
    try (OutputStream o = Files.newOutputStream(yarnSite)) {
      new Configuration(false).writeXml(o);
    }
    Path converted = Files.createDirectory(out.resolve("converted"));
    ConversionOptions options = new ConversionOptions(new DryRunResultHolder(), false);
    new FSConfigToCSConfigConverter(new FSConfigToCSConfigRuleHandler(options), options).convert(
        FSConfigToCSConfigConverterParams.Builder.create().withYarnSiteXmlConfig(yarnSite.toString())
            .withFairSchedulerXmlConfig(input.toString()).withOutputDirectory(converted.toString())
            .withClusterResource("memory-mb=102400,vcores=100").withConvertPlacementRules(true).build());
    return converted.resolve("capacity-scheduler.xml").toUri().toURL();
  }

  /** The hadoop-yarn-server-tests jar's file, which shares its name with the RM's: found by its jar. */
  private static URL serverTestsFile() throws Exception {
    List<URL> all = new ArrayList<>();
    CapacitySchedulerFilesTest.class.getClassLoader().getResources("capacity-scheduler.xml").asIterator()
        .forEachRemaining(all::add);
    return all.stream().filter(u -> u.toString().contains("hadoop-yarn-server-tests")).findFirst().orElse(null);
  }
}
