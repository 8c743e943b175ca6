package io.spindle.local;

import com.fasterxml.jackson.databind.JsonNode;
import io.spindle.local.SeedDemo.Outcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerReport;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.client.api.YarnClient;

/**
 * The four seed scenarios and their checks. Every check reads what happened from the cluster — Spindle's status API,
 * YARN's application and container reports, the allocate answers and container exit statuses the ResourceManager
 * sent, the checkpoint notice from ZooKeeper — and compares it with what the scenario is about; nothing is taken
 * from the scenario's own plan. Figures for the summary come from the same reads.
 */
final class SeedScenarios {

  /** Makes the application of a spec (not yet started). */
  interface Factory {
    SeedAm create(SeedAm.Spec spec);
  }

  static final List<String> TEAMS = List.of("vision", "nlp", "speech");
  /** Each team asks for 12 x 4 GPUs: 48 GPUs, three times the 16 its queue is guaranteed. */
  private static final int TEAM_CONTAINERS = 12;
  private static final int TEAM_GPUS = 4;
  private static final int GANG_MEMBERS = 4;
  private static final int GANG_GPUS = 8;
  private static final int EXP_MEMBERS = 6;

  private final Factory apps;
  private final SpindleStatus status;
  private final YarnClient yarn;
  /** One scheduling window: the longest time between two of Spindle's cycles. */
  private final long cycleMs;
  /** Node name of the node file by host of its YARN NodeId, for the summary. */
  private final Map<String, String> names;

  SeedScenarios(Factory apps, SpindleStatus status, YarnClient yarn, long cycleMs,
      Map<String, String> names) {
    this.apps = apps;
    this.names = names;
    this.status = status;
    this.yarn = yarn;
    this.cycleMs = cycleMs;
  }

  /** Scenario a's three teams, each asking at once for three times its guarantee. */
  List<SeedAm> startTeams() {
    List<SeedAm> teams = new ArrayList<>();
    for (String team : TEAMS) {
      teams.add(apps.create(new SeedAm.Spec(team + "-sweep", team, 0, Set.of(), TEAM_CONTAINERS, TEAM_GPUS, 4096,
          3, 3)).start());
    }
    return teams;
  }

  /**
   * a. Fair share. Samples {@code /api/v1/queues} while all three teams have GPUs pending: the check holds when
   * every team's usage comes within one container (4 GPUs) of the fair share Spindle computes for it, and from then
   * on, while all still wait, none holds more than its fair share plus one container.
   */
  Outcome fairShare(List<SeedAm> teams) throws Exception {
    double slack = TEAM_GPUS + 1e-6;
    long firstAllWaiting = 0;
    long convergedAt = 0;
    int samplesAfter = 0;
    double worstOver = Double.NEGATIVE_INFINITY;
    Map<String, String> atConvergence = new LinkedHashMap<>();
    long deadline = System.currentTimeMillis() + 60_000;
    while (System.currentTimeMillis() < deadline && teams.stream().noneMatch(t -> t.ended)) {
      Map<String, double[]> q = queues();
      boolean allWaiting = TEAMS.stream().allMatch(t -> q.containsKey(t) && q.get(t)[2] > 0);
      if (!allWaiting) {
        if (convergedAt > 0) {
          break; // A team has nothing left to ask: no one waits for another any more.
        }
        Thread.sleep(100);
        continue;
      }
      long now = System.currentTimeMillis();
      if (firstAllWaiting == 0) {
        firstAllWaiting = now;
      }
      boolean within = TEAMS.stream().allMatch(t -> Math.abs(q.get(t)[0] - q.get(t)[1]) <= slack);
      if (convergedAt == 0 && within) {
        convergedAt = now;
        for (String t : TEAMS) {
          atConvergence.put(t, fmt(q.get(t)[0]) + "/" + fmt(q.get(t)[1]));
        }
      }
      if (convergedAt > 0) {
        samplesAfter++;
        for (String t : TEAMS) {
          worstOver = Math.max(worstOver, q.get(t)[0] - q.get(t)[1]);
        }
        if (now - convergedAt > 4_000) {
          break;
        }
      }
      Thread.sleep(200);
    }
    int preempted = teams.stream().mapToInt(SeedAm::preempted).sum();
    if (firstAllWaiting == 0) {
      return new Outcome("fair share", false, "the three teams never had GPUs pending at the same time"
          + problems(teams));
    }
    if (convergedAt == 0) {
      return new Outcome("fair share", false, "teams asked 48 GPUs each; usage never came within one container"
          + " (4 GPUs) of the fair shares while all waited: " + queuesLine() + problems(teams));
    }
    boolean held = worstOver <= slack;
    return new Outcome("fair share", held, String.format("3 teams asked %d GPUs each at once (guarantee 16);"
        + " %.1f s after all waited, GPUs held/fair share %s; then, over %d samples while all waited, at most"
        + " %s GPUs above a fair share (limit %d); %d containers preempted on the way",
        TEAM_CONTAINERS * TEAM_GPUS, (convergedAt - firstAllWaiting) / 1000.0, atConvergence, samplesAfter,
        fmt(Math.max(0, worstOver)), TEAM_GPUS, preempted));
  }

  /** Waits for the teams' applications to end (the gang scenario runs meanwhile). */
  void finish(List<SeedAm> teams) throws InterruptedException {
    for (SeedAm t : teams) {
      if (!t.await(() -> t.ended, 90_000)) {
        t.stop();
      }
    }
  }

  /**
   * b. A 32-GPU gang (4 x 8 GPUs) submitted while the teams still hold the cluster. The check reads YARN's container
   * reports of the gang while it runs: four containers of 8 GPUs, created (allocated) within one scheduling window
   * of each other and all RUNNING together, in one allocate answer to the AM.
   */
  Outcome gang() throws Exception {
    int busyAtSubmit = (int) status.get("api/v1/status").path("cluster").path("wholeGpusHeld").asDouble();
    long submitted = System.currentTimeMillis();
    SeedAm gang = apps.create(new SeedAm.Spec("pretrain-32gpu", "training", 0,
        Set.of("spindle.gang.size=" + GANG_MEMBERS), GANG_MEMBERS, GANG_GPUS, 16_384, 4, 4)).start();
    if (!gang.await(() -> gang.allocations.size() >= GANG_MEMBERS, 90_000)) {
      return new Outcome("32-GPU gang", false, "got " + gang.allocations.size() + " of " + GANG_MEMBERS
          + " members within 90 s" + problems(List.of(gang)));
    }
    long waited = gang.allocations.get(0).atMillis() - submitted;
    List<ContainerReport> reports = new ArrayList<>();
    long deadline = System.currentTimeMillis() + 10_000;
    boolean allRunning = false;
    while (!allRunning && System.currentTimeMillis() < deadline) {
      reports = containers(gang);
      allRunning = reports.size() == GANG_MEMBERS
          && reports.stream().allMatch(r -> r.getContainerState() == ContainerState.RUNNING);
      Thread.sleep(100);
    }
    gang.await(() -> gang.ended, 30_000);
    long first = reports.stream().mapToLong(ContainerReport::getCreationTime).min().orElse(0);
    long last = reports.stream().mapToLong(ContainerReport::getCreationTime).max().orElse(0);
    Set<String> nodes = reports.stream().map(r -> r.getAssignedNode().getHost()).collect(Collectors.toSet());
    long gpus = reports.stream().mapToLong(r -> r.getAllocatedResource().getResourceValue("yarn.io/gpu")).sum();
    boolean held = reports.size() == GANG_MEMBERS && gpus == (long) GANG_MEMBERS * GANG_GPUS
        && last - first <= cycleMs && allRunning && gang.batches.equals(List.of(GANG_MEMBERS))
        && gang.problem == null;
    return new Outcome("32-GPU gang", held, String.format("%d x %d GPUs (%d GPUs per YARN's reports), submitted"
        + " with %d of 64 GPUs busy, waited %.1f s; allocated within %d ms of each other (window %d ms), all %s"
        + " at once, in allocate answers of sizes %s; on %d nodes %s", reports.size(), GANG_GPUS, gpus,
        busyAtSubmit, waited / 1000.0, last - first, cycleMs, allRunning ? "RUNNING" : "not RUNNING",
        gang.batches, nodes.size(), hostNames(nodes)) + problems(List.of(gang)));
  }

  /**
   * c. A low-priority experiment (6 x 8 GPUs) borrows most of the idle cluster; an urgent retraining (4 x 8 GPUs,
   * priority 10, same queue) arrives. The experiment's AM gets Spindle's checkpoint notice through ZooKeeper, saves
   * and answers DONE. Checks: the experiment's containers ended PREEMPTED (the RM's exit statuses); Spindle's history
   * of the experiment names that notice, the urgent job and the checkpoint reported; fewer than 32 GPUs were free
   * when the urgent job came, and it got its 32 partly on nodes the experiment gave back; and once the urgent job's
   * GPUs were given back (Spindle lists no more of them held than leave room for the gang) the experiment got its
   * whole gang back and resumed from the location the cluster gave it, which is its checkpoint.
   */
  Outcome preemption() throws Exception {
    // Not the whole cluster: with all 64 GPUs held by the experiment the urgent gang reserved nodes and waited for
    // them to drain instead of preempting (reported in the branch's notes); with 16 idle it is preempted for.
    SeedAm exp = apps.create(new SeedAm.Spec("experiment", "training", 1, Set.of("spindle.gang.size=" + EXP_MEMBERS),
        EXP_MEMBERS, 8, 16_384, 300, 3));
    AtomicInteger urgentRunningAtResume = new AtomicInteger(-1);
    SeedAm[] urgentRef = new SeedAm[1];
    // Spindle's own view, not YARN's container reports: the ResourceManager marks a container COMPLETE on its
    // event thread a little after the scheduler has learnt that it ended and handed its GPUs on.
    exp.onAllocated = got -> {
      if (urgentRef[0] != null) {
        try {
          urgentRunningAtResume.set(gpusHeldBy(urgentRef[0].appId.toString()));
        } catch (Exception e) {
          urgentRunningAtResume.set(-2);
        }
      }
    };
    exp.start();
    if (!exp.await(() -> exp.allocations.size() >= EXP_MEMBERS, 60_000)) {
      exp.stop();
      return new Outcome("checkpoint+preempt", false, "the experiment never got its " + EXP_MEMBERS + " x 8 GPUs" + problems(List.of(
          exp)));
    }
    Thread.sleep(1_000);
    Set<String> expNodes = exp.allocations.stream().map(SeedAm.Allocation::node).collect(Collectors.toSet());
    SeedAm urgent = apps.create(new SeedAm.Spec("urgent-retrain", "training", 10, Set.of("spindle.gang.size=4"), 4,
        8, 16_384, 4, 4));
    urgentRef[0] = urgent;
    int freeAtUrgent = 64 - (int) status.get("api/v1/status").path("cluster").path("wholeGpusHeld").asDouble();
    long urgentSubmitted = System.currentTimeMillis();
    urgent.start();
    boolean urgentDone = urgent.await(() -> urgent.ended, 90_000);
    boolean resumed = exp.await(() -> exp.ended, 60_000);
    exp.stop();
    List<ContainerStatus> preempted = exp.completed.stream()
        .filter(s -> s.getExitStatus() == ContainerExitStatus.PREEMPTED).toList();
    SeedAm.Notice notice = exp.notices.isEmpty() ? null : exp.notices.get(0);
    JsonNode history = exp.resumedFrom;
    String urgentId = urgent.appId == null ? "?" : urgent.appId.toString();
    Set<String> urgentNodes = urgent.allocations.stream().map(SeedAm.Allocation::node).collect(Collectors.toSet());
    long urgentWait = urgent.allocations.isEmpty() ? -1 : urgent.allocations.get(0).atMillis() - urgentSubmitted;
    String resumeText = history == null ? null : history.path("checkpointLocation").asText(null);
    boolean checkpointSaved = resumeText != null && resumeText.startsWith("file:")
        && Files.isRegularFile(Path.of(java.net.URI.create(resumeText)));
    List<String> failed = new ArrayList<>();
    require(failed, notice != null, "the experiment's AM got no checkpoint notice");
    require(failed, preempted.size() == EXP_MEMBERS, preempted.size() + " of its " + EXP_MEMBERS
        + " containers ended PREEMPTED");
    require(failed, history != null, "Spindle's history of the experiment shows no preemption");
    require(failed, history != null && notice != null && history.path("noticeId").asLong() == notice.noticeId(),
        "the preemption is not for the notice the AM answered");
    require(failed, history != null && urgentId.equals(history.path("forAppId").asText()),
        "the preemption was not for the urgent job " + urgentId + " (history: " + history + ")");
    require(failed, notice != null && notice.location().equals(resumeText),
        "the experiment resumed from " + resumeText + ", not from its checkpoint");
    require(failed, checkpointSaved, "no checkpoint file at " + resumeText);
    require(failed, urgentDone && urgent.succeeded == 4 && urgent.batches.equals(List.of(4)),
        "the urgent job ran " + urgent.succeeded + " of 4 members, in allocate answers " + urgent.batches);
    require(failed, freeAtUrgent < 32, freeAtUrgent + " GPUs were free when the urgent job came: nothing to take");
    require(failed, urgentNodes.stream().anyMatch(expNodes::contains), "the urgent job ran on " + urgentNodes
        + ", none of the nodes the experiment held " + expNodes);
    require(failed, resumed && exp.succeeded == EXP_MEMBERS && exp.batches.size() == 2
        && exp.batches.get(1) == EXP_MEMBERS,
        "the experiment did not get its whole gang back and finish (allocate answers " + exp.batches + ")");
    // It fits again only once the urgent job has given back all but what the cluster can spare beside the gang.
    int spare = 64 - EXP_MEMBERS * 8;
    require(failed, urgentRunningAtResume.get() >= 0 && urgentRunningAtResume.get() <= spare, "when the experiment"
        + " got its gang back, Spindle listed " + urgentRunningAtResume.get() + " GPUs held by the urgent job (at most "
        + spare + " leave room for it)");
    String seen = String.format("experiment (priority 1) held %d x 8 GPUs; urgent-retrain (priority 10) asked 4 x 8:"
        + " notice %s reached the experiment's AM via ZooKeeper, it answered DONE; %d containers ended PREEMPTED;"
        + " urgent (%d GPUs free when it came) got 32 GPUs after %.1f s on %s (%d of those nodes the experiment's);"
        + " once it had given its GPUs back (%d held by it in /api/v1/nodes then) the experiment got"
        + " %d x 8 back in one answer and resumed from %s", EXP_MEMBERS, notice == null ? "-" : notice.noticeId(),
        preempted.size(), freeAtUrgent, urgentWait / 1000.0, hostNames(urgentNodes),
        urgentNodes.stream().filter(expNodes::contains).count(), urgentRunningAtResume.get(), EXP_MEMBERS,
        resumeText);
    return new Outcome("checkpoint+preempt", failed.isEmpty(), failed.isEmpty() ? seen
        : String.join("; ", failed) + problems(List.of(exp, urgent)));
  }

  /**
   * d. Eight ranks of 1 GPU as one gang that must stay on one node, on the SXM model (one NVSwitch island per
   * node). The check reads {@code /api/v1/nodes} while they run: the 8 GPUs Spindle lists this application as
   * holder of are on one node and all report one NVLink island; the RM placed every container on that node.
   */
  Outcome nvlinkNode() throws Exception {
    SeedAm ranks = apps.create(new SeedAm.Spec("ddp-8-ranks", "training", 0, Set.of("spindle.gang.size=8",
        "spindle.topology.required=node", "spindle.gpu.models=H100-80GB"), 8, 1, 8_192, 4, 4)).start();
    if (!ranks.await(() -> ranks.allocations.size() >= 8, 60_000)) {
      ranks.stop();
      return new Outcome("NVLink node", false, "got " + ranks.allocations.size() + " of 8 ranks within 60 s"
          + problems(List.of(ranks)));
    }
    String app = ranks.appId.toString();
    List<String> held = new ArrayList<>();
    Set<String> nodes = new TreeSet<>();
    Set<String> islands = new TreeSet<>();
    Map<String, List<Integer>> islandsOfNode = new LinkedHashMap<>();
    for (JsonNode n : status.get("api/v1/nodes")) {
      for (JsonNode g : n.path("gpus")) {
        islandsOfNode.computeIfAbsent(n.path("id").asText(), k -> new ArrayList<>()).add(g.path("nvlinkIsland")
            .asInt());
        if (app.equals(g.path("holder").path("appId").asText(null))) {
          held.add(n.path("id").asText() + "#" + g.path("index").asInt());
          nodes.add(n.path("id").asText());
          islands.add(n.path("id").asText() + "/island " + g.path("nvlinkIsland").asInt());
        }
      }
    }
    Set<String> rmNodes = ranks.allocations.stream().map(SeedAm.Allocation::node).collect(Collectors.toSet());
    ranks.await(() -> ranks.ended, 30_000);
    String node = nodes.isEmpty() ? "" : nodes.iterator().next();
    boolean held8 = held.size() == 8 && nodes.size() == 1 && islands.size() == 1
        && rmNodes.size() == 1 && node.startsWith(rmNodes.iterator().next()) && ranks.problem == null;
    long islandsThere = islandsOfNode.getOrDefault(node, List.of()).stream().distinct().count();
    long multiIslandNodes = islandsOfNode.values().stream().filter(l -> l.stream().distinct().count() > 1).count();
    return new Outcome("NVLink node", held8, String.format("8 ranks x 1 GPU: Spindle lists %d GPUs held on %s,"
        + " in %d NVLink island(s) %s (that node has %d; %d of the 8 nodes have several); YARN placed them on %s",
        held.size(), hostNames(nodes), islands.size(), islands.stream().map(i -> i.replaceFirst("^.*/", ""))
            .distinct().toList(), islandsThere, multiIslandNodes, hostNames(rmNodes)) + problems(List.of(ranks)));
  }

  /** How many GPUs {@code /api/v1/nodes} lists {@code appId} as holder of. */
  private int gpusHeldBy(String appId) throws Exception {
    int n = 0;
    for (JsonNode node : status.get("api/v1/nodes")) {
      for (JsonNode g : node.path("gpus")) {
        n += appId.equals(g.path("holder").path("appId").asText(null)) ? 1 : 0;
      }
    }
    return n;
  }

  /** GPUs used, fair share and pending per team, from {@code /api/v1/queues}. */
  private Map<String, double[]> queues() throws Exception {
    Map<String, double[]> out = new LinkedHashMap<>();
    for (JsonNode q : status.get("api/v1/queues")) {
      String path = q.path("path").asText();
      String leaf = path.substring(path.lastIndexOf('.') + 1);
      out.put(leaf, new double[] {q.path("usage").path("gpus").asDouble(), q.path("fairShare").path("gpus")
          .asDouble(), q.path("pending").path("gpus").asDouble()});
    }
    return out;
  }

  private String queuesLine() {
    try {
      return queues().entrySet().stream().map(e -> e.getKey() + " " + fmt(e.getValue()[0]) + "/"
          + fmt(e.getValue()[1])).collect(Collectors.joining(", "));
    } catch (Exception e) {
      return "(queues unreadable: " + e + ")";
    }
  }

  /** YARN's reports of the application's containers, as the ResourceManager lists them now. */
  private List<ContainerReport> containers(SeedAm am) throws Exception {
    ApplicationAttemptId attempt = yarn.getApplicationReport(am.appId).getCurrentApplicationAttemptId();
    return attempt == null ? List.of() : yarn.getContainers(attempt);
  }

  private static void require(List<String> failed, boolean ok, String otherwise) {
    if (!ok) {
      failed.add(otherwise);
    }
  }

  private static String problems(List<SeedAm> ams) {
    String p = ams.stream().filter(a -> a.problem != null).map(a -> a.spec.name() + ": " + a.problem)
        .collect(Collectors.joining("; "));
    return p.isEmpty() ? "" : " [" + p + "]";
  }

  /** Hosts (or Spindle's {@code host:port} node ids) by the names of the node file. */
  private String hostNames(Set<String> hosts) {
    return hosts.stream().map(h -> names.getOrDefault(h.replaceFirst(":\\d+$", ""), h))
        .collect(Collectors.toCollection(TreeSet::new)).toString();
  }

  private static String fmt(double v) {
    return v == Math.rint(v) ? Long.toString((long) v) : String.format("%.1f", v);
  }
}
