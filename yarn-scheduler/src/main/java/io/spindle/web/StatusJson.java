package io.spindle.web;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spindle.core.engine.EngineStatus;
import io.spindle.core.engine.QueueSnapshot;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.GpuService;
import io.spindle.core.placement.GpuShareUse;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.placement.NodeView;
import io.spindle.core.reliability.CheckpointAdvice;
import io.spindle.core.status.AppHistory;
import io.spindle.core.status.Explanation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongFunction;

/**
 * The status API's JSON, written field by field rather than by reflection over the engine's records: the API is a
 * contract with scripts and dashboards, and must not change shape when an internal record does. Field names and
 * meanings are listed in docs/admin-guide.md, "Status API".
 */
final class StatusJson {

  static final ObjectMapper MAPPER = new ObjectMapper();

  private StatusJson() {}

  static ObjectNode summary(EngineStatus s, SchedulerView.SchedulerInfo info) {
    ObjectNode out = MAPPER.createObjectNode();
    ObjectNode scheduler = out.putObject("scheduler");
    scheduler.put("rmId", info.rmId());
    scheduler.put("leader", info.leader());
    scheduler.put("epoch", info.epoch());
    scheduler.put("cycle", s.cycle());
    scheduler.put("timeMillis", s.timeMillis());
    scheduler.put("cycleIntervalMillis", info.cycleIntervalMillis());
    info.ignoredKeys().forEach(scheduler.putArray("ignoredKeys")::add);
    ObjectNode cluster = out.putObject("cluster");
    int gpus = 0;
    int migGpus = 0;
    for (NodeView n : s.nodes()) {
      gpus += n.node().gpus().size();
      migGpus += n.migLayouts().size();
    }
    int wholeHeld = 0;
    int shares = 0;
    for (EngineStatus.Container c : s.containers()) {
      for (GpuSlot g : c.gpus()) {
        wholeHeld += g.wholeGpu() ? 1 : 0;
        shares += g.share() ? 1 : 0;
      }
    }
    int sharedGpus = 0;
    for (NodeView n : s.nodes()) {
      for (Gpu g : n.node().gpus()) {
        sharedGpus += g.sharesBelowWhole() ? 1 : 0;
      }
    }
    cluster.put("nodes", s.nodes().size());
    cluster.put("gpus", gpus);
    cluster.put("migGpus", migGpus);
    cluster.put("wholeGpusHeld", wholeHeld);
    cluster.put("sharedGpus", sharedGpus);
    cluster.put("gpuShares", shares);
    cluster.put("runningContainers", s.containers().size());
    cluster.put("applications", s.apps().size());
    long pendingContainers = 0;
    int pendingGangs = 0;
    int reservations = 0;
    for (EngineStatus.App a : s.apps()) {
      for (EngineStatus.Request r : a.requests()) {
        pendingContainers += r.outstanding();
        pendingGangs += r.spec().gang() ? 1 : 0;
        reservations += r.reservation() == null ? 0 : 1;
      }
    }
    cluster.put("pendingContainers", pendingContainers);
    cluster.put("pendingGangs", pendingGangs);
    cluster.put("reservations", reservations);
    out.set("queues", queues(s));
    return out;
  }

  static ArrayNode queues(EngineStatus s) {
    Map<String, int[]> apps = new HashMap<>();
    for (EngineStatus.App a : s.apps()) {
      int[] counts = apps.computeIfAbsent(a.queue(), q -> new int[2]);
      counts[a.requests().isEmpty() ? 0 : 1]++;
    }
    ArrayNode out = MAPPER.createArrayNode();
    for (QueueSnapshot q : s.queues()) {
      ObjectNode o = out.addObject();
      o.put("path", q.path());
      o.set("guarantee", vector(q.guarantee()));
      o.set("maximum", vector(q.maximum()));
      o.set("fairShare", vector(q.fairShare()));
      o.set("usage", vector(q.usage()));
      o.set("pending", vector(q.pending()));
      if (!q.partitions().isEmpty()) {
        ObjectNode partitions = o.putObject("partitions");
        q.partitions().forEach((label, p) -> {
          ObjectNode po = partitions.putObject(label);
          po.set("guarantee", vector(p.guarantee()));
          po.set("maximum", vector(p.maximum()));
          po.set("fairShare", vector(p.fairShare()));
          po.set("usage", vector(p.usage()));
          po.set("pending", vector(p.pending()));
        });
      }
      if (q.usageHistory() != null) {
        ObjectNode h = o.putObject("usageHistory");
        usage(h, q.usageHistory());
        h.put("idleWeightFactor", q.historyFactor());
        if (!q.userHistory().isEmpty()) {
          ObjectNode users = h.putObject("users");
          q.userHistory().forEach((user, u) -> usage(users.putObject(user), u));
        }
      }
      int[] counts = apps.get(q.path());
      if (counts != null) {
        o.put("runningApps", counts[0]);
        o.put("pendingApps", counts[1]);
      }
    }
    return out;
  }

  private static void usage(ObjectNode o, QueueSnapshot.Usage u) {
    o.put("gpuSeconds", u.gpuSeconds());
    o.put("memoryMbSeconds", u.memoryMbSeconds());
    o.put("vcoreSeconds", u.vcoreSeconds());
  }

  static ArrayNode apps(EngineStatus s) {
    ArrayNode out = MAPPER.createArrayNode();
    for (EngineStatus.App a : s.apps()) {
      out.add(app(a, s.timeMillis()));
    }
    return out;
  }

  static ObjectNode app(EngineStatus.App a, long nowMillis) {
    ObjectNode o = MAPPER.createObjectNode();
    o.put("appId", a.appId().value());
    o.put("queue", a.queue());
    o.put("user", a.user());
    o.put("priority", a.priority());
    o.put("submitTimeMillis", a.submitTimeMillis());
    o.put("containers", a.containers());
    o.set("usage", vector(a.usage()));
    if (a.ordering() != null) {
      o.put("ordering", a.ordering());
    }
    if (a.checkpointAdvice() != null) {
      o.set("checkpointAdvice", checkpointAdvice(a.checkpointAdvice()));
    }
    ArrayNode requests = o.putArray("requests");
    for (EngineStatus.Request r : a.requests()) {
      requests.add(request(a, r, nowMillis));
    }
    return o;
  }

  /** In seconds and hours, which is what a training loop and a person compare it with. */
  static ObjectNode checkpointAdvice(CheckpointAdvice a) {
    ObjectNode o = MAPPER.createObjectNode();
    o.put("intervalSeconds", Math.max(1, Math.round(a.intervalMillis() / 1000.0)));
    o.put("mtbfHours", a.mtbfMillis() / 3_600_000.0);
    o.put("failuresPerGpuHour", a.failuresPerGpuHour());
    o.put("gpus", a.gpus());
    o.put("writeSeconds", Math.round(a.writeMillis() / 1000.0));
    o.put("writeReported", a.evidence().writeReported());
    o.put("basis", a.basis());
    return o;
  }

  /** Gangs not yet started: what each waits for, the nodes held for it and when it should start. */
  static ArrayNode gangs(EngineStatus s) {
    ArrayNode out = MAPPER.createArrayNode();
    for (EngineStatus.App a : s.apps()) {
      for (EngineStatus.Request r : a.requests()) {
        if (r.spec().gang()) {
          out.add(request(a, r, s.timeMillis()));
        }
      }
    }
    return out;
  }

  private static ObjectNode request(EngineStatus.App a, EngineStatus.Request r, long nowMillis) {
    ObjectNode o = MAPPER.createObjectNode();
    o.put("appId", a.appId().value());
    o.put("queue", a.queue());
    o.put("requestKey", r.requestKey());
    o.put("gang", r.spec().gang());
    o.put("containers", r.outstanding());
    o.set("shape", shape(r.shape()));
    o.put("topologyLevel", r.spec().topologyLevel());
    o.put("topologyRequired", r.spec().required());
    o.put("state", r.reservation() == null ? "waiting" : "reserved");
    o.put("reason", r.reason());
    o.put("waitingMillis", Math.max(0, nowMillis - a.submitTimeMillis()));
    EngineStatus.ExpectedStart start = r.expectedStart();
    if (start.known()) {
      o.put("expectedStartMillis", start.millis());
    } else {
      o.putNull("expectedStartMillis");
    }
    o.put("startConfidence", start.confidence().name().toLowerCase(java.util.Locale.ROOT));
    EngineStatus.Held h = r.reservation();
    if (h != null) {
      ObjectNode held = o.putObject("reservation");
      held.put("subtree", h.subtree());
      ArrayNode nodes = held.putArray("nodes");
      h.nodeIds().forEach(n -> nodes.add(n.value()));
      held.put("sinceMillis", h.sinceMillis());
      if (h.projectedStartMillis() == Long.MAX_VALUE) {
        held.putNull("estimatedStartMillis");
      } else {
        held.put("estimatedStartMillis", h.projectedStartMillis());
      }
    }
    return o;
  }

  /**
   * Nodes with each GPU: whole, MIG or shared, who holds it (each MIG instance, each share), and what a re-partition
   * is making.
   */
  static ArrayNode nodes(EngineStatus s, LongFunction<String> containerName) {
    Map<AppId, EngineStatus.App> apps = new HashMap<>();
    s.apps().forEach(a -> apps.put(a.appId(), a));
    Map<String, EngineStatus.Container> holders = new HashMap<>();
    Map<String, List<EngineStatus.Container>> sharers = new HashMap<>();
    for (EngineStatus.Container c : s.containers()) {
      for (GpuSlot g : c.gpus()) {
        if (g.share()) {
          sharers.computeIfAbsent(slotKey(c.nodeId(), g.gpuIndex(), null), k -> new ArrayList<>()).add(c);
        } else {
          holders.put(slotKey(c.nodeId(), g.gpuIndex(), g.mig()), c);
        }
      }
    }
    ArrayNode out = MAPPER.createArrayNode();
    for (NodeView n : s.nodes()) {
      ObjectNode o = out.addObject();
      o.put("id", n.node().id().value());
      o.put("location", n.node().location());
      o.put("memoryMb", n.node().memoryMb());
      o.put("vcores", n.node().vcores());
      o.put("reservedFor", n.reservedFor());
      o.put("cordoned", n.cordoned());
      ArrayNode gpus = o.putArray("gpus");
      for (Gpu g : n.node().gpus()) {
        ObjectNode gpu = gpus.addObject();
        gpu.put("index", g.index());
        gpu.put("model", g.model().name());
        gpu.put("nvlinkIsland", g.nvlinkIsland());
        gpu.put("memorySlices", g.model().memorySlices());
        gpu.put("mig", g.migEnabled());
        gpu.put("sharing", g.sharing().text());
        GpuService service = n.gpuService().get(g.index());
        gpu.put("service", service == null ? "in-service" : service.out() ? "out" : "degraded");
        gpu.put("serviceReason", service == null ? null : service.reason());
        if (!g.migEnabled()) {
          String key = slotKey(n.node().id(), g.index(), null);
          gpu.set("holder", holder(holders.get(key), apps, containerName));
          if (g.sharesBelowWhole()) {
            shares(gpu, n.shares().get(g.index()), sharers.getOrDefault(key, List.of()), apps, containerName);
          }
          continue;
        }
        ArrayNode instances = gpu.putArray("instances");
        MigLayout layout = n.migLayouts().getOrDefault(g.index(), MigLayout.empty(g.model()));
        for (MigPlacement p : layout.placements()) {
          ObjectNode i = instances.addObject();
          i.put("profile", p.profile().name());
          i.put("start", p.start());
          i.put("slices", p.profile().memorySlices());
          i.set("holder", holder(holders.get(slotKey(n.node().id(), g.index(), p)), apps, containerName));
        }
        MigLayout next = n.reconfiguringTo().get(g.index());
        if (next != null) {
          ArrayNode to = gpu.putArray("reconfiguringTo");
          for (MigPlacement p : next.placements()) {
            to.addObject().put("profile", p.profile().name()).put("start", p.start())
                .put("slices", p.profile().memorySlices());
          }
        }
      }
    }
    return out;
  }

  /** What is taken of a shared GPU, and each share on it with its holder. */
  private static void shares(ObjectNode gpu, GpuShareUse use, List<EngineStatus.Container> on,
      Map<AppId, EngineStatus.App> apps, LongFunction<String> containerName) {
    GpuShareUse u = use == null ? new GpuShareUse(0, 0, 0, false) : use;
    ObjectNode o = gpu.putObject("shareUse");
    o.put("usedMilli", u.usedMilli());
    o.put("usedMemoryMb", u.usedMemoryMb());
    o.put("shares", u.shares());
    o.put("takenWhole", u.takenWhole());
    ArrayNode list = gpu.putArray("shares");
    for (EngineStatus.Container c : on) {
      ObjectNode share = list.addObject();
      share.put("gpuMilli", c.shape().gpuMilli());
      share.put("gpuMemoryMb", c.shape().gpuMemoryMb());
      share.set("holder", holder(c, apps, containerName));
    }
  }

  static ObjectNode explanation(Explanation e) {
    ObjectNode o = MAPPER.createObjectNode();
    o.put("appId", e.appId().value());
    o.put("state", e.state().name());
    o.put("explanation", e.text());
    return o;
  }

  static ArrayNode history(List<AppHistory.Outcome> history) {
    ArrayNode out = MAPPER.createArrayNode();
    for (AppHistory.Outcome h : history) {
      ObjectNode o = out.addObject();
      o.put("atMillis", h.atMillis());
      o.put("requestKey", h.requestKey());
      if (h instanceof AppHistory.Rejected r) {
        o.put("type", "rejected").put("reason", r.reason());
      } else if (h instanceof AppHistory.Noticed n) {
        o.put("type", "checkpoint-notice").put("noticeId", n.noticeId()).put("containers", n.containers())
            .put("deadlineMillis", n.deadlineMillis()).put("forAppId", Objects.toString(n.forAppId(), null))
            .put("forRequestKey", n.forRequestKey()).put("reason", n.reason());
        if (n.targetSize() > 0) {
          o.put("targetSize", n.targetSize());
        }
      } else if (h instanceof AppHistory.NoticeWithdrawn w) {
        o.put("type", "notice-withdrawn").put("noticeId", w.noticeId()).put("reason", w.reason());
      } else if (h instanceof AppHistory.Restarted r) {
        o.put("type", "gang-restarted").put("lost", r.lost()).put("stopped", r.stopped()).put("reason", r.reason());
      } else if (h instanceof AppHistory.Stopped s) {
        o.put("type", "stopped").put("containers", s.containers()).put("reason", s.reason());
      } else if (h instanceof AppHistory.Preempted p) {
        o.put("type", "preempted").put("noticeId", p.noticeId()).put("containers", p.containers())
            .put("forAppId", Objects.toString(p.forAppId(), null)).put("forRequestKey", p.forRequestKey())
            .put("checkpointLocation", p.checkpointLocation()).put("reason", p.reason());
      } else if (h instanceof AppHistory.Resized r) {
        o.put("type", r.toSize() > r.fromSize() ? "grew" : "shrank").put("fromSize", r.fromSize())
            .put("toSize", r.toSize()).put("reason", r.reason());
      }
    }
    return out;
  }

  private static ObjectNode holder(EngineStatus.Container c, Map<AppId, EngineStatus.App> apps,
      LongFunction<String> containerName) {
    if (c == null) {
      return null;
    }
    ObjectNode o = MAPPER.createObjectNode();
    o.put("appId", c.appId().value());
    EngineStatus.App app = apps.get(c.appId());
    o.put("queue", app == null ? null : app.queue());
    o.put("user", app == null ? null : app.user());
    o.put("requestKey", c.requestKey());
    o.put("allocationId", c.allocationId());
    o.put("container", containerName.apply(c.allocationId()));
    return o;
  }

  private static String slotKey(NodeId nodeId, int gpuIndex, MigPlacement mig) {
    return nodeId + "/" + gpuIndex + (mig == null ? "" : "/" + mig.profile().name() + "@" + mig.start());
  }

  static ObjectNode vector(ResourceVector v) {
    ObjectNode o = MAPPER.createObjectNode();
    o.put("memoryMb", v.memoryMb());
    o.put("vcores", v.vcores());
    o.put("gpus", v.gpus());
    return o;
  }

  private static ObjectNode shape(Resources r) {
    ObjectNode o = MAPPER.createObjectNode();
    o.put("memoryMb", r.memoryMb());
    o.put("vcores", r.vcores());
    o.put("gpus", r.gpus());
    o.put("gpuModel", r.models().text());
    if (r.wantsShare()) {
      o.put("gpuMilli", r.gpuMilli());
      o.put("gpuMemoryMb", r.gpuMemoryMb());
      o.put("isolation", r.isolation().text());
    }
    o.put("migProfile", r.migProfile());
    o.put("migInstances", r.migInstances());
    return o;
  }
}
