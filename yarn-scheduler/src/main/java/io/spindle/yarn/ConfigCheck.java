package io.spindle.yarn;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import io.spindle.core.queue.QueueConfig;
import io.spindle.core.queue.QueueConfigParser;
import io.spindle.core.queue.QueueTree;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacitySchedulerConfiguration;

/**
 * {@code scripts/spindle check-config FILE}: loads a capacity-scheduler.xml offline, as Spindle's ResourceManager
 * would, and says key by key what Spindle does with it, and whether the RM would start. No cluster, no network.
 * Exit status: 0 it would start, 1 it would be refused (the key and the reason are printed), 2 the file is unreadable.
 */
public final class ConfigCheck {

  /** What Spindle does with a key. */
  enum Verdict {
    HONOURED("honoured"),
    SPINDLE("Spindle setting"),
    IGNORED("ignored"),
    NOT_YET("accepted, not honoured yet"),
    NOT_USED("not used by Spindle");

    final String words;

    Verdict(String words) {
      this.words = words;
    }
  }

  /** One key of the file and what becomes of it. */
  record Line(String key, String value, Verdict verdict, String why) {}

  /** The outcome for the whole file: the lines, and the refusal if the RM would not start. */
  record Report(List<Line> lines, QueueTree tree, String refusal) {
    boolean starts() {
      return refusal == null;
    }
  }

  /**
   * Per-queue key suffixes CapacityScheduler defines that Spindle takes but does not act on yet, with how they are
   * treated; every other per-queue CapacityScheduler key of a declared queue is honoured (the admin guide's
   * "CapacityScheduler compatibility" table is the long form).
   */
  private static final Map<String, String> NOT_YET_QUEUE_KEYS = Map.of(
      "auto-queue-creation-v2.parent-template", "created parents share their parent by 1w and create as it does");

  private static final Map<String, String> NOT_YET_GLOBAL_KEYS = Map.of(
      "workflow-priority-mappings", "not applied");

  /** Global keys Spindle itself reads. */
  private static final List<String> HONOURED_GLOBAL_KEYS = List.of("maximum-applications",
      "global-queue-max-application", "legacy-queue-mode.enabled", "maximum-am-resource-percent", "resource-calculator",
      "queue-mappings", "queue-mappings-override.enable",
      "mapping-rule-format", "mapping-rule-json", "mapping-rule-json-file",
      "auto-queue-creation-v2.queue-expiration-time");

  private ConfigCheck() {}

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  static int run(String[] args, PrintStream out, PrintStream err) {
    if (args.length != 1) {
      err.println("usage: spindle check-config CAPACITY_SCHEDULER_XML");
      return 2;
    }
    Configuration file = new Configuration(false);
    try (InputStream in = Files.newInputStream(Path.of(args[0]))) {
      Configuration read = new Configuration(false);
      read.addResource(in, args[0]);
      for (Map.Entry<String, String> e : read) { // Read now, while the stream is open.
        file.set(e.getKey(), e.getValue());
      }
    } catch (IOException | RuntimeException e) {
      err.println("spindle check-config: cannot read " + args[0] + ": " + e.getMessage());
      return 2;
    }
    Report r = check(file);
    print(r, args[0], out);
    return r.starts() ? 0 : 1;
  }

  static Report check(Configuration file) {
    Map<String, String> entries = new TreeMap<>();
    for (Map.Entry<String, String> e : file) {
      entries.put(e.getKey(), e.getValue());
    }
    QueueTree tree;
    try {
      tree = new QueueConfigParser().parse(entries);
      QueueTree parsed = tree;
      CapacitySchedulerConfiguration cs = new CapacitySchedulerConfiguration(file, false);
      QueueRules.read(parsed, cs);
      QueuePlacement.read(cs, parsed, () -> parsed);
    } catch (IllegalArgumentException e) {
      return new Report(List.of(), null, e.getMessage());
    }
    Map<String, String> ignored = new LinkedHashMap<>();
    tree.ignoredKeys().forEach(k -> ignored.put(k.key(), k.reason()));
    List<Line> lines = new ArrayList<>();
    entries.forEach((key, value) -> lines.add(classify(key, value, tree, ignored)));
    return new Report(lines, tree, null);
  }

  private static Line classify(String key, String value, QueueTree tree, Map<String, String> ignored) {
    if (ignored.containsKey(key)) {
      return new Line(key, value, Verdict.IGNORED, ignored.get(key));
    }
    if (key.startsWith("yarn.scheduler.spindle.")) {
      return new Line(key, value, Verdict.SPINDLE, "see the admin guide");
    }
    if (!key.startsWith(QueueConfigParser.PREFIX)) {
      return new Line(key, value, Verdict.NOT_USED, "not a CapacityScheduler key");
    }
    String rest = key.substring(QueueConfigParser.PREFIX.length());
    QueueConfig queue = owner(rest, tree);
    if (queue == null) {
      for (String g : NOT_YET_GLOBAL_KEYS.keySet()) {
        if (rest.equals(g)) {
          return new Line(key, value, Verdict.NOT_YET, NOT_YET_GLOBAL_KEYS.get(g));
        }
      }
      return HONOURED_GLOBAL_KEYS.contains(rest) ? new Line(key, value, Verdict.HONOURED, "")
          : new Line(key, value, Verdict.NOT_USED, "CapacityScheduler's own tuning; Spindle schedules otherwise");
    }
    String suffix = rest.substring(queue.path().length() + 1);
    if (suffix.startsWith("accessible-node-labels.")) {
      return new Line(key, value, Verdict.HONOURED, "queue " + queue.path() + ": its share of the label's nodes, "
          + "which Spindle shares by these capacities apart from the default partition");
    }
    for (Map.Entry<String, String> e : NOT_YET_QUEUE_KEYS.entrySet()) {
      if (suffix.equals(e.getKey()) || suffix.startsWith(e.getKey() + ".")) {
        return new Line(key, value, Verdict.NOT_YET, e.getValue());
      }
    }
    return new Line(key, value, Verdict.HONOURED, "queue " + queue.path());
  }

  /** The declared queue whose path {@code rest} continues longest, or {@code null} for a global key. */
  private static QueueConfig owner(String rest, QueueTree tree) {
    for (int dot = rest.lastIndexOf('.'); dot > 0; dot = rest.lastIndexOf('.', dot - 1)) {
      QueueConfig q = tree.get(rest.substring(0, dot)).orElse(null);
      if (q != null) {
        return q;
      }
    }
    return null;
  }

  private static void print(Report r, String file, PrintStream out) {
    if (!r.starts()) {
      out.println("REFUSED: a ResourceManager with Spindle would not start with " + file + ":");
      out.println("  " + r.refusal());
      return;
    }
    int width = r.lines().stream().mapToInt(l -> l.key().length()).max().orElse(10);
    for (Verdict v : Verdict.values()) {
      List<Line> of = r.lines().stream().filter(l -> l.verdict() == v).toList();
      if (of.isEmpty()) {
        continue;
      }
      out.println(v.words + " (" + of.size() + "):");
      for (Line l : of) {
        out.printf("  %-" + width + "s = %s%s%n", l.key(), l.value(), l.why().isEmpty() ? "" : "   # " + l.why());
      }
    }
    List<String> leaves = r.tree().leaves().stream().map(QueueConfig::path).toList();
    out.println("STARTS: a ResourceManager with Spindle would start with " + file + ": " + r.tree().size()
        + " queues, leaves " + leaves);
  }
}
