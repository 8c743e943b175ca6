package io.spindle.sim;

import io.spindle.core.engine.EngineStatus.ExpectedStart;
import io.spindle.core.model.AppId;
import io.spindle.core.model.ResourceVector;
import java.util.ArrayList;
import java.util.List;

/** One job while the simulator replays it: its containers as the engine granted them, and when it ran. */
final class JobRun {

  final SimJob job;
  /** The job as the engine knows it. */
  final AppId app;
  final int index;
  final Members members;
  /** What one container counts as while it waits (for the fair-share demand of its queue). */
  final ResourceVector unitDemand;
  final boolean mig;
  final List<Long> allocationIds = new ArrayList<>();
  final List<ResourceVector> charges = new ArrayList<>();
  final List<Long> allocatedAt = new ArrayList<>();
  /** When it first held all its containers (a preempted job starts again later; its queueing delay ends here). */
  long startMillis = -1;
  /** When it was last preempted, while it waits to start again; -1 otherwise. */
  long preemptedAtMillis = -1;
  /** Time spent waiting to start again after preemptions: part of its queueing delay, as the reference counts it. */
  long preemptedWaitMillis;
  long endMillis = -1;
  String rejectedReason;
  /** Its run time done and checkpointed, for preemption. */
  final JobProgress progress;
  /** The checkpoint notice the checkpoint being written answers; -1 for none. */
  long noticeToAnswer = -1;
  int timesPreempted;
  /** The fewest containers it runs on: all of them, or an elastic gang's minimum. */
  int minMembers;
  /** The checkpoint being written is for a change of size (elastic growth), not for a notice. */
  boolean resizing;
  /** The expected start the engine showed after its arrival cycle (with {@code --expected-start}); else null. */
  ExpectedStart predictedStart;

  JobRun(SimJob job, int index, Members members, ResourceVector unitDemand) {
    this.job = job;
    this.app = AppId.of(job.id());
    this.index = index;
    this.members = members;
    this.unitDemand = unitDemand;
    this.mig = members.shape().wantsMig();
    this.progress = new JobProgress(job.durationMillis());
    this.minMembers = members.count();
  }

  boolean elastic() {
    return minMembers < members.count();
  }

  /** GPUs it holds now: {@link #gpus()} scaled by the share of its containers it holds. */
  double heldGpus() {
    return allocationIds.size() == members.count() ? gpus() : gpus() * allocationIds.size() / members.count();
  }

  /** Its speed on the containers it holds, relative to the trace's. */
  double rate(ElasticModel model) {
    return elastic() ? model.rate(allocationIds.size(), members.count()) : 1;
  }

  /** Some of its containers were killed (an elastic gang's grown members): it runs on without them. */
  void forget(java.util.Collection<Long> ids) {
    for (int i = allocationIds.size() - 1; i >= 0; i--) {
      if (ids.contains(allocationIds.get(i))) {
        allocationIds.remove(i);
        charges.remove(i);
        allocatedAt.remove(i);
      }
    }
  }

  /** Its containers were killed: it holds nothing until the engine places it again. */
  void forgetContainers() {
    allocationIds.clear();
    charges.clear();
    allocatedAt.clear();
  }

  /** GPUs it runs on (GPU-equivalents for a fraction of one), for GPU-time accounting. */
  double gpus() {
    return job.gpuMilliTotal() / 1000.0;
  }

  /** Whether it holds enough containers to run: all of them, or an elastic gang's minimum. */
  boolean complete() {
    return allocationIds.size() >= minMembers;
  }

  boolean started() {
    return startMillis >= 0;
  }

  ResourceVector held() {
    ResourceVector sum = ResourceVector.ZERO;
    for (ResourceVector c : charges) {
      sum = sum.plus(c);
    }
    return sum;
  }
}
