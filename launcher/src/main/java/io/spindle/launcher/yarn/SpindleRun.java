package io.spindle.launcher.yarn;

import io.spindle.launcher.RunSpec;
import io.spindle.launcher.RunSpecParser;
import io.spindle.launcher.UsageException;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.api.ApplicationConstants;
import org.apache.hadoop.yarn.api.ApplicationConstants.Environment;
import org.apache.hadoop.yarn.api.protocolrecords.GetNewApplicationResponse;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.LocalResource;
import org.apache.hadoop.yarn.api.records.LocalResourceType;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.api.records.ResourceTypeInfo;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.api.YarnClientApplication;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * {@code spindle-run}: submits one application whose workers are one Spindle gang, streams its state — Spindle's
 * reason while it waits, then the ranks and every restart — and exits with the job's status: 0 when every worker
 * exited 0, 1 when the job failed or was killed, 2 when the command line or the cluster refused it (then nothing was
 * submitted and nothing is left behind).
 */
public final class SpindleRun {

  public static final int FAILED = 1;
  public static final int BAD_INPUT = 2;
  private static final long PROGRESS_EVERY_MILLIS = 30_000;

  private final Configuration conf;
  private final PrintStream out;
  private final long pollMillis;

  public SpindleRun(Configuration conf, PrintStream out, long pollMillis) {
    this.conf = conf;
    this.out = out;
    this.pollMillis = pollMillis;
  }

  public static void main(String[] args) {
    System.exit(new SpindleRun(new YarnConfiguration(), System.out, 1_000).run(args));
  }

  /** Runs the job to its end; returns the exit status. */
  public int run(String... args) {
    if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"))) {
      out.println(RunSpecParser.USAGE);
      return 0;
    }
    RunSpec spec;
    try {
      spec = RunSpecParser.parse(args);
    } catch (UsageException e) {
      out.println("spindle-run: " + e.getMessage());
      return BAD_INPUT;
    }
    try (YarnClient yarn = YarnClient.createYarnClient()) {
      yarn.init(conf);
      yarn.start();
      List<ResourceTypeInfo> clusterTypes = yarn.getResourceTypeInfo();
      WorkerShape.learnResourceTypes(clusterTypes); // before any Resource is made: they hold one slot per type
      YarnClientApplication app;
      try {
        app = yarn.createApplication();
        check(yarn, app.getNewApplicationResponse(), spec);
      } catch (UsageException e) {
        out.println("spindle-run: " + e.getMessage());
        return BAD_INPUT;
      }
      ApplicationId appId = app.getNewApplicationResponse().getApplicationId();
      FileSystem fs = FileSystem.get(conf);
      Path staging = StagedFiles.stagingDir(fs, appId.toString());
      try {
        submit(yarn, app, spec, args, fs, staging, clusterTypes);
        return follow(yarn, appId);
      } finally {
        fs.delete(staging, true);
      }
    } catch (Exception e) {
      out.println("spindle-run: " + e.getMessage());
      return FAILED;
    }
  }

  /** Everything that can be known wrong before submitting, each with what to do about it. */
  private void check(YarnClient yarn, GetNewApplicationResponse fresh, RunSpec spec) throws Exception {
    QueueInfo queue;
    try {
      queue = yarn.getQueueInfo(spec.queue());
    } catch (Exception e) {
      queue = null;
    }
    if (queue == null) {
      List<String> names = new ArrayList<>();
      yarn.getAllQueues().forEach(q -> names.add(q.getQueueName()));
      throw new UsageException("unknown queue '" + spec.queue() + "' (--queue); the cluster's queues are " + names);
    }
    Resource max = fresh.getMaximumResourceCapability();
    Resource want = worker(yarn, spec);
    // The nodes first: YARN lowers its maximum allocation to the largest node's some seconds after it starts
    // (ClusterNodeTracker), so the limit a request meets depends on when it is checked, and the nodes are what the
    // user must change the request for.
    requireANodeHolding(yarn, want);
    for (ResourceInformation r : want.getResources()) {
      long most = maxOf(max, r.getName());
      if (r.getValue() > most) {
        throw new UsageException("a worker asks " + r.getValue() + " " + r.getName() + " but no container of this"
            + " cluster may have more than " + most + " (yarn.scheduler.maximum-allocation); ask less per worker"
            + " and more workers");
      }
    }
    String cmd = spec.command().get(0);
    if (!commandFound(cmd, spec)) {
      throw new UsageException("command '" + cmd + "' not found: it is neither on this host's PATH (workers run"
          + " the same software) nor an executable file nor among --files");
    }
    for (String f : concat(spec.files(), spec.archives())) {
      Path p = new Path(f);
      if (!p.getFileSystem(conf).exists(p)) {
        throw new UsageException("no such file to localize: " + f + " (--files / --archives)");
      }
    }
    if (spec.checkpointDir() != null) {
      try {
        CheckpointDir.requireWritable(conf, spec.checkpointDir());
      } catch (IOException e) {
        throw new UsageException(e.getMessage());
      }
    }
  }

  /**
   * A worker no running node could hold would wait for ever (the scheduler's maximum allocation is often left at
   * its default): say so before submitting. Skipped while no node runs yet (a cluster that is starting).
   */
  private static void requireANodeHolding(YarnClient yarn, Resource want) throws Exception {
    List<NodeReport> nodes = yarn.getNodeReports(NodeState.RUNNING);
    if (nodes.isEmpty() || nodes.stream().anyMatch(n -> fits(want, n.getCapability()))) {
      return;
    }
    for (ResourceInformation r : want.getResources()) {
      long largest = nodes.stream().mapToLong(n -> maxOf(n.getCapability(), r.getName())).max().orElse(0);
      if (r.getValue() > largest) {
        throw new UsageException("a worker asks " + r.getValue() + " " + r.getName() + " but no node of this"
            + " cluster has more than " + largest + "; ask less per worker and more workers");
      }
    }
    throw new UsageException("no node of this cluster can hold one worker " + want + " (each falls short in some"
        + " resource); ask less per worker");
  }

  private static boolean fits(Resource want, Resource node) {
    for (ResourceInformation r : want.getResources()) {
      if (r.getValue() > maxOf(node, r.getName())) {
        return false;
      }
    }
    return true;
  }

  private static long maxOf(Resource max, String name) {
    try {
      return max.getResourceValue(name);
    } catch (RuntimeException e) {
      return 0; // the cluster has no such resource type
    }
  }

  private Resource worker(YarnClient yarn, RunSpec spec) throws Exception {
    List<String> types = new ArrayList<>();
    yarn.getResourceTypeInfo().forEach(t -> types.add(t.getName()));
    java.util.Optional<String> gpu = WorkerShape.gpuType(spec, new HashSet<>(types));
    if (gpu.isPresent() && !types.contains(gpu.get())) {
      String option = spec.migProfile() != null ? "--mig-profile" : spec.gpuMilli() > 0 ? "--gpu-milli"
          : "--gpus-per-worker";
      throw new UsageException(option + ": this cluster has no resource type " + gpu.get()
          + " (yarn.resource-types; no NodeManager offers it); its types are " + types);
    }
    return WorkerShape.of(spec);
  }

  private static boolean commandFound(String cmd, RunSpec spec) {
    for (String f : spec.files()) {
      if (new Path(f).getName().equals(cmd) || cmd.equals("./" + new Path(f).getName())) {
        return true;
      }
    }
    if (cmd.contains("/")) {
      return new File(cmd).canExecute();
    }
    for (String dir : Objects.requireNonNullElse(System.getenv("PATH"), "").split(File.pathSeparator)) {
      if (!dir.isEmpty() && new File(dir, cmd).canExecute()) {
        return true;
      }
    }
    return false;
  }

  private void submit(YarnClient yarn, YarnClientApplication app, RunSpec spec, String[] args, FileSystem fs,
      Path staging, List<ResourceTypeInfo> clusterTypes) throws Exception {
    fs.mkdirs(staging);
    Map<String, LocalResource> amFiles = new HashMap<>();
    write(fs, new Path(staging, StagedFiles.ARGS), SubmittedArgs.write(List.of(args)));
    Configuration shipped = new Configuration(conf);
    WorkerShape.writeResourceTypes(clusterTypes, shipped);
    try (OutputStream o = fs.create(new Path(staging, StagedFiles.CONF))) {
      shipped.writeXml(o);
    }
    amFiles.put(StagedFiles.ARGS, StagedFiles.resource(fs, new Path(staging, StagedFiles.ARGS),
        LocalResourceType.FILE));
    amFiles.put(StagedFiles.CONF, StagedFiles.resource(fs, new Path(staging, StagedFiles.CONF),
        LocalResourceType.FILE));
    for (Class<?> c : AM_CODE) {
      File jar = jarOf(c);
      if (jar != null) {
        Path dst = new Path(staging, jar.getName());
        fs.copyFromLocalFile(new Path(jar.toURI()), dst);
        amFiles.put(jar.getName(), StagedFiles.resource(fs, dst, LocalResourceType.FILE));
      } else if (!sharesThisClasspath()) {
        throw new IOException("spindle-run runs " + c.getName() + " from " + codeSource(c) + ", not a jar: run"
            + " scripts/spindle-run, which builds the jars that travel to the ApplicationMaster");
      }
    }
    stage(fs, spec.files(), new Path(staging, StagedFiles.FILES));
    stage(fs, spec.archives(), new Path(staging, StagedFiles.ARCHIVES));

    Map<String, String> env = new HashMap<>();
    env.put(StagedFiles.STAGING_ENV, fs.makeQualified(staging).toString());
    env.put(Environment.CLASSPATH.name(), amClasspath());
    if (sharesThisClasspath()) {
      env.put(Environment.JAVA_HOME.name(), System.getProperty("java.home"));
    }
    String command = Environment.JAVA_HOME.$$() + "/bin/java -Xmx512m " + GangMaster.class.getName()
        + " 1>" + ApplicationConstants.LOG_DIR_EXPANSION_VAR + "/AppMaster.stdout"
        + " 2>" + ApplicationConstants.LOG_DIR_EXPANSION_VAR + "/AppMaster.stderr";
    ApplicationSubmissionContext ctx = app.getApplicationSubmissionContext();
    ctx.setApplicationName(spec.name());
    ctx.setApplicationType("SPINDLE-RUN");
    ctx.setQueue(spec.queue());
    ctx.setPriority(Priority.newInstance(spec.priority()));
    ctx.setApplicationTags(new HashSet<>(spec.applicationTags()));
    ctx.setMaxAppAttempts(1); // a second AM would start a second gang beside the first one's workers
    ctx.setResource(Resource.newInstance(1024, 1));
    ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(amFiles, env, List.of(command), null, null, null));
    yarn.submitApplication(ctx);
    out.println("spindle-run: submitted " + ctx.getApplicationId() + ": " + spec);
  }

  private void stage(FileSystem fs, List<String> paths, Path dir) throws IOException {
    for (String p : paths) {
      Path src = new Path(p);
      fs.mkdirs(dir);
      FileSystem srcFs = src.getFileSystem(conf);
      org.apache.hadoop.fs.FileUtil.copy(srcFs, src, fs, new Path(dir, src.getName()), false, conf);
    }
  }

  private String amClasspath() {
    StringBuilder cp = new StringBuilder(Environment.CLASSPATH.$$()).append(ApplicationConstants.CLASS_PATH_SEPARATOR)
        .append("./*");
    for (String c : conf.getStrings(YarnConfiguration.YARN_APPLICATION_CLASSPATH,
        YarnConfiguration.DEFAULT_YARN_CROSS_PLATFORM_APPLICATION_CLASSPATH)) {
      cp.append(ApplicationConstants.CLASS_PATH_SEPARATOR).append(c.trim());
    }
    if (sharesThisClasspath()) {
      // The NodeManagers run on this host without a Hadoop installation: this client's classpath is theirs too.
      cp.append(ApplicationConstants.CLASS_PATH_SEPARATOR).append(System.getProperty("java.class.path"));
    }
    return cp.toString();
  }

  /**
   * Spindle's code the ApplicationMaster runs, by a class of each jar: the launcher and spindle-client (checkpoint
   * notices). Everything else it needs (YARN's client, Curator, Avro) is on every Hadoop node's classpath.
   */
  private static final List<Class<?>> AM_CODE = List.of(GangMaster.class,
      io.spindle.client.SpindleCheckpointClient.class);

  /** The property {@code scripts/spindle-run} sets when this machine has no Hadoop installation. */
  public static final String LOCAL_CLASSPATH = "spindle.run.local-classpath";

  /**
   * Whether the ApplicationMaster and workers run this client's own classpath: a test's MiniYARNCluster, or a client
   * without a Hadoop installation, whose cluster can only be one on this machine ({@code scripts/spindle-local}).
   */
  private boolean sharesThisClasspath() {
    return conf.getBoolean(YarnConfiguration.IS_MINI_YARN_CLUSTER, false) || Boolean.getBoolean(LOCAL_CLASSPATH);
  }

  /** The jar {@code c} was loaded from, or null when it runs from a classes directory (a build tree). */
  private static File jarOf(Class<?> c) throws Exception {
    File f = new File(codeSource(c).toURI());
    return f.isFile() && f.getName().endsWith(".jar") ? f : null;
  }

  private static URL codeSource(Class<?> c) {
    return c.getProtectionDomain().getCodeSource().getLocation();
  }

  /** Prints the job's progress until it ends; returns the exit status. */
  private int follow(YarnClient yarn, ApplicationId appId) throws Exception {
    Thread kill = new Thread(() -> killIfRunning(yarn, appId));
    Runtime.getRuntime().addShutdownHook(kill); // Ctrl-C leaves no job behind
    try {
      return followUntilEnd(yarn, appId);
    } finally {
      Runtime.getRuntime().removeShutdownHook(kill);
    }
  }

  private int followUntilEnd(YarnClient yarn, ApplicationId appId) throws Exception {
    String lastWhy = null;
    YarnApplicationState lastState = null;
    int printed = 0;
    String lastWorkers = "";
    String lastStates = "";
    long printedAt = 0;
    SpindleStatusApi api = SpindleStatusApi.of(conf).orElse(null);
    while (true) {
      ApplicationReport r = yarn.getApplicationReport(appId);
      YarnApplicationState state = r.getYarnApplicationState();
      if (state != lastState && !isFinal(state)) {
        out.println("spindle-run: " + appId + " " + state + (r.getDiagnostics() == null || r.getDiagnostics().isBlank()
            ? "" : ": " + r.getDiagnostics()));
        lastState = state;
      }
      String status = state == YarnApplicationState.RUNNING ? amStatus(r) : null;
      if (status != null) {
        String[] parts = status.split("-- workers of run ", 2);
        List<String> lines = List.of(parts[0].split("\n"));
        for (; printed < lines.size(); printed++) {
          if (!lines.get(printed).isBlank()) {
            out.println("spindle-run: " + lines.get(printed));
          }
        }
        String workers = parts.length > 1 ? parts[1] : "";
        // A worker's state change is printed at once; its steps alone at most every PROGRESS_EVERY_MILLIS.
        String states = workers.replaceAll(" \\(step \\d+\\)", "");
        long now = System.currentTimeMillis();
        if (!states.equals(lastStates) || (!workers.equals(lastWorkers) && now - printedAt >= PROGRESS_EVERY_MILLIS)) {
          for (String l : workers.split("\n")) {
            if (!l.isBlank() && !l.matches("\\d+")) {
              out.println("spindle-run:   " + l);
            }
          }
          lastStates = states;
          lastWorkers = workers;
          printedAt = now;
        }
      }
      if (api != null && !isFinal(state)) {
        String why = api.why(appId.toString()).orElse(null);
        if (why != null && !why.equals(lastWhy)) {
          out.println("spindle-run: waiting: " + why);
        }
        lastWhy = why;
      }
      if (isFinal(state)) {
        FinalApplicationStatus fin = r.getFinalApplicationStatus();
        out.println("spindle-run: " + appId + " " + state + "/" + fin + ": " + r.getDiagnostics());
        return state == YarnApplicationState.FINISHED && fin == FinalApplicationStatus.SUCCEEDED ? 0 : FAILED;
      }
      Thread.sleep(pollMillis);
    }
  }

  private static boolean isFinal(YarnApplicationState s) {
    return s == YarnApplicationState.FINISHED || s == YarnApplicationState.FAILED
        || s == YarnApplicationState.KILLED;
  }

  /** The AM's {@code /status} text, or null while it does not answer. */
  private static String amStatus(ApplicationReport r) {
    String url = r.getOriginalTrackingUrl();
    if (url == null || url.isBlank() || url.equals("N/A")) {
      return null;
    }
    try {
      java.net.URLConnection c = URI.create(url.startsWith("http") ? url : "http://" + url).toURL()
          .openConnection();
      c.setConnectTimeout(2_000);
      c.setReadTimeout(5_000);
      try (InputStream in = c.getInputStream()) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
    } catch (IOException | IllegalArgumentException e) {
      return null;
    }
  }

  private static void killIfRunning(YarnClient yarn, ApplicationId appId) {
    try {
      if (yarn.isInState(org.apache.hadoop.service.Service.STATE.STARTED)
          && !isFinal(yarn.getApplicationReport(appId).getYarnApplicationState())) {
        yarn.killApplication(appId, "spindle-run was interrupted");
      }
    } catch (Exception e) {
      // The JVM is going down; nothing more can be done.
    }
  }

  private static void write(FileSystem fs, Path p, String text) throws IOException {
    try (FSDataOutputStream o = fs.create(p, true)) {
      o.write(text.getBytes(StandardCharsets.UTF_8));
    }
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }
}
