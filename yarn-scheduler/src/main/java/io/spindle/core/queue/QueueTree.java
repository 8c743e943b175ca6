package io.spindle.core.queue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The validated, immutable queue hierarchy. Built by {@link QueueConfigParser}. */
public final class QueueTree {

  public static final String ROOT = "root";

  private final Map<String, QueueConfig> byPath;
  private final Map<String, QueueConfig> leavesByName;

  QueueTree(Map<String, QueueConfig> byPathInDepthFirstOrder) {
    this.byPath = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(byPathInDepthFirstOrder));
    Map<String, QueueConfig> leaves = new LinkedHashMap<>();
    for (QueueConfig q : byPath.values()) {
      if (q.isLeaf()) {
        leaves.put(q.name(), q);
      }
    }
    this.leavesByName = java.util.Collections.unmodifiableMap(leaves);
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

  public List<QueueConfig> leaves() {
    return List.copyOf(leavesByName.values());
  }

  public List<QueueConfig> children(QueueConfig parent) {
    List<QueueConfig> out = new ArrayList<>(parent.children().size());
    for (String child : parent.children()) {
      out.add(byPath.get(parent.path() + "." + child));
    }
    return out;
  }

  /**
   * The leaf an application names, by full path ({@code root.eng.train}) or by leaf name ({@code train}), as
   * {@code yarn application -queue} accepts both.
   */
  public Optional<QueueConfig> leaf(String nameOrPath) {
    if (nameOrPath == null) {
      return Optional.empty();
    }
    QueueConfig byFullPath = byPath.get(nameOrPath);
    if (byFullPath != null) {
      return byFullPath.isLeaf() ? Optional.of(byFullPath) : Optional.empty();
    }
    return Optional.ofNullable(leavesByName.get(nameOrPath));
  }

  public int size() {
    return byPath.size();
  }
}
