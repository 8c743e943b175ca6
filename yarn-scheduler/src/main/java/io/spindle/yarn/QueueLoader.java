package io.spindle.yarn;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.core.queue.QueueTree;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.placement.PlacementManager;
import org.apache.hadoop.yarn.server.resourcemanager.placement.PlacementRule;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacitySchedulerConfiguration;
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
   * Creates leaf {@code name} under {@code parentPath} for an application placed there; empty when it exists now,
   * else why it cannot be created, in words.
   */
  synchronized Optional<String> create(String parentPath, String name) {
    QueueTree now = queues.tree();
    if (now.get(parentPath + "." + name).isPresent()) {
      return Optional.empty(); // Another application created it first.
    }
    Optional<String> why = now.whyNotCreatable(parentPath, name);
    if (why.isPresent()) {
      return why;
    }
    List<String> created = new ArrayList<>(now.created());
    created.add(parentPath + "." + name);
    Loaded next;
    try {
      next = read(queues.conf(), created, queues);
    } catch (IllegalArgumentException e) {
      return Optional.of(e.getMessage());
    }
    engine.reconfigure(next.tree(), next.entries());
    installInYarn(next);
    LOG.info("Created queue {}.{} on submission ({} created queues in all)", parentPath, name, created.size());
    return Optional.empty();
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
