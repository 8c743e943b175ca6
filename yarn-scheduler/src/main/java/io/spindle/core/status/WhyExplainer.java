package io.spindle.core.status;

import io.spindle.core.engine.EngineStatus;
import io.spindle.core.model.AppId;
import io.spindle.core.model.NodeId;
import io.spindle.core.status.AppHistory.NoticeWithdrawn;
import io.spindle.core.status.AppHistory.Noticed;
import io.spindle.core.status.AppHistory.Outcome;
import io.spindle.core.status.AppHistory.Preempted;
import io.spindle.core.status.AppHistory.Rejected;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Puts the engine's own reasons for one application into a paragraph: the wait reason of each pending request (the
 * text of its last {@code Wait} decision), the nodes held for a gang and when it should start, and what the history
 * remembers (rejections, notices, preemptions). It invents no reason of its own, so {@code why} never disagrees with
 * what the engine did.
 */
public final class WhyExplainer {

  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'")
      .withZone(ZoneOffset.UTC);

  private WhyExplainer() {}

  /**
   * @param driverNotes reasons the driver holds a request back before the engine sees it (e.g. a gang whose
   *     members have not all been asked for yet); may be empty
   */
  public static Explanation explain(AppId appId, EngineStatus status, List<Outcome> history,
      List<String> driverNotes) {
    return explain(appId, status, history, driverNotes, List.of());
  }

  /**
   * @param driverEvents what the driver saw happen to the application that the engine cannot know, as sentences
   *     (e.g. its ApplicationMaster restarting its gang after a member failed); told after the engine's history
   */
  public static Explanation explain(AppId appId, EngineStatus status, List<Outcome> history,
      List<String> driverNotes, List<String> driverEvents) {
    Optional<EngineStatus.App> known = status.app(appId);
    Optional<Rejected> rejected = lastOf(history, Rejected.class);
    if (rejected.isPresent()) {
      Rejected r = rejected.get();
      return new Explanation(appId, Explanation.State.REJECTED, appId + " was rejected at " + time(r.atMillis())
          + ": " + (r.requestKey() == null ? "" : "its request '" + r.requestKey() + "' ") + r.reason()
          + ". It can never be scheduled as asked: change the request (or ask the admin about the queue) and submit"
          + " again.");
    }
    if (known.isEmpty()) {
      return new Explanation(appId, Explanation.State.UNKNOWN, "Spindle has no application " + appId
          + ": it has finished, was never submitted, or has not reached the scheduler yet.");
    }
    EngineStatus.App app = known.get();
    List<String> sentences = new ArrayList<>();
    sentences.add(appId + " (user " + app.user() + ", queue " + app.queue() + ") "
        + (app.containers() == 0 ? "has no containers running" : "runs " + app.containers() + " container"
        + (app.containers() == 1 ? "" : "s") + " holding " + app.usage()) + ".");
    Explanation.State state = app.requests().isEmpty() && driverNotes.isEmpty() ? Explanation.State.RUNNING
        : Explanation.State.PENDING;
    Optional<Outcome> last = history.isEmpty() ? Optional.empty() : Optional.of(history.get(history.size() - 1));
    if (last.orElse(null) instanceof Noticed n && n.targetSize() > 0) {
      state = Explanation.State.CHECKPOINTING;
      sentences.add("At " + time(n.atMillis()) + " Spindle asked its elastic gang '" + n.requestKey() + "' to give "
          + "back " + n.containers() + " of the members it grew by, by " + time(n.deadlineMillis())
          + forWhom(n.forAppId(), n.forRequestKey()) + ": it runs on with " + n.targetSize() + " members, after a"
          + " checkpoint (" + n.reason() + ").");
    } else if (last.orElse(null) instanceof Noticed n) {
      state = Explanation.State.CHECKPOINTING;
      sentences.add("At " + time(n.atMillis()) + " Spindle asked it to checkpoint " + n.containers() + " container"
          + (n.containers() == 1 ? "" : "s") + " of request '" + n.requestKey() + "' by " + time(n.deadlineMillis())
          + forWhom(n.forAppId(), n.forRequestKey()) + "; they are taken back then unless the notice is withdrawn ("
          + n.reason() + ").");
    }
    Optional<Preempted> preempted = lastOf(history, Preempted.class);
    if (preempted.isPresent()) {
      Preempted p = preempted.get();
      boolean waitsAgain = app.requests().stream().anyMatch(q -> q.requestKey().equals(p.requestKey()));
      if (waitsAgain && state == Explanation.State.PENDING) {
        state = Explanation.State.PREEMPTED;
      }
      sentences.add("At " + time(p.atMillis()) + " Spindle preempted " + p.containers() + " of its containers"
          + " (request '" + p.requestKey() + "')"
          + forWhom(p.forAppId(), p.forRequestKey()) + ": " + p.reason() + "."
          + (p.checkpointLocation() == null ? "" : " It resumes from " + p.checkpointLocation() + ".")
          + (waitsAgain ? " The request was re-queued and waits to be placed again." : ""));
    }
    Optional<AppHistory.Restarted> restarted = lastOf(history, AppHistory.Restarted.class);
    if (restarted.isPresent()) {
      AppHistory.Restarted r = restarted.get();
      sentences.add(r.lost() == 0
          ? "At " + time(r.atMillis()) + " Spindle stopped its gang '" + r.requestKey() + "' (" + r.stopped()
              + " member" + (r.stopped() == 1 ? "" : "s") + ") and re-queued it whole: " + r.reason() + "."
          : "At " + time(r.atMillis()) + " its gang '" + r.requestKey() + "' lost " + r.lost() + " member"
              + (r.lost() == 1 ? "" : "s") + " to the cluster; Spindle stopped the other " + r.stopped()
              + " and re-queued the gang whole (" + r.reason() + ").");
    }
    Optional<AppHistory.Stopped> stopped = lastOf(history, AppHistory.Stopped.class);
    if (stopped.isPresent()) {
      AppHistory.Stopped s = stopped.get();
      sentences.add("At " + time(s.atMillis()) + " Spindle stopped " + s.containers() + " of its containers: "
          + s.reason() + ".");
    }
    Optional<AppHistory.Resized> resized = lastOf(history, AppHistory.Resized.class);
    if (resized.isPresent()) {
      AppHistory.Resized r = resized.get();
      sentences.add("At " + time(r.atMillis()) + " its elastic gang '" + r.requestKey() + "' "
          + (r.toSize() > r.fromSize() ? "grew" : "shrank") + " from " + r.fromSize() + " to " + r.toSize()
          + " members (" + r.reason() + ").");
    }
    sentences.addAll(driverEvents);
    if (last.orElse(null) instanceof NoticeWithdrawn w) {
      sentences.add("A checkpoint notice was withdrawn at " + time(w.atMillis()) + ": " + w.reason() + ".");
    }
    for (EngineStatus.Request r : app.requests()) {
      sentences.add(describe(r) + " is pending: " + r.reason() + "." + reservation(r, status.timeMillis())
          + expectedStart(r.expectedStart(), status.timeMillis()));
    }
    if (!app.requests().isEmpty()) {
      usageHistory(app.queue(), status).ifPresent(sentences::add);
    }
    if (app.ordering() != null && !app.requests().isEmpty()) {
      sentences.add("In order: " + app.ordering() + ".");
    }
    for (String note : driverNotes) {
      sentences.add("Held back before scheduling: " + note + ".");
    }
    return new Explanation(appId, state, String.join(" ", sentences));
  }

  /**
   * The usage-history reason, when history changed how idle capacity was shared on the queue's path: the queue (or
   * the queue above it) that history weighed, by how much and on what history. Empty when it changed nothing.
   */
  static Optional<String> usageHistory(String queue, EngineStatus status) {
    java.util.Map<String, io.spindle.core.engine.QueueSnapshot> byPath = new java.util.HashMap<>();
    status.queues().forEach(q -> byPath.put(q.path(), q));
    List<String> parts = new ArrayList<>();
    for (String path = queue; path != null; path = path.contains(".") ? path.substring(0, path.lastIndexOf('.'))
        : null) {
      io.spindle.core.engine.QueueSnapshot q = byPath.get(path);
      if (q == null || q.usageHistory() == null || Math.abs(q.historyFactor() - 1.0) < 1e-9) {
        continue;
      }
      parts.add(String.format(java.util.Locale.ROOT, "%s's weight for idle capacity is x%.2f because it borrowed %s"
          + " its siblings lately (%.1f GPU-hours above its guarantee, decayed)", path, q.historyFactor(),
          q.historyFactor() < 1 ? "more than" : "less than", q.usageHistory().gpuSeconds() / 3600));
    }
    return parts.isEmpty() ? Optional.empty()
        : Optional.of("Usage history: " + String.join("; ", parts) + "; guarantees are not affected.");
  }

  private static String describe(EngineStatus.Request r) {
    String what = r.outstanding() + " x " + r.shape();
    if (r.spec().gang()) {
      String where = r.spec().topologyLevel() == null ? ""
          : (r.spec().required() ? ", all within one " : ", preferably within one ") + r.spec().topologyLevel();
      return "Its gang '" + r.requestKey() + "' (" + what + where + ")";
    }
    return "Its request '" + r.requestKey() + "' (" + what + ")";
  }

  private static String reservation(EngineStatus.Request r, long nowMillis) {
    EngineStatus.Held h = r.reservation();
    if (h == null) {
      return "";
    }
    String start = h.projectedStartMillis() == Long.MAX_VALUE
        ? "no estimated start, because what runs there declared no run time"
        : "estimated start " + time(h.projectedStartMillis())
            + (h.projectedStartMillis() > nowMillis ? " (in " + (h.projectedStartMillis() - nowMillis) / 1000 + " s)"
            : "");
    String nodes = h.nodeIds().stream().map(NodeId::value).collect(Collectors.joining(", "));
    return " Node" + (h.nodeIds().size() == 1 ? " " : "s ") + nodes + " in " + h.subtree()
        + (h.nodeIds().size() == 1 ? " is" : " are") + " reserved for it since " + time(h.sinceMillis()) + "; "
        + start + ".";
  }

  /** When the drain of what runs is expected to leave room for it, and from what (see {@code StartEstimates}). */
  static String expectedStart(EngineStatus.ExpectedStart e, long nowMillis) {
    if (!e.known()) {
      return " No expected start: some work it waits for declared no run time and none has been learned.";
    }
    String basis = e.confidence() == EngineStatus.StartConfidence.EXACT ? "from declared run times"
        : "estimated from run times learned from finished work";
    if (e.millis() <= nowMillis) {
      return " Room for it is free now (" + basis + "); it waits only for the reason above.";
    }
    return " Expected to start around " + time(e.millis()) + " (in " + duration(e.millis() - nowMillis) + ", "
        + basis + ").";
  }

  /** A wait for people: seconds, minutes, hours or days. */
  static String duration(long millis) {
    long s = Math.max(0, millis / 1000);
    if (s < 120) {
      return s + " s";
    }
    if (s < 2 * 3600) {
      return s / 60 + " min";
    }
    return s < 2 * 86_400 ? s / 3600 + " h " + s % 3600 / 60 + " min" : s / 86_400 + " days " + s % 86_400 / 3600 + " h";
  }

  private static String forWhom(AppId appId, String requestKey) {
    return appId == null ? "" : " to make room for request '" + requestKey + "' of " + appId;
  }

  static String time(long millis) {
    return TIME.format(Instant.ofEpochMilli(millis));
  }

  private static <T extends Outcome> Optional<T> lastOf(List<Outcome> history, Class<T> type) {
    for (int i = history.size() - 1; i >= 0; i--) {
      if (type.isInstance(history.get(i))) {
        return Optional.of(type.cast(history.get(i)));
      }
    }
    return Optional.empty();
  }
}
