package io.spindle.sim;

import io.spindle.core.model.ResourceVector;
import java.util.ArrayList;
import java.util.List;

/** One job while the simulator replays it: its containers as the engine granted them, and when it ran. */
final class JobRun {

  final SimJob job;
  final int index;
  final Members members;
  /** What one container counts as while it waits (for the fair-share demand of its queue). */
  final ResourceVector unitDemand;
  final boolean mig;
  final List<Long> allocationIds = new ArrayList<>();
  final List<ResourceVector> charges = new ArrayList<>();
  final List<Long> allocatedAt = new ArrayList<>();
  long startMillis = -1;
  long endMillis = -1;
  String rejectedReason;

  JobRun(SimJob job, int index, Members members, ResourceVector unitDemand) {
    this.job = job;
    this.index = index;
    this.members = members;
    this.unitDemand = unitDemand;
    this.mig = members.shape().wantsMig();
  }

  boolean complete() {
    return allocationIds.size() == members.count();
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
