package io.spindle.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.channel.mig.MigLayoutRecords;
import io.spindle.channel.mig.MigStateStore;
import io.spindle.ha.avro.MigInstanceRecord;
import io.spindle.ha.avro.MigLayoutRecord;
import io.spindle.yarn.SpindleScheduler;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.cli.NodeCLI;
import org.apache.hadoop.yarn.client.cli.QueueCLI;
import org.apache.hadoop.yarn.client.cli.RMAdminCLI;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code scripts/spindle-local} end to end. The long-running case uses YARN's CapacityScheduler so that it checks the
 * launcher and not a particular scheduler: the HADOOP_CONF_DIR it writes is enough for the stock CLI, the nodes
 * advertise GPUs on two racks, the MIG layouts are in ZooKeeper, and the demo runs to its summary.
 */
class SpindleLocalClusterTest {

  private static final String CS = CapacityScheduler.class.getName();

  @TempDir
  Path tmp;

  @Test
  void runsUntilStoppedWithGpuNodesOnTwoRacksAndAHadoopConfDirTheYarnCliCanUse() throws Exception {
    Path workdir = tmp.resolve("run");
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
    AtomicInteger rc = new AtomicInteger(-1);
    Thread launcher = new Thread(() -> rc.set(SpindleLocalCluster.run(
        new String[] {"--scheduler", CS, "--workdir", workdir.toString(), "--duration", "600"}, out, false)));
    launcher.start();
    try {
      long deadline = System.currentTimeMillis() + 60_000;
      while (!buffer.toString(StandardCharsets.UTF_8).contains("Running for 600 s")) {
        assertThat(launcher.isAlive()).as("launcher ended early: %s", buffer).isTrue();
        assertThat(System.currentTimeMillis()).as("cluster up within 60 s: %s", buffer).isLessThan(deadline);
        Thread.sleep(100);
      }
      String printed = buffer.toString(StandardCharsets.UTF_8);

      // The HADOOP_CONF_DIR: the files, and a yarn-site.xml with the address the RM really listens on.
      Path confDir = workdir.resolve("conf");
      for (String f : List.of("core-site.xml", "yarn-site.xml", "capacity-scheduler.xml", "resource-types.xml",
          "topology.table", "log4j.properties")) {
        assertThat(confDir.resolve(f)).isRegularFile();
      }
      Configuration fromFiles = new Configuration(false);
      for (String f : List.of("core-site.xml", "yarn-site.xml", "resource-types.xml")) {
        fromFiles.addResource(new org.apache.hadoop.fs.Path(confDir.resolve(f).toUri()));
      }
      String rmAddress = fromFiles.get(YarnConfiguration.RM_ADDRESS);
      assertThat(rmAddress).matches("localhost:[1-9][0-9]*");
      assertThat(printed).contains("ResourceManager  " + rmAddress).contains("HADOOP_CONF_DIR  " + confDir)
          .contains("HADOOP_CONF_DIR=" + confDir + " yarn node -list -showDetails")
          .contains("RM web UI        http://");
      assertThat(fromFiles.get(YarnConfiguration.RESOURCE_TYPES)).contains("yarn.io/gpu", "nvidia.com/mig-1g.10gb");
      assertThat(Files.readString(workdir.resolve("spindle-local.env"))).contains("export HADOOP_CONF_DIR=" + confDir);

      // `yarn node -list -showDetails`: Hadoop's own NodeCLI with only the written files as configuration.
      YarnConfiguration clientConf = new YarnConfiguration(fromFiles);
      ByteArrayOutputStream cliOut = new ByteArrayOutputStream();
      NodeCLI cli = new NodeCLI();
      cli.setSysOutPrintStream(new PrintStream(cliOut, true, StandardCharsets.UTF_8));
      cli.setSysErrPrintStream(new PrintStream(cliOut, true, StandardCharsets.UTF_8));
      cli.setConf(clientConf);
      assertThat(cli.run(new String[] {"-list", "-showDetails"})).as("%s", cliOut).isZero();
      assertThat(cliOut.toString(StandardCharsets.UTF_8)).contains("Total Nodes:4", "yarn.io/gpu: 4",
          "nvidia.com/mig-1g.10gb: 14");

      // The ResourceManager reads the HADOOP_CONF_DIR's capacity-scheduler.xml: edit it, `yarn rmadmin -refreshQueues`.
      Path queues = confDir.resolve("capacity-scheduler.xml");
      Files.writeString(queues, Files.readString(queues)
          .replaceFirst("(research\\.vision\\.capacity</name>\\s*<value>)40<", "$150<")
          .replaceFirst("(research\\.llm\\.capacity</name>\\s*<value>)60<", "$150<"));
      RMAdminCLI admin = new RMAdminCLI(clientConf);
      assertThat(admin.run(new String[] {"-refreshQueues"})).isZero();
      ByteArrayOutputStream queueOut = new ByteArrayOutputStream();
      QueueCLI queueCli = new QueueCLI();
      queueCli.setSysOutPrintStream(new PrintStream(queueOut, true, StandardCharsets.UTF_8));
      queueCli.setSysErrPrintStream(new PrintStream(queueOut, true, StandardCharsets.UTF_8));
      queueCli.setConf(clientConf);
      assertThat(queueCli.run(new String[] {"-status", "llm"})).as("%s", queueOut).isZero();
      assertThat(queueOut.toString(StandardCharsets.UTF_8)).contains("Capacity : 50.00%");

      // Node reports: four running nodes, each with whole GPUs, on two racks.
      Set<String> racks = new TreeSet<>();
      try (YarnClient client = YarnClient.createYarnClient()) {
        client.init(clientConf);
        client.start();
        List<NodeReport> nodes = client.getNodeReports(NodeState.RUNNING);
        assertThat(nodes).hasSizeGreaterThanOrEqualTo(4);
        for (NodeReport n : nodes) {
          assertThat(n.getCapability().getResourceValue("yarn.io/gpu")).as("GPUs of %s", n.getNodeId()).isPositive();
          racks.add(n.getRackName());
        }
      }
      assertThat(racks).containsExactly("/spine1/rack1", "/spine1/rack2");

      // ZooKeeper: every GPU reported as Spindle's NodeManager plugin would; a desired layout is answered.
      String zk = fromFiles.get("yarn.scheduler.spindle.zk.address");
      assertThat(printed).contains("ZooKeeper        " + zk);
      try (CuratorFramework client = CuratorFrameworkFactory.newClient(zk, new RetryOneTime(100))) {
        client.start();
        MigStateStore store = new MigStateStore(client, "/spindle/" + SpindleLocalCluster.CLUSTER_ID);
        Matcher gpu3 = Pattern.compile("gpu3 +([0-9.]+):").matcher(printed);
        assertThat(gpu3.find()).as(printed).isTrue();
        String node = gpu3.group(1);
        List<MigLayoutRecord> reported = store.reportedAll(node);
        assertThat(reported).hasSize(4);
        assertThat(reported.get(0).getMigEnabled()).isFalse();
        assertThat(reported.get(2).getMigEnabled()).isTrue();
        assertThat(reported.get(2).getInstances()).hasSize(7);
        assertThat(reported.get(3).getInstances()).extracting(MigInstanceRecord::getProfile)
            .containsExactly("3g.40gb", "3g.40gb");
        assertThat(reported.get(3).getGpuModel()).isEqualTo("H100-80GB");

        MigLayoutRecord desired = MigLayoutRecord.newBuilder(reported.get(3)).setVersion(1)
            .setInstances(List.of(new MigInstanceRecord("3g.40gb", 4), new MigInstanceRecord("1g.10gb", 0),
                new MigInstanceRecord("1g.10gb", 1)))
            .build();
        store.writeDesired(desired);
        long until = System.currentTimeMillis() + 10_000;
        Optional<MigLayoutRecord> answer = store.reported(node, 3);
        while (answer.orElseThrow().getVersion() != 1 && System.currentTimeMillis() < until) {
          Thread.sleep(50);
          answer = store.reported(node, 3);
        }
        assertThat(answer.orElseThrow().getVersion()).isEqualTo(1);
        assertThat(answer.orElseThrow().getError()).isNull();
        assertThat(answer.orElseThrow().getInstances()).hasSize(3);
        assertThat(MigLayoutRecords.encode(answer.orElseThrow())).isNotEmpty();
      }
    } finally {
      launcher.interrupt();
      launcher.join(60_000);
    }
    assertThat(launcher.isAlive()).isFalse();
    assertThat(rc.get()).as("%s", buffer).isZero();
    assertThat(buffer.toString(StandardCharsets.UTF_8)).contains("Stopping ...", "Stopped.");
  }

  /** The demo with Spindle, the launcher's default scheduler: the README's promise. */
  @Test
  void demoRunsGangsMigSharesAndTwoQueuesToASummary() {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
    int rc = SpindleLocalCluster.run(
        new String[] {"--workdir", tmp.resolve("demo").toString(), "--demo"}, out, false);
    String printed = buffer.toString(StandardCharsets.UTF_8);
    assertThat(rc).as(printed).isZero();
    assertThat(printed).contains("Summary", "6 of 6 applications got all their containers and succeeded.",
        "Stopped.");
    for (String app : List.of("llm-gang", "llm-rack-gang", "vision-train", "infer-batch", "mig-notebook",
        "quarter-gpus")) {
      assertThat(printed).containsPattern("(?m)^  " + app + " +[a-z]+ +FINISHED/SUCCEEDED ");
    }
    assertThat(printed).containsPattern("(?m)^\\[ *[0-9.]+s\\] .*llm-gang");
  }

  /**
   * {@code --ha}: two ResourceManagers with Spindle as a YARN HA pair, and a HADOOP_CONF_DIR with which the stock
   * admin CLI ({@code yarn rmadmin}) fails it over and a client follows; the new active one's Spindle has every node.
   */
  @Test
  void haRunsAPairThatTheStockAdminCliFailsOver() throws Exception {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
    Path workdir = tmp.resolve("ha");
    try (SpindleLocalCluster cluster = SpindleLocalCluster.start(out, "--ha", "--workdir", workdir.toString())) {
      Configuration fromFiles = new Configuration(false);
      for (String f : List.of("core-site.xml", "yarn-site.xml", "resource-types.xml")) {
        fromFiles.addResource(new org.apache.hadoop.fs.Path(workdir.resolve("conf").resolve(f).toUri()));
      }
      YarnConfiguration clientConf = new YarnConfiguration(fromFiles);
      ByteArrayOutputStream adminOut = new ByteArrayOutputStream();
      PrintStream adminPrint = new PrintStream(adminOut, true, StandardCharsets.UTF_8);
      RMAdminCLI admin = new RMAdminCLI(clientConf) {
        {
          setOut(adminPrint);
          setErrOut(adminPrint);
        }
      };
      assertThat(admin.run(new String[] {"-getServiceState", "rm0"})).as("%s", adminOut).isZero();
      assertThat(admin.run(new String[] {"-getServiceState", "rm1"})).as("%s", adminOut).isZero();
      assertThat(adminOut.toString(StandardCharsets.UTF_8)).containsSubsequence("active", "standby");

      assertThat(admin.run(new String[] {"-transitionToStandby", "rm0"})).as("%s", adminOut).isZero();
      assertThat(admin.run(new String[] {"-transitionToActive", "rm1"})).as("%s", adminOut).isZero();

      assertThat(RmHaPair.activeIndex(cluster.yarnCluster())).isEqualTo(1);
      SpindleScheduler spindle = (SpindleScheduler) cluster.yarnCluster().getResourceManager(1).getResourceScheduler();
      long deadline = System.currentTimeMillis() + 60_000;
      while (spindle.status().nodes().size() < cluster.spec().nodes().size()) {
        assertThat(System.currentTimeMillis()).as("rm1's Spindle has every node within 60 s").isLessThan(deadline);
        Thread.sleep(100);
      }
      YarnClient yarn = YarnClient.createYarnClient();
      yarn.init(clientConf);
      yarn.start();
      try {
        assertThat(yarn.getNodeReports(NodeState.RUNNING)).hasSize(cluster.spec().nodes().size());
      } finally {
        yarn.stop();
      }
    }
  }

  @Test
  void badCommandLinesAreRefusedWithAReason() {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
    assertThat(SpindleLocalCluster.run(new String[] {"--bogus"}, out, false)).isEqualTo(2);
    assertThat(SpindleLocalCluster.run(new String[] {"--duration", "soon"}, out, false)).isEqualTo(2);
    assertThat(SpindleLocalCluster.run(new String[] {"--scheduler", "no.such.Scheduler",
        "--workdir", tmp.toString()}, out, false)).isEqualTo(2);
    assertThat(SpindleLocalCluster.run(new String[] {"--scheduler", String.class.getName(),
        "--workdir", tmp.toString()}, out, false)).isEqualTo(2);
    assertThat(SpindleLocalCluster.run(new String[] {"--help"}, out, false)).isZero();
    assertThat(buffer.toString(StandardCharsets.UTF_8))
        .contains("unknown argument '--bogus'", "--duration needs a whole number of seconds, not 'soon'",
            "scheduler class no.such.Scheduler is not on the classpath (--scheduler)",
            "java.lang.String is not a YARN", "Usage: scripts/spindle-local");
  }
}
