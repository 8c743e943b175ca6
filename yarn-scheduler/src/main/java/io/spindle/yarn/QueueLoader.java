package io.spindle.yarn;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;
import io.spindle.core.queue.AutoCreation;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.core.queue.QueueTree;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.placement.PlacementManager;
import org.apache.hadoop.yarn.server.resourcemanager.placement.PlacementRule;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacitySchedulerConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.QueuePath;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts a queue configuration in force everywhere at once: the engine's tree, YARN's queues and their rules, the
 * placement rule of the queue mappings and the running-application limits. Two things load one: a refresh
 * ({@code yarn rmadmin -refreshQueues}) and a leaf queue created on submission, which is the configuration in force
 * plus that leaf (recorded under {@link QueueConfigParser#AUTO_CREATED}, so the engine, a refresh and a journal replay
 * all build the same tree from configuration alone). Everything is read and checked before anything switches, so a
 * refused configuration leaves the previous one in force. One load at a time.
 */
final class QueueLoader {

  private static final Logger LOG = LoggerFactory.getLogger(QueueLoader.class);

  /** A read and checked configuration, not yet in force. */
  record Loaded(Configuration conf, Map<String, String> entries, QueueTree tree, Map<String, QueueRules> rules,
      Optional<QueuePlacement> placement) {}

  private final QueueRegistry queues;
  private final EngineRunner engine;
  private final AppActivation parallel;
  private final Consumer<ApplicationId> startHeld;
  private final Supplier<RMContext> rm;
  /** Created flexible leaves without an application, since when (see {@link #expireIdle}). */
  private final Map<String, Long> idleSince = new HashMap<>();
  private long lastExpiryCheckMillis;

  QueueLoader(QueueRegistry queues, EngineRunner engine, AppActivation parallel, Consumer<ApplicationId> startHeld,
      Supplier<RMContext> rm) {
    this.queues = queues;
    this.engine = engine;
    this.parallel = parallel;
    this.startHeld = startHeld;
    this.rm = rm;
  }

  /**
   * Reads {@code schedulerConf} with the leaves {@code created} on submission so far.
   *
   * @throws IllegalArgumentException naming the key and the reason, for what Spindle or CapacityScheduler refuses
   */
  static Loaded read(Configuration schedulerConf, List<String> created, QueueRegistry queues) {
    Map<String, String> entries = QueueConfigParser.withCreated(SchedulerSettings.entries(schedulerConf), created);
    QueueTree tree = new QueueConfigParser().parse(entries);
    Map<String, QueueRules> rules = queues.check(tree, schedulerConf);
    Optional<QueuePlacement> placement = QueuePlacement.read(new CapacitySchedulerConfiguration(schedulerConf, false),
        tree, queues::tree);
    return new Loaded(schedulerConf, entries, tree, rules, placement);
  }

  /** The configuration a refresh gives, with the leaves created since kept where their parents still create. */
  synchronized QueueTree reload(Configuration schedulerConf) {
    Loaded next = read(schedulerConf, queues.tree().created(), queues);
    engine.reconfigure(next.tree(), next.entries());
    installInYarn(next);
    return next.tree();
  }

  /**
   * Creates the leaf {@code leafPath} for an application placed there, with its missing parents where a flexible
   * queue above creates them ({@link QueueTree#creation}); empty when it exists now, else why it cannot be created.
   */
  synchronized Optional<String> create(String leafPath) {
    QueueTree now = queues.tree();
    if (now.get(leafPath).isPresent()) {
      return Optional.empty(); // Another application created it first.
    }
    QueueTree.Creation plan = now.creation(leafPath);
    if (plan.refusal() != null) {
      return Optional.of(plan.refusal());
    }
    List<String> created = new ArrayList<>(now.created());
    created.addAll(plan.queues());
    Loaded next;
    try {
      next = read(queues.conf(), created, queues);
    } catch (IllegalArgumentException e) {
      return Optional.of(e.getMessage());
    }
    engine.reconfigure(next.tree(), next.entries());
    installInYarn(next);
    LOG.info("Created queue{} {} on submission ({} created queues in all)", plan.queues().size() > 1 ? "s" : "",
        plan.queues(), created.size());
    return Optional.empty();
  }

  /**
   * CapacityScheduler's {@code AutoCreatedQueueDeletionPolicy}, which Spindle runs itself where the admin enabled it
   * ({@code yarn.resourcemanager.scheduler.monitor.enable} and the policy in
   * {@code yarn.resourcemanager.scheduler.monitor.policies}): a leaf created under a flexible (v2) parent that has had
   * no application for {@code yarn.scheduler.capacity.auto-queue-creation-v2.queue-expiration-time} seconds (300) is
   * removed, unless its {@code auto-queue-creation-v2.queue-auto-removal.enable} is false. Legacy created leaves stay,
   * as in CapacityScheduler. Called from the scheduling loop.
   *
   * @param busy leaf paths that hold an application now
   */
  synchronized void expireIdle(Collection<SchedulerApplication<SpindleAppAttempt>> apps, long nowMillis) {
    if (nowMillis - lastExpiryCheckMillis < 1_000) {
      return; // Once a second is plenty for a limit in minutes, and keeps the scheduling loop's cycles lean.
    }
    lastExpiryCheckMillis = nowMillis;
    Set<String> busy = new HashSet<>();
    apps.forEach(app -> busy.add(((SpindleQueue) app.getQueue()).path()));
    QueueTree tree = queues.tree();
    Configuration conf = queues.conf();
    if (tree == null || tree.created().isEmpty() || !deletionPolicyEnabled(conf)) {
      idleSince.clear();
      return;
    }
    CapacitySchedulerConfiguration cs = new CapacitySchedulerConfiguration(conf, false);
    long expiryMillis = cs.getAutoExpiredDeletionTime() * 1000;
    List<String> expired = new ArrayList<>();
    idleSince.keySet().retainAll(tree.created());
    for (String leaf : tree.created()) {
      if (tree.autoCreation(leaf).isPresent()) {
        continue; // A created parent goes with its last created child.
      }
      String parent = leaf.substring(0, leaf.lastIndexOf('.'));
      boolean flexible = tree.autoCreation(parent).map(a -> a.mode() == AutoCreation.Mode.FLEXIBLE).orElse(false);
      if (!flexible || busy.contains(leaf) || !cs.isAutoExpiredDeletionEnabled(new QueuePath(leaf))) {
        idleSince.remove(leaf);
        continue;
      }
      long since = idleSince.computeIfAbsent(leaf, l -> nowMillis);
      if (nowMillis - since >= expiryMillis) {
        expired.add(leaf);
      }
    }
    if (expired.isEmpty()) {
      return;
    }
    List<String> kept = new ArrayList<>(tree.created());
    kept.removeAll(expired);
    // Created parents left without a created child go too, deepest first.
    for (int i = kept.size() - 1; i >= 0; i--) {
      String q = kept.get(i);
      if (tree.autoCreation(q).isPresent() && tree.created().contains(q)
          && kept.stream().noneMatch(k -> k.startsWith(q + "."))) {
        expired.add(kept.remove(i));
      }
    }
    try {
      Loaded next = read(conf, kept, queues);
      engine.reconfigure(next.tree(), next.entries());
      installInYarn(next);
      expired.forEach(idleSince::remove);
      LOG.info("Removed auto-created queues {}: no application for {} s", expired, expiryMillis / 1000);
    } catch (IllegalArgumentException e) {
      LOG.warn("Could not remove idle auto-created queues {}: {}", expired, e.getMessage());
    }
  }

  private static boolean deletionPolicyEnabled(Configuration conf) {
    if (!conf.getBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_ENABLE_MONITORS)) {
      return false;
    }
    for (String policy : conf.getTrimmedStrings(YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES)) {
      if (policy.endsWith(".AutoCreatedQueueDeletionPolicy")) {
        return true;
      }
    }
    return false;
  }

  /** YARN's side of {@code next}: queues, placement rule, limits; the engine has it already. */
  void installInYarn(Loaded next) {
    queues.install(next.tree(), next.conf(), next.rules());
    PlacementManager placement = rm.get() == null ? null : rm.get().getQueuePlacementManager();
    if (placement != null) {
      placement.updateRules(next.placement().map(p -> List.<PlacementRule>of(p)).orElse(List.of()));
    }
    next.placement().ifPresent(p -> LOG.info("Queue mappings in force: {} rule(s)", p.size()));
    parallel.configure(next.conf()).forEach(startHeld);
  }
}
