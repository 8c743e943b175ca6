package io.spindle.core.queue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The validated, immutable queue hierarchy. Built by {@link QueueConfigParser}. */
public final class QueueTree {

  public static final String ROOT = "root";

  private final Map<String, QueueConfig> byPath;
  private final Map<String, List<QueueConfig>> byName;
  private final List<IgnoredKey> ignoredKeys;
  private final Map<String, AutoCreation> autoCreating;
  private final List<String> created;

  QueueTree(Map<String, QueueConfig> byPathInDepthFirstOrder, List<IgnoredKey> ignoredKeys,
      Map<String, AutoCreation> autoCreating, java.util.Collection<String> created) {
    this.autoCreating = Map.copyOf(autoCreating);
    this.created = List.copyOf(created);
    this.byPath = Collections.unmodifiableMap(new LinkedHashMap<>(byPathInDepthFirstOrder));
    Map<String, List<QueueConfig>> names = new LinkedHashMap<>();
    for (QueueConfig q : byPath.values()) {
      names.computeIfAbsent(q.name(), n -> new ArrayList<>()).add(q);
    }
    names.replaceAll((n, list) -> List.copyOf(list));
    this.byName = Collections.unmodifiableMap(names);
    this.ignoredKeys = List.copyOf(ignoredKeys);
  }

  /**
   * A key of the configuration that names a queue no {@code .queues} list declares, which Spindle ignores as
   * CapacityScheduler does (the keys of a queue that was removed, or of the shipped {@code root.default} after an
   * admin replaced it). Kept so that a typo is shown to the admin, not lost.
   *
   * @param queue the undeclared queue the key aims at
   * @param nearest the declared queue whose path is closest to it, the likely intended one
   */
  public record IgnoredKey(String key, String queue, String nearest) {
    /** Why the key is ignored, without the key. */
    public String reason() {
      return "queue '" + queue + "' is not declared by any .queues list, so the key is ignored"
          + (nearest == null ? "" : " (did you mean '" + nearest + "'?)");
    }

    public String describe() {
      return key + ": " + reason();
    }
  }

  /** What a queue name given by a user or an admin command is. */
  public sealed interface Lookup {
    record Leaf(QueueConfig queue) implements Lookup {}

    record Parent(QueueConfig queue) implements Lookup {}

    /** A short name that two or more queues share: only a full path says which. */
    record Ambiguous(String name, List<String> paths) implements Lookup {}

    record Unknown(String name) implements Lookup {}
  }

  public QueueConfig root() {
    return byPath.get(ROOT);
  }

  public Optional<QueueConfig> get(String path) {
    return Optional.ofNullable(byPath.get(path));
  }

  /** Every queue, parents before their children, siblings in configuration order. */
  public List<QueueConfig> all() {
    return List.copyOf(byPath.values());
  }

  /** The queues applications can be submitted to (a managed parent that has created none yet is not one). */
  public List<QueueConfig> leaves() {
    return byPath.values().stream().filter(this::isLeaf).toList();
  }

  private boolean isLeaf(QueueConfig q) {
    return q.isLeaf() && !autoCreating.containsKey(q.path());
  }

  /** How {@code parentPath} creates leaf queues on submission; empty if it does not. */
  public Optional<AutoCreation> autoCreation(String parentPath) {
    return Optional.ofNullable(autoCreating.get(parentPath));
  }

  /** The leaves created on submission rather than declared, in creation order. */
  public List<String> created() {
    return created;
  }

  /**
   * Why no leaf {@code name} can be created under {@code parentPath} now, in words; empty if it can (the tree with
   * it: the configuration {@link QueueConfigParser#withCreated} gives, parsed).
   */
  public Optional<String> whyNotCreatable(String parentPath, String name) {
    AutoCreation auto = autoCreating.get(parentPath);
    if (auto == null) {
      return Optional.of("queue '" + parentPath + "' does not create queues (neither "
          + AutoCreation.LEGACY_ENABLED + " nor " + AutoCreation.FLEXIBLE_ENABLED + " is set)");
    }
    if (!QueueConfigParser.isQueueName(name)) {
      return Optional.of("'" + name + "' is not a queue name: letters, digits, '_' and '-' only");
    }
    long made = created.stream().filter(p -> p.startsWith(parentPath + ".")).count();
    if (made >= auto.maxQueues()) {
      return Optional.of("queue '" + parentPath + "' already holds " + made + " auto-created queues, its limit");
    }
    if (auto.failBeyondCapacity() && auto.templateCapacity() instanceof Capacity.Percent p) {
      double given = children(byPath.get(parentPath)).stream()
          .mapToDouble(k -> k.capacity() instanceof Capacity.Percent kp ? kp.percent() : 0).sum();
      if (given + p.percent() > 100 + 1e-6) {
        return Optional.of("the guarantees of the queues under '" + parentPath + "' would exceed its capacity");
      }
    }
    return Optional.empty();
  }

  /**
   * What creating the leaf {@code path} on a submission takes: its missing parents, top down, then the leaf; or why it
   * cannot be created, in words. Missing parents are created only below a flexible queue (CapacityScheduler's v2
   * auto-creation), at most its {@link AutoCreation#maxDepth} levels, parents and leaf together.
   */
  public Creation creation(String path) {
    List<String> missing = new ArrayList<>();
    String existing = nearestExisting(path);
    for (String q = path; !q.equals(existing); q = q.substring(0, q.lastIndexOf('.'))) {
      missing.add(0, q);
    }
    if (missing.isEmpty()) {
      return new Creation(List.of(), "queue '" + path + "' exists");
    }
    String first = missing.get(0);
    Optional<String> why = whyNotCreatable(existing, first.substring(existing.length() + 1));
    if (why.isPresent()) {
      return new Creation(List.of(), why.get());
    }
    AutoCreation auto = autoCreating.get(existing);
    if (missing.size() > 1 && auto.mode() != AutoCreation.Mode.FLEXIBLE) {
      return new Creation(List.of(), "queue '" + existing + "' creates leaf queues only (" + AutoCreation.LEGACY_ENABLED
          + "); parent queues are created under a queue with " + AutoCreation.FLEXIBLE_ENABLED);
    }
    if (missing.size() > auto.maxDepth()) {
      return new Creation(List.of(), "'" + path + "' would create " + missing.size() + " levels below '" + existing
          + "', more than its " + AutoCreation.FLEXIBLE_MAX_DEPTH + " (" + auto.maxDepth() + ")");
    }
    for (String q : missing) {
      if (!QueueConfigParser.isQueueName(q.substring(q.lastIndexOf('.') + 1))) {
        return new Creation(List.of(), "'" + q.substring(q.lastIndexOf('.') + 1) + "' is not a queue name: letters, "
            + "digits, '_' and '-' only");
      }
    }
    return new Creation(missing, null);
  }

  /** Whether the queue nearest above the missing {@code path} creates queues: a submission there creates it. */
  public boolean createsBelow(String path) {
    return !byPath.containsKey(path) && autoCreating.containsKey(nearestExisting(path));
  }

  private String nearestExisting(String path) {
    String q = path;
    while (q.contains(".") && !byPath.containsKey(q)) {
      q = q.substring(0, q.lastIndexOf('.'));
    }
    return q;
  }

  /** The queues a submission creates, top down, or why it cannot ({@code refusal}, else {@code null}). */
  public record Creation(List<String> queues, String refusal) {
    public Creation {
      queues = List.copyOf(queues);
    }
  }

  public List<QueueConfig> children(QueueConfig parent) {
    List<QueueConfig> out = new ArrayList<>(parent.children().size());
    for (String child : parent.children()) {
      out.add(byPath.get(parent.path() + "." + child));
    }
    return out;
  }

  /**
   * A queue by full path ({@code root.eng.train}) or by short name ({@code train}), as {@code yarn application
   * -queue} accepts both; a short name two queues share is ambiguous, as in CapacityScheduler.
   */
  public Lookup lookup(String nameOrPath) {
    if (nameOrPath == null) {
      return new Lookup.Unknown(null);
    }
    QueueConfig q = byPath.get(nameOrPath);
    if (q == null) {
      List<QueueConfig> named = byName.getOrDefault(nameOrPath, List.of());
      if (named.size() > 1) {
        return new Lookup.Ambiguous(nameOrPath, named.stream().map(QueueConfig::path).toList());
      }
      q = named.isEmpty() ? null : named.get(0);
    }
    if (q == null) {
      return new Lookup.Unknown(nameOrPath);
    }
    return isLeaf(q) ? new Lookup.Leaf(q) : new Lookup.Parent(q);
  }

  /** The leaf an application names, by full path or by a short name no other queue has. */
  public Optional<QueueConfig> leaf(String nameOrPath) {
    return lookup(nameOrPath) instanceof Lookup.Leaf l ? Optional.of(l.queue()) : Optional.empty();
  }

  /** Why {@code nameOrPath} is not a leaf an application can be submitted to, in words; empty if it is one. */
  public Optional<String> whyNotALeaf(String nameOrPath) {
    Lookup l = lookup(nameOrPath);
    List<String> leaves = leaves().stream().map(QueueConfig::path).toList();
    if (l instanceof Lookup.Parent) {
      return Optional.of("queue '" + nameOrPath + "' is a parent queue; submit to one of the leaf queues "
          + firstFew(leaves));
    } else if (l instanceof Lookup.Ambiguous a) {
      return Optional.of("queue name '" + nameOrPath + "' is ambiguous: it names " + String.join(" and ", a.paths())
          + "; submit to the full path");
    } else if (l instanceof Lookup.Unknown) {
      return Optional.of("unknown queue '" + nameOrPath + "'; leaf queues are " + firstFew(leaves));
    }
    return Optional.empty();
  }

  /** Keys the parser ignored because they name undeclared queues, in key order. */
  public List<IgnoredKey> ignoredKeys() {
    return ignoredKeys;
  }

  public int size() {
    return byPath.size();
  }

  /** A list short enough to read in a log line or an rmadmin answer, however many queues there are. */
  static String firstFew(java.util.Collection<String> names) {
    List<String> some = names.stream().limit(20).toList();
    return some.size() == names.size() ? some.toString()
        : some.toString().replace("]", ", … (" + names.size() + " in all)]");
  }
}
