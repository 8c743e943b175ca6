package io.spindle.yarn;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;

/**
 * Spindle's scheduler, numbering its scheduling cycles and recording in which cycle each container was allocated, so
 * a test can tell that a gang's containers were allocated in one cycle.
 */
public class CycleRecordingScheduler extends SpindleScheduler {

  /** One container as allocated: its application, the cycle that allocated it, and its resource. */
  public record Allocated(ApplicationId app, ContainerId container, int cycle,
      org.apache.hadoop.yarn.api.records.Resource resource) {}

  private final Map<ContainerId, Allocated> seen = new ConcurrentHashMap<>();
  private final List<Allocated> allocated = new CopyOnWriteArrayList<>();
  private int cycle;

  @Override
  public void runCycle() {
    super.runCycle();
    cycle++; // only the scheduling thread runs cycles
    for (SchedulerApplication<SpindleAppAttempt> app : getSchedulerApplications().values()) {
      SpindleAppAttempt attempt = app.getCurrentAppAttempt();
      if (attempt != null) {
        for (RMContainer c : attempt.getLiveContainers()) {
          if (!seen.containsKey(c.getContainerId())) {
            Allocated a = new Allocated(attempt.getApplicationId(), c.getContainerId(), cycle,
                c.getAllocatedResource());
            seen.put(c.getContainerId(), a);
            allocated.add(a);
          }
        }
      }
    }
  }

  /** Every container of {@code app} allocated so far, in order, also those that have ended since. */
  public List<Allocated> allocated(ApplicationId app) {
    return allocated.stream().filter(a -> a.app().equals(app)).toList();
  }
}
