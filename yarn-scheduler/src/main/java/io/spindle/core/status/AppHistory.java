package io.spindle.core.status;

import io.spindle.core.engine.CycleResult;
import io.spindle.core.engine.Decision;
import io.spindle.core.model.AppId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the engine decided about each application that it no longer shows as state: rejections, checkpoint notices,
 * preemptions and gang restarts. The engine forgets a rejected application at once and a preempted request looks like any other
 * waiting one, yet "why did my job fail / restart" is asked exactly then. Bounded: the most recently touched
 * {@code maxApps} applications, each with its last {@value #EVENTS_PER_APP} outcomes. Not thread-safe; the driver
 * feeds it on the scheduling thread and hands readers an {@link #of(String) immutable copy}.
 */
public final class AppHistory {

  static final int EVENTS_PER_APP = 16;

  /** Something that happened to one application, at engine time {@code atMillis}. */
  public sealed interface Outcome {
    long atMillis();

    String requestKey();
  }

  /** The application ({@code requestKey == null}) or one request can never be served as asked. */
  public record Rejected(long atMillis, String requestKey, String reason) implements Outcome {}

  /** The application was asked to checkpoint containers so that {@code forAppId}'s request can start. */
  /** A checkpoint notice; {@code targetSize} above 0 for a resize (the gang runs on with that many members). */
  public record Noticed(long atMillis, String requestKey, long noticeId, int containers, long deadlineMillis,
      AppId forAppId, String forRequestKey, String reason, int targetSize) implements Outcome {}

  /** A notice was withdrawn: the application keeps its containers. */
  public record NoticeWithdrawn(long atMillis, String requestKey, long noticeId, String reason) implements Outcome {}

  /**
   * Containers were taken back; the request is re-queued whole.
   *
   * @param forAppId the application they were reclaimed for, when the notice named it, else {@code null}
   */
  public record Preempted(long atMillis, String requestKey, long noticeId, int containers, AppId forAppId,
      String forRequestKey, String checkpointLocation, String reason) implements Outcome {}

  /** A gang lost members to the cluster; the others were stopped and it was re-queued whole. */
  public record Restarted(long atMillis, String requestKey, int lost, int stopped, String reason) implements Outcome {}

  /** Containers were stopped because the GPU under them left service; nothing was re-queued for the application. */
  public record Stopped(long atMillis, String requestKey, int containers, String reason) implements Outcome {}

  /** An elastic gang grew into idle capacity or shrank by a resize notice's reclaim. */
  public record Resized(long atMillis, String requestKey, int fromSize, int toSize, String reason)
      implements Outcome {}

  private final int maxApps;
  private final Map<AppId, List<Outcome>> byApp;
  /** Who each notice reclaims for: a {@link Decision.Preempt} does not repeat it. */
  private final Map<Long, Decision.RequestCheckpoint> notices;

  public AppHistory(int maxApps) {
    if (maxApps < 1) {
      throw new IllegalArgumentException("maxApps must be at least 1: " + maxApps);
    }
    this.maxApps = maxApps;
    this.byApp = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<AppId, List<Outcome>> eldest) {
        return size() > AppHistory.this.maxApps;
      }
    };
    this.notices = new LinkedHashMap<>(16, 0.75f, false) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<Long, Decision.RequestCheckpoint> eldest) {
        return size() > AppHistory.this.maxApps;
      }
    };
  }

  public void record(CycleResult cycle) {
    long at = cycle.timeMillis();
    for (Decision d : cycle.decisions()) {
      if (d instanceof Decision.Reject r) {
        add(r.appId(), new Rejected(at, r.requestKey(), r.reason()));
      } else if (d instanceof Decision.RequestCheckpoint n) {
        // A re-issue (extension granted or refused) keeps the notice's id; only its first issue is news.
        if (notices.put(n.noticeId(), n) == null) {
          add(n.appId(), new Noticed(at, n.requestKey(), n.noticeId(), n.allocationIds().size(),
              n.deadlineMillis(), n.forAppId(), n.forRequestKey(), n.reason(), n.targetSize()));
        }
      } else if (d instanceof Decision.CancelCheckpoint c) {
        Decision.RequestCheckpoint n = notices.remove(c.noticeId());
        add(c.appId(), new NoticeWithdrawn(at, n == null ? null : n.requestKey(), c.noticeId(), c.reason()));
      } else if (d instanceof Decision.RestartGang r) {
        add(r.appId(), new Restarted(at, r.requestKey(), r.lostAllocationIds().size(), r.allocationIds().size(),
            r.reason()));
      } else if (d instanceof Decision.Preempt p) {
        Decision.RequestCheckpoint n = notices.remove(p.noticeId());
        add(p.appId(), new Preempted(at, p.requestKey(), p.noticeId(), p.allocationIds().size(),
            n == null ? null : n.forAppId(), n == null ? null : n.forRequestKey(), p.checkpointLocation(),
            p.reason()));
      } else if (d instanceof Decision.StopContainers c) {
        add(c.appId(), new Stopped(at, null, c.allocationIds().size(), c.reason()));
      } else if (d instanceof Decision.Resize r) {
        add(r.appId(), new Resized(at, r.requestKey(), r.fromSize(), r.toSize(), r.reason()));
      }
      // Allocations, reservations and waits are state the engine still shows: nothing to remember.
    }
  }

  /** The application's outcomes, oldest first; empty if none is remembered. */
  public List<Outcome> of(AppId appId) {
    List<Outcome> events = byApp.get(appId);
    return events == null ? List.of() : List.copyOf(events);
  }

  public Optional<Outcome> last(AppId appId) {
    List<Outcome> events = of(appId);
    return events.isEmpty() ? Optional.empty() : Optional.of(events.get(events.size() - 1));
  }

  /** A copy readers on other threads may keep. */
  public Map<AppId, List<Outcome>> snapshot() {
    Map<AppId, List<Outcome>> out = new LinkedHashMap<>();
    byApp.forEach((app, events) -> out.put(app, List.copyOf(events)));
    return out;
  }

  private void add(AppId appId, Outcome outcome) {
    List<Outcome> events = byApp.computeIfAbsent(appId, a -> new ArrayList<>());
    events.add(outcome);
    if (events.size() > EVENTS_PER_APP) {
      events.remove(0);
    }
  }
}
