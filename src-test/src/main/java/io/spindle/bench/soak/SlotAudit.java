package io.spindle.bench.soak;

import io.spindle.core.engine.EngineStatus;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.NodeId;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.placement.NodeView;
import io.spindle.yarn.SpindleScheduler;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Checks, a few times a second, the GPUs every running container holds in Spindle's published engine status (what
 * the status API and GPU map show): no whole GPU held by two containers, no GPU both whole and sliced, no two held
 * MIG instances of one GPU sharing a memory slice, and every held instance present in its GPU's layout. YARN's
 * containers carry GPU counts only; which GPU or instance a container has exists in the scheduler, so this is where
 * a GPU handed to two live containers would show. It also checks that the containers the engine charges to a node
 * fit the node's memory and vcores, and hold only GPUs the node has.
 *
 * <p>With a ResourceManager HA pair it audits the active ResourceManager's Spindle, whichever that is at the time,
 * and nothing while none is active.
 */
public final class SlotAudit implements AutoCloseable {

  private static final long PERIOD_MS = 200;
  private static final int KEEP_PROBLEMS = 20;

  private final Supplier<SpindleScheduler> scheduler;
  private final Thread thread;
  private volatile boolean running = true;
  /** The status audited last: each published one is audited once. */
  private EngineStatus last;
  /** Guarded by this. */
  private long audits;
  private long conflicts;
  private long nodeOverflows;
  private int mostContainers;
  private final List<String> problems = new ArrayList<>();

  private SlotAudit(Supplier<SpindleScheduler> scheduler) {
    this.scheduler = scheduler;
    this.thread = new Thread(this::loop, "soak-slot-audit");
    this.thread.setDaemon(true);
  }

  /** Audits the scheduler {@code scheduler} supplies each time (the active one; null while there is none). */
  public static SlotAudit start(Supplier<SpindleScheduler> scheduler) {
    SlotAudit a = new SlotAudit(scheduler);
    a.thread.start();
    return a;
  }

  private void loop() {
    while (running) {
      auditNow();
      try {
        Thread.sleep(PERIOD_MS);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Audits the current status unless it is the one audited last. */
  public synchronized void auditNow() {
    SpindleScheduler active = scheduler.get();
    EngineStatus s = active == null ? null : active.status();
    if (s == null || s == last) {
      return;
    }
    last = s;
    audits++;
    mostContainers = Math.max(mostContainers, s.containers().size());
    Map<NodeId, NodeView> nodes = new HashMap<>();
    for (NodeView n : s.nodes()) {
      nodes.put(n.node().id(), n);
    }
    Map<String, Long> wholeHolder = new HashMap<>();
    Map<String, Integer> slicesHeld = new HashMap<>();
    Map<String, Long> slicedBy = new HashMap<>();
    Map<NodeId, long[]> charged = new HashMap<>();
    for (EngineStatus.Container c : s.containers()) {
      long[] used = charged.computeIfAbsent(c.nodeId(), n -> new long[2]);
      used[0] += c.shape().memoryMb();
      used[1] += c.shape().vcores();
      NodeView on = nodes.get(c.nodeId());
      if (on == null) {
        overflow(s, "allocation " + c.allocationId() + " is charged to " + c.nodeId() + ", which the engine does not"
            + " have");
      }
      for (GpuSlot g : c.gpus()) {
        if (on != null && (g.gpuIndex() < 0 || g.gpuIndex() >= on.node().gpus().size())) {
          overflow(s, c.nodeId() + " has no GPU " + g.gpuIndex() + " (allocation " + c.allocationId() + ")");
        }
        String gpu = c.nodeId() + "/gpu" + g.gpuIndex();
        if (g.mig() == null) {
          Long other = wholeHolder.put(gpu, c.allocationId());
          if (other != null) {
            conflict(s, gpu + " held whole by allocations " + other + " and " + c.allocationId());
          }
          continue;
        }
        int mask = g.mig().sliceMask();
        int before = slicesHeld.getOrDefault(gpu, 0);
        if ((before & mask) != 0) {
          conflict(s, gpu + " instance " + g.mig() + " of allocation " + c.allocationId()
              + " overlaps memory slices another running container holds");
        }
        slicesHeld.put(gpu, before | mask);
        slicedBy.put(gpu, c.allocationId());
        NodeView n = nodes.get(c.nodeId());
        MigLayout layout = n == null ? null : n.migLayouts().get(g.gpuIndex());
        if (layout == null || !layout.placements().contains(g.mig())) {
          conflict(s, gpu + " instance " + g.mig() + " of allocation " + c.allocationId()
              + " is not in the GPU's layout " + (layout == null ? "(none)" : layout.placements()));
        }
      }
    }
    charged.forEach((node, used) -> {
      NodeView n = nodes.get(node);
      if (n != null && (used[0] > n.node().memoryMb() || used[1] > n.node().vcores())) {
        overflow(s, node + " is charged " + used[0] + " MB and " + used[1] + " vcores of its " + n.node().memoryMb()
            + " MB and " + n.node().vcores() + " vcores");
      }
    });
    for (Map.Entry<String, Long> e : slicedBy.entrySet()) {
      Long whole = wholeHolder.get(e.getKey());
      if (whole != null) {
        conflict(s, e.getKey() + " held whole by allocation " + whole + " and sliced by allocation " + e.getValue());
      }
    }
  }

  private void conflict(EngineStatus s, String text) {
    conflicts++;
    if (problems.size() < KEEP_PROBLEMS) {
      problems.add("cycle " + s.cycle() + ": " + text);
    }
  }

  private void overflow(EngineStatus s, String text) {
    nodeOverflows++;
    if (problems.size() < KEEP_PROBLEMS) {
      problems.add("cycle " + s.cycle() + ": " + text);
    }
  }

  /** Nodes charged more memory or vcores than they have, or containers on GPUs or nodes the engine lacks. */
  public synchronized long nodeOverflows() {
    return nodeOverflows;
  }

  public synchronized long audits() {
    return audits;
  }

  /** GPU slots found held by two running containers at once (or in a way no GPU allows). */
  public synchronized long conflicts() {
    return conflicts;
  }

  public synchronized int mostContainers() {
    return mostContainers;
  }

  public synchronized List<String> problems() {
    return List.copyOf(problems);
  }

  @Override
  public void close() throws InterruptedException {
    running = false;
    thread.interrupt();
    thread.join(5_000);
    auditNow();
  }
}
