package io.spindle.launcher.yarn;

import io.spindle.launcher.ElasticGang;
import io.spindle.launcher.RunSpec;
import io.spindle.launcher.WorkerTracker;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.async.AMRMClientAsync;
import org.apache.hadoop.yarn.client.api.async.NMClientAsync;

/**
 * The containers of one ask for a {@code spindle-run} gang, from the ask until a failure or a preemption stops them
 * all: the outstanding asks, the containers held, which of them a process was started in, and the current run.
 * Held containers plus outstanding asks are always the gang's full size: a container that leaves is asked for again.
 * Not thread-safe: {@link GangMaster} calls it under its own lock.
 */
final class Gang {

  /** The workers' request; the AM container is YARN's priority 0. */
  static final Priority WORKERS = Priority.newInstance(1);

  /** One start of the workers' processes on the gang, at one size. */
  record Run(int attempt, Map<ContainerId, Integer> rankOf, WorkerTracker tracker) {
    int size() {
      return rankOf.size();
    }
  }

  final ElasticGang members;
  private final RunSpec spec;
  private final AMRMClientAsync<ContainerRequest> rm;
  private final NMClientAsync nm;
  private final Map<String, Container> held = new LinkedHashMap<>();
  /** Containers a process was started in: a later run re-initializes them instead of starting them. */
  private final Set<String> launched = new HashSet<>();
  /** Launched containers outside the current run, running the idle command. */
  private final Set<String> idle = new HashSet<>();
  private final List<ContainerRequest> asked = new ArrayList<>();
  private Run run;
  private boolean stopping;

  Gang(RunSpec spec, LongSupplier clock, AMRMClientAsync<ContainerRequest> rm, NMClientAsync nm) {
    this.members = new ElasticGang(spec.minWorkers(), spec.workers(), spec.workerStep(), clock);
    this.spec = spec;
    this.rm = rm;
    this.nm = nm;
  }

  void ask(int n) {
    for (int i = 0; i < n; i++) {
      ContainerRequest r = new ContainerRequest(WorkerShape.of(spec), null, null, WORKERS);
      asked.add(r);
      rm.addContainerRequest(r);
    }
  }

  /** Whether some of the gang is still asked for (an elastic gang below its size). */
  boolean asking() {
    return !asked.isEmpty();
  }

  /** A container was allocated: kept when asked for, else released. Returns whether it was kept. */
  boolean take(Container c) {
    if (stopping || asked.isEmpty() || !members.wantsMore()) {
      rm.releaseAssignedContainer(c.getId()); // not asked for (a late grant of a stopped gang)
      return false;
    }
    rm.removeContainerRequest(asked.remove(asked.size() - 1));
    held.put(c.getId().toString(), c);
    members.arrived(c.getId().toString());
    return true;
  }

  /** The containers of {@link ElasticGang#candidates()}. */
  List<Container> candidates() {
    return members.candidates().stream().map(held::get).toList();
  }

  /** Container {@code id} ended: it is no longer held. Returns false when it was not this gang's. */
  boolean ended(ContainerId id) {
    String name = id.toString();
    launched.remove(name);
    idle.remove(name);
    return held.remove(name) != null;
  }

  Run run() {
    return run;
  }

  boolean stopping() {
    return stopping;
  }

  /** The rank {@code id} runs in the current run, or null. */
  Integer rankOf(ContainerId id) {
    return run == null || stopping ? null : run.rankOf().get(id);
  }

  /**
   * Starts {@code next}: a first start in each new container, a re-initialization of a running one with the new
   * launch context (the container, its GPUs and its place in Spindle's gang stay), and the idle command in launched
   * containers outside the run.
   */
  void start(Run next, Function<String, ContainerLaunchContext> worker, ContainerLaunchContext idleCommand) {
    members.started(next.rankOf().keySet().stream().map(ContainerId::toString).toList());
    run = next;
    for (ContainerId id : next.rankOf().keySet()) {
      String name = id.toString();
      ContainerLaunchContext ctx = worker.apply(name);
      idle.remove(name);
      if (launched.add(name)) {
        nm.startContainerAsync(held.get(name), ctx);
      } else {
        nm.reInitializeContainerAsync(id, ctx, true);
      }
    }
    for (String name : launched) {
      if (!next.rankOf().containsKey(ContainerId.fromString(name)) && idle.add(name)) {
        nm.reInitializeContainerAsync(ContainerId.fromString(name), idleCommand, true);
      }
    }
  }

  /** Stops every process, releases every container and withdraws the asks. */
  void stop() {
    stopping = true;
    for (Container c : held.values()) {
      if (launched.contains(c.getId().toString())) {
        nm.stopContainerAsync(c.getId(), c.getNodeId());
      }
      rm.releaseAssignedContainer(c.getId());
    }
    for (ContainerRequest req : asked) {
      rm.removeContainerRequest(req);
    }
  }
}
