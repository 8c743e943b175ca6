package io.spindle.local;

import java.io.PrintStream;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationAttemptState;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.NMClient;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code --demo} workload: a few small applications submitted at once through the real {@link YarnClient}, each
 * with an unmanaged ApplicationMaster that runs in this JVM (as the attempt's user, with its AMRM token), asks the
 * ResourceManager for its containers through {@link AMRMClient}, starts {@code sleep <seconds>} in each container it
 * gets through {@link NMClient} (a real process under the NodeManager; no GPU is touched), waits for them to end and
 * unregisters. Progress is printed every second, then a summary table.
 *
 * <ul>
 *   <li>{@code llm-gang}: queue {@code llm}, 2 containers x 1 GPU, tagged {@code spindle.gang.size=2}
 *   <li>{@code llm-rack-gang}: queue {@code llm}, 2 containers x 4 GPUs, tagged {@code spindle.gang.size=2} and
 *       {@code spindle.topology.required=rack}: with the sample nodes only rack1 (two 4-GPU nodes) can hold it
 *   <li>{@code vision-train}: queue {@code vision}, 1 container x 1 GPU
 *   <li>{@code infer-batch}: queue {@code inference}, 1 container x 1 GPU
 *   <li>{@code mig-notebook}: queue {@code inference}, 2 containers x 1 {@code nvidia.com/mig-<first mig-profile>}
 *   <li>{@code quarter-gpus}: queue {@code inference}, 3 containers x 250 {@code nvidia.com/gpu-milli} (a quarter of
 *       a GPU each), when some node has shared GPUs: they share one GPU
 * </ul>
 */
final class DemoWorkload {

  private static final Logger LOG = LoggerFactory.getLogger(DemoWorkload.class);
  private static final long ALLOCATION_TIMEOUT_MS = 90_000;
  private static final long OVERALL_TIMEOUT_MS = 150_000;
  /** Progress phases: submitting, submitted, wait n/N, part n/N (some containers), run N/N, done, failed. */

  /** One demo application. */
  record Job(String name, String queue, int containers, long memoryMb, String resource, long amount,
      Set<String> tags, int runSeconds) {

    String asked() {
      return containers + " x " + amount + " " + resource;
    }
  }

  /** What one application went through; written by its AM thread, read by the progress printer. */
  static final class Run {
    final Job job;
    volatile ApplicationId appId;
    volatile String phase = "submitting";
    volatile long submitted;
    volatile long firstAllocated;
    volatile long allAllocated;
    volatile long finished;
    final AtomicInteger allocated = new AtomicInteger();
    final AtomicInteger completed = new AtomicInteger();
    final List<String> placedOn = java.util.Collections.synchronizedList(new ArrayList<>());
    volatile String problem;
    volatile YarnApplicationState state;
    volatile FinalApplicationStatus finalStatus;

    Run(Job job) {
      this.job = job;
    }

    boolean ended() {
      return finished > 0;
    }

    boolean succeeded() {
      return problem == null && state == YarnApplicationState.FINISHED
          && finalStatus == FinalApplicationStatus.SUCCEEDED && allocated.get() == job.containers();
    }
  }

  private final SpindleLocalCluster cluster;
  private final PrintStream out;
  private final Configuration conf;
  private final Map<String, String> rackOfHost = new LinkedHashMap<>();

  DemoWorkload(SpindleLocalCluster cluster, PrintStream out) {
    this.cluster = cluster;
    this.out = out;
    this.conf = cluster.clientConf();
  }

  /** The demo's jobs, each container running {@code runSeconds} instead of its own time when that is > 0. */
  static List<Job> jobs(LocalClusterSpec spec, int runSeconds) {
    return jobs(spec).stream().map(j -> runSeconds <= 0 ? j : new Job(j.name(), j.queue(), j.containers(),
        j.memoryMb(), j.resource(), j.amount(), j.tags(), runSeconds)).toList();
  }

  static List<Job> jobs(LocalClusterSpec spec) {
    String gpu = spec.gpuResource();
    List<Job> jobs = new ArrayList<>();
    jobs.add(new Job("llm-gang", "llm", 2, 2048, gpu, 1, tags("spindle.gang.size=2"), 4));
    jobs.add(new Job("llm-rack-gang", "llm", 2, 8192, gpu, 4,
        tags("spindle.gang.size=2", "spindle.topology.required=rack"), 4));
    jobs.add(new Job("vision-train", "vision", 1, 2048, gpu, 1, tags(), 3));
    jobs.add(new Job("infer-batch", "inference", 1, 2048, gpu, 1, tags(), 3));
    if (!spec.migProfiles().isEmpty()) {
      jobs.add(new Job("mig-notebook", "inference", 2, 1024, "nvidia.com/mig-" + spec.migProfiles().get(0), 1,
          tags(), 3));
    }
    if (spec.sharesGpus()) {
      jobs.add(new Job("quarter-gpus", "inference", 3, 1024, io.spindle.core.model.GpuResourceNames.GPU_MILLI, 250,
          tags(), 3));
    }
    return jobs;
  }

  private static Set<String> tags(String... tags) {
    return java.util.Collections.unmodifiableSet(new LinkedHashSet<>(List.of(tags)));
  }

  /** Runs the workload; true when every application got all its containers and finished successfully. */
  boolean run() throws Exception {
    List<Job> jobs = jobs(cluster.spec(), cluster.demoRunSeconds());
    out.println("Demo: " + jobs.size() + " applications with unmanaged ApplicationMasters in this JVM; each container"
        + " runs `sleep` on a fake GPU node.");
    for (Job j : jobs) {
      out.printf("  %-14s queue %-10s %-28s %s%n", j.name(), j.queue(), j.asked(),
          j.tags().isEmpty() ? "" : "tags " + j.tags());
    }
    out.println();
    List<Run> runs = new ArrayList<>();
    long start = System.currentTimeMillis();
    try (YarnClient client = YarnClient.createYarnClient()) {
      client.init(conf);
      client.start();
      for (NodeReport n : client.getNodeReports(NodeState.RUNNING)) {
        rackOfHost.put(n.getNodeId().toString(), n.getRackName());
      }
      ExecutorService pool = Executors.newFixedThreadPool(jobs.size(), r -> {
        Thread t = new Thread(r, "spindle-demo-am");
        t.setDaemon(true);
        return t;
      });
      for (Job j : jobs) {
        Run run = new Run(j);
        runs.add(run);
        pool.submit(() -> runApplication(client, run));
      }
      pool.shutdown();
      String last = "";
      while (!pool.awaitTermination(1, TimeUnit.SECONDS)) {
        last = progressLine(client, runs, start);
        out.println(last);
        if (System.currentTimeMillis() - start > OVERALL_TIMEOUT_MS) {
          out.println("Demo: giving up after " + OVERALL_TIMEOUT_MS / 1000 + " s; killing what is left.");
          for (Run r : runs) {
            if (!r.ended() && r.appId != null) {
              r.problem = "demo timed out in phase: " + r.phase;
              try {
                client.killApplication(r.appId);
              } catch (Exception e) {
                LOG.warn("could not kill {}: {}", r.appId, e.toString());
              }
            }
          }
          pool.shutdownNow();
          pool.awaitTermination(10, TimeUnit.SECONDS);
          break;
        }
      }
      String end = progressLine(client, runs, start);
      if (!end.substring(end.indexOf(']')).equals(last.substring(Math.max(0, last.indexOf(']'))))) {
        out.println(end);
      }
      for (Run r : runs) {
        if (r.appId != null) {
          ApplicationReport report;
          try {
            report = waitForEnd(client, r.appId, 10_000);
          } catch (Exception e) {
            r.problem = (r.problem == null ? "" : r.problem + "; ") + "no final report: " + firstLine(e.toString());
            continue;
          }
          r.state = report.getYarnApplicationState();
          r.finalStatus = report.getFinalApplicationStatus();
          String diagnostics = firstLine(report.getDiagnostics());
          if (!r.succeeded() && !diagnostics.isEmpty()) {
            // The ResourceManager's reason first: it says why (e.g. the scheduler rejected a request).
            r.problem = "YARN: " + diagnostics + (r.problem == null ? "" : "\n      " + r.problem);
          }
        }
      }
    }
    printSummary(runs);
    return runs.stream().allMatch(Run::succeeded);
  }

  private void runApplication(YarnClient client, Run run) {
    Job job = run.job;
    try {
      ApplicationSubmissionContext ctx = client.createApplication().getApplicationSubmissionContext();
      run.appId = ctx.getApplicationId();
      ctx.setApplicationName("spindle-demo-" + job.name());
      ctx.setApplicationType("SPINDLE-DEMO");
      ctx.setQueue(job.queue());
      ctx.setApplicationTags(job.tags());
      ctx.setUnmanagedAM(true);
      ctx.setPriority(Priority.newInstance(0));
      ctx.setResource(Resource.newInstance(128, 1));
      ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, null, null, null, null));
      run.submitted = System.currentTimeMillis();
      client.submitApplication(ctx);
      run.phase = "submitted";
      ApplicationAttemptId attempt = waitForLaunchedAttempt(client, run);
      if (attempt == null) {
        return;
      }
      Token<AMRMTokenIdentifier> token = client.getAMRMToken(run.appId);
      token.setService(ClientRMProxy.getAMRMTokenService(conf));
      UserGroupInformation ugi = UserGroupInformation.createRemoteUser(attempt.toString());
      ugi.addToken(token);
      ugi.doAs((PrivilegedExceptionAction<Void>) () -> {
        applicationMaster(run);
        return null;
      });
    } catch (Exception e) {
      LOG.warn("demo application {} failed", job.name(), e);
      Throwable cause = e;
      while (cause instanceof java.lang.reflect.UndeclaredThrowableException && cause.getCause() != null) {
        cause = cause.getCause();
      }
      run.problem = "ApplicationMaster: " + cause.getClass().getSimpleName() + ": " + firstLine(cause.getMessage());
    } finally {
      if (run.finished == 0) {
        run.finished = System.currentTimeMillis();
      }
      if (run.problem != null) {
        run.phase = "failed";
      }
    }
  }

  private ApplicationAttemptId waitForLaunchedAttempt(YarnClient client, Run run) throws Exception {
    long deadline = System.currentTimeMillis() + ALLOCATION_TIMEOUT_MS;
    while (System.currentTimeMillis() < deadline) {
      ApplicationReport report = client.getApplicationReport(run.appId);
      YarnApplicationState s = report.getYarnApplicationState();
      if (s == YarnApplicationState.FAILED || s == YarnApplicationState.KILLED
          || s == YarnApplicationState.FINISHED) {
        run.problem = "application " + s + " before its ApplicationMaster started";
        return null;
      }
      ApplicationAttemptId attempt = report.getCurrentApplicationAttemptId();
      if (attempt != null && client.getApplicationAttemptReport(attempt).getYarnApplicationAttemptState()
          == YarnApplicationAttemptState.LAUNCHED) {
        return attempt;
      }
      Thread.sleep(100);
    }
    run.problem = "the ApplicationMaster's attempt was not launched within " + ALLOCATION_TIMEOUT_MS / 1000 + " s";
    client.killApplication(run.appId);
    return null;
  }

  /** The unmanaged ApplicationMaster: ask, launch {@code sleep} in what arrives, wait for the ends, unregister. */
  private void applicationMaster(Run run) throws Exception {
    Job job = run.job;
    try (UnmanagedAmClients clients = UnmanagedAmClients.start(conf)) {
      AMRMClient<ContainerRequest> rm = clients.rm();
      NMClient nm = clients.nm();
      rm.registerApplicationMaster("", 0, "");
      Resource capability = Resource.newInstance(job.memoryMb(), 1);
      capability.setResourceValue(job.resource(), job.amount());
      Priority priority = Priority.newInstance(1);
      List<ContainerRequest> open = new ArrayList<>();
      for (int i = 0; i < job.containers(); i++) {
        ContainerRequest req = new ContainerRequest(capability, null, null, priority);
        rm.addContainerRequest(req);
        open.add(req);
      }
      run.phase = "wait";
      long deadline = System.currentTimeMillis() + ALLOCATION_TIMEOUT_MS;
      int ended = 0;
      while (ended < job.containers()) {
        if (run.allocated.get() < job.containers() && System.currentTimeMillis() > deadline) {
          run.problem = "got " + run.allocated.get() + " of " + job.containers() + " containers within "
              + ALLOCATION_TIMEOUT_MS / 1000 + " s";
          rm.unregisterApplicationMaster(FinalApplicationStatus.FAILED, run.problem, null);
          return;
        }
        float progress = (float) ended / job.containers();
        AllocateResponse response = rm.allocate(progress);
        // Take every container of this response first, so that launching one does not delay the next one's time.
        long now = System.currentTimeMillis();
        List<Container> mine = new ArrayList<>();
        for (Container c : response.getAllocatedContainers()) {
          if (run.allocated.get() >= job.containers()) {
            rm.releaseAssignedContainer(c.getId());
            continue;
          }
          if (run.allocated.getAndIncrement() == 0) {
            run.firstAllocated = now;
          }
          if (run.allocated.get() == job.containers()) {
            run.allAllocated = now;
          }
          run.placedOn.add(c.getNodeId().toString());
          rm.removeContainerRequest(open.remove(0));
          run.phase = run.allocated.get() == job.containers() ? "run" : "part";
          mine.add(c);
        }
        for (Container c : mine) {
          launch(nm, rm, c, job);
        }
        for (ContainerStatus s : response.getCompletedContainersStatuses()) {
          ended++;
          run.completed.incrementAndGet();
          LOG.info("demo {}: container {} ended, exit status {}", job.name(), s.getContainerId(), s.getExitStatus());
        }
        Thread.sleep(200);
      }
      run.phase = "done";
      rm.unregisterApplicationMaster(FinalApplicationStatus.SUCCEEDED, "spindle-local demo", null);
    } finally {
      run.finished = System.currentTimeMillis();
    }
  }

  private void launch(NMClient nm, AMRMClient<ContainerRequest> rm, Container c, Job job) {
    ContainerLaunchContext launch = ContainerLaunchContext.newInstance(null, null,
        List.of("sleep " + job.runSeconds()), null, null, null);
    try {
      nm.startContainer(c, launch);
    } catch (Exception e) {
      // Without a process the container would never end; give it back so the application can finish.
      LOG.warn("demo {}: could not start container {}: {}", job.name(), c.getId(), e.toString());
      rm.releaseAssignedContainer(c.getId());
    }
  }

  private static ApplicationReport waitForEnd(YarnClient client, ApplicationId id, long timeoutMs) throws Exception {
    long deadline = System.currentTimeMillis() + timeoutMs;
    Set<YarnApplicationState> ends = EnumSet.of(YarnApplicationState.FINISHED, YarnApplicationState.FAILED,
        YarnApplicationState.KILLED);
    ApplicationReport r = client.getApplicationReport(id);
    while (!ends.contains(r.getYarnApplicationState()) && System.currentTimeMillis() < deadline) {
      Thread.sleep(100);
      r = client.getApplicationReport(id);
    }
    return r;
  }

  private String progressLine(YarnClient client, List<Run> runs, long start) {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format("[%5.1fs]", (System.currentTimeMillis() - start) / 1000.0));
    for (Run r : runs) {
      sb.append("  ").append(r.job.name()).append(' ');
      switch (r.phase) {
        case "wait", "part", "run" ->
            sb.append(r.phase).append(' ').append(r.allocated.get()).append('/').append(r.job.containers());
        default -> sb.append(r.phase);
      }
    }
    sb.append("  |  ").append(usage(client));
    return sb.toString();
  }

  /** GPUs and MIG resources in use over all running nodes, e.g. {@code yarn.io/gpu 3/14}. */
  private String usage(YarnClient client) {
    Map<String, long[]> byType = new LinkedHashMap<>();
    for (String type : cluster.spec().resourceTypes()) {
      byType.put(type, new long[2]);
    }
    try {
      for (NodeReport n : client.getNodeReports(NodeState.RUNNING)) {
        for (Map.Entry<String, long[]> e : byType.entrySet()) {
          e.getValue()[1] += value(n.getCapability(), e.getKey());
          e.getValue()[0] += n.getUsed() == null ? 0 : value(n.getUsed(), e.getKey());
        }
      }
    } catch (Exception e) {
      return "usage unknown (" + e.getMessage() + ")";
    }
    List<String> parts = new ArrayList<>();
    byType.forEach((k, v) -> parts.add(k.replace("nvidia.com/", "") + " " + v[0] + "/" + v[1]));
    return String.join(", ", parts);
  }

  private static long value(Resource r, String name) {
    try {
      return r.getResourceValue(name);
    } catch (RuntimeException e) {
      return 0;
    }
  }

  private void printSummary(List<Run> runs) {
    out.println();
    out.println("Summary (wait: submitted -> all containers allocated; spread: first -> last container of the app)");
    String fmt = "  %-14s %-10s %-19s %-10s %-28s %6s %6s  %s%n";
    out.printf(fmt, "app", "queue", "state", "containers", "asked", "wait", "spread", "placed on (rack)");
    for (Run r : runs) {
      String state = r.state == null ? "-" : r.state + (r.finalStatus == null
          || r.finalStatus == FinalApplicationStatus.UNDEFINED ? "" : "/" + r.finalStatus);
      Set<String> places = new LinkedHashSet<>();
      synchronized (r.placedOn) {
        for (String node : r.placedOn) {
          long n = r.placedOn.stream().filter(node::equals).count();
          places.add(node + " (" + rackOfHost.getOrDefault(node, "?") + ")" + (n > 1 ? " x" + n : ""));
        }
      }
      out.printf(fmt, r.job.name(), r.job.queue(), state, r.allocated.get() + "/" + r.job.containers(),
          r.job.asked(), seconds(r.submitted, r.allAllocated), seconds(r.firstAllocated, r.allAllocated),
          String.join(", ", places));
      if (r.problem != null) {
        out.println("      problem: " + r.problem);
      }
    }
    long ok = runs.stream().filter(Run::succeeded).count();
    out.printf("%d of %d applications got all their containers and succeeded.%n", ok, runs.size());
  }

  private static String firstLine(String text) {
    if (text == null) {
      return "";
    }
    String t = text.strip();
    int nl = t.indexOf('\n');
    return nl < 0 ? t : t.substring(0, nl).strip();
  }

  private static String seconds(long from, long to) {
    return from > 0 && to > 0 ? String.format("%.1fs", (to - from) / 1000.0) : "-";
  }
}
