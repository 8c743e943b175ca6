package io.spindle.core.queue;

import static io.spindle.core.queue.QueueConfigParser.PREFIX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.spindle.core.model.ResourceVector;
import io.spindle.fuzz.FuzzInput;
import io.spindle.fuzz.HostileInput;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Hostile capacity-scheduler.xml: {@link QueueConfigParser#parse} either returns a tree the engine can use or throws
 * a {@link QueueConfigException} whose message starts with a key of the configuration; nothing else, whatever the
 * admin (or a broken configuration store) hands it. Inputs are garbage maps, and valid trees with a few values,
 * keys or names broken, some of them very deep or very wide.
 */
class QueueConfigFuzzTest {

  private static final String TARGET = "capacity-scheduler parser";
  private static final List<String> SUFFIXES = List.of("queues", "capacity", "maximum-capacity", "user-limit-factor",
      "spindle.weight", "spindle.preemption.max-extensions", "spindle.preemption.max-extension-seconds",
      "spindle.preemption.min-runtime-seconds", "spindle.preemption.delay-seconds", "spindle.unknown", "state", "acl_submit_applications", "ordering-policy", "accessible-node-labels.gpu.capacity");
  private static final List<String> CAPACITIES = List.of("0", "50", "100", "100.0", "33.333", "50%", "101", "-1",
      "[memory=1024,vcores=1]", "[memory=1Ti,vcores=2,yarn.io/gpu=8]", "[memory=-1]", "[vcores=1,vcores=2]",
      "[memory=9223372036854775807Ti]", "[yarn.io/gpu=9223372036854775807]", "[memory=1", "[]", "[=]", "[fpga=1]",
      "2w", "1e2", ".5", "5.", "+50", "[memory-mb=1,VCORES=1]");

  @Test
  void randomConfigurationsAreParsedOrRefusedWithTheirKey() {
    HostileInput.Tally tally = HostileInput.run(TARGET, QueueConfigFuzzTest::check);
    assertThat(tally.rejected()).as("bad configurations tried").isPositive();
    assertThat(tally.accepted()).as("good configurations tried").isPositive();
  }

  /** Found by this test: a chain of a few thousand queues ran the parser's recursion out of stack. */
  @Test
  void aTreeDeeperThanTheLimitIsRefusedWithTheKeyWhereItGoesTooDeep() {
    Map<String, String> conf = deepChain(2_000);
    assertThatThrownBy(() -> new QueueConfigParser().parse(conf)).isInstanceOfSatisfying(QueueConfigException.class,
        e -> {
          assertThat(e.key()).isEqualTo(PREFIX + "root" + ".q".repeat(QueueConfigParser.MAX_DEPTH) + ".queues");
          assertThat(e.getMessage()).contains("deeper than 64 levels");
        });
    assertThat(new QueueConfigParser().parse(deepChain(QueueConfigParser.MAX_DEPTH)).size())
        .isEqualTo(QueueConfigParser.MAX_DEPTH + 1);
  }

  @FuzzTest(maxExecutions = 10_000)
  void coverageGuided(byte[] bytes) {
    HostileInput.once(TARGET, QueueConfigFuzzTest::check, bytes);
  }

  @AfterAll
  static void report() {
    HostileInput.report(TARGET);
  }

  static String check(FuzzInput in) {
    Map<String, String> conf = switch (in.below(16)) {
      case 0, 3, 4 -> garbage(in);
      case 1 -> deepChain(in);
      case 2 -> mutate(in, wide(in));
      default -> mutate(in, validTree(in));
    };
    QueueTree tree;
    try {
      tree = new QueueConfigParser().parse(conf);
    } catch (QueueConfigException e) {
      assertThat(e.getMessage()).startsWith(e.key() + ": ");
      assertThat(e.key()).startsWith(PREFIX);
      boolean named = conf.containsKey(e.key()) || e.key().endsWith(".queues") || e.key().endsWith(".capacity");
      assertThat(named).as("the key %s is in the configuration or one it needs", e.key()).isTrue();
      return HostileInput.rejected(e, QueueConfigException.class);
    }
    // Accepted: the engine must be able to use it.
    assertThat(tree.root()).isNotNull();
    assertThat(tree.leaves()).isNotEmpty();
    Map<String, ResourceVector> demand = new HashMap<>();
    for (QueueConfig leaf : tree.leaves()) {
      demand.put(leaf.path(), ResourceVector.of(in.longIn(0, 1 << 20), in.longIn(0, 512), in.longIn(0, 64)));
    }
    FairShareCalculator.compute(tree, ResourceVector.of(1 << 22, 1024, 128), demand);
    return HostileInput.ACCEPTED;
  }

  private static Map<String, String> garbage(FuzzInput in) {
    Map<String, String> conf = new LinkedHashMap<>();
    int n = in.below(12);
    for (int i = 0; i < n; i++) {
      String key = in.bool() ? in.text(40)
          : PREFIX + "root" + (in.bool() ? "" : "." + in.text(8)) + "." + in.pick(SUFFIXES);
      conf.put(key, in.bool() ? in.text(30) : in.valueOr(CAPACITIES));
    }
    return conf;
  }

  /** A chain of queues, deep enough to exhaust a thread's stack if the parser recursed without bound. */
  private static Map<String, String> deepChain(FuzzInput in) {
    return deepChain(in.pick(List.of(2, 10, 63, 64, 65, 100, in.intIn(1, 300))));
  }

  private static Map<String, String> deepChain(int depth) {
    Map<String, String> conf = new HashMap<>();
    StringBuilder path = new StringBuilder("root");
    for (int i = 0; i < depth; i++) {
      conf.put(PREFIX + path + ".queues", "q");
      path.append(".q");
      conf.put(PREFIX + path + ".capacity", "100");
    }
    return conf;
  }

  /** Root with thousands of children: quadratic work per queue would show as a hang. */
  private static Map<String, String> wide(FuzzInput in) {
    int n = in.pick(List.of(100, 1_000, in.intIn(1, 3_000)));
    Map<String, String> conf = new HashMap<>();
    List<String> kids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      kids.add("w" + i);
      conf.put(PREFIX + "root.w" + i + ".capacity", i == 0 ? "100" : "0");
    }
    conf.put(PREFIX + "root.queues", String.join(",", kids));
    return conf;
  }

  /** A valid tree: percentages that add up, or absolute capacities that fit. */
  static Map<String, String> validTree(FuzzInput in) {
    Map<String, String> conf = new LinkedHashMap<>();
    int[] names = {0};
    addChildren(in, conf, "root", 0, in.bool(), names);
    return conf;
  }

  private static void addChildren(FuzzInput in, Map<String, String> conf, String path, int depth, boolean absolute,
      int[] names) {
    int n = depth == 0 ? in.intIn(1, 4) : in.pick(List.of(1, 2, 3, in.intIn(1, 60)));
    List<String> kids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      kids.add("q" + names[0]++);
    }
    conf.put(PREFIX + path + ".queues", String.join(",", kids));
    int left = 100;
    for (int i = 0; i < n; i++) {
      String kid = path + "." + kids.get(i);
      int share = i == n - 1 ? left : in.intIn(0, left);
      left -= share;
      conf.put(PREFIX + kid + ".capacity", absolute ? "[memory=" + share + ",vcores=" + share / 10 + "]"
          : Integer.toString(share));
      if (in.below(3) == 0) {
        conf.put(PREFIX + kid + ".maximum-capacity", absolute ? "[memory=" + (share + 10) + "]" : "100");
      }
      if (in.below(4) == 0) {
        conf.put(PREFIX + kid + ".spindle.weight", in.pick("1", "2.5", "0.1"));
      }
      if (in.below(6) == 0) {
        conf.put(PREFIX + kid + ".user-limit-factor", in.pick("1", "-1", "4"));
      }
      if (depth < 4 && in.below(4) == 0) {
        addChildren(in, conf, kid, depth + 1, absolute, names);
      }
    }
  }

  /** A few edits of the kinds admins make by accident, and some they would not. */
  private static Map<String, String> mutate(FuzzInput in, Map<String, String> conf) {
    int edits = in.below(4);
    for (int i = 0; i < edits && !conf.isEmpty(); i++) {
      List<String> keys = new ArrayList<>(conf.keySet());
      String key = in.pick(keys);
      switch (in.below(7)) {
        case 0 -> conf.put(key, in.valueOr(CAPACITIES));
        case 1 -> conf.remove(key);
        case 2 -> conf.put(key.substring(0, key.lastIndexOf('.') + 1) + in.pick(SUFFIXES), in.valueOr(CAPACITIES));
        case 3 -> conf.put(key, conf.get(key) + in.pick(",", ",,", ", x", "," + conf.get(key), "\u0000", " "));
        case 4 -> conf.put(PREFIX + "root." + in.text(10) + "." + in.pick(SUFFIXES), in.valueOr(CAPACITIES));
        case 5 -> {
          if (key.endsWith(".queues")) {
            // A child named like an ancestor, or the list repeated: loops and duplicates by name.
            conf.put(key, conf.get(key) + "," + in.pick("root", "q0", "q1", conf.get(key)));
          }
        }
        default -> conf.put(key, in.text(20));
      }
    }
    return conf;
  }
}
