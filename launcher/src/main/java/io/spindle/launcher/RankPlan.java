package io.spindle.launcher;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Numbers a gang's workers so that ranks that talk most share the fastest links, and says what each worker is told.
 *
 * <p>The rule: workers ordered by rack path, then node, then NVLink island of their first GPU, then first GPU, then
 * container id; rank = position in that order. Ring all-reduce passes data between consecutive ranks and tree
 * all-reduce between nearby ones, so this order keeps neighbours on one node, then one rack, and crosses a rack
 * boundary once per rack. Rank 0's node is the rendezvous ({@code MASTER_ADDR}).
 */
public final class RankPlan {

  private static final Comparator<WorkerSlot> BY_TOPOLOGY = Comparator.comparing(WorkerSlot::rack)
      .thenComparing(WorkerSlot::node).thenComparingInt(WorkerSlot::firstIsland)
      .thenComparingInt(WorkerSlot::firstGpu).thenComparing(WorkerSlot::containerId);

  private final List<WorkerSlot> ranked;
  private final int masterPort;

  /** @param masterPort the rendezvous port on rank 0's node */
  public RankPlan(List<WorkerSlot> workers, int masterPort) {
    if (workers.isEmpty()) {
      throw new IllegalArgumentException("a gang has at least one worker");
    }
    this.ranked = workers.stream().sorted(BY_TOPOLOGY).toList();
    this.masterPort = masterPort;
  }

  /** The workers in rank order. */
  public List<WorkerSlot> ranked() {
    return ranked;
  }

  public int rankOf(String containerId) {
    for (int r = 0; r < ranked.size(); r++) {
      if (ranked.get(r).containerId().equals(containerId)) {
        return r;
      }
    }
    throw new IllegalArgumentException("not a worker of this gang: " + containerId);
  }

  /**
   * The environment of the worker in {@code containerId}. Each worker is one process group: a command that starts
   * one process itself reads {@code RANK}/{@code WORLD_SIZE}/{@code LOCAL_RANK}; {@code torchrun} reads
   * {@code NODE_RANK}, {@code NNODES}, {@code MASTER_ADDR}, {@code MASTER_PORT} (each worker is one torchrun
   * "node") and sets the per-process ranks itself. torchrun takes its own options from {@code PET_<OPTION>}
   * variables, so {@code PET_NNODES}, {@code PET_NODE_RANK}, {@code PET_MASTER_ADDR} and {@code PET_MASTER_PORT}
   * make a plain {@code torchrun --nproc_per_node=G train.py} join the gang without repeating them.
   * {@code CUDA_VISIBLE_DEVICES} lists the container's GPUs.
   */
  public Map<String, String> environment(String containerId) {
    int rank = rankOf(containerId);
    WorkerSlot w = ranked.get(rank);
    List<WorkerSlot> sameHost = ranked.stream().filter(x -> x.node().equals(w.node())).toList();
    Map<String, String> env = new LinkedHashMap<>();
    env.put("RANK", Integer.toString(rank));
    env.put("WORLD_SIZE", Integer.toString(ranked.size()));
    env.put("LOCAL_RANK", Integer.toString(sameHost.indexOf(w)));
    env.put("LOCAL_WORLD_SIZE", Integer.toString(sameHost.size()));
    env.put("NODE_RANK", Integer.toString(rank));
    env.put("NNODES", Integer.toString(ranked.size()));
    env.put("MASTER_ADDR", ranked.get(0).host());
    env.put("MASTER_PORT", Integer.toString(masterPort));
    env.put("PET_NNODES", env.get("NNODES"));
    env.put("PET_NODE_RANK", env.get("NODE_RANK"));
    env.put("PET_MASTER_ADDR", env.get("MASTER_ADDR"));
    env.put("PET_MASTER_PORT", env.get("MASTER_PORT"));
    env.put("CUDA_VISIBLE_DEVICES", w.gpus().stream().map(String::valueOf).collect(Collectors.joining(",")));
    return env;
  }

  /** One line per rank, as {@code spindle-run} prints it when the gang starts. */
  public List<String> describe() {
    List<String> out = new ArrayList<>();
    for (int r = 0; r < ranked.size(); r++) {
      WorkerSlot w = ranked.get(r);
      out.add("rank " + r + ": " + w.node() + " " + w.rack() + " GPUs " + w.gpus() + " (" + w.containerId() + ")");
    }
    return out;
  }
}
