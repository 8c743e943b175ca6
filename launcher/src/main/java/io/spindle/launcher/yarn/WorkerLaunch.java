package io.spindle.launcher.yarn;

import io.spindle.launcher.RankPlan;
import io.spindle.launcher.RunSpec;
import io.spindle.launcher.ShellWords;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.hadoop.yarn.api.ApplicationConstants;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.LocalResource;

/** What a worker container runs: the job's command with its rank's environment, or nothing while it leaves. */
final class WorkerLaunch {

  /**
   * A container Spindle takes back from an elastic gang stays alive until Spindle reclaims it: one that ended by
   * itself would not be put back into the job's ask by the ResourceManager, and the gang could not grow again.
   * Long enough for any reclaim; a container still idle at its end is asked for again like one reclaimed.
   */
  static final List<String> IDLE = List.of("sleep 86400");

  /** The checkpoint interval Spindle advises, in seconds (docs/training-guide.md). */
  static final String CHECKPOINT_INTERVAL = "SPINDLE_CHECKPOINT_INTERVAL_SECONDS";

  private final RunSpec spec;
  private final ApplicationId appId;
  private final String progressUrl;
  private final Map<String, LocalResource> resources;

  WorkerLaunch(RunSpec spec, ApplicationId appId, String progressUrl, Map<String, LocalResource> resources) {
    this.spec = spec;
    this.appId = appId;
    this.progressUrl = progressUrl;
    this.resources = resources;
  }

  /**
   * The launch of {@code containerId}'s worker in run {@code attempt} of {@code plan}; {@code checkpointEvery}, the
   * interval Spindle advises, in seconds, when it could be had.
   */
  ContainerLaunchContext worker(RankPlan plan, String containerId, int attempt, Optional<String> resume,
      OptionalLong checkpointEvery) {
    int rank = plan.rankOf(containerId);
    Map<String, String> env = new LinkedHashMap<>(plan.environment(containerId));
    if (env.get("CUDA_VISIBLE_DEVICES").isEmpty() || spec.migProfile() != null || spec.gpuMilli() > 0) {
      // Unknown here, or a MIG instance or share (named by UUID, with MPS limits): the NodeManager's plugin sets it.
      env.remove("CUDA_VISIBLE_DEVICES");
    }
    env.putAll(spec.env());
    env.put("SPINDLE_RUN_APP_ID", appId.toString());
    env.put("SPINDLE_RUN_ATTEMPT", Integer.toString(attempt));
    env.put("SPINDLE_PROGRESS_URL", progressUrl + "/progress?attempt=" + attempt + "&rank=" + rank);
    if (spec.checkpointDir() != null) {
      env.put("SPINDLE_CHECKPOINT_DIR", spec.checkpointDir());
    }
    resume.ifPresent(p -> env.put("SPINDLE_RESUME_FROM", p));
    checkpointEvery.ifPresent(seconds -> env.put(CHECKPOINT_INTERVAL, Long.toString(seconds)));
    // Appended: an elastic job's container runs one process per size it ran at, and each one's output is kept.
    String command = ShellWords.join(spec.command()) + " 1>>" + ApplicationConstants.LOG_DIR_EXPANSION_VAR
        + "/stdout 2>>" + ApplicationConstants.LOG_DIR_EXPANSION_VAR + "/stderr";
    return ContainerLaunchContext.newInstance(resources, env, List.of(command), null, (ByteBuffer) null, null);
  }

  /** The launch of a container that waits, idle, for Spindle to take it back. */
  ContainerLaunchContext idle() {
    return ContainerLaunchContext.newInstance(resources, Map.of(), IDLE, null, (ByteBuffer) null, null);
  }
}
