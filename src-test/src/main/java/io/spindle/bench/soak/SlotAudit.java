package io.spindle.bench.soak;

import io.spindle.core.engine.EngineStatus;
import io.spindle.core.model.MigLayout;
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
 * a GPU handed to two live containers would show.
 */
public final class SlotAudit implements AutoCloseable {

  private static final long PERIOD_MS = 200;
  private static final int KEEP_PROBLEMS = 20;

  private final Supplier<EngineStatus> status;
  private final Thread thread;
  private volatile boolean running = true;
  private long lastCycle = -1;
  /** Guarded by this. */
  private long audits;
  private long conflicts;
  private int mostContainers;
  private final List<String> problems = new ArrayList<>();

  private SlotAudit(Supplier<EngineStatus> status) {
    this.status = status;
    this.thread = new Thread(this::loop, "soak-slot-audit");
    this.thread.setDaemon(true);
  }

  public static SlotAudit start(SpindleScheduler scheduler) {
    SlotAudit a = new SlotAudit(scheduler::status);
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
    EngineStatus s = status.get();
    if (s.cycle() == lastCycle) {
      return;
    }
    lastCycle = s.cycle();
    audits++;
    mostContainers = Math.max(mostContainers, s.containers().size());
    Map<String, NodeView> nodes = new HashMap<>();
    for (NodeView n : s.nodes()) {
      nodes.put(n.node().id(), n);
    }
    Map<String, Long> wholeHolder = new HashMap<>();
    Map<String, Integer> slicesHeld = new HashMap<>();
    Map<String, Long> slicedBy = new HashMap<>();
    for (EngineStatus.Container c : s.containers()) {
      for (GpuSlot g : c.gpus()) {
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
